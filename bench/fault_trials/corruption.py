"""Corruption trials: one kind of store file damaged one way, on a fresh copy of a prepared store,
then the next commands must recover or exit 3 naming the file; never a crash or a torn verdict."""

from __future__ import annotations

import contextlib
import io
import os
import random
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench.fault_trials import Tally, has_traceback

__all__ = ["DAMAGE", "KINDS", "prepare", "trials"]

SUITE = "quickstart"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def _halve(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _garbage(path: Path) -> None:
    path.write_bytes(random.Random(path.name).randbytes(max(64, path.stat().st_size)))


def _wrong_shape(path: Path) -> None:
    path.write_bytes(b'{"version": 1, "something": ["else", 2]}\n')


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inside").write_bytes(b"{}")


def _loop(path: Path) -> None:
    path.unlink()
    os.symlink(path.name, path)


#: Each way a file is damaged (as root, chmod stops no read: unreadable is a directory or a
#: symlink loop in its place).
DAMAGE: dict[str, Callable[[Path], None]] = {
    "cut in half": _halve,
    "emptied": _empty,
    "garbage": _garbage,
    "wrong shape": _wrong_shape,
    "a directory": _directory,
    "a symlink loop": _loop,
}


@dataclass(frozen=True)
class Kind:
    """One kind of store file: its table row, where its files are, and what a check may do."""

    name: str
    row: str
    pattern: str
    #: the target calls the next check may make (a corrupt sample is taken again)
    retakes: int = 0


KINDS = (
    Kind("samples", "corruption, samples", "samples/**/r*.json", retakes=1),
    Kind("scores", "corruption, derived", "scores/**/*.json"),
    Kind("bands", "corruption, derived", "bands/**/*.json"),
    Kind("band markers", "corruption, derived", "bands/**/*.done"),
    Kind("verdicts", "corruption, derived", "verdicts/**/*.json"),
    Kind("reports", "corruption, derived", "reports/**/*.json"),
    Kind("report shards", "corruption, derived", "reports/**/*.shard*.json"),
    Kind("report markers", "corruption, derived", "reports/**/*.done"),
    Kind("baseline run", "corruption, pointers and records", "runs/*/BASELINE.json"),
    Kind("other runs", "corruption, pointers and records", "runs/*/OTHER.json"),
    Kind("baseline pointer", "corruption, pointers and records", "baselines/*.json"),
    Kind("labels", "corruption, pointers and records", "labels/*/*.json"),
    Kind("epochs", "corruption, pointers and records", "epochs/*.json"),
    Kind("manifests", "corruption, pointers and records", "manifests/*.json"),
    Kind("gitignore", "corruption, pointers and records", ".gitignore"),
    Kind("doit db", "corruption, databases", "doit.sqlite*"),
    Kind("ledger", "corruption, databases", "ledger.sqlite"),
    Kind("ledger lock", "corruption, databases", "ledger.sqlite.lock"),
    Kind("locks", "corruption, databases", "locks/*.lock"),
)
ROWS = tuple(dict.fromkeys(kind.row for kind in KINDS))
#: Damage no command notices, nor needs to: a lock file's content, a marker's (only their
#: existence counts).
#: A .gitignore's text is the user's to edit: only bytes that are no text are wrong.
HARMLESS = {
    how: ("ledger lock", "locks", "band markers", "report markers", "gitignore")
    for how in ("cut in half", "emptied", "wrong shape")
} | {"garbage": ("ledger lock", "locks", "band markers", "report markers")}


@dataclass
class Outcome:
    code: int
    out: str
    err: str


def run_cli(*args: str | Path, root: Path) -> Outcome:
    """The real CLI, in-process (a trial runs several commands: a process each would cost most of
    the budget); a crash that escapes `main` is turned into a traceback in the output."""
    from noisefloor.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--root", str(root), *map(str, args)])
        except BaseException as exc:  # noqa: BLE001 (a trial counts a crash, it never raises)
            code = -1
            err.write(f"Traceback (most recent call last):\n  {type(exc).__name__}: {exc}\n")
    return Outcome(code, out.getvalue(), err.getvalue())


def crashed(outcome: Outcome) -> bool:
    """A traceback, or the one line `main` prints for an error it did not expect."""
    text = outcome.out + outcome.err
    return has_traceback(text) or "internal error" in text


def _git(project: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=project,
        check=True,
        capture_output=True,
    )


@dataclass(frozen=True)
class Prepared:
    """A store holding every kind of file, and what a check of it says when nothing is broken."""

    project: Path
    root: Path
    baseline: str
    counts: dict[str, int]


def prepare(workdir: Path) -> Prepared:
    """A project in git (so that its target version lists its files in a manifest) and a store
    with a baseline, a compared run, a new epoch and a label."""
    project, root = workdir / "project", workdir / "store"
    shutil.copytree(EXAMPLE, project)
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "example")
    suite = project / "suite.yaml"
    steps = (
        ("check", suite, "--adopt"),
        ("run", suite, "--fresh"),
        ("record", suite, "--label", "first"),
        ("check", suite, "--format", "json"),
    )
    for step in steps:
        done = run_cli(*step, root=root)
        if done.code != 0:
            raise RuntimeError(f"preparing the store: {step} exited {done.code}: {done.err}")
    report = orjson.loads(done.out)
    return Prepared(project, root, report["baseline"], report["counts"])


def _files(root: Path, kind: Kind, baseline: str) -> list[Path]:
    if kind.name == "baseline run":
        return sorted(root.glob(f"runs/*/{baseline}.json"))
    if kind.name == "other runs":
        return sorted(p for p in root.glob("runs/*/*.json") if p.stem != baseline)
    if kind.name == "reports":
        return sorted(p for p in root.glob(kind.pattern) if ".shard" not in p.name)
    return sorted(p for p in root.glob(kind.pattern) if p.is_file() and not p.is_symlink())


