"""Message: one chat message (`role`, `content`), as prompt.py renders it and drivers send it."""

from __future__ import annotations

Message = dict[str, str]
