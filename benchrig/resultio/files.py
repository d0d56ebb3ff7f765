"""Result files: validated against schema/result.schema.json, written atomically, loaded back."""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import gc
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, count
from operator import sub
from pathlib import Path
from typing import Any

from benchrig import durable
from benchrig.core.errors import ResultError, UsageError
from benchrig.resultio.record import Record, Shared, from_json
from benchrig.schemas import problems

SCHEMA_VERSION = 1
EXAMPLE = "EXAMPLE.json"
EXCERPT_CHARS = 400
# A result file BenchRig writes is tens of KiB and nests about ten deep (raw engine counters
# at most jsonsafe.MAX_DEPTH below `metrics.engine`); a file past either is not one of ours.
RESULT_CAP = 16 << 20  # bytes
MAX_NESTING = 100  # arrays and objects inside one another
# What a view makes beside the reading (load_records' `also`) may leave reference cycles
# (json's indenting encoder leaves one a call), which the paused collector would keep to the
# end: the young generation is collected every YOUNG_EVERY files, a walk over what those
# files left, never over every record.
YOUNG_EVERY = 1000


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


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write via a temporary file in the same folder and rename: never half a file. `text`
    may come in pieces (a report's page, made as it is written). On the disk (fsync of the
    file and its folder) in the background, by the process's exit at the latest (`durable`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    kept = -1
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines([text] if isinstance(text, str) else text)
            handle.flush()
            kept = os.dup(handle.fileno())  # the written inode, whatever the name holds later
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if kept >= 0:
            os.close(kept)
        raise
    durable.later(kept, path.parent)


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


class Unreadable(Exception):
    """A file that is not read: a link, a FIFO, a device, a folder, or too large."""


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def read_regular(file: str | Path, cap: int, follow: bool = False) -> bytes:
    """The bytes of `file`, or Unreadable: only a regular file of at most `cap` bytes is
    read. Opened without blocking (a FIFO would wait for a writer forever) and, unless
    `follow`, never through a symbolic link (a `.json` link to /dev/zero never ends); what
    was opened is checked by its descriptor, so nothing can be swapped in between."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(file, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise Unreadable("a symbolic link, not a regular file") from None
        raise Unreadable(f"cannot open it: {exc.strerror or type(exc).__name__}") from None
    try:
        mode = os.fstat(fd)
        if not stat.S_ISREG(mode.st_mode):
            raise Unreadable(f"{_kind(mode.st_mode)}, not a regular file")
        if mode.st_size > cap:
            raise Unreadable(f"{mode.st_size:,} bytes, over the cap of {cap:,}")
        parts: list[bytes] = []
        size = 0
        while size <= cap:  # it may grow after fstat: never read past the cap
            part = os.read(fd, min(cap + 1 - size, 1 << 20))
            if not part:
                return b"".join(parts)
            parts.append(part)
            size += len(part)
        raise Unreadable(f"over the cap of {cap:,} bytes")
    except OSError as exc:
        raise Unreadable(f"cannot read it: {exc.strerror or type(exc).__name__}") from None
    finally:
        os.close(fd)


# Strings are taken out before brackets are counted (a bracket in a string is text), then
# everything but the brackets; all at C speed.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
_OPENER = bytes.maketrans(b"[{]}", b"\x01\x01\x00\x00")


def nested_deeper(data: bytes, limit: int) -> bool:
    """Whether the JSON text `data` nests arrays and objects more than `limit` deep. The
    depth after the i-th bracket is twice the openers so far less i: its maximum is found
    by C-level iterators, about 60 ns a bracket (a 16 MiB file of nothing but brackets in
    about a second); a file with fewer brackets than the limit costs two byte counts."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKET)
    opened = accumulate(brackets.translate(_OPENER))  # 1 for an opener, 0 for a closer
    return max(map(sub, map((2).__mul__, opened), count(1)), default=0) > limit


def _parsed(file: Path) -> Any:
    """The JSON in `file` exactly as `json.loads(file.read_text("utf-8"))` reads it, or its
    error (the reading itself as `read_regular` does it)."""
    return _parsed_bytes(read_regular(file, RESULT_CAP))


