"""The words and numbers behind one scorer's verdict, shared by the text renderers.

One function per kind of evidence, so that terminal and markdown print the same figures.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "calls_text",
    "counts_line",
    "evidence_line",
    "example_line",
    "quoted_examples",
    "side_text",
]


def _num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"
    return str(x)


def _interval(pair: list[Any] | None) -> str:
    return f"[{_num(pair[0])}, {_num(pair[1])}]" if pair else ""


def side_text(s: dict[str, Any]) -> str:
    """One side of a scorer: `k/n [wilson]`, plus the value band for continuous scorers."""
    if not s:
        return "-"
    text = f"{s['k']}/{s['n']}"
    if s.get("wilson"):
        text += f" {_interval(s['wilson'])}"
    if "mean" in s:
        text += f"; mean {_num(s['mean'])} sd {_num(s.get('sd'))}, {_num(s['median'])} [{_num(s['min'])}-{_num(s['max'])}]"
    errors = [
        f"{s[k]} {k.replace('_', ' ')}"
        for k in ("target_errors", "infra_errors", "scorer_errors")
        if s.get(k)
    ]
    if errors:
        text += f" ({', '.join(errors)})"
    return text


def evidence_line(e: dict[str, Any]) -> str:
    """The test statistics of one scorer, empty when the rule computed none."""
    parts = []
    if "p_regress" in e:
        parts.append(f"diff {_num(e['diff'])} {_interval(e.get('newcombe'))}")
        parts.append(f"p={_num(e['p_regress'])} vs {_num(e['threshold'])}")
        mde = e.get("min_detectable_drop")
        parts.append(
            f"smallest detectable drop {_num(mde)}"
            if mde is not None
            else "no drop detectable at this N"
        )
    values = e.get("values")
    if values:
        if values.get("deterministic"):
            parts.append(f"values constant on both sides, diff {_num(values['diff'])}")
        else:
            parts.append(
                f"mean diff {_num(values['diff'])} {_interval(values.get('welch_ci'))}, "
                f"Welch p={_num(values.get('p_worse'))} vs {_num(values.get('threshold'))}"
            )
    if "scorer_redefined" in e:
        parts.append(
            "scorer redefined since the baseline: baseline samples re-scored"
            if e["scorer_redefined"]["baseline"]
            else "scorer added since the baseline: baseline samples scored with it"
        )
    return "; ".join(parts)


def counts_line(counts: dict[str, int]) -> str:
    """`2 unchanged, 1 regressed` worst first."""
    from noisefloor.verdict import SEVERITY

    order = {v.value: i for i, v in enumerate(SEVERITY)}
    items = sorted(counts.items(), key=lambda kv: order.get(kv[0], 99))
    return ", ".join(f"{n} {v}" for v, n in items) or "no cases"


def calls_text(report: dict[str, Any]) -> str:
    """The target calls this command made, then what the compared runs took when they were made.

    `diff` and `compare` call nothing: their stored runs' calls are a cost paid earlier.
    """
    text = f"{report.get('calls', 0)} target calls"
    runs = report.get("runs") or {}
    if "baseline" in runs and "candidate" in runs:
        text += (
            f" (runs' own calls: baseline {runs['baseline']['calls']}, "
            f"candidate {runs['candidate']['calls']})"
        )
    return text


def example_line(example: dict[str, Any]) -> str:
    """`r3: <output, one line> (<why it failed>)`: a failing repeat of the candidate, quoted."""
    said = example["output"] or "(no output)"
    if example.get("stderr"):
        said += f" stderr: {example['stderr']}"
    return f"r{example['repeat']}: {said} ({example['detail']})"


def quoted_examples(case: dict[str, Any]) -> list[str | None]:
    """Per scorer of a case, the example line to print under it, or None.

    A regressed scorer quotes its first failing repeat; a broken case quotes what the target
    said once, not once per scorer.
    """
    out: list[str | None] = []
    seen: set[str] = set()
    for s in case["scorers"]:
        example = (s.get("candidate") or {}).get("example")
        failing = s["verdict"] in _QUOTED or case["verdict"] in _QUOTED
        line = example_line(example) if example and failing else None
        out.append(line if line not in seen else None)
        if line is not None:
            seen.add(line)
    return out


_QUOTED = ("regressed", "broken")
