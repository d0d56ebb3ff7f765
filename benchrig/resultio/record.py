"""The typed result record the views read: the few fields of a result file that summary,
compare and report use, built by `from_json` from a validated result and back by `to_json`."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import MISSING, dataclass, fields
from operator import attrgetter
from pathlib import Path
from typing import Any

from benchrig.plausible import Credible, credible

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
# Text fields that repeat over thousands of results: one string object each.
_NAMES = frozenset({"task", "model", "agent", "driver", "provider", "suite", "result",
                    "task_hash", "finish_reason", "label", "sample_id"})
# A whole attempt's fields: the HTML page and the library read them; summary and compare never
# do, so their records go without (WHOLE_ONLY's value each: a lean record's). The path stays
# on a load level's record, whose raw samples compare and the curves read back from its file.
WHOLE_ONLY = {"answer_excerpt": "", "notes": "", "path": None}
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
# Every field in declaration order, for a positional call (a dict of 25 keyword arguments
# per record costs more): its name, its value when a file lacks it (a required one never
# does), whether it is interned, whether it is made from its part of the file.
_ORDER = tuple((f.name, None if f.default is MISSING else f.default, f.name in _NAMES,
                f.name in _SPECIAL or f.name == "error") for f in fields(Record))


def _same(value: Any) -> Any:
    return value


def _kept(found: Any, keys: tuple[str, ...]) -> dict[str, Any] | None:
    if not isinstance(found, dict):
        return None
    return {key: found[key] for key in keys if key in found}


def _metrics(figures: Credible, whole: bool) -> Credible:
    """The kept figures; a lean record's without the unknown ones (None): every view reads a
    figure with `get`, which gives None for both, and a dict of ten keys or fewer is 40 %
    smaller than one of eleven or more."""
    if whole:
        return Credible(_kept(figures, METRICS_KEPT) or {})
    return Credible({key: value for key in METRICS_KEPT
                     if (value := figures.get(key)) is not None})


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
    and False stay apart: a view prints them differently); at most SHARED_CAP of them."""

    def __init__(self) -> None:
        self._known: dict[Any, Any] = {}

    def one(self, value: Any) -> Any:
        """`value`, or the equal one met before (read-only to every view: never changed)."""
        try:
            key = _typed(value)
            found = self._known.get(key)
        except TypeError:  # a list or a dict inside: kept as read
            return value
        if found is not None:
            return found
        if len(self._known) < SHARED_CAP:
            self._known[key] = value
        return value


def _typed(value: Any) -> Any:
    """`value` as a key that tells 1, 1.0 and True apart (TypeError: not hashable)."""
    if isinstance(value, dict):
        return tuple([(k, type(v), v) for k, v in value.items()])
    if isinstance(value, Checks):
        return (Checks, type(value.passed), value.passed, type(value.total), value.total,
                value.names)
    return (type(value), hash(value), value)


def from_json(data: Mapping[str, Any], path: Path | None = None, whole: bool = True,
              shared: Shared | None = None) -> Record:
    """The record of a result that passed validation (schema/result.schema.json): every
    declared field from its key (missing in an older file: the field's default). `whole`
    False: a lean record, without WHOLE_ONLY's fields (summary and compare read none);
    `shared`: the load's repeated parts, shared."""
    get = data.get
    intern = sys.intern
    one = shared.one if shared is not None else _same
    checks = data["checks"]
    evidence = _evidence(get("evidence"))
    error = get("error")
    special = {
        "metrics": _metrics(credible(data["metrics"]), whole),
        "checks": one(Checks(checks["passed"], checks["total"],
                             tuple([intern(str(d.get("name", ""))) for d in checks["details"]]))),
        "settings": one(_kept(data["settings"], SETTINGS_KEPT) or {}),
        "evidence": one(evidence) if evidence is not None else None,
        "error": one(error) if isinstance(error, dict) else error,
        "path": path if whole or (evidence is not None and "load" in evidence) else None}
    lean = not whole
    values: list[Any] = []
    for name, default, interned, computed in _ORDER:
        if computed:
            values.append(special[name])
        elif lean and name in WHOLE_ONLY:
            values.append(WHOLE_ONLY[name])
        elif interned and type(value := get(name, default)) is str:
            values.append(intern(value))
        else:
            values.append(get(name, default))
    return Record(*values)


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
