"""The HTTP kind: how a target of a suite's `target.http` (`targets/http_spec.py`) builds and
versions itself, its checks after a run, and what of its envelope the ledger shows.

The client itself is `targets/http.py`, imported only when a target is built.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson
from pydantic import BaseModel

from noisefloor.errors import TargetConfigError
from noisefloor.model.records import RunRecord, TargetRecord
from noisefloor.store.layout import short_hash
from noisefloor.targets.base import exchange_hashes, output_sha
from noisefloor.targets.http_spec import LEDGER_FIELDS, HttpFields, HttpSpec
from noisefloor.targets.kinds import TargetKind, secrets_in
from noisefloor.targets.source import BuiltTarget, Secret, TargetPlace

if TYPE_CHECKING:
    from noisefloor.targets.base import RawSample

__all__ = ["KIND", "HttpKind"]

Loc = tuple[Any, ...]


def _fields(spec: BaseModel) -> HttpSpec:
    assert isinstance(spec, HttpFields) and spec.http is not None
    return spec.http


class HttpKind(TargetKind):
    """One chat completion per sample."""

    name = "http"
    fields = HttpFields
    choice = "`http`"
    #: An endpoint serves several requests at once; a run records its jobs, and latency
    #: above one call at once is marked not comparable, as with any `--jobs`.
    default_jobs = 8
    checks_runs = True
    provides = frozenset({"latency", "usage"})
    ledger_fields = LEDGER_FIELDS

    def selected(self, spec: BaseModel) -> bool:
        """A `target` with `http`."""
        return isinstance(spec, HttpFields) and spec.http is not None

    def build(self, spec: BaseModel, place: TargetPlace) -> BuiltTarget:
        """The endpoint, versioned by host, model and every generation setting."""
        from noisefloor.targets.http import HttpTarget
        from noisefloor.targets.http_env import proxy_secrets

        http = _fields(spec)
        api_key = None
        if http.api_key_env:
            api_key = os.environ.get(http.api_key_env)
            if not api_key:
                raise TargetConfigError(
                    f"the variable {http.api_key_env} named by target.http.api_key_env is not set",
                    where=str(place.suite_path),
                    hint=f"export {http.api_key_env}=... (the key is never written to disk)",
                )
        host = urlsplit(http.base_url).netloc
        comparable: dict[str, Any] = {"host": host, "model": http.model}
        accept_finish = sorted(set(http.accept_finish))
        if accept_finish != ["stop"]:
            # what passes changes with it; left out by default, so that runs from before it stay
            # comparable
            comparable["accept_finish"] = accept_finish
        generation = http.model_dump(
            exclude={
                "api_key_env",
                "timeout_s",
                "max_response_bytes",
                "max_retries",
                "retry_budget",
                "accept_finish",
                "price",
            }
        )
        # in the version even by default: samples taken when a null finish failed are not reused
        generation["accept_finish"] = accept_finish
        key = short_hash({"kind": self.name, "spec": comparable, "generation": generation})
        target = HttpTarget(http, key=key, spec=comparable, api_key=api_key)
        record = TargetRecord(kind=self.name, key=key, spec=comparable, fingerprint={})
        secrets = [Secret(http.api_key_env, api_key)] if http.api_key_env and api_key else []
        # a proxy URL's credentials go to the proxy only; an endpoint that quotes them back must
        # not get them into a sample
        secrets += proxy_secrets()
        return BuiltTarget(
            target, record, secrets + secrets_in(os.environ, ambient=True), price=http.price
        )

    def templates(self, target: dict[str, Any]) -> list[tuple[Loc, Any]]:
        """The message template and the system message."""
        http = target.get("http")
        if not isinstance(http, dict):
            return []
        return [(("target", "http", key), http.get(key)) for key in ("messages", "system")]

    def probe(self, settings: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        """The endpoint's settings with no retry (`max_retries` is no part of its version), and
        its base URL."""
        http = settings.get("http")
        if not isinstance(http, dict):
            return None
        return {**settings, "http": {**http, "max_retries": 0}}, str(http.get("base_url", ""))

    def run_fact(self, sample: RawSample) -> tuple[str | None, str | None]:
        """The model that served the call, and the error of a call refused as misconfigured."""
        envelope = sample.envelope or {}
        served = str(envelope["served_model"]) if envelope.get("served_model") else None
        refused = (sample.error or "refused") if envelope.get("error_class") == "config" else None
        return served, refused

    def check_run(self, facts: Iterator[tuple[str | None, str | None]]) -> dict[str, int]:
        """Count the models the endpoint served; refuse a run in which every call was refused.

        A 4xx such as 401 or 404 on every call is a configuration problem, not a model failure.
        """
        served: Counter[str] = Counter()
        refused: list[str] = []
        total = 0
        for model, refusal in facts:
            total += 1
            if model:
                served[model] += 1
            if refusal is not None:
                refused.append(refusal)
        if total and len(refused) == total:
            raise TargetConfigError(
                f"the endpoint refused every call: {refused[0]}",
                hint="check target.http.base_url, model and api_key_env; nothing was compared",
            )
        return dict(sorted(served.items()))

    def run_warnings(self, run: RunRecord, side: str) -> list[str]:
        """A model served other than the one requested."""
        requested = run.target.spec.get("model")
        other = {m: n for m, n in run.served_models.items() if m != requested}
        if not other:
            return []
        shown = ", ".join(f"{m!r} x{n}" for m, n in other.items())
        return [f"the {side}'s endpoint served {shown} where {requested!r} was requested"]

    def after_redaction(self, sample: dict[str, Any]) -> None:
        """Hashes in an envelope must be of what is stored: a hash of the text before redaction
        would both mismatch the stored text and fingerprint what was hidden (a short number can
        be recovered from its hash)."""
        envelope = sample.get("envelope")
        if not isinstance(envelope, dict):
            return
        if envelope.get("output_sha") is not None:
            envelope["output_sha"] = output_sha(sample["output"]["text"])
        messages = (envelope.get("request") or {}).get("messages")
        if envelope.get("prompt_sha") is not None and isinstance(messages, list):
            envelope.update(exchange_hashes(messages))

    def ledger_columns(self, sample: dict[str, Any]) -> dict[str, Any]:
        """The requested and served model, the host, the finish reason, the prompt's hashes and
        the raw response."""
        envelope = sample.get("envelope")
        env = envelope if isinstance(envelope, dict) else {}
        messages = (env.get("request") or {}).get("messages")
        hashes: dict[str, Any] = {}
        if isinstance(messages, list):
            # from the stored (redacted) request, so that older samples hash alike
            hashes = dict(exchange_hashes(messages))
        elif env.get("prompt_sha"):
            hashes = {"prompt_sha": env["prompt_sha"], "request_sha": env.get("request_sha")}
        raw = env.get("raw")
        return {
            "model": env.get("requested_model"),
            "served_model": env.get("served_model"),
            "base_host": env.get("host"),
            "harness_version": env.get("harness_version"),
            "finish_reason": env.get("finish_reason"),
            **hashes,
            "raw_json": orjson.dumps(raw, option=orjson.OPT_SORT_KEYS).decode()
            if raw is not None
            else None,
        }


KIND = HttpKind()
