"""The sample browser's data: one compact row per attempt and its details, every outside
text made printable by textsafe, written as a JSON island a page's own script renders."""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from benchrig.core.errors import counts_against_model
from benchrig.jsonsafe import finite
from benchrig.plausible import credible
from benchrig.report.disagreed import disagreement
from benchrig.report.facets import facet
from benchrig.resultio.files import Unreadable, read_valid
from benchrig.resultio.record import Record, to_json
from benchrig.textsafe import NAME_CAP, PRINT_CAP, label, printable, printable_lines

Json = dict[str, Any]
SIDECAR_CAP = 1 << 20  # characters of a transcript sidecar read (a context prompt is long)
MESSAGE_CAP = 300  # characters of one check's message


@dataclass(frozen=True)
class Caps:
    """Characters of each part of an attempt the drill-down shows."""

    answer: int
    prompt: int  # the prompt's messages, as JSON
    thinking: int
    evidence: int  # each of: evidence, tool calls/turns/files, agent events


# A static page embeds every attempt: 10,000 of them must stay a page a browser opens.
STATIC = Caps(answer=1500, prompt=600, thinking=600, evidence=1500)
SERVED = Caps(answer=20_000, prompt=8000, thinking=8000, evidence=8000)  # one at a time
ANSWER_CAP = STATIC.answer
SIDECAR_ATTEMPTS = 1000  # attempts whose sidecar a static page embeds (failures first)
# Row columns, in the order the page's script reads them.
COLUMNS = ("model", "agent", "label", "suite", "task", "result", "error", "ttft_ms",
           "tokens_per_s", "checks", "started", "search", "group", "sample")
# In a <script> block only these could end it or change how it parses: escaped as JSON.
_ISLAND = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
           "\u2029": "\\u2029"}


@functools.lru_cache(maxsize=4096)
def _name(value: str) -> str:
    """`label` of a name that repeats over thousands of attempts (a model, a metric, a
    source), computed once: `label` is a pure function of the text."""
    return label(value)


SHOWN_KEPT = 400  # characters of a text whose printable form is kept for the next attempt


@functools.lru_cache(maxsize=4096)
def _kept_printable(text: str, limit: int) -> str:
    return printable(text, limit)


def _shown(text: str, limit: int = PRINT_CAP) -> str:
    """`printable(text, limit)`, kept for a text that repeats over attempts (a note, a check's
    message, a task's hash): a short one only, so what is kept stays small."""
    return _kept_printable(text, limit) if len(text) <= SHOWN_KEPT else printable(text, limit)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return round(float(value), 1)


def row(result: Record, searchable: bool = True, group: int | None = None) -> list[Any]:
    """One attempt as the browser's table shows and filters it (`searchable`: with its
    answer's excerpt, for a page that has no details to search and compare; `group`: the
    report's model row it is counted in, which a heat-map link pins)."""
    error = result.error if isinstance(result.error, dict) else None
    verdict = result.result  # pass, fail, error, unsupported or no-test
    metrics = result.metrics
    answer = printable(str(result.answer_excerpt or ""), ANSWER_CAP) if searchable else ""
    return [_name(str(result.model)), _name(str(result.agent or "—")),
            _name(str(result.label or "—")), _name(str(result.suite)),
            _name(str(result.task)), _name(str(verdict)),
            _name(str(error.get("kind"))) if error else "",
            _number(metrics.get("ttft_ms")), _number(metrics.get("tokens_per_s")),
            f"{result.checks.passed}/{result.checks.total}",
            label(result.started_at or ""), answer, group, _sample(result)]


def row_text(found: list[Any]) -> Encoded:
    """A `row` as the island holds it, by orjson where that writes json's text (a row's
    two figures finite: one rounded to 0.1 has no exponent orjson writes otherwise)."""
    ttft, rate = found[7], found[8]
    if (ttft is None or math.isfinite(ttft)) and (rate is None or math.isfinite(rate)):
        return Encoded(_safe(_compact(found)))
    return Encoded(_safe(_dumps(found)))


def _sample(result: Record) -> str:
    """A dataset task's sample id (its rows filter and sort by it), else —."""
    sample = result.sample_id
    return _name(sample) if isinstance(sample, str) else "—"


def whole(record: Record) -> Json:
    """All of one attempt, for its drill-down: its file read again (the record keeps only
    what the views count), as hostile as the first time; where the file is gone, changed
    or was never read (a record made in memory), what the record holds. Its figures are
    the credible ones, as every view shows them."""
    data = None
    if record.path is not None:
        try:
            data = read_valid(record.path)
        except Unreadable:
            data = None
    if data is None or data.get("run_id") != record.run_id:
        data = to_json(record)
    return {**data, "metrics": credible(data["metrics"])}


