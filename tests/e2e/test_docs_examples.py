"""Every command output shown in README.md and the site is what the command prints today."""

from __future__ import annotations

from docs import examples


def test_every_output_block_is_current() -> None:
    blocks = examples.render_all()
    stale = examples.stale_blocks(blocks)
    assert not stale, f"stale output blocks ({', '.join(stale)}): run `{examples.REGENERATE}`"


def test_every_example_is_shown_somewhere() -> None:
    shown = {
        match.group("name")
        for page in examples.PAGES
        for match in examples._MARK.finditer(page.read_text(encoding="utf-8"))
    }
    produced = {
        "quickstart-adopt",
        "quickstart-unchanged",
        "scorers",
        "plan",
        "quickstart-mars",
        "quickstart-explain",
        "deepen",
        "quickstart-mars-deep",
        "suite-error",
        "version-change",
        "local-llm-diff",
        "local-llm-band",
    }
    assert shown == produced
