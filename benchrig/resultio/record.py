"""The typed result record the views read: the few fields of a result file that summary,
compare and report use, built by `from_json` from a validated result and back by `to_json`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, fields
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import Any

from benchrig.plausible import Credible, credible, rejections

Json = dict[str, Any]

# The nested parts a view reads, by key; the rest of each stays in the file (a whole
# attempt's view re-reads it). Raw engine counters are the largest part of `metrics`.
SETTINGS_KEPT = ("temperature", "max_tokens", "context_size", "think", "in_flight",
                 "temperature_requested", "max_tokens_requested",
                 "context_size_requested", "think_requested")
EVIDENCE_KEPT = ("context", "tool_use", "load")
# Kept parts' keys left in the file: a load level's raw samples (up to 4,000 per figure) are
# read back one level at a time by compare (benchrig.report.load_curves.samples_of), never held.
EVIDENCE_LEFT = {"load": ("samples",)}
# The figures the views average or show, and why some were refused or partial (judged on
# all of them first: plausible.credible).
METRICS_KEPT = ("wall_s", "ttft_ms", "answer_ttft_ms", "tokens_per_s",
                "tokens_per_s_floored", "prefill_tokens_per_s", "input_tokens",
                "output_tokens", "thinking_tokens", "cost_usd", "load_time_s", "rejected",
                "partial", "disagreement")
# A whole attempt's fields: the HTML page and the library read them; summary and compare never
# do, so their records go without (WHOLE_ONLY's value each: a lean record's). The path stays
# on a load level's record, whose raw samples compare and the curves read back from its file.
WHOLE_ONLY: dict[str, Any] = {"answer_excerpt": "", "notes": "", "path": None}
# (A lean record's metrics also leave out each unknown figure: `get` reads None all the same.)
# How many distinct parts one load shares (Shared): past it, a part is kept as read, so a
# folder of all-different settings costs what it did, never a growing table of keys.
SHARED_CAP = 4096


@dataclass(frozen=True, slots=True)
class Checks:
    """A result's checks as the views count them: passed, counted, and each one's name."""

    passed: int
    total: int
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Record(Mapping[str, Any]):
    """One result as the views read it. To add a field: declare it here, named as its key
    in the result file, with a default (None: older files lack it); `from_json` and
    `to_json` follow the declaration. Read it as an attribute (`record.sample_id`)."""

    task: str
    model: str
    agent: str
    driver: str
    provider: str | None
    suite: str
    started_at: str
    run_id: str
    result: str
    task_hash: str
    metrics: Credible  # its figures already judged credible (plausible.credible), once
    checks: Checks
    settings: Mapping[str, Any]  # SETTINGS_KEPT only
    truncated: bool
    finish_reason: str | None
    error: Mapping[str, Any] | None  # kind, message, phase: a mapping, as errors reads it
    answer_excerpt: str
    notes: str
    # fields newer than the first result files: None where a file has none
    label: str | None = None
    run_index: int | None = None
    truncated_thinking: bool | None = None
    evidence: Mapping[str, Any] | None = None  # EVIDENCE_KEPT only
    transcript_file: str | None = None
    sample_id: str | None = None  # a dataset task's sample (issue 25)
    path: Path | None = None  # the file it was read from: a whole attempt is re-read there

    # Read by key for the modules outside report/ that take a result as a mapping
    # (errors.counts_against_model, attempts, packs.scores): the JSON's names, same values.
    # One C call a key (operator.attrgetter): ~20 reads a result a summary, 30 % less.
    def __getitem__(self, key: str) -> Any:
        try:
            read = _READ[key]
        except KeyError:
            raise KeyError(key) from None
        return read(self)

    def get(self, key: str, default: Any = None, /) -> Any:
        # Mapping.get goes through __getitem__ and a KeyError: millions of calls a report
        read = _READ.get(key)
        return default if read is None else read(self)

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS)

    def __len__(self) -> int:
        return len(_KEYS)


_FIELDS = tuple(f.name for f in fields(Record))
_KEYS = frozenset(_FIELDS) - {"path"}
_READ = {key: attrgetter(key) for key in _KEYS}
_SPECIAL = frozenset({"metrics", "checks", "settings", "evidence", "path"})


def _kept(found: Any, keys: tuple[str, ...]) -> dict[str, Any] | None:
    if not isinstance(found, dict):
        return None
    return {key: found[key] for key in keys if key in found}


def _metrics(found: Mapping[str, Any], whole: bool) -> Credible:
    """The kept figures, each judged credible (plausible.credible: an implausible one None);
    a lean record's without the unknown ones (None): every view reads a figure with `get`,
    which gives None for both, and a dict of ten keys or fewer is 40 % smaller than one of
    eleven or more. Figures with nothing to refuse (nearly all) are read as they are, not
    copied first."""
    figures = found if not rejections(found) else credible(found)
    if whole:
        return Credible(_kept(figures, METRICS_KEPT) or {})
    return Credible({key: value for key, value in zip(METRICS_KEPT, map(figures.get, METRICS_KEPT),
                                                      strict=True) if value is not None})


def _evidence(found: Any) -> dict[str, Any] | None:
    kept = _kept(found, EVIDENCE_KEPT)
    if kept is None:
        return None
    for key, left in EVIDENCE_LEFT.items():
        part = kept.get(key)
        if isinstance(part, dict):
            kept[key] = {k: v for k, v in part.items() if k not in left}
    return kept


class Shared:
    """The parts that repeat over the results of one load (settings, errors, checks, an
    evidence that is flat or none), one object per distinct value: thousands of results run
    with one settings hold one dict, not a dict each. Equal means equal by type too (0, 0.0
    and False stay apart: a view prints them differently); at most SHARED_CAP of them. The
    settings and the checks are looked up by a key read straight from the file's part, so a
    part met before is never built again (summary reads 100,000 of them)."""

    def __init__(self, cap: int = SHARED_CAP) -> None:
        self._known: dict[Any, Any] = {}
        self._cap = cap

    def one(self, value: Any) -> Any:
        """`value`, or the equal one met before (read-only to every view: never changed)."""
        try:
            key = _typed(value)
            found = self._known.get(key)
        except TypeError:  # a list or a dict inside: kept as read
            return value
        if found is not None:
            return found
        if len(self._known) < self._cap:
            self._known[key] = value
        return value

    def kept(self, found: Any, keys: tuple[str, ...]) -> dict[str, Any]:
        """`one(_kept(found, keys) or {})`, the dict built only the first time it is met."""
        values = tuple(map(found.get, keys, repeat(_ABSENT))) if isinstance(found, dict) \
            else (_ABSENT,) * len(keys)
        key = (keys, values, tuple(map(type, values)))  # one(): 0, 0.0 and False apart
        try:
            known: dict[str, Any] | None = self._known.get(key)
        except TypeError:  # as one(): a list or a dict inside, kept as read
            return _present(keys, values)
        if known is None:
            known = _present(keys, values)
            if len(self._known) < self._cap:
                self._known[key] = known
        return known

    def checks(self, found: Mapping[str, Any]) -> Checks:
        """`one(` the Checks of a result's `checks` part `)`, built only the first time."""
        passed, total = found["passed"], found["total"]
        names = tuple([str(d.get("name", "")) for d in found["details"]])
        key = (Checks, type(passed), passed, type(total), total, names)
        try:
            known: Checks | None = self._known.get(key)
        except TypeError:
            known = None
        if known is None:
            known = self.one(Checks(passed, total, tuple([sys.intern(n) for n in names])))
        return known


