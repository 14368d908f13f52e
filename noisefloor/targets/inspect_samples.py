"""One epoch of one Inspect sample as a noisefloor sample: its output, and in its envelope its
messages, scores, token usage and error, from a log `eval()` returned or `read_eval_log` read.

A sample that raised is the task's failure (`error:exit`), never an exception here.
"""

from __future__ import annotations

from typing import Any

from noisefloor.targets.base import Outcome, RawSample, decode_stream

__all__ = ["KIND_NAME", "raw_sample", "score_entries", "usage_of"]

#: The kind's name in samples and run records.
KIND_NAME = "inspect"


def score_entries(scores: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Each of a sample's scores by scorer name: its value, answer and explanation (JSON)."""
    out: dict[str, dict[str, Any]] = {}
    for name, score in (scores or {}).items():
        dumped = score.model_dump(mode="json", include={"value", "answer", "explanation"})
        out[name] = {k: v for k, v in dumped.items() if v is not None or k == "value"}
    return out


def usage_of(model_usage: dict[str, Any] | None, output: Any) -> dict[str, Any] | None:
    """The tokens a sample took, summed over its models, as an OpenAI `usage` object (what
    reports and cost read); the output's own when no model call was counted; None: none."""
    usages = list((model_usage or {}).values())
    if not usages and output is not None and getattr(output, "usage", None) is not None:
        usages = [output.usage]
    if not usages:
        return None
    prompt = sum(int(u.input_tokens or 0) for u in usages)
    completion = sum(int(u.output_tokens or 0) for u in usages)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def raw_sample(
    sample: Any,
    case_id: str,
    repeat: int,
    *,
    model: str,
    concurrency: int,
    log: str | None,
    version: str,
) -> RawSample:
    """The noisefloor sample of one Inspect `EvalSample` (one epoch of one sample).

    Args:
        sample: The `EvalSample`.
        case_id: The case it is a repeat of.
        repeat: The repeat it is.
        model: The model the eval ran against.
        concurrency: How many samples the eval that took it held.
        log: The log it came from, relative to the store root (or as given to the import).
        version: Inspect's version.
    """
    error = sample.error.message if sample.error is not None else None
    envelope: dict[str, Any] = {
        "sample_id": sample.id,
        "epoch": sample.epoch,
        "model": model,
        "inspect_version": version,
        "scores": score_entries(sample.scores),
        "messages": [m.model_dump(mode="json", exclude_none=True) for m in sample.messages or []],
        "model_usage": {
            name: usage.model_dump(mode="json", exclude_none=True)
            for name, usage in (sample.model_usage or {}).items()
        },
    }
    usage = usage_of(sample.model_usage, sample.output)
    if usage is not None:
        envelope["usage"] = usage
    if log is not None:
        envelope["log"] = log
    if sample.error is not None:
        envelope["error"] = {"message": error, "traceback": sample.error.traceback}
    if sample.limit is not None:
        envelope["limit"] = sample.limit.model_dump(mode="json")
    completion = sample.output.completion if sample.output is not None else ""
    return RawSample(
        kind=KIND_NAME,
        case_id=case_id,
        repeat=repeat,
        outcome=Outcome.EXIT if error is not None else Outcome.OK,
        error=f"the sample raised {error}" if error is not None else None,
        output=decode_stream(completion.encode("utf-8", "surrogatepass")),
        wall_s=float(sample.total_time or 0.0),
        started_at=str(getattr(sample, "started_at", None) or ""),  # 0.3.150 keeps none
        concurrency=max(1, concurrency),
        envelope=envelope,
    )
