"""Which attempts' agents reported figures the gateway's measure disagrees with: the flag
every view shows beside a model × agent row and an attempt."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# An agent's self-report can be forged (a tool the model runs prints a usage event): the
# figure of record stays the gateway's, and every view says how often the two disagreed.
DISAGREE_NOTE = ("N disagree: in that many attempts the agent's own figures (reported_*) "
                 "differ from the gateway's measurement beyond the tolerance "
                 "(metrics.disagreement); the table shows the gateway's")


def disagreement(metrics: Mapping[str, Any]) -> dict[str, str]:
    """The attempt's flagged figures (figure → both values), {} when none or malformed (a
    result file is outside text: a non-dict is no flag)."""
    found = metrics.get("disagreement")
    if not isinstance(found, dict):
        return {}
    return {str(name): str(why) for name, why in found.items()}


def disagreeing(results: Iterable[Mapping[str, Any]]) -> int:
    """How many of these attempts flag a disagreement."""
    return sum(bool(disagreement(r.get("metrics") or {})) for r in results)


def disagree_text(count: int) -> str:
    """The flag beside the agent: empty when none of its attempts disagreed."""
    return f"{count} disagree" if count else ""
