"""The command target against real subprocesses of `bench/fake_target.py` (and the function target).

Each test spawns at most a few short-lived processes; timeouts are kept to about a second.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from noisefloor.errors import TargetConfigError
from noisefloor.targets import (
    CaseInput,
    CommandTarget,
    FunctionTarget,
    Outcome,
    RawSample,
    Target,
)

FAKE = Path(__file__).resolve().parents[2] / "bench" / "fake_target.py"
HOSTILE = '"; touch pwned; $(touch pwned2)'


def _target(tmp_path: Path, *args: str, python: bool = False, **kwargs: Any) -> CommandTarget:
    """A command target running the fake program (or `python -c`, when `python` is set)."""
    head = [sys.executable] if python else [sys.executable, str(FAKE)]
    options: dict[str, Any] = {"cwd": tmp_path, "env": {}, "timeout_s": 5.0, "key": "k", "spec": {}}
    options.update(kwargs)
    return CommandTarget(argv=[*head, *args], **options)


def _run(target: Target, text: str = "what is the capital?", repeat: int = 0) -> RawSample:
    async def go() -> RawSample:
        try:
            return await target.sample(CaseInput(case_id="c1", input=text), repeat, 1)
        finally:
            await target.aclose()

    return asyncio.run(go())


def _alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _assert_all_dead(pid_file: Path) -> None:
    pids = [int(line) for line in pid_file.read_text().split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 2.0
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [pid for pid in pids if _alive(pid)]


def test_ok_json_sample_records_everything(tmp_path: Path) -> None:
    target = _target(tmp_path, "{{input}}", "--repeat", "{{repeat}}", output_format="json")
    sample = _run(target, repeat=4)
    assert sample.outcome is Outcome.OK and sample.error is None
    assert sample.kind == "command" and sample.case_id == "c1" and sample.repeat == 4
    assert sample.exit_code == 0
    assert sample.parsed["question"] == "what is the capital?"
    assert sample.parsed["citations"] == [{"source": "atlas", "score": 0.9}]
    assert sample.argv == [sys.executable, str(FAKE), "what is the capital?", "--repeat", "4"]
    assert sample.output.text.startswith('{"answer": "Paris"')
    assert sample.stderr is not None and sample.stderr.text == ""
    assert sample.started_at.endswith("Z") and sample.started_at[:2] == "20"
    assert 0 < sample.wall_s < 5 and sample.cpu_s is not None and sample.cpu_s > 0


def test_text_output_is_not_parsed_and_env_overrides(tmp_path: Path) -> None:
    target = _target(tmp_path, env={"NOISEFLOOR_FAKE_ANSWER": "Lyon"})
    sample = _run(target)
    assert sample.outcome is Outcome.OK and sample.parsed is None
    assert '"answer": "Lyon"' in sample.output.text


def test_nonzero_exit_is_error_exit_with_status(tmp_path: Path) -> None:
    sample = _run(_target(tmp_path, "--exit-code", "3"))
    assert sample.outcome is Outcome.EXIT
    assert sample.exit_code == 3 and sample.error == "exited with status 3"
    assert sample.stderr is not None and "exiting with 3" in sample.stderr.text


def test_fail_every_fails_only_those_repeats(tmp_path: Path) -> None:
    target = _target(tmp_path, "--fail-every", "2", "--repeat", "{{repeat}}")
    assert _run(target, repeat=0).outcome is Outcome.EXIT
    assert _run(target, repeat=1).outcome is Outcome.OK


def test_killed_by_signal_has_negative_exit_code(tmp_path: Path) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    sample = _run(_target(tmp_path, "-c", code, python=True))
    assert sample.outcome is Outcome.EXIT and sample.exit_code == -15
    assert sample.error is not None and sample.error.startswith("killed by signal 15")


@pytest.mark.parametrize("flag", ["--garbage", "--no-output"])
def test_unparsable_json_output_is_error_parse(tmp_path: Path, flag: str) -> None:
    sample = _run(_target(tmp_path, flag, output_format="json"))
    assert sample.outcome is Outcome.PARSE and sample.exit_code == 0
    assert sample.error is not None and "not JSON" in sample.error
    assert sample.parsed is None


def test_spawn_failures(tmp_path: Path) -> None:
    missing = CommandTarget(
        argv=["no-such-program-xyz", "{{input}}"],
        cwd=tmp_path,
        env={},
        timeout_s=5,
        key="k",
        spec={},
    )
    sample = _run(missing)
    assert sample.outcome is Outcome.SPAWN and sample.exit_code is None
    assert sample.error is not None and "No such file" in sample.error
    assert sample.argv == ["no-such-program-xyz", "what is the capital?"]

    bad_cwd = _run(_target(tmp_path / "nowhere"))
    assert bad_cwd.outcome is Outcome.SPAWN and "nowhere" in (bad_cwd.error or "")

    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    denied = _run(
        CommandTarget(argv=[str(script)], cwd=tmp_path, env={}, timeout_s=5, key="k", spec={})
    )
    assert denied.outcome is Outcome.SPAWN and "ermission" in (denied.error or "")


def test_timeout_kills_the_whole_group_and_keeps_partial_output(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    args = ["--sleep", "30", "--grandchild-sleep", "30", "--pid-file", str(pid_file)]
    sample = _run(_target(tmp_path, *args, "--stderr", "started", timeout_s=1.0))
    assert sample.outcome is Outcome.TIMEOUT and sample.exit_code is None
    assert sample.error is not None and "timed out after 1 s" in sample.error
    assert sample.stderr is not None and sample.stderr.text == "started\n"
    assert 1.0 <= sample.wall_s < 2.5
    _assert_all_dead(pid_file)


def test_grandchild_holding_stdout_does_not_delay_or_survive(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    args = ["--grandchild-sleep", "30", "--pid-file", str(pid_file)]
    started = time.perf_counter()
    sample = _run(_target(tmp_path, *args, output_format="json"))
    assert time.perf_counter() - started < 3
    assert sample.outcome is Outcome.OK and sample.parsed["answer"] == "Paris"
    _assert_all_dead(pid_file)


def test_invalid_utf8_is_kept_losslessly(tmp_path: Path) -> None:
    sample = _run(_target(tmp_path, "--invalid-bytes"))
    assert sample.outcome is Outcome.OK
    assert sample.output.raw() == b"\xff\xfe caf\xe9 \x80"
    assert sample.output.b64 is not None and "\ufffd" in sample.output.text
    assert sample.output.size == 9 and not sample.output.truncated


def test_huge_output_is_capped_and_counted(tmp_path: Path) -> None:
    sample = _run(_target(tmp_path, "--huge-mb", "50", max_output_bytes=10_000_000))
    assert sample.outcome is Outcome.OK
    assert sample.output.truncated and sample.output.size == 50_000_000
    assert len(sample.output.raw()) == 10_000_000


def test_huge_json_output_cut_at_cap_is_a_parse_error(tmp_path: Path) -> None:
    sample = _run(_target(tmp_path, "--huge-mb", "1", max_output_bytes=1000, output_format="json"))
    assert sample.outcome is Outcome.PARSE and sample.error is not None
    assert "cut at 1000 bytes" in sample.error


@pytest.mark.parametrize("text", [HOSTILE, "-rf", "--answer=evil", "two words", "", "{{repeat}}"])
def test_input_reaches_the_program_as_exactly_one_argument(tmp_path: Path, text: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    sample = _run(_target(work, "--echo-argv", "{{input}}", output_format="json"), text)
    assert sample.outcome is Outcome.OK
    assert sample.parsed == {"argv": ["--echo-argv", text]}
    assert list(work.iterdir()) == []


def test_leading_dash_input_is_the_question(tmp_path: Path) -> None:
    sample = _run(_target(tmp_path, "{{input}}", output_format="json"), "-x")
    assert sample.outcome is Outcome.OK and sample.parsed["question"] == "-x"


def test_cpu_time_of_the_child_is_recorded(tmp_path: Path) -> None:
    sample = _run(_target(tmp_path, "-c", "sum(range(3_000_000))", python=True))
    assert sample.outcome is Outcome.OK
    assert sample.cpu_s is not None and 0.01 < sample.cpu_s < sample.wall_s + 0.5


def test_stdin_is_closed(tmp_path: Path) -> None:
    code = "import sys; print(len(sys.stdin.buffer.read()))"
    sample = _run(_target(tmp_path, "-c", code, python=True, timeout_s=3.0))
    assert sample.outcome is Outcome.OK and sample.output.text == "0\n"
    assert sample.wall_s < 2


def test_concurrent_samples_and_kill_all(tmp_path: Path) -> None:
    quick = _target(tmp_path, "--repeat", "{{repeat}}", "{{input}}", output_format="json")
    slow = _target(tmp_path, "--sleep", "30", timeout_s=20.0)
    case = CaseInput(case_id="c", input="q")

    async def go() -> tuple[list[RawSample], RawSample]:
        pending = asyncio.ensure_future(slow.sample(case, 0, 4))
        samples = await asyncio.gather(*(quick.sample(case, r, 4) for r in range(3)))
        await asyncio.sleep(0.2)
        await slow.aclose()
        return list(samples), await pending

    samples, killed = asyncio.run(go())
    assert [s.repeat for s in samples] == [0, 1, 2]
    assert all(s.outcome is Outcome.OK and s.concurrency == 4 for s in samples)
    assert killed.outcome is Outcome.EXIT and killed.exit_code == -9
    assert killed.wall_s < 10


def test_unknown_placeholder_is_rejected_at_construction(tmp_path: Path) -> None:
    with pytest.raises(TargetConfigError) as info:
        _target(tmp_path, "{{inptu}}")
    assert info.value.where == "command target argv[2]"
    assert info.value.hint is not None and "did you mean {{input}}?" in info.value.hint


def test_command_target_satisfies_the_protocol(tmp_path: Path) -> None:
    target = _target(tmp_path, key="abc", spec={"argv": ["x"]})
    assert isinstance(target, Target)
    assert target.kind == "command" and target.key == "abc" and target.spec == {"argv": ["x"]}


def _answer(case_input: str, case_id: str, repeat: int) -> str:
    if repeat == 2:
        raise RuntimeError("model exploded")
    return f"{case_id}:{repeat}:{case_input}"


async def _async_answer(case_input: str, case_id: str, repeat: int) -> str:
    await asyncio.sleep(0)
    return case_input.upper()


def test_function_target_outputs_and_failures() -> None:
    target = FunctionTarget(_answer)
    assert isinstance(target, Target) and target.kind == "function"
    ok = _run(target, "hi", repeat=1)
    assert ok.outcome is Outcome.OK and ok.output.text == "c1:1:hi" and ok.exit_code is None
    failed = _run(target, "hi", repeat=2)
    assert failed.outcome is Outcome.EXIT
    assert failed.error == "RuntimeError: model exploded"


def test_function_target_async_and_non_string() -> None:
    assert _run(FunctionTarget(_async_answer), "hi").output.text == "HI"

    def not_text(case_input: str, case_id: str, repeat: int) -> Awaitable[str] | str:
        return 42  # type: ignore[return-value]

    sample = _run(FunctionTarget(not_text))
    assert sample.outcome is Outcome.EXIT and sample.error == "returned int, expected str"