_NOT_ROWS = frozenset(("rejected", "partial", "disagreement"))  # listed after, with why
# Each set of figure names met (one per driver and version, a handful a folder) → per row its
# shown name, where its value is and where its source is (`<name>_source`, when the set has
# one), made once: a report's 100,000 attempts share them. Bounded: a folder of hand-made
# files with ever new names makes the rest of them figure by figure.
Plan = tuple[tuple[str, int, int | None], ...]
_PLANS: dict[tuple[Any, ...], Plan] = {}
PLANS_CAP = 256
PLAN_CHARACTERS = 4096  # of the names of one set: a set kept is a set of names


def _plan(names: tuple[Any, ...]) -> Plan:
    """The rows of a metrics dict keyed `names`, in its order: each figure's shown name,
    its index and its source's index; none for a source, nor for the rejected, partial or
    disagreement lists (their rows follow, with why)."""
    found = _PLANS.get(names)
    if found is None:
        at = {name: index for index, name in enumerate(names)}
        found = tuple((label(str(name)), index, at.get(f"{name}_source"))
                      for index, name in enumerate(names)
                      if name not in _NOT_ROWS and not str(name).endswith("_source"))
        if len(_PLANS) < PLANS_CAP and sum(len(str(n)) for n in names) <= PLAN_CHARACTERS:
            _PLANS[names] = found
    return found


def _metrics(metrics: Json) -> list[list[str]]:
    """Each figure with its source (a `<name>_source` key) and any rejected or partial
    figure with why, and any the agent's own report disagreed on with both values, as
    name/value/source rows."""
    rejected: Json = metrics["rejected"] if isinstance(metrics.get("rejected"), dict) else {}
    partial: Json = metrics["partial"] if isinstance(metrics.get("partial"), dict) else {}
    values = list(metrics.values())
    rows = []
    for name, at, source_at in _plan(tuple(metrics)):
        value = values[at]
        kind = type(value)  # JSON's own types first: twenty figures an attempt, 100,000s
        if kind is float:
            shown = f"{value:.6g}"
        elif value is None:
            shown = "None"
        elif kind is int or kind is bool:
            shown = str(value)
        elif isinstance(value, float):
            shown = f"{value:.6g}"
        elif isinstance(value, bool | int):
            shown = str(value)
        else:  # text or a nested object (the engine's counters): outside text
            shown = printable(value if isinstance(value, str) else
                              json.dumps(value), 400)
        source = None if source_at is None else values[source_at]
        rows.append([name, shown, "" if source is None else _name(str(source))])
    for name, why in list(rejected.items())[:20]:
        rows.append([label(name), "rejected", printable(str(why), MESSAGE_CAP)])
    for name, why in list(partial.items())[:20]:
        rows.append([label(name), "partial", printable(str(why), MESSAGE_CAP)])
    for name, why in list(disagreement(metrics).items())[:20]:
        rows.append([label(name), "disagrees", printable(why, MESSAGE_CAP)])
    return rows


LEVEL_FIGURES = (("ttft_ms", "TTFT ms"), ("itl_ms", "ITL ms"), ("e2e_ms", "E2E ms"),
                 ("tokens_per_s", "tok/s per request"))


def _figure(value: Any) -> str:
    """One of a level's figures as shown: a finite number, else — (the file is outside
    text: a string or NaN there is not a figure)."""
    number = finite(value)
    return "—" if number is None else f"{number:.6g}"


def level_detail(load: Any) -> Json | None:
    """A load level's figures for its drill-down (None when `load` is not a level's
    `evidence.load`): its facts (level, requests, errors, throughput, goodput and its
    SLOs) and each distribution's n, p50, p90, p99 and mean, every text made printable."""
    if not isinstance(load, dict):
        return None
    from benchrig.report.load_curves import slo_text

    mode = _name(str(load.get("mode")))
    goodput = load.get("goodput") if isinstance(load.get("goodput"), dict) else None
    level = load.get("concurrency" if mode == "concurrency" else "rate")
    facts = [["level", f"{mode} {_figure(level)}"],
             ["requests", _figure(load.get("requests"))],
             ["completed", _figure(load.get("completed"))],
             ["errors", _figure(load.get("errors"))],
             ["request throughput (req/s)", _figure(load.get("request_throughput"))],
             ["output tokens/s", _figure(load.get("output_tokens_per_s"))],
             ["duration (s)", _figure(load.get("duration_s"))]]
    if goodput is not None:
        facts.append(["goodput (share meeting the SLOs)", _figure(goodput.get("share"))])
        facts.append(["SLOs", printable(slo_text(goodput), MESSAGE_CAP) or "—"])
    figures = []
    for key, shown in LEVEL_FIGURES:
        value = load.get(key)
        found: Json = value if isinstance(value, dict) else {}
        figures.append([shown, *(_figure(found.get(k)) for k in ("n", "p50", "p90", "p99",
                                                                 "mean"))])
    return {"facts": facts, "figures": figures}


