"""Result files: validated against schema/result.schema.json, written atomically, loaded back."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig.core.errors import ResultError, UsageError
from benchrig.schemas import problems

SCHEMA_VERSION = 1
EXAMPLE = "EXAMPLE.json"
EXCERPT_CHARS = 400


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def safe_name(text: str) -> str:
    """A model name or path made safe for a file name (`qwen2.5-coder:7b` → `qwen2.5-coder-7b`)."""
    if text.endswith(".gguf") or "/" in text:
        text = Path(text).name.removesuffix(".gguf")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "model"


def excerpt(text: str) -> str:
    return text[-EXCERPT_CHARS:]


def validate(result: dict[str, Any]) -> None:
    found = problems("result", result)
    if found:
        raise ResultError("; ".join(found))


def result_path(directory: Path, result: dict[str, Any]) -> Path:
    day = result["started_at"][:10]
    name = f"{day}-{safe_name(result['model'])}-{result['task']}-{result['run_id']}.json"
    return directory / name


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def result_text(result: dict[str, Any]) -> str:
    """A result as its file holds it: strict JSON (no NaN or Infinity), indented."""
    return json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def check_results_dir(directory: Path) -> None:
    """UsageError unless result files can be written into `directory` (made if missing):
    found before any model is called, not after its first answer. Probed by writing a file,
    since permission bits say nothing of a read-only mount, and root ignores them."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"results folder {directory} is a file, not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory, prefix=".benchrig-probe-"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write results to {directory}: "
                         f"{exc.strerror or type(exc).__name__}") from None


# A number whose whole part has 19 digits or more may be an integer beyond 64 bits, which
# orjson reads as a float. Found in the file's shape (every digit a 0, the decimal point
# kept, any other byte a space) at C speed: a run of 19 zeros is a whole part unless a
# point comes before it (the decimals of a float such as 0.00012345678901234567).
_SHAPE = bytes(ord("0") if byte in b"0123456789" else byte if byte == ord(".") else ord(" ")
               for byte in range(256))
_LONG_RUN = b"0" * 19


def _long_whole_number(data: bytes) -> bool:
    shape = data.translate(_SHAPE)
    at = shape.find(_LONG_RUN)
    while at != -1:
        start = max(shape.rfind(b" ", 0, at), shape.rfind(b".", 0, at)) + 1
        if start == 0 or shape[start - 1] != ord("."):
            return True  # a long string of digits is taken for a number too: no harm
        after = [end for end in (shape.find(b" ", at), shape.find(b".", at)) if end != -1]
        at = shape.find(_LONG_RUN, min(after)) if after else -1
    return False


def _parsed(file: Path) -> Any:
    """The JSON in `file` exactly as `json.loads(file.read_text("utf-8"))` reads it, or its
    error. orjson reads it 2-3 times faster; where it would read it otherwise (an integer
    beyond 64 bits) or not at all (NaN, 1e400, a lone surrogate, a byte-order mark, not
    UTF-8, not JSON), json reads the file instead."""
    import orjson  # here: writing a result needs none of it (a few ms of start-up)

    data = file.read_bytes()
    if not _long_whole_number(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(file.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Loaded:
    results: list[dict[str, Any]]
    rejected: list[tuple[Path, str]]


def load_results(paths: list[Path]) -> Loaded:
    """Read result files (folders are expanded; EXAMPLE.json is skipped); invalid ones are
    reported by name, never mixed in."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.glob("*.json"), key=lambda f: f.name))  # one folder
        else:
            files.append(path)
    files = [f for f in files if f.name != EXAMPLE]  # a published sample, not a run
    results: list[dict[str, Any]] = []
    rejected: list[tuple[Path, str]] = []
    for file in files:
        try:
            data = _parsed(file)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            rejected.append((file, f"not readable JSON: {exc}"))
            continue
        found = problems("result", data)
        if found:
            rejected.append((file, "; ".join(found[:3])))
        else:
            results.append(data)
    return Loaded(results, rejected)
