"""The pipeline as doit tasks: score, band, verdict and report tasks as plain dicts (doit_runner).

Each task is a file; doit's md5 check recomputes only what changed, and cuts off downstream work
when a recomputed file comes out byte-identical. Sample tasks are done exactly when their files
exist, so losing the doit database costs re-scoring, never a target call.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from noisefloor.errors import CorruptFile
from noisefloor.model.records import BAND_VERSION, CaseBand, CaseRecord, ScoreFile, ScorerUse
from noisefloor.pipeline.banding import band_case, score_case, scorer_config
from noisefloor.pipeline.doit_runner import REBUILDS, EngineStats, Task, all_current, run_tasks
from noisefloor.settings import RuleSettings, ScorerGate
from noisefloor.store.files import dumps
from noisefloor.store.layout import check_name, has_sample, short_hash
from noisefloor.store.store import Store

__all__ = [
    "Comparison",
    "EngineStats",
    "SideBands",
    "band_tasks",
    "compared_score_file",
    "comparison_tasks",
    "missing_samples",
    "read_rebuilt",
    "run_comparison",
    "run_current",
    "run_tasks",
    "scorer_gates",
    "shard_cases",
    "sset_id",
    "verdict_json",
]

_T = TypeVar("_T")

#: Verdict files per report shard: doit's fan-in check is quadratic in file_dep.
SHARD_SIZE = 256


def sset_id(case: CaseRecord) -> str:
    """The sample set of a case in a run: target version, input, epoch and the repeats its
    verdict rests on."""
    *_, target_key, epoch, _case_id, case_key = Path(case.sample_dir).parts
    first = f"-s{case.start}" if case.start else ""
    return f"{target_key}-{epoch}-{case_key}{first}-n{case.repeats}"


def missing_samples(store: Store, cases: Sequence[CaseRecord]) -> list[Path]:
    """Sample files a run names that are not on disk (a stat per file, no doit).

    Plain strings: this runs over every sample of both runs on every comparison.
    """
    missing = []
    for case in cases:
        missing += [Path(f) for f in store.sample_files(case) if not has_sample(f)]
    return missing


def _label_file(label: str) -> str:
    return label.replace(":", "-")


# -- task actions (module level: they must stay plain, picklable callables) -----------------


def _score_action(store: Store, case: CaseRecord, use: ScorerUse, out: str) -> bool:
    paths = store.sample_files(case)
    # the gate thresholds tune verdicts, not scores: they are neither in the file nor its name
    scorer = use.model_copy(update={"min_effect": None, "suspect_drop": None})
    try:
        scored = score_case(case.case_id, scorer, paths, case.start)
    except CorruptFile as exc:
        # a sample that does not read back is no sample: dropped, so that a run takes it again
        store.drop_sample(exc)
        raise
    store.write_bytes(Path(out), _dump(scored))
    return True


def _band_action(store: Store, case: CaseRecord, score_paths: list[str], out: str) -> bool:
    scores = [store.read_derived(Path(p), ScoreFile) for p in score_paths]
    band = band_case(case.case_id, case.case_key, scores, store.sample_files(case), case.start)
    store.write_bytes(Path(out), _dump(band))
    return True


def _verdict_action(
    store: Store,
    case_id: str,
    base: Path | None,
    cand: Path | None,
    settings: RuleSettings,
    out: str,
) -> bool:
    # the report model and the rules load where a comparison is made, never for a run
    from noisefloor.model.report import REPORT_VERSION, VerdictFile
    from noisefloor.rules import get_rule

    rule = get_rule(settings.rule)
    b = store.read_derived(base, CaseBand) if base else None
    c = store.read_derived(cand, CaseBand) if cand else None
    case = rule.compare(case_id, b, c, settings)
    store.write_bytes(Path(out), _dump(VerdictFile(version=REPORT_VERSION, case=case).dump()))
    return True


def _shard_action(store: Store, paths: list[str], out: str) -> bool:
    store.write_bytes(Path(out), _dump([verdict_json(store, Path(p)) for p in paths]))
    return True


def shard_cases(store: Store, path: Path, model: Any) -> list[Any]:
    """The cases of one report shard (`model`: the verdict file's); a shard of another shape
    is corrupt, dropped so that its task writes it again."""
    data = store.read_derived(path)
    try:
        if not isinstance(data, list):
            raise ValueError("not a list")
        return [model.model_validate(verdict).case for verdict in data]
    except ValueError:  # pydantic's ValidationError is one
        error = CorruptFile(f"corrupt or foreign report shard {path.name}", path)
        store.drop_derived(error)
        raise error from None


def verdict_json(store: Store, path: Path) -> Any:
    """A verdict file's JSON, its frame checked (the report validates it whole): a file of
    another shape is corrupt, dropped so that its task writes it again."""
    from noisefloor.model.report import REPORT_VERSION  # (a comparison's model, not a run's)

    data = store.read_derived(path)
    frame = data if isinstance(data, dict) else {}
    case = frame.get("case")
    if (
        frame.get("version") != REPORT_VERSION
        or not isinstance(case, dict)
        or "case_id" not in case
    ):
        error = CorruptFile(f"corrupt or foreign verdict file {path.name}", path)
        store.drop_derived(error)
        raise error
    return data


def _report_action(store: Store, shards: list[str], settings: RuleSettings, out: str) -> bool:
    # the report model and the rules load where a comparison is made, never for a run
    from noisefloor.model.report import REPORT_VERSION, ReportFile, ReportSettings, VerdictFile
    from noisefloor.rules import get_rule

    cases = [case for shard in shards for case in shard_cases(store, Path(shard), VerdictFile)]
    decided, suite = get_rule(settings.rule).decide(cases, settings)
    report = ReportFile(
        version=REPORT_VERSION,
        cases=decided,
        suite=suite,
        settings=ReportSettings.model_validate(settings.config()),
    )
    store.write_bytes(Path(out), _dump(report.dump()))
    return True


def _dump(obj: Any) -> bytes:
    return dumps(obj)


# -- task generators ------------------------------------------------------------------------


@dataclass(frozen=True)
class SideBands:
    """The band file of every case of one run, scored with one list of scorers per case."""

    bands: dict[str, Path]
    tasks: list[Task]
    scores: dict[str, list[str]]
    """Each case's score files, in the order of its scorers (what `explain` reads per repeat)."""


def band_tasks(
    store: Store,
    suite: str,
    cases: Sequence[CaseRecord],
    scorers: dict[str, list[ScorerUse]],
    sample_action: Callable[[CaseRecord, int], object] | None = None,
) -> SideBands:
    """Score and band tasks for the cases of one run (and sample tasks, given an action).

    A sample task takes one repeat of one case (`sample_action(case, repeat)`), and is done
    exactly when that sample file is on disk with content, whatever doit's database says.

    `scorers` maps case id to the scorers to apply (the candidate's, so that both sides of a
    comparison are scored alike). A score file's path holds everything it depends on: the
    sample set (sample files never change once written) and the scorer's spec and code hash;
    not its gate thresholds (`min_effect`, `suspect_drop`), which the verdict tasks read.
    So a score task is done when its file exists, with no state in doit's database; doit's md5
    check starts at the bands, where it cuts off work when a rescore changed nothing. The
    command line takes samples before it calls doit, so it passes no `sample_action`.

    Derived files lie flat, one directory per kind and suite, named `CASE@SAMPLE-SET@...`
    (`@` is not allowed in a case id): creating a directory per case cost ~1 ms each here.
    """
    tasks: list[Task] = []
    bands: dict[str, Path] = {}
    scores: dict[str, list[str]] = {}
    # plain strings: thousands of tasks, and pathlib's parsing showed up in no-op profiles
    scores_root = os.path.join(store.derived_dir("scores", suite), "")
    bands_root = os.path.join(store.derived_dir("bands", suite), "")
    for case in cases:
        _check_case_id(case.case_id)
        sset = sset_id(case)
        sample_tasks = []
        if sample_action is not None:
            for repeat, path in enumerate(store.sample_files(case), case.start):
                sample_tasks.append(f"sample:{suite}:{case.case_id}@{sset}:r{repeat}")
                # a bool, not a callable: doit inspects a callable's signature once per task,
                # and tasks are loaded right before their status is checked
                tasks.append(
                    {
                        "name": sample_tasks[-1],
                        "targets": [path],
                        "uptodate": [has_sample(path)],
                        "actions": [(sample_action, [case, repeat])],
                        "verbosity": 0,
                    }
                )
        uses = scorers.get(case.case_id, case.scorers)
        score_paths = []
        for use in uses:
            key = _score_key(use, scorer_config(use))
            out = scores_root + _score_name(case.case_id, sset, use, key)
            score_paths.append(out)
            tasks.append(
                {
                    "name": f"score:{suite}:{case.case_id}:{use.label}@{sset}-{key}",
                    "targets": [out],
                    "uptodate": [True],
                    "task_dep": sample_tasks,
                    "actions": [(_score_action, [store, case, use, out])],
                    "verbosity": 0,
                }
            )
        # the band format's version is in the name: a band of another format is built anew
        labels = short_hash([BAND_VERSION, *(use.label for use in uses)], 8)
        band = f"{bands_root}{case.case_id}@{sset}-{labels}.json"
        bands[case.case_id] = Path(band)
        scores[case.case_id] = score_paths
        tasks.append(
            {
                "name": f"band:{suite}:{case.case_id}@{sset}-{labels}",
                "file_dep": score_paths,
                "targets": [band],
                "actions": [(_band_action, [store, case, score_paths, band])],
                "verbosity": 0,
            }
        )
    return SideBands(bands=bands, tasks=tasks, scores=scores)


def _score_name(case_id: str, sset: str, use: ScorerUse, key: str) -> str:
    return f"{case_id}@{sset}@{_label_file(use.label)}-{key}.json"


def score_file(store: Store, suite: str, case: CaseRecord, use: ScorerUse) -> Path:
    """Where a run's score of one case lies: by the scorer as the run recorded it (its params
    and code hash then), so a file scored by since-edited code is still found."""
    recorded: dict[str, object] = {
        "name": use.name,
        "params": use.params,
        "impl_hash": use.impl_hash,
    }
    key = _score_key(use, recorded)
    return store.derived_dir("scores", suite) / _score_name(case.case_id, sset_id(case), use, key)


def compared_score_file(store: Store, suite: str, case: CaseRecord, use: ScorerUse) -> Path:
    """Where a comparison put its score of one case: by the scorer as the code is now, which
    scores both sides (`band_tasks` names it so)."""
    key = _score_key(use, scorer_config(use))
    return store.derived_dir("scores", suite) / _score_name(case.case_id, sset_id(case), use, key)


def _check_case_id(case_id: str) -> None:
    check_name(case_id, "case id")


def _score_key(use: ScorerUse, scorer: dict[str, object]) -> str:
    return short_hash({**scorer, "label": use.label}, 12)


def scorer_gates(uses: Sequence[ScorerUse]) -> dict[str, ScorerGate]:
    """The thresholds each scorer of a case sets for itself, by label (unset ones left out)."""
    return {
        u.label: ScorerGate(u.min_effect, u.suspect_drop)
        for u in uses
        if u.min_effect is not None or u.suspect_drop is not None
    }


@dataclass(frozen=True)
class Comparison:
    """The tasks of a comparison and the file the report lands in."""

    report: Path
    tasks: list[Task]


def comparison_tasks(
    store: Store,
    suite: str,
    base: dict[str, Path],
    cand: dict[str, Path],
    settings: RuleSettings,
    gates: Mapping[str, Mapping[str, ScorerGate]],
) -> Comparison:
    """Verdict tasks per case, shards of verdicts, and the report that decides the suite.

    Every file is named for what it is computed from (bands, rule, settings and the case's
    `gates`, its scorers' own thresholds by label), so checking an unchanged target again finds
    the whole comparison done, and switching rules or flags back and forth never recomputes a
    file twice.
    """
    from noisefloor.model.report import REPORT_VERSION  # (a comparison's model, not a run's)

    tasks: list[Task] = []
    verdicts: list[str] = []
    rule = f"{settings.rule.value}-{short_hash(settings.config(), 8)}"
    verdicts_root = os.path.join(store.derived_dir("verdicts", suite), "")
    for case_id in sorted(set(base) | set(cand)):
        b, c = base.get(case_id), cand.get(case_id)
        case_gates = gates.get(case_id, {})
        # the format's version is part of the name: a file of another version is never read
        named: list[object] = [b.name if b else None, c.name if c else None, REPORT_VERSION]
        if case_gates:
            named.append(sorted((label, asdict(g)) for label, g in case_gates.items()))
        key = short_hash(named, 12)
        case_settings = settings.for_case(case_gates)
        out = f"{verdicts_root}{case_id}@{rule}-{key}.json"
        verdicts.append(out)
        tasks.append(
            {
                "name": f"verdict:{suite}:{case_id}@{rule}-{key}",
                "file_dep": [str(p) for p in (b, c) if p is not None],
                "targets": [out],
                "actions": [(_verdict_action, [store, case_id, b, c, case_settings, out])],
                "verbosity": 0,
            }
        )
    reports = store.derived_dir("reports", suite)
    content = short_hash([os.path.basename(v) for v in verdicts], 12)
    shards = []
    for index in range(0, max(len(verdicts), 1), SHARD_SIZE):
        chunk = verdicts[index : index + SHARD_SIZE]
        shard = str(reports / f"{rule}-{content}.shard{index // SHARD_SIZE}.json")
        shards.append(shard)
        tasks.append(
            {
                "name": f"report-shard:{suite}@{rule}-{content}:{index // SHARD_SIZE}",
                "file_dep": chunk,
                "targets": [shard],
                "actions": [(_shard_action, [store, chunk, shard])],
                "verbosity": 0,
            }
        )
    report = reports / f"{rule}-{content}.json"
    tasks.append(
        {
            "name": f"report:{suite}@{rule}-{content}",
            "file_dep": shards,
            "targets": [str(report)],
            "actions": [(_report_action, [store, shards, settings, str(report)])],
            "verbosity": 0,
        }
    )
    return Comparison(report=report, tasks=tasks)


def read_rebuilt(
    store: Store, read: Callable[[], _T], rebuild: Callable[[], EngineStats]
) -> tuple[_T, EngineStats]:
    """`read()` files a step derived; one found corrupt is dropped and `rebuild()` makes it
    again from its inputs (at most `REBUILDS` times). Returns what was read and the rebuilds'
    work."""
    stats = EngineStats()
    for _ in range(REBUILDS):
        try:
            return read(), stats
        except CorruptFile as exc:
            if not store.drop_derived(exc):
                raise
            stats = stats.merged(rebuild())
    return read(), stats


def run_comparison(store: Store, comparison: Comparison, tasks: list[Task]) -> EngineStats:
    """Run a comparison's `tasks` (its bands' and its own) unless these very tasks ran before
    (`run_current`): a check that changed nothing decides without starting doit."""
    return run_current(store, tasks, comparison.report.parent, [comparison.report])


def run_current(
    store: Store, tasks: list[Task], directory: Path, outputs: Sequence[Path]
) -> EngineStats:
    """Run `tasks`, unless these very tasks all ran before and their `outputs` are on disk.

    Every file is named for what it is computed from, and a task's dependencies name the files
    it reads: the same task names with the same dependencies make the same files. Once they all
    ran, a file in `directory` named for the hash of them all (the whole pipeline's key) is
    written; finding it skips doit, which otherwise checks every task's files (up to three per
    case) to find each current.
    """
    key = short_hash(sorted((t["name"], t.get("file_dep", [])) for t in tasks), 24)
    done = os.path.join(directory, f"whole-{key}.done")
    if os.path.exists(done) and all(os.path.exists(path) for path in outputs):
        return all_current(tasks)
    stats = run_tasks(store, tasks)
    store.write_bytes(Path(done), b"")
    return stats
