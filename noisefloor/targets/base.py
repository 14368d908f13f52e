"""What every target produces (`RawSample`) and the one method a target implements.

A program's failure is data: exit status, timeout and HTTP status are fields here, never exceptions.
"""

from __future__ import annotations

import base64
import enum
import hashlib
from typing import Any, Protocol, runtime_checkable

import orjson
from pydantic import BaseModel, ConfigDict

__all__ = [
    "BlockingTarget",
    "CaseInput",
    "Outcome",
    "RawSample",
    "Stream",
    "Target",
    "VersionedTarget",
    "decode_stream",
    "exchange_hashes",
    "output_sha",
]

#: Bump when a field of RawSample changes meaning.
SAMPLE_VERSION = 1


class Outcome(enum.StrEnum):
    """How one call of the target ended."""

    OK = "ok"
    #: The program exited non-zero (or was killed by a signal).
    EXIT = "error:exit"
    #: The program ran past `timeout_s` and was killed with its whole process group.
    TIMEOUT = "error:timeout"
    #: The program could not be started (missing binary, bad cwd, permissions).
    SPAWN = "error:spawn"
    #: The program's output had to be JSON and was not.
    PARSE = "error:parse"
    #: The model stopped for a reason other than `stop` (e.g. `length`).
    FINISH = "error:finish"
    #: The infrastructure failed (connection, 429, 5xx) after every retry: not the target's fault.
    INFRA = "error:infra"

    @property
    def is_target_error(self) -> bool:
        """A failure of the program under test (counts as a fail, tested as an error rate)."""
        return self not in (Outcome.OK, Outcome.INFRA)


class Stream(BaseModel):
    """Captured bytes of one output stream, lossless even when they are not UTF-8."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: str = ""
    """The bytes decoded as UTF-8 with replacement characters; what scorers read."""
    b64: str | None = None
    """The exact bytes, base64, present only when `text` does not round-trip to them."""
    size: int = 0
    """How many bytes the program produced, including any beyond the cap."""
    truncated: bool = False
    """True when the program produced more than the cap and the rest was dropped."""

    def raw(self) -> bytes:
        """The exact bytes that were kept."""
        if self.b64 is not None:
            return base64.b64decode(self.b64)
        return self.text.encode("utf-8")


def decode_stream(data: bytes, size: int | None = None, truncated: bool = False) -> Stream:
    """Decode captured bytes without ever raising, keeping the exact bytes when lossy."""
    text = data.decode("utf-8", errors="replace")
    exact = None if text.encode("utf-8") == data else base64.b64encode(data).decode("ascii")
    return Stream(
        text=text, b64=exact, size=len(data) if size is None else size, truncated=truncated
    )


class CaseInput(BaseModel):
    """What a target needs to know about one case to call the program once."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    case_id: str
    input: str


class RawSample(BaseModel):
    """One call of the target: everything it printed and how it ended. Stored as a sample file."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    version: int = SAMPLE_VERSION
    """Record format version."""
    kind: str
    """The kind of target that produced it: `command`, `http`, `function`."""
    case_id: str
    repeat: int
    """0-based repeat index."""
    outcome: Outcome
    error: str | None = None
    """Why no valid result came back, in words; None when `outcome` is ok."""
    output: Stream = Stream.model_construct()
    """stdout of a command, the message content of a chat completion."""
    stderr: Stream | None = None
    """stderr of a command; None for targets without one."""
    exit_code: int | None = None
    """Exit status; negative for a signal, None when the program never ran or was killed."""
    argv: list[str] | None = None
    """The rendered argument vector, as the program received it."""
    wall_s: float = 0.0
    """Wall-clock seconds of the call."""
    cpu_s: float | None = None
    """User + system CPU seconds of the child process, when the platform reports it."""
    started_at: str = ""
    """UTC ISO-8601 time at which the call started."""
    concurrency: int = 1
    """How many calls the harness allowed at once; latency is unreliable above 1."""
    parsed: Any = None
    """The parsed JSON output, when the target declares its output to be JSON."""
    envelope: dict[str, Any] | None = None
    """Target-specific record of the exchange (HTTP: status, usage, raw response, ...)."""
    attempts: int = 1
    """Calls made to obtain this sample, retries of infrastructure errors included."""
    redacted: list[str] | None = None
    """The variables whose values were found in this sample and replaced by `[REDACTED]` (an
    endpoint quoting its key, by the target; any secret, before the write); None: none was."""


def _user_text(messages: list[Any]) -> str:
    texts = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):  # content parts: the text ones are the prompt
            texts += [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    return "\n".join(texts)


def exchange_hashes(messages: list[Any]) -> dict[str, str]:
    """The hashes of a chat request: `prompt_sha` of the prompt text (the user messages' text,
    as the quarantine-lane design hashes its prompt) and `request_sha` of the whole message list.
    """
    request = orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)
    return {
        "prompt_sha": hashlib.sha256(_user_text(messages).encode("utf-8")).hexdigest(),
        "request_sha": hashlib.sha256(request).hexdigest(),
    }


def output_sha(text: str) -> str:
    """The `output_sha` of an output text, as envelopes and the ledger record it: its sha256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VersionedTarget:
    """What every target is given by whoever builds it: its version and its comparable spec."""

    def __init__(self, key: str, spec: dict[str, Any]) -> None:
        self._key = key
        self._spec = spec

    @property
    def key(self) -> str:
        """The target's version: changes exactly when its samples may no longer be reused."""
        return self._key

    @property
    def spec(self) -> dict[str, Any]:
        """The comparable spec: runs of different specs are not compared."""
        return self._spec


@runtime_checkable
class Target(Protocol):
    """A program under test. `sample` never raises for the program's own failures."""

    kind: str

    @property
    def key(self) -> str:
        """The target's version: changes exactly when its samples may no longer be reused."""
        ...

    @property
    def spec(self) -> dict[str, Any]:
        """The comparable spec (template, cwd, model): runs of different specs are not compared."""
        ...

    async def sample(self, case: CaseInput, repeat: int, concurrency: int) -> RawSample:
        """Call the program once for this case and repeat (0-based), under `concurrency` calls at
        once (recorded). The program's failures are the sample's outcome, never an exception."""
        ...

    async def aclose(self) -> None:
        """Release connections and pools."""
        ...


@runtime_checkable
class BlockingTarget(Target, Protocol):
    """A target whose calls block a thread (a program it launches): the harness calls it from
    threads of its own, without an event loop between the call and its sample."""

    def sample_blocking(self, case: CaseInput, repeat: int, concurrency: int) -> RawSample:
        """`sample`, in the calling thread."""
        ...

    def kill_all(self) -> None:
        """Stop every call in flight at once (their samples are dropped). Safe from any thread."""
        ...
