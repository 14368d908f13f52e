"""The plots of the HTML report, drawn by matplotlib's SVG backend: each case's pass rates with
their Wilson intervals and its continuous scorers' values, as one compact inline SVG."""

# Why matplotlib, not altair + vl-convert-python: measured for a 30-case report (a rate plot and
# a value strip per case, 60 plots) on the 2-core development machine, each library in turn:
#   import            matplotlib 0.70-0.80 s     altair + vl_convert 0.38-0.45 s
#   drawing           2.0 s (fixed layout)       3.9-5.1 s
#   SVG size          541 KiB                    603 KiB
#   installed         ~80 MB with its deps       ~100 MB (vl-convert ships a JavaScript engine)
# matplotlib imports slower but draws faster, and a report draws many plots. A plot per case is
# still ~0.1 s and ~15 KiB after `_compact`, so a page plots its first cases only
# (`noisefloor.report.html.CASES_IN_DETAIL`).

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from noisefloor.errors import UsageError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "BASELINE_COLOUR",
    "CANDIDATE_COLOUR",
    "HistoryPoint",
    "RatePlot",
    "case_svg",
    "history_svg",
    "require_plotting",
]

#: The two sides, alike in every plot and in the page's legend.
BASELINE_COLOUR = "#4c72b0"
CANDIDATE_COLOUR = "#dd8452"

_WIDTH_IN = 6.0
_LEFT_IN = 1.9
_PLOT_IN = 3.9
_ROW_IN = 0.2
_TOP_IN = 0.12
_BOTTOM_IN = 0.42
# the ids matplotlib derives from this salt are hashes of what they name: several plots on one
# page then share ids only for identical definitions, and the output is reproducible
_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "noisefloor",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 8.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def require_plotting(flag: str) -> None:
    """Fail early (exit 3), naming the `flag` that asked for plots, with the install line when
    matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(
            f"{flag} needs matplotlib, which is not installed",
            hint="pip install 'noisefloor[html]'",
        ) from None


@dataclass(frozen=True)
class RatePlot:
    """One scorer of a case: each side's pass rate and Wilson interval, and its values."""

    label: str
    baseline: tuple[float, float, float] | None
    """Rate, low and high end of the interval; None when the side has no rate."""
    candidate: tuple[float, float, float] | None
    baseline_values: Sequence[float] = ()
    candidate_values: Sequence[float] = ()


def case_svg(scorers: Sequence[RatePlot], title: str) -> str:
    """One case's plot as an inline `<svg>`: a dot-and-whisker row per scorer and side, then a
    strip of the values of each continuous scorer. Empty when there is nothing to draw.

    A side no scorer has (a run shown without a comparison) takes no row."""
    sides = [
        (name, colour)
        for name, colour in (("baseline", BASELINE_COLOUR), ("candidate", CANDIDATE_COLOUR))
        if any(getattr(s, name) or getattr(s, f"{name}_values") for s in scorers)
    ]
    rates = [s for s in scorers if s.baseline or s.candidate]
    values = [s for s in scorers if s.baseline_values or s.candidate_values]
    if not rates and not values:
        return ""
    import matplotlib
    from matplotlib.figure import Figure

    rows = [len(sides) * len(rates)] if rates else []
    rows += [len(sides)] * len(values)
    with matplotlib.rc_context(_RC):
        # a fixed layout in inches: a layout engine measured every label again (+40% time)
        heights = [r * _ROW_IN + _TOP_IN for r in rows]
        total = sum(heights) + _BOTTOM_IN * len(rows)
        fig = Figure(figsize=(_WIDTH_IN, total))
        fig.patch.set_visible(False)
        panels = []
        top = total
        for h in heights:
            top -= h
            panels.append(
                fig.add_axes(
                    (_LEFT_IN / _WIDTH_IN, top / total, _PLOT_IN / _WIDTH_IN, (h - _TOP_IN) / total)
                )
            )
            top -= _BOTTOM_IN
        if rates:
            _rates(panels.pop(0), rates, sides)
        for axis, scorer in zip(panels, values, strict=True):
            _values(axis, scorer, sides)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return _inline(buf.getvalue(), title)


def _rates(ax: Axes, scorers: Sequence[RatePlot], sides: Sequence[tuple[str, str]]) -> None:
    labels: list[str] = []
    for scorer in scorers:
        for side, colour in sides:
            y = -len(labels)
            labels.append(f"{scorer.label}  {side}")
            point: tuple[float, float, float] | None = getattr(scorer, side)
            if point is None:
                continue
            rate, low, high = point
            ax.errorbar(
                [rate],
                [y],
                xerr=[[max(rate - low, 0.0)], [max(high - rate, 0.0)]],
                fmt="o",
                ms=5,
                capsize=3,
                color=colour,
            )
    ax.patch.set_visible(False)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-len(labels) + 0.4, 0.6)
    ax.set_yticks([-y for y in range(len(labels))], labels)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1])
    ax.set_xlabel("pass rate, 95% Wilson interval")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)