def _json(value: Any, limit: int) -> str:
    return printable_lines(json.dumps(value, indent=1, ensure_ascii=False), limit)


def _check(found: Json) -> list[Any]:
    """One check's row: name (a name: repeats over attempts), passed, message."""
    name = found.get("name", "")
    message = found.get("message", "")
    # a name as long as a name is kept (_name's cache holds no text of megabytes)
    return [_name(name) if type(name) is str and len(name) <= NAME_CAP else label(name),
            bool(found.get("passed")),
            "" if message == "" else _shown(str(message), MESSAGE_CAP)]


def result_part(result: Json, caps: Caps = STATIC) -> Json:
    """What the drill-down shows from the result file itself (its figures the credible
    ones), bounded by `caps`: made while the file is in hand, so no file is read twice."""
    error = result.get("error") if isinstance(result.get("error"), dict) else None
    evidence = result.get("evidence") or {}
    load = evidence.get("load") if isinstance(evidence, dict) else None
    if isinstance(load, dict) and "samples" in load:  # thousands of numbers: not the cap's
        evidence = {**evidence, "load": {k: v for k, v in load.items() if k != "samples"}}
    return {
        "notes": _shown(str(result.get("notes") or "")),
        "error": _shown(f"{error.get('kind')}: {error.get('message', '')}"
                        + ("" if counts_against_model(result)
                           else " (not counted against the model)")) if error else "",
        "checks": [_check(d) for d in (result.get("checks") or {}).get("details", [])[:200]],
        "metrics": _metrics(result.get("metrics") or {}),
        "evidence": _json(evidence, caps.evidence) if evidence else "",
        "load": level_detail(load) if facet(str(result.get("suite"))).levels else None,
        "transcript": label(result.get("transcript_file") or ""),
        "run": _shown(str(result.get("run_index", "—")), NAME_CAP),  # label's, kept
        "hash": _shown(str(result.get("task_hash") or ""), NAME_CAP),
    }


def joined(part: Json, excerpt: str, sidecar: Json | None = None, caps: Caps = SERVED
           ) -> Json:
    """The drill-down of one attempt: its `result_part`, and from its transcript sidecar's
    lines when the caller read them (prompt, whole answer, thinking, tool calls and turns,
    agent events); without them, the result's answer `excerpt`."""
    sidecar = sidecar or {}
    whole = sidecar.get("answer")
    whole = whole if isinstance(whole, str) else excerpt
    thinking = sidecar.get("thinking")
    return {
        "notes": part["notes"], "error": part["error"],
        "prompt": _json(sidecar["prompt"], caps.prompt) if "prompt" in sidecar else "",
        "answer": printable_lines(whole, caps.answer),  # its code fences kept: highlighted
        "thinking": printable_lines(thinking if isinstance(thinking, str) else "",
                                    caps.thinking),
        "tools": _json(sidecar["tools"], caps.evidence) if sidecar.get("tools") else "",
        "events": _json(sidecar["events"], caps.evidence) if sidecar.get("events") else "",
        **{key: part[key] for key in ("checks", "metrics", "evidence", "load", "transcript", "run",
                                      "hash")},
    }


def detail(result: Json, sidecar: Json | None = None, caps: Caps = SERVED) -> Json:
    """Everything the drill-down shows of one attempt: from the result, and from its
    transcript sidecar's lines when the caller read them (`joined`)."""
    return joined(result_part(result, caps), str(result.get("answer_excerpt") or ""),
                  sidecar, caps)


LINE_BITS = 40  # of a spooled line's place: its length (a line is far below a TiB)


