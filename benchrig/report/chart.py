"""The HTML charts' geometry and colours, shared by the page and the suites' panels (a
panel that draws a chart needs these, not the page writer and everything it imports)."""

from __future__ import annotations

from dataclasses import dataclass

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
CHART_WIDTH = 360  # pixels of the longest bar
ROW = 16  # pixels per bar


def colour(index: int) -> str:
    """A series' colour: the palette's ten, then hues a golden angle apart, so that no two
    of any number of series share one (the palette repeated after ten)."""
    if index < len(PALETTE):
        return PALETTE[index]
    return f"hsl({(index * 137.508) % 360:.1f},65%,{45 + (index % 3) * 8}%)"


@dataclass(frozen=True)
class Bar:
    """One bar of a chart, in pixels, with its label and the figure it shows."""

    y: int
    width: float
    label: str
    text: str
    colour: str
    low: float | None = None  # the interval's ends, in pixels
    high: float | None = None