def _parsed_bytes(data: bytes) -> Any:
    """`data` exactly as `json.loads(data.decode("utf-8"))` reads it, or its error. orjson
    reads it 2-3 times faster; where it would read it otherwise (an integer beyond 64 bits)
    or not at all (NaN, 1e400, a lone surrogate, a byte-order mark, not UTF-8, not JSON),
    json reads it instead."""
    import orjson  # here: writing a result needs none of it (a few ms of start-up)

    if not _long_whole_number(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    text = data.decode("utf-8")
    if "\r" in text:  # as read_text reads it (universal newlines): the same error positions
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return json.loads(text)


@dataclass(frozen=True)
class Loaded:
    results: list[dict[str, Any]]
    rejected: list[tuple[Path, str]]


@dataclass(frozen=True)
class Records:
    """The valid results as the views read them (record.Record), and the files refused."""

    records: list[Record]
    rejected: list[tuple[Path, str]]


def _read_result(file: str | Path) -> Any:
    """One result file's JSON, or Unreadable saying why it is not read."""
    data = read_regular(file, RESULT_CAP)
    if nested_deeper(data, MAX_NESTING):
        raise Unreadable(f"nested more than {MAX_NESTING} deep")
    try:
        return _parsed_bytes(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Unreadable(f"not readable JSON: {exc}") from None


def _listed(paths: list[Path]) -> list[str]:
    """Folders expanded (their *.json, by name: what `glob("*.json")` lists, a dotfile too),
    EXAMPLE.json left out; each file's path as text, made a Path only where one is kept (a
    Path per file was a tenth of a summary's own time at 100,000)."""
    files: list[str] = []
    for path in paths:
        if not path.is_dir():
            if path.name != EXAMPLE:
                files.append(str(path))
            continue
        try:
            names = os.listdir(path)
        except PermissionError:  # as glob: a folder it may not list has nothing in it
            names = []
        folder = str(path)
        files.extend([os.path.join(folder, name) for name in sorted(names)
                      if name.endswith(".json") and name != EXAMPLE])  # a sample, not a run
    return files


def _files(paths: list[Path]) -> list[Path]:
    """`_listed` as paths."""
    return [Path(file) for file in _listed(paths)]


def read_valid(file: str | Path) -> dict[str, Any]:
    """One result file read as hostile input and validated: its JSON, or Unreadable saying
    why it is not a result (the one check every reader of result files makes)."""
    try:
        data = _read_result(file)
        found = problems("result", data)
    except (RecursionError, ValueError) as exc:  # the validator's own words failed it
        raise Unreadable(f"cannot be validated: {type(exc).__name__}") from None
    if found:
        raise Unreadable("; ".join(found[:3]))
    valid: dict[str, Any] = data
    return valid


def _each(files: list[str]) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """Each file with its valid JSON, or with why it is refused: one at a time."""
    for file in files:
        try:
            yield file, read_valid(file)
        except Unreadable as exc:
            yield file, str(exc)


def load_results(paths: list[Path]) -> Loaded:
    """Read result files (folders are expanded; EXAMPLE.json is skipped) through the one
    reader every command uses: a file that is not a regular file, is too large or too deep,
    is not JSON or not a valid result is reported by name with why (`rejected`) and never
    mixed in; the others are read all the same. Whole files: for a command that needs all
    of each (resume, prune); the views read `load_records`."""
    results: list[dict[str, Any]] = []
    rejected: list[tuple[Path, str]] = []
    for file, found in _each(_listed(paths)):
        if isinstance(found, str):
            rejected.append((Path(file), found))
        else:
            results.append(found)
    return Loaded(results, rejected)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while results pile up: they hold no cycles, and each
    full collection would re-walk all kept so far (with whole files kept, the per-file cost
    rose 47-70 % past 10,000 results). A command that keeps them to its end may freeze them
    after (`freeze_loaded`)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def freeze_loaded(refused: bool = True) -> None:
    """For a command that keeps what it loaded until it exits: one collection when a file
    was `refused` (its traceback may hold a cycle; with none refused the loading made no
    garbage worth a walk over every record: 0.5 s at 100,000), then everything alive moved
    out of the collector's sight, so the report's own collections never walk the records
    again. Not for a library caller, whose heap it would freeze too."""
    if refused:
        gc.collect()
    gc.freeze()


def load_records(paths: list[Path],
                 also: Callable[[Record, dict[str, Any]], None] | None = None,
                 whole: bool | Callable[[str], bool] = True) -> Records:
    """`load_results` for the views: read and validated the same way, file by file, each
    valid result kept only as its compact record (record.from_json) before the next is read,
    so memory grows by a record, not a parsed file, per result. `also` is handed each valid
    result's record and its whole JSON while it is in hand (the report's drill-downs: no
    file is read twice). `whole` False: lean records, for the commands that show no whole
    attempt (summary, compare: record.WHOLE_ONLY); a function of the suite's name: whole only
    for the suites it names (a suite whose own report figures may read any field). Repeated
    parts are shared (record.Shared)."""
    records: list[Record] = []
    rejected: list[tuple[Path, str]] = []
    shared = Shared()
    asked: dict[Any, bool] = {}  # whole's answer by suite: asked once a suite, not a result
    with _collector_paused():
        for index, (file, found) in enumerate(_each(_listed(paths)), 1):
            if isinstance(found, str):
                rejected.append((Path(file), found))
            else:
                if isinstance(whole, bool):
                    keep = whole
                else:
                    if (suite := found["suite"]) not in asked:  # a str: the schema says so
                        asked[suite] = whole(suite)
                    keep = asked[suite]
                records.append(record := from_json(found, file, keep, shared))
                if also is not None:
                    also(record, found)
            if also is not None and index % YOUNG_EVERY == 0:
                gc.collect(0)
    return Records(records, rejected)