class Spool:
    """Each attempt's drill-down for a static page (its `result_part` joined with its
    excerpt), made as its file is read (the one read: `result.load_records`' `also`) as the
    text the page's island holds, and kept in a private temporary file, not in memory
    (100,000 attempts' are 100 MB and more); read back one at a time as the page is written,
    as it is (`text`), or parsed where a sidecar joins it (`part`). Keyed by the file it
    came from; `file`: a private temporary file (tempfile.TemporaryFile), which its caller
    closes. A file that fails (a full disk) holds nothing from then on: each drill-down is
    made by reading its file again."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        # where its line starts and how long it is, as one int (LINE_BITS for the length):
        # 100,000 of them
        self._at: dict[Path, int] = {}
        self._failed = False
        self._read = False  # read since the last write: the next write seeks to the end
        self._unflushed = False  # written since the last flush: flushed before a pread
        try:  # a file on the disk is read back by position, one exact read a line
            self._fd: int | None = file.fileno()
        except (OSError, ValueError):  # in memory (io.UnsupportedOperation is both)
            self._fd = None

    def add(self, record: Record, result: Json) -> None:
        if self._failed or record.path is None:
            return
        figures = result["metrics"]
        # The record's figures came through credible(): without a "rejected" there it
        # refused none, and the file's own are the credible ones (no second pass).
        if "rejected" in record.metrics:
            figures = credible(figures)
        part = result_part({**result, "metrics": figures}, STATIC)
        # kept as the page writes it when no sidecar joins it (all but SIDECAR_ATTEMPTS):
        # written as it is, never parsed and encoded again
        text = _safe(_compact(joined(part, str(record.answer_excerpt or ""), None, STATIC)))
        try:
            if self._read:
                self._file.seek(0, os.SEEK_END)
                self._read = False
            at = self._file.tell()
            # JSON text holds no raw newline: one line each (a lone surrogate, which
            # textsafe escapes, would still round-trip)
            line = text.encode("utf-8", "surrogatepass") + b"\n"
            self._file.write(line)
            self._unflushed = True
        except OSError:
            self._fail()
            return
        if len(line) < 1 << LINE_BITS:  # always: a result file is at most 16 MiB
            self._at[record.path] = at << LINE_BITS | len(line)

    def _fail(self) -> None:
        self._failed = True
        self._at.clear()

    def text(self, record: Record) -> Encoded | None:
        """The record's drill-down without a sidecar, as the page's data holds it; None
        when it is not here (a record made in memory, a spool that failed)."""
        found = self._at.get(record.path) if record.path is not None else None
        if found is None:
            return None
        at, size = found >> LINE_BITS, found & ((1 << LINE_BITS) - 1)
        try:
            if self._unflushed:
                self._file.flush()
                self._unflushed = False
            if self._fd is not None:  # one read of the line's bytes, the position kept
                line = os.pread(self._fd, size, at)
            else:
                self._read = True
                self._file.seek(at)
                line = self._file.read(size)
        except OSError:  # a write that failed only when flushed
            self._fail()
            return None
        # cut short by a failed write, or not what the spool wrote: the island's text never
        # holds a raw "<" (made \u003c when spooled), so a line that does is not taken
        if len(line) != size or not line.endswith(b"\n") or b"<" in line:
            self._fail()
            return None
        return Encoded(line[:-1].decode("utf-8", "surrogatepass"))

    def part(self, record: Record) -> Json | None:
        """The record's part (its drill-down without a sidecar, which holds every key of
        its `result_part`), or None when it is not here."""
        text = self.text(record)
        if text is None:
            return None
        try:
            part: Json = json.loads(text)
        except ValueError:  # never: the spool wrote it
            self._fail()
            return None
        return part


def read_sidecar(lines: list[str]) -> Json:
    """A transcript sidecar's lines (as `runner._transcript` writes them) → the prompt, the
    answer, the thinking, tool calls/turns/files and the driver's events; a line that is
    not a JSON object is skipped (the file is outside text)."""
    found: Json = {"events": []}
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("kind")
        if kind == "prompt" and "prompt" not in found:
            found["prompt"] = record.get("messages")
        elif kind == "answer" and "answer" not in found:
            found["answer"] = record.get("text")
            found["thinking"] = record.get("thinking")
            found["tools"] = {k: record[k] for k in ("tool_calls", "tool_turns", "turns",
                                                     "files") if record.get(k)}
        else:
            found["events"].append(record)
    return found


def _safe(text: str) -> str:
    for char, escaped in _ISLAND.items():
        if char in text:
            text = text.replace(char, escaped)
    return text


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _compact(value: Any) -> str:
    """`_dumps(value)` of a drill-down (text, flags, whole numbers, lists and objects keyed
    by text; no float, whose form orjson writes otherwise), by orjson: the same text,
    about 15 times faster."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # a lone surrogate, an integer past 64 bits: json writes them
        return _dumps(value)


