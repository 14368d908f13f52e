"""Every command output shown in README.md and the site is what the command prints today."""

from __future__ import annotations

from docs import examples


def test_every_output_block_is_current_and_shown() -> None:
    blocks = examples.render_all()
    stale = examples.stale_blocks(blocks)
    assert not stale, f"stale output blocks ({', '.join(stale)}): run `{examples.REGENERATE}`"
    shown = {
        match.group("name")
        for page in examples.PAGES
        for match in examples._MARK.finditer(page.read_text(encoding="utf-8"))
    }
    unused = sorted(set(blocks) - shown)
    assert not unused, f"docs/examples.py produces blocks no page shows: {unused}"
