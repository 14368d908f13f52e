"""A scorer that needs what the suite's target cannot give (token usage from a command) is refused
when the suite loads, through the real command line: exit 3, every such scorer named, no call."""

from __future__ import annotations

from pathlib import Path

from tests.builders import answer_case, fake_suite


def test_a_tokens_scorer_on_a_command_target_is_refused_before_any_call(
    cli, project: Path, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.log"
    case = answer_case("a")
    case["scorers"].append("tokens")
    suite = fake_suite(project, [case], env={"NOISEFLOOR_FAKE_LOG_CALLS": str(calls)})

    line = suite.read_text(encoding="utf-8").splitlines().index("  - tokens") + 1

    result = cli("check", suite)

    assert result.code == 3, result.err
    assert (
        f"{suite}:{line}: cases[0].scorers[2]: case 'a': scorer 'tokens' needs usage (the tokens "
        "each answer took, as an endpoint reports them), which a command target does not "
        "provide: remove it from the case's `scorers`, or use a target of a kind that provides "
        "it (http, inspect)"
    ) in result.err
    assert not calls.exists()
    assert not list((tmp_path / "store").rglob("r0.json"))


def test_every_case_a_target_cannot_serve_is_named_at_once(cli, project: Path) -> None:
    inherits = {"id": "b", "input": "question b"}
    own = answer_case("c")
    own["scorers"].append({"type": "tokens", "count": "total", "max": 100})
    typo = answer_case("d")
    typo["scorers"].append("tokns")
    suite = fake_suite(project, [answer_case("a"), inherits, own, typo])
    text = suite.read_text(encoding="utf-8")
    suite.write_text(
        text.replace("  baseline_repeats: 5\n", "  baseline_repeats: 5\n  scorers: [tokens]\n"),
        encoding="utf-8",
    )

    result = cli("run", suite)

    assert result.code == 3, result.err
    assert "3 problems in suite" in result.err
    assert (
        "cases[1].scorers[0]: case 'b': scorer 'tokens' needs usage (the tokens each answer "
        "took, as an endpoint reports them), which a command target does not provide: remove it "
        "from `defaults.scorers` (or give the case `scorers` of its own), or use a target of a "
        "kind that provides it (http, inspect)"
    ) in result.err
    assert "cases[2].scorers[2]: case 'c': scorer 'tokens' needs usage" in result.err
    assert "cases[3].scorers[2].type: unknown scorer 'tokns'" in result.err
