"""Structured events on stderr: one JSON object per line, for what a user must not miss."""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger("benchrig.events")


def emit(event: str, **fields: Any) -> None:
    """Log `{"event": event, **fields}` as one JSON line at WARNING level.

    Without a configured handler, Python's last-resort handler writes the line to stderr
    as it is, so the event reaches the user whether or not the CLI is in charge.
    """
    logger.warning(json.dumps({"event": event, **fields}, ensure_ascii=False, sort_keys=True))
