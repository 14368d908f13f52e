"""What every executor shares: the pending samples of one or more interleaved arms, the hooks a
take tells as it goes, and the `Executor` protocol that takes them (in `schedule.call_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from noisefloor.executors.redaction import Redactor
from noisefloor.model.records import CaseRecord
from noisefloor.store.store import Store
from noisefloor.targets.base import RawSample, Target

if TYPE_CHECKING:
    from noisefloor.targets.source import TargetSource

__all__ = ["ArmPending", "Executor", "OnWritten", "Pending", "SampleHooks"]


@dataclass(frozen=True)
class Pending:
    """One repeat of one case that has no sample file yet."""

    case: CaseRecord
    repeat: int
    file: str
    """The sample file to write, absolute. A plain string: a run holds every missing repeat at
    once, and a `Path` each took about 0.5 KB, and more as the forms it caches were asked for
    (a soak of 100,000 samples grew 19 MB while it took the last three quarters)."""
    input: str
    """What the target receives: the suite's input, before any redaction of the records."""

    @property
    def path(self) -> Path:
        """`file` as a path, made anew at each use (kept by nobody once the sample is written)."""
        return Path(self.file)


#: Told of each sample once its file is written: the pending repeat, the file and the sample as
#: stored (redacted). Called from the writer's thread, in arrival order; an error it raises stops
#: the run as a failed write would. One with a `flush()` method may hold what it is told until
#: that is called: whenever the writer has waited `IDLE_S` for the next sample, at least every
#: `FLUSH_S` while samples keep coming, and once at the end.
OnWritten = Callable[[Pending, Path, dict[str, Any]], None]


class SampleHooks:
    """What a take tells as it goes: `on_call` of each call as it starts, `on_sample` of its
    sample as it returns (before redaction: progress reads its outcome and attempts), and each
    of `written` (an `OnWritten`) of each sample once its file is written; those that batch
    are flushed together."""

    def __init__(
        self,
        *written: OnWritten,
        on_call: Callable[[Pending], None] | None = None,
        on_sample: Callable[[Pending, RawSample], None] | None = None,
    ) -> None:
        self._written = written
        self._flushes = [f for f in (getattr(x, "flush", None) for x in written) if f]
        self._on_call = on_call
        self._on_sample = on_sample

    def called(self, item: Pending) -> None:
        """A call for `item` starts."""
        if self._on_call is not None:
            self._on_call(item)

    def sampled(self, item: Pending, sample: RawSample) -> None:
        """The call for `item` returned `sample`."""
        if self._on_sample is not None:
            self._on_sample(item, sample)

    def written(self, item: Pending, path: Path, data: dict[str, Any]) -> None:
        """`item`'s sample is in its file: tell each listener in turn (the writer's thread)."""
        for listener in self._written:
            listener(item, path, data)

    @property
    def batches(self) -> bool:
        """Whether a listener holds what it is told until `flush`."""
        return bool(self._flushes)

    def flush(self) -> None:
        """Flush the listeners that batch."""
        for flush in self._flushes:
            flush()


@dataclass(frozen=True)
class ArmPending:
    """The missing samples of one version of a target: one arm of an A/B comparison."""

    target: Target
    pending: Sequence[Pending]
    redactor: Redactor = field(default_factory=Redactor)
    """Applied to each of this arm's samples before it is written."""
    source: TargetSource | None = None
    """What a cluster's workers build the target from (a cluster executor needs it)."""
    first_block: Mapping[str, int] = field(default_factory=dict)
    """Per case id, the repeat its calls' first block of the schedule opens at (else 0): arms
    whose cases take repeats from different places (a control beside its candidate) then meet
    call for call, not repeat number for repeat number."""


class Executor(Protocol):
    """Makes a run's target calls: takes the pending samples of one or more arms, interleaved
    in `schedule.call_order(arms, seed)`, writing each through one `SampleWriter` as it arrives
    and telling `hooks`.
    """

    def take(
        self, store: Store, arms: Sequence[ArmPending], hooks: SampleHooks, jobs: int, seed: int
    ) -> list[int]:
        """Take every arm's pending samples, starting them in the order `seed` draws, at most
        `jobs` calls at once where the executor decides how many run (a cluster runs as many as
        its workers have threads).

        Returns:
            The calls made per arm, in the order of `arms`.
        """
        ...