_ABSENT = object()  # a key the part lacks (None is a value)


def _present(keys: tuple[str, ...], values: tuple[Any, ...]) -> dict[str, Any]:
    return {k: v for k, v in zip(keys, values, strict=True) if v is not _ABSENT}


def _typed(value: Any) -> Any:
    """`value` as a key that tells 1, 1.0 and True apart (TypeError: not hashable)."""
    if isinstance(value, dict):
        return tuple([(k, type(v), v) for k, v in value.items()])
    if isinstance(value, Checks):
        return (Checks, type(value.passed), value.passed, type(value.total), value.total,
                value.names)
    return (type(value), hash(value), value)


_UNSHARED = Shared(cap=0)  # keeps nothing: every part built as read


def _name(value: Any) -> Any:
    """A text that repeats over thousands of results, as one string object."""
    return sys.intern(value) if type(value) is str else value


def from_json(data: Mapping[str, Any], path: str | Path | None = None, whole: bool = True,
              shared: Shared | None = None) -> Record:
    """The record of a result that passed validation (schema/result.schema.json): every
    declared field from its key (missing in an older file: the field's default). `whole`
    False: a lean record, without WHOLE_ONLY's fields (summary and compare read none);
    `shared`: the load's repeated parts, shared; `path` kept as a Path. One call per field,
    in the declaration's order (`tests/report/test_records.py` holds the two together):
    summary makes 100,000."""
    get: Callable[[str], Any] = data.get
    share = shared if shared is not None else _UNSHARED  # a caller's record: nothing shared
    evidence = _evidence(get("evidence"))
    error = get("error")
    lean = not whole
    return Record(
        _name(get("task")), _name(get("model")), _name(get("agent")), _name(get("driver")),
        _name(get("provider")), _name(get("suite")), get("started_at"), get("run_id"),
        _name(get("result")), _name(get("task_hash")),
        _metrics(data["metrics"], whole),
        share.checks(data["checks"]),
        share.kept(data["settings"], SETTINGS_KEPT),
        get("truncated"), _name(get("finish_reason")),
        share.one(error) if isinstance(error, dict) else error,
        WHOLE_ONLY["answer_excerpt"] if lean else get("answer_excerpt"),
        WHOLE_ONLY["notes"] if lean else get("notes"),
        _name(get("label")), get("run_index"), get("truncated_thinking"),
        share.one(evidence) if evidence is not None else None,
        get("transcript_file"), _name(get("sample_id")),
        Path(path) if path is not None and (whole or (evidence is not None and "load" in evidence))
        else None)


def to_json(record: Record) -> Json:
    """The record's fields as a result file names them (what it keeps, not the whole file:
    the file itself has the rest). Checks come back with their names only."""
    data: Json = {name: getattr(record, name) for name in _FIELDS if name not in _SPECIAL}
    data["metrics"] = dict(record.metrics)
    data["checks"] = {"passed": record.checks.passed, "total": record.checks.total,
                      "details": [{"name": n} for n in record.checks.names]}
    data["settings"] = dict(record.settings)
    if record.evidence is not None:  # a file without evidence has no key
        data["evidence"] = dict(record.evidence)
    return data


def as_records(results: Iterable[Mapping[str, Any]]) -> list[Record]:
    """Each result as a record: a record as it is, a validated result's dict (a library
    caller's, a run's just written) through `from_json`. What every view's entry takes."""
    return [r if isinstance(r, Record) else from_json(r) for r in results]