class Encoded(str):
    """A value already written as the island holds it (`_safe(_dumps(value))`): a spooled
    drill-down, which `island_parts` writes as it is."""

    __slots__ = ()


def island(data: Json) -> str:
    """`data` as JSON safe inside `<script type="application/json">`: nothing in it can
    close the block or open a comment, whatever the outside text held."""
    return _safe(_dumps(data))


def island_parts(data: Mapping[str, Any | Iterator[Any]]) -> Iterator[str]:
    """`island(data)`, in pieces, a value given as an iterator written an item at a time
    as a JSON array: the same text, never all of it in memory (100,000 attempts' details)."""
    yield "{"
    for index, (key, value) in enumerate(data.items()):
        yield ("," if index else "") + _safe(_dumps(key)) + ":"
        if not isinstance(value, Iterator):
            yield _safe(_dumps(value))
            continue
        yield "["
        for at, item in enumerate(value):
            yield ("," if at else "") + (item if isinstance(item, Encoded)
                                         else _safe(_dumps(item)))
        yield "]"
    yield "}"


def read_sidecar_file(path: Path) -> Json:
    """A transcript sidecar read (at most SIDECAR_CAP characters) as `read_sidecar` gives
    it; an unreadable file gives nothing (the drill-down then shows the result's excerpt)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as file:
            return read_sidecar(file.read(SIDECAR_CAP).splitlines())
    except OSError:
        return {}


def load_curves(results: list[Record]) -> list[Json]:
    """The load sweeps among `results` as the browser lists them: per curve its name, its
    table (report.load's rows: knee, frontier, goodput) and each level's row index, so a
    level opens to its figures and its curve's other levels."""
    from benchrig.report.load_curves import HEADERS, curves, table_rows

    return [{"name": curve.name, "mode": _name(curve.mode), "slo": curve.slo,
             "headers": list(HEADERS), "rows": table_rows(curve),
             "members": [p.index for p in curve.points]} for curve in curves(results)]


def payload(results: list[Record], embed_details: bool,
            sidecar_of: Callable[[Record], Json | None] | None = None,
            groups: list[int | None] | None = None) -> Json:
    """The browser's data: rows for every result, details too for a static page (a server
    sends them on demand), from the transcript sidecars where `sidecar_of` reads them
    (`groups`: each result's model row in the report, for the heat map's links)."""
    return {key: list(value) if isinstance(value, Iterator) else value
            for key, value in payload_parts(results, embed_details, sidecar_of,
                                            groups).items()}


def payload_parts(results: list[Record], embed_details: bool,
                  sidecar_of: Callable[[Record], Json | None] | None = None,
                  groups: list[int | None] | None = None, spool: Spool | None = None
                  ) -> dict[str, Any]:
    """`payload` with its rows and details as iterators, made one attempt at a time as
    `island_parts` writes them (each from `spool` when it holds the attempt's part)."""
    read = sidecar_of or (lambda _: None)
    # Sidecars (prompt, whole answer, thinking, tools) for at most SIDECAR_ATTEMPTS
    # attempts, those without a pass first: 10,000 of them made a 50 MB page.
    chosen = {id(r) for r in sorted(results, key=lambda r: r.result == "pass")
              [:SIDECAR_ATTEMPTS]}

    def one(r: Record) -> Json | Encoded:
        sidecar = read(r) if id(r) in chosen else None
        if sidecar is None and spool is not None:  # as the spool wrote it: no work again
            text = spool.text(r)
            if text is not None:
                return text
        part = spool.part(r) if spool is not None else None
        if part is None:  # one attempt's file read again at a time, never all at once
            return detail(whole(r), sidecar, STATIC)
        return joined(part, str(r.answer_excerpt or ""), sidecar, STATIC)

    details = (one(r) for r in results)
    return {"columns": list(COLUMNS),
            "rows": (row(r, not embed_details, None if groups is None else groups[i])
                     for i, r in enumerate(results)),
            "load": load_curves(results),
            # the suites whose rows are a sweep's levels, not attempts (their facet, read as
            # every view reads it): the counter counts each kind apart
            "levels": sorted(_name(str(s)) for s in {r.suite for r in results}
                             if facet(str(s)).levels),
            "caps": vars(STATIC) if embed_details else vars(SERVED),
            "details": details if embed_details else None,
            "sidecars": min(len(results), SIDECAR_ATTEMPTS) if embed_details
            else len(results)}
