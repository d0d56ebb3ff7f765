"""A task's dataset: JSONL or CSV rows, each with its line, id and hash, and `{field}` templates
filled from a row (`{{`/`}}` literal braces; `{field!code}` in a test template is code)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchrig.resultio.files import Unreadable, read_regular
from benchrig.textsafe import printable

DATASET_CAP = 256 << 20  # bytes of one dataset file (10,000 HumanEval-sized rows are 20 MB)
# Rows of one dataset: each becomes a TaskSpec (about 2 KB), so 256 MiB of `{}` lines would be
# 90 million of them; a user with more splits the file into tasks.
MAX_ROWS = 100_000
ID_CAP = 128  # characters of a sample id (it names the sample in every result and report)
SUFFIXES = (".jsonl", ".csv")
# A sample id is printed, compared and typed on a command line (--sample-id): plain words.
SAMPLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:+-]*")
FIELD = r"[A-Za-z_][A-Za-z0-9_]*"
_PART = re.compile(r"\{\{|\}\}|\{(" + FIELD + r")(!code)?\}|[{}]")


class TemplateError(ValueError):
    """A template that cannot be read (a lone brace), or a row that cannot fill it."""


@dataclass(frozen=True)
class Row:
    """One row of a dataset: where it is, its values, its id and its hash."""

    line: int  # the file's line the row starts on (1-based; a CSV header is line 1)
    number: int  # its place among the rows, 1-based
    values: Mapping[str, Any]
    row_hash: str  # sha256 of the row's values as canonical JSON
    sample_id: str


@dataclass(frozen=True)
class Template:
    """A text with `{field}` holes: literal parts and (field, as code) holes, in order."""

    parts: tuple[str | tuple[str, bool], ...]

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(p[0] for p in self.parts if isinstance(p, tuple))

    def fill(self, values: Mapping[str, Any]) -> str:
        """The text with each hole filled from `values`: as text, or (`!code`) as it is;
        a hole without `!code` in a test template is filled by `fill_literal`."""
        out: list[str] = []
        for part in self.parts:
            out.append(part if isinstance(part, str) else text_of(values, part[0]))
        return "".join(out)

    def fill_code(self, values: Mapping[str, Any]) -> str:
        """A test template filled: `{field!code}` as the row's code, `{field}` as a Python
        literal (repr), so a row's data never becomes code it did not say it was."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                value = text_of(values, part[0])
                out.append(value if part[1] else repr(values[part[0]]))
        return "".join(out)


def template(text: str) -> Template:
    """`text` read as a template; TemplateError naming the line of a lone brace."""
    parts: list[str | tuple[str, bool]] = []
    at = 0
    for match in _PART.finditer(text):
        token = match.group(0)
        if token in ("{", "}"):
            line = text.count("\n", 0, match.start()) + 1
            raise TemplateError(f"line {line}: a lone {token!r} (write {token * 2} for a "
                                "literal brace, {name} for a field)")
        if match.start() > at:
            parts.append(text[at:match.start()])
        parts.append(token[0] if token in ("{{", "}}") else (match.group(1),
                                                             bool(match.group(2))))
        at = match.end()
    if at < len(text):
        parts.append(text[at:])
    return Template(tuple(parts))


def text_of(values: Mapping[str, Any], name: str) -> str:
    """A row's field as template text; TemplateError when it is missing or not a scalar."""
    if name not in values:
        raise TemplateError(f"field {name!r} is missing")
    value = values[name]
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    kind = "null" if value is None else type(value).__name__
    raise TemplateError(f"field {name!r} is {kind}, not a string or number")


def row_hash(values: Mapping[str, Any]) -> str:
    text = json.dumps(values, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _rows_jsonl(text: str, problems: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            problems.append(f"line {line}: not JSON ({printable(str(exc), 120)})")
            continue
        if not isinstance(value, dict):
            problems.append(f"line {line}: a JSON {type(value).__name__}, not an object")
            continue
        yield line, value


def _rows_csv(text: str, problems: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            problems.append("line 1: no header row")
            return
        if len(set(header)) != len(header):
            problems.append("line 1: a column name is repeated")
            return
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not cells or cells == [""]:
                continue
            if len(cells) != len(header):
                problems.append(f"line {line}: {len(cells)} cells, the header has "
                                f"{len(header)}")
                continue
            yield line, dict(zip(header, cells, strict=True))
    except csv.Error as exc:
        problems.append(f"line {reader.line_num}: {printable(str(exc), 120)}")


def read_rows(path: Path, id_field: str | None = None) -> tuple[list[Row], list[str]]:
    """The rows of a JSONL or CSV file and the problems found (`line N: what`, each bad row
    named by its line); a row with a problem is left out."""
    problems: list[str] = []
    try:
        text = read_regular(path, DATASET_CAP, follow=True).decode("utf-8")
    except Unreadable as exc:
        return [], [str(exc)]
    except UnicodeDecodeError as exc:
        return [], [f"not UTF-8 ({exc.reason})"]
    text = text.removeprefix("\ufeff")  # a byte-order mark, as spreadsheets write CSV
    found = _rows_csv(text, problems) if path.suffix == ".csv" else _rows_jsonl(text, problems)
    rows: list[Row] = []
    seen: dict[str, int] = {}
    for line, values in found:
        if len(rows) == MAX_ROWS:
            problems.append(f"line {line}: more than {MAX_ROWS:,} rows (split the file into "
                            "tasks of fewer rows each)")
            break
        digest = row_hash(values)
        number = len(rows) + 1
        if id_field is None:
            sample_id = f"{number}-{digest[7:15]}"
        else:
            given = values.get(id_field)
            if not isinstance(given, str | int) or isinstance(given, bool) or \
                    not SAMPLE_ID.fullmatch(str(given)) or len(str(given)) > ID_CAP:
                problems.append(f"line {line}: {id_field}: {printable(repr(given), 80)} is "
                                f"not an id (letters, digits and ._/:+-, at most {ID_CAP})")
                continue
            sample_id = str(given)
        if sample_id in seen:
            problems.append(f"line {line}: {id_field}: {printable(sample_id)} repeats the "
                            f"row at line {seen[sample_id]}")
            continue
        seen[sample_id] = line
        rows.append(Row(line, number, values, digest, sample_id))
    if not rows and not problems:
        problems.append("no rows")
    return rows, problems
