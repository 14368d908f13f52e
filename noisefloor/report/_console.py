"""Text for a terminal, drawn by rich: lines cut to the screen's width, paragraphs wrapped under
their label, colour only when the screen takes it; what `terminal` and the other text reports share.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text

# rich loads when a page is drawn: `--help`, `--version` and the JSON report never pay for it.

__all__ = ["Page", "Screen", "fit", "wrapped"]

#: The width of a screen that is not a terminal (a pipe, a file, a CI log) when COLUMNS is unset.
DEFAULT_WIDTH = 80


@dataclass(frozen=True)
class Screen:
    """Where text goes: its width in columns, and whether it takes colour."""

    width: int = DEFAULT_WIDTH
    color: bool = False


def fit(text: str, room: int) -> str:
    """`text` cut to `room` characters, an ellipsis marking the cut."""
    if len(text) <= room:
        return text
    return text[: max(0, room - 1)] + "…" if room > 0 else ""


@dataclass
class Page:
    """Lines to draw on one screen: each `line` is one row cut at the width, each `para` wraps
    under its label; `text()` draws them all."""

    screen: Screen
    _rows: list[tuple[str, Any]] = field(default_factory=list)

    def line(self, *parts: tuple[str, str]) -> None:
        """One row of (text, style) parts, cut at the screen's width."""
        self._rows.append(("line", parts))

    def para(self, label: str, text: str, style: str = "", indent: int = 0) -> None:
        """`label` then `text`, wrapped within the width, each later row under the text's start."""
        self._rows.append(("para", (label, text, style, indent)))

    def blank(self) -> None:
        """An empty row."""
        self._rows.append(("line", ()))

    def __len__(self) -> int:
        return len(self._rows)

    def text(self) -> str:
        """Every row drawn: plain text, with colour codes only when the screen takes colour."""
        from rich.console import Console
        from rich.table import Table

        out = io.StringIO()
        console = Console(
            file=out,
            width=self.screen.width,
            force_terminal=self.screen.color,
            color_system="standard" if self.screen.color else None,
            highlight=False,
            markup=False,
            emoji=False,
            legacy_windows=False,
            soft_wrap=False,
            _environ={},  # the width and colour are the screen's, never read again here
        )
        for kind, value in self._rows:
            if kind == "line":
                console.print(_text(value), no_wrap=True, overflow="ellipsis", crop=True)
                continue
            label, text, style, indent = value
            grid = Table.grid(padding=(0, 1, 0, 0) if label else 0)
            if indent:
                grid.add_column(width=indent - (1 if label else 0), no_wrap=True)
            if label:
                grid.add_column(no_wrap=True)
            grid.add_column(overflow="fold")
            cells: list[Any] = [""] if indent else []
            if label:
                cells.append(_text(((label, style),)))
            cells.append(_text(((text, ""),)))
            grid.add_row(*cells)
            console.print(grid, crop=True)
        return "\n".join(line.rstrip() for line in out.getvalue().split("\n"))


def _text(parts: tuple[tuple[str, str], ...]) -> Text:
    from rich.text import Text

    text = Text()
    for part, style in parts:
        text.append(part, style=style or None)
    return text


def wrapped(text: str, screen: Screen) -> str:
    """Plain text with each line wrapped to the screen's width, its later rows under its own
    start: for outputs written as lines (`plan`)."""
    page = Page(screen)
    for line in text.splitlines():
        body = line.lstrip(" ")
        if not body:
            page.blank()
            continue
        indent = len(line) - len(body)
        page.para("", body, indent=indent)
    return page.text()