def _commands(project: Path) -> list[tuple[str, ...]]:
    """The commands run after the damage: a check first, then those that read stored runs."""
    suite = str(project / "suite.yaml")
    return [
        ("check", suite, "--format", "json"),
        ("diff", "--format", "json"),
        ("report", "--html", str(project / "report.html")),
        ("show",),
        ("runs",),
        ("baseline", "show"),
        ("history", "capital-of-france"),
        ("compare", "--baseline", "first", "--current", "first"),
        ("ledger", "rebuild"),
    ]


def _judge(tally: Tally, what: str, step: tuple[str, ...], done: Outcome, rel: str) -> bool:
    """Count what one command did with a damaged store; True when it is acceptable."""
    if crashed(done):
        tally.tracebacks += 1
        tally.fail(f"{what}: `{' '.join(step[:2])}` crashed: {done.err.strip()[-300:]}")
        return False
    if done.code == 3:
        text = done.out + done.err
        if rel not in text or ("hint:" not in text and step[0] != "store"):
            tally.fail(f"{what}: `{step[0]}` exited 3 without naming {rel} and a fix: {done.err}")
            return False
        return True
    if done.code not in (0, 1):
        tally.fail(f"{what}: `{step[0]}` exited {done.code}: {done.err.strip()[-300:]}")
        return False
    return True


def _check_verdict(
    tally: Tally, what: str, done: Outcome, prepared: Prepared, calls_left: int
) -> int:
    """A check that decided must have decided as on the undamaged store, from whole files;
    returns the target calls it may still make (a damaged sample is taken again once)."""
    report = orjson.loads(done.out)
    if report["adopted"] or report["baseline"] != prepared.baseline:
        tally.torn += 1
        tally.fail(f"{what}: the check compared with {report['baseline']}, not the baseline")
    elif report["counts"] != prepared.counts:
        tally.torn += 1
        tally.fail(f"{what}: the check decided {report['counts']}, not {prepared.counts}")
    calls = int(report["calls"])
    if calls > calls_left:
        tally.twice += calls - calls_left
        tally.fail(f"{what}: {calls} target calls, where {calls_left} sample was damaged")
    return max(0, calls_left - calls)


def _trial(
    tally: Tally,
    prepared: Prepared,
    kind: Kind,
    how: str,
    repair: bool,
    work: Path,
    pick: random.Random,
) -> None:
    project, root = work / "project", work / "store"
    shutil.copytree(prepared.project, project, symlinks=True)
    shutil.copytree(prepared.root, root, symlinks=True)
    files = _files(root, kind, prepared.baseline)
    if not files:
        tally.fail(f"{kind.name}: the prepared store holds no such file")
        return
    victim = pick.choice(files)
    rel = victim.relative_to(root).as_posix()
    what = f"{rel} {how}"
    DAMAGE[how](victim)
    verify = run_cli("store", "verify", *(["--repair"] if repair else []), root=root)
    if not _judge(tally, what, ("store", "verify"), verify, rel):
        return
    if verify.code == 0 and not repair and kind.name not in HARMLESS.get(how, ()):
        tally.fail(f"{what}: `store verify` found nothing wrong")
    commands = _commands(project)
    calls_left = kind.retakes
    for step in commands:
        done = run_cli(*step, root=root)
        if not _judge(tally, what, step, done, rel):
            return
        if step is commands[0] and done.code != 3:
            calls_left = _check_verdict(tally, what, done, prepared, calls_left)
    # what is left broken (a sample the check did not need to read) is repaired, and then
    # the store checks clean and decides as before
    repaired = run_cli("store", "verify", "--repair", root=root)
    if not _judge(tally, what, ("store", "verify"), repaired, rel):
        return
    if repaired.code == 3:
        return  # not repairable: the message named the file and the command that fixes it
    again = run_cli(*commands[0], root=root)
    if not _judge(tally, what, commands[0], again, rel):
        return
    if again.code == 3:
        return  # named the file and what to do (a baseline's sample is the baseline's to take)
    _check_verdict(tally, what, again, prepared, calls_left)
    after = run_cli("store", "verify", root=root)
    if after.code != 0:
        tally.fail(f"{what}: after the repair and a check, `store verify` says: {after.out}")


def _round_robin(seed: int) -> list[tuple[Kind, str]]:
    """Every (kind, damage) pair, shuffled within each row and taken from the rows in turn,
    so that a few trials already reach every row."""
    rng = random.Random(seed)
    rows = []
    for row in ROWS:
        pairs = [(kind, how) for kind in KINDS if kind.row == row for how in DAMAGE]
        rng.shuffle(pairs)
        rows.append(pairs)
    longest = max(len(pairs) for pairs in rows)
    return [pairs[i] for i in range(longest) for pairs in rows if i < len(pairs)]


def trials(n: int, workdir: Path, seed: int = 0) -> list[Tally]:
    """`n` trials, each one (kind of file, damage) pair on a fresh copy of one prepared store;
    half of them run `store verify --repair` before the next commands."""
    prepared = prepare(workdir / "prepared")
    pairs = _round_robin(seed)
    tallies = {row: Tally(row) for row in ROWS}
    for i in range(n):
        kind, how = pairs[i % len(pairs)]
        tally = tallies[kind.row]
        tally.trials += 1
        work = workdir / f"trial{i}"
        _trial(tally, prepared, kind, how, i % 2 == 1, work, random.Random(f"{seed}/{i}"))
    return list(tallies.values())