def _values(ax: Axes, scorer: RatePlot, sides: Sequence[tuple[str, str]]) -> None:
    for i, (side, colour) in enumerate(sides):
        values: Sequence[float] = getattr(scorer, f"{side}_values")
        if not values:
            continue
        # a fixed jitter, so that equal values stay visible and the plot is reproducible
        offsets = [((j * 7) % 11 - 5) * 0.04 for j in range(len(values))]
        ax.plot(values, [-i + o for o in offsets], "o", ms=3.5, alpha=0.6, color=colour)
        mean = sum(values) / len(values)
        ax.plot([mean, mean], [-i - 0.35, -i + 0.35], color=colour, linewidth=2)
    ax.patch.set_visible(False)
    ax.set_ylim(-len(sides) + 0.4, 0.6)
    ax.set_yticks([-i for i in range(len(sides))], [f"{scorer.label}  {s}" for s, _ in sides])
    ax.set_xlabel("values (bar: mean)")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)


@dataclass(frozen=True)
class HistoryPoint:
    """One run of a case in a history plot: its pass rate and Wilson interval."""

    rate: float | None
    """None when the run has no valid repeat: it takes a place on the axis, without a dot."""
    low: float
    high: float
    version: str
    """The target version, shortened: a dashed line marks where it changes."""
    pooled: bool
    """The run is of the current version and in its flakiness pool: drawn in the candidate's
    colour over the pool's interval, the runs before it in the baseline's."""


_HISTORY_IN = 1.7


def history_svg(
    points: Sequence[HistoryPoint], pool: tuple[float, float] | None, title: str
) -> str:
    """One case's runs in time order as an inline `<svg>`: each run's pass rate with its
    interval, each target version named where it starts (a dashed line where it changes), and
    `pool`, the interval of the pooled rate, shaded behind the pooled runs."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(_WIDTH_IN, _HISTORY_IN))
        fig.patch.set_visible(False)
        ax = fig.add_axes(
            (0.7 / _WIDTH_IN, _BOTTOM_IN / _HISTORY_IN, 5.1 / _WIDTH_IN, 1.05 / _HISTORY_IN)
        )
        pooled = [x for x, p in enumerate(points, 1) if p.pooled]
        if pooled and pool is not None:
            ax.fill_between(
                [pooled[0] - 0.4, pooled[-1] + 0.4], *pool, color=CANDIDATE_COLOUR, alpha=0.15, lw=0
            )
        for x, p in enumerate(points, 1):
            if x == 1 or p.version != points[x - 2].version:
                if x > 1:
                    ax.axvline(x - 0.5, color="#999999", linestyle="--", linewidth=0.8)
                ax.text(x - 0.45, 1.04, p.version, fontsize=6.5, color="#666666", va="bottom")
            if p.rate is None:
                continue
            ax.errorbar(
                [x],
                [p.rate],
                yerr=[[max(p.rate - p.low, 0.0)], [max(p.high - p.rate, 0.0)]],
                fmt="o",
                ms=4,
                capsize=2,
                color=CANDIDATE_COLOUR if p.pooled else BASELINE_COLOUR,
            )
        ax.patch.set_visible(False)
        ax.set_xlim(0.4, len(points) + 0.6)
        ax.set_ylim(-0.04, 1.04)
        ax.set_yticks([0, 0.5, 1])
        ax.set_ylabel("pass rate")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("runs, oldest first (95% Wilson intervals)")
        ax.grid(axis="y", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return _inline(buf.getvalue(), title)


_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"
_NUMBER = re.compile(r"-?\d+\.\d+")


def _coarse(value: str) -> str:
    """Coordinates to a tenth of a point, far below what a screen shows."""
    return _NUMBER.sub(lambda m: f"{float(m.group()):.1f}".removesuffix(".0"), value).replace(
        " \n", " "
    )


def _compact(element: ET.Element) -> None:
    """Drop what a page does not need: group ids nothing refers to (and then the groups
    themselves), metadata, and coordinates finer than a tenth of a point."""
    children: list[ET.Element] = []
    for child in element:
        _compact(child)
        if child.tag == f"{{{_SVG}}}metadata":
            continue
        if child.tag == f"{{{_SVG}}}g":
            child.attrib.pop("id", None)
            if not child.attrib:
                children.extend(child)
                continue
        children.append(child)
    element[:] = children
    for child in children:
        child.tail = None
    if element.text is not None and not element.text.strip():
        element.text = None
    for name in ("d", "x", "y", "transform", "points"):
        if name in element.attrib:
            element.attrib[name] = _coarse(element.attrib[name])
    if element.attrib.get("transform", "").startswith("rotate(-0 "):
        del element.attrib["transform"]


def _inline(svg: str, title: str) -> str:
    """The document as an element of the page: compacted, sized by CSS, and described for
    screen readers."""
    root = ET.fromstring(svg.encode("utf-8"))
    _compact(root)
    for name in ("width", "height", "version"):
        root.attrib.pop(name, None)
    root.attrib.update({"role": "img", "aria-label": title, "class": "plot"})
    # the prefixes every SVG uses (ElementTree keeps them in a table of its own)
    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)
    return ET.tostring(root, encoding="unicode")
