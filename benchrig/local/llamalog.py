"""llama.cpp's own log lines, taken from its C logger: never raw on stderr; counted, and
shown through benchrig.textsafe only when asked for (BENCHRIG_LLAMA_LOG=1)."""

from __future__ import annotations

import _thread
import logging
import os
import threading
from typing import Any

from benchrig.textsafe import printable

# Set to 1 to see llama.cpp's lines (sanitised, on stderr through logging); else they are
# counted only. `benchrig serve`'s child always writes them, sanitised, to its own log.
SHOW_ENV = "BENCHRIG_LLAMA_LOG"
LINE_CAP = 4096  # a line never ended by a newline is cut here, not held without bound
logger = logging.getLogger("benchrig.llama")

# ggml_log_level: NONE 0, INFO 1, WARN 2, ERROR 3, DEBUG 4, CONT 5 (continues the last line)
COUNTED = (0, 2, 3)
CONTINUED = 5

_lock = threading.Lock()
_state: dict[str, Any] = {"installed": None, "show": False, "lines": 0, "partial": "",
                          "level": 1}


def install(show: bool | None = None) -> None:
    """Take llama.cpp's log callback for this process (after `import llama_cpp`, which sets
    its own that prints raw to stderr). `show` None: as SHOW_ENV says."""
    import llama_cpp

    with _lock:
        _state["show"] = os.environ.get(SHOW_ENV) == "1" if show is None else show
        if _state["installed"] is None:
            # kept referenced: llama.cpp holds only the C pointer
            _state["installed"] = llama_cpp.llama_log_callback(_take)
            llama_cpp.llama_log_set(_state["installed"], None)


def lines() -> int:
    """How many warnings and errors llama.cpp has logged in this process so far (the lines
    llama-cpp-python would have printed raw; its info and debug lines are not counted)."""
    return int(_state["lines"])


def shown() -> bool:
    """Whether llama.cpp's lines are shown (sanitised) rather than only counted."""
    return bool(_state["show"])


def _take(level: int, text: bytes | None, _user: Any) -> None:
    """llama.cpp's callback: pieces of lines (level 5 continues the last), joined; each whole
    warning or error counted, and every line, when shown, logged printable. Never raises
    into C."""
    try:
        piece = (text or b"").decode("utf-8", "replace")
        with _lock:
            if level != CONTINUED:
                _state["level"] = level
            buffered = _state["partial"] + piece
            *whole, rest = buffered.split("\n")
            if len(rest) > LINE_CAP:
                whole.append(rest)
                rest = ""
            _state["partial"] = rest
            if _state["level"] in COUNTED:
                _state["lines"] += len(whole)
            show = _state["show"]
        if show:
            for line in whole:
                logger.warning("llama.cpp: %s", printable(line))
    except KeyboardInterrupt:  # Ctrl-C landed here: handed back to run outside the callback
        _thread.interrupt_main()
    except Exception:
        return  # an exception cannot leave a C callback: it would be printed raw
