"""Strict judging of one tool-conversation turn: exactly the expected tool, schema-valid
arguments of exact JSON types and nothing extra; or, where no call is planned, a plain answer
that matches (docs/suites.md#tool-use)."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from benchrig.checks.guard import Unreadable, model_text
from benchrig.core.toolcase import PlannedTurn
from benchrig.jsonsafe import NUMERIC_ERRORS
from benchrig.textsafe import NAME_CAP, cap

if TYPE_CHECKING:
    from jsonschema import Validator

# A call written as text: `{"name": "get_weather", …}`, `functions.get_weather:`, or a
# `<tool_call>` tag (what chat templates ask small models to emit).
_TEXT_CALL_MARKERS = re.compile(r"<tool_call>|<function[=>]")
_SPACES = re.compile(r"\s+")
_OBJECT_START = re.compile(r"\{\s*\"")
TEXT_CALLS = 200  # JSON objects read per reply when looking for a call written as text
TEXT_CALL_CHARS = 8192  # characters of one such object read at most


REASON_CAP = 500  # a schema error quotes the value, which the model chose
MAX_DEPTH = 32  # nesting of a call's arguments; no tool here takes more than a few levels


def shown(value: Any) -> str:
    """A model-chosen name or value as a reason quotes it: repr, capped (it may be huge)."""
    return cap(repr(value), NAME_CAP)


def shown_json(value: Any) -> str:
    return cap(json.dumps(value, ensure_ascii=False), NAME_CAP)


@dataclass(frozen=True)
class TurnVerdict:
    """One planned turn, judged; each flag is what a metric counts (docs/suites.md)."""

    verdict: str  # pass | fail | skipped
    reason: str
    structured: bool = False  # call turns: the reply carried well-formed structured calls
    selection: bool = False  # call turns: exactly one call, naming the expected tool
    arguments: bool = False  # call turns: … and its arguments are exactly the expected ones
    abstained: bool = False  # answer turns: no call, and the text matches
    false_call: bool = False  # answer turns: a call was made (structured or as text)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate key {shown(next(k for k in keys if keys.count(k) > 1))}")
    return dict(pairs)


def text_depth(text: str) -> int:
    """How deep `[` and `{` nest in JSON text (outside strings), read without parsing."""
    depth = deepest = 0
    quoted = escaped = False
    for char in text:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def value_depth(value: Any, limit: int) -> int:
    """How deep lists and objects nest in `value` (read without recursion), up to `limit`+1."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple):
            depth += 1
            deepest = max(deepest, depth)
            if depth <= limit:
                stack.extend((v, depth) for v in (item.values() if isinstance(item, Mapping)
                                                  else item))
    return deepest


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A call's arguments as an object: JSON text (OpenAI) or an object (Ollama). (object,
    None), or (None, why it is malformed). Nested deeper than MAX_DEPTH is malformed, said
    before parsing (the parser, the schema and its error message all recurse)."""
    if isinstance(raw, Mapping):
        if value_depth(raw, MAX_DEPTH) > MAX_DEPTH:
            return None, f"arguments nested deeper than {MAX_DEPTH} levels"
        return dict(raw), None
    if not isinstance(raw, str):
        return None, f"arguments are {type(raw).__name__}, not a JSON object"
    if text_depth(raw) > MAX_DEPTH:
        return None, f"arguments nested deeper than {MAX_DEPTH} levels"
    try:
        value = json.loads(raw, object_pairs_hook=_no_duplicates)
    except (ValueError, *NUMERIC_ERRORS) as exc:
        return None, f"arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {type(value).__name__}, not an object"
    return value, None


def _is_int(checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(checker: Any, value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@cache
def _strict_class() -> Any:
    """Draft 2020-12, but `integer` means a JSON integer literal: 5.0 is not an integer
    (the draft itself would accept it)."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_int, "number": _is_number})
    return validators.extend(Draft202012Validator, type_checker=checker)


def strict_validator(parameters: Mapping[str, Any]) -> Validator:
    validator: Validator = _strict_class()(dict(parameters))
    return validator


def schema_problems(parameters: Mapping[str, Any], arguments: Any) -> list[str]:
    """`path: message` for each way `arguments` breaks the tool's parameter schema."""
    found = []
    for error in sorted(strict_validator(parameters).iter_errors(arguments), key=str):
        path = ".".join(str(p) for p in error.absolute_path) or "(arguments)"
        found.append(cap(f"{path}: {error.message}", REASON_CAP))
    return found


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", list: "array", dict: "object", type(None): "null"}.get(
        type(value), type(value).__name__)


def _declares_number(schema: Any) -> bool:
    """Whether a (sub)schema declares the JSON type `number` (5 and 5.0 are then one value)."""
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    return kind == "number" or (isinstance(kind, list) and "number" in kind)


def _sub_schema(schema: Any, key: str | None) -> Any:
    """The schema of a property (`key`) or of an array's items (`key` None), when given."""
    if not isinstance(schema, Mapping):
        return None
    if key is None:
        return schema.get("items")
    properties = schema.get("properties")
    found = properties.get(key) if isinstance(properties, Mapping) else None
    extra = schema.get("additionalProperties")
    return found if found is not None else extra if isinstance(extra, Mapping) else None


def difference(got: Any, expected: Any, path: str = "arguments",
               schema: Any = None) -> str | None:
    """Where `got` differs from `expected` as JSON values: key order ignored, array order,
    string contents and exact types (boolean, integer vs 5.0, string vs number) kept. An
    integer and a float of the same value are one value only where `schema` (the tool's
    parameter schema, followed along the path) declares `number` there; a slot the schema
    leaves untyped keeps the expected type exactly. None: the same."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"{path}: {_kind(got)} where an object is expected"
        extra = sorted(set(got) - set(expected))
        missing = sorted(set(expected) - set(got))
        if extra:
            return f"{path}: extra argument {shown(extra[0])}"
        if missing:
            return f"{path}: missing argument {missing[0]!r}"
        for key in expected:
            found = difference(got[key], expected[key], f"{path}.{key}",
                               _sub_schema(schema, key))
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(got, list):
            return f"{path}: {_kind(got)} where an array is expected"
        if len(got) != len(expected):
            return f"{path}: {len(got)} items where {len(expected)} are expected"
        for index, (item, want) in enumerate(zip(got, expected, strict=True)):
            found = difference(item, want, f"{path}[{index}]", _sub_schema(schema, None))
            if found:
                return found
        return None
    same_kind = _kind(got) == _kind(expected) or (
        {_kind(got), _kind(expected)} == {"integer", "number"} and _declares_number(schema))
    if not same_kind or got != expected:
        return (f"{path}: {shown_json(got)} ({_kind(got)}) where "
                f"{json.dumps(expected, ensure_ascii=False)} ({_kind(expected)}) is expected")
    return None


def text_call(text: str, names: Sequence[str]) -> bool:
    """Whether `text` writes a tool call instead of making one: a JSON object naming one of
    the tools (`{"name": …}` or `{"function": {"name": …}}`), `functions.<name>:`, or a
    `<tool_call>` tag."""
    if _TEXT_CALL_MARKERS.search(text) or any(
            re.search(rf"\bfunctions\.{re.escape(name)}\s*:", text) for name in names):
        return True
    decoder = json.JSONDecoder()
    # each object that opens with a key, read from a bounded window: a decode error costs
    # its offset (json counts the lines before it), so 300,000 `{` read whole took 35 s
    starts = itertools.islice((m.start() for m in _OBJECT_START.finditer(text)), TEXT_CALLS)
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text[start:start + TEXT_CALL_CHARS])
        except (ValueError, *NUMERIC_ERRORS):
            continue
        if isinstance(value, dict):
            inner = value.get("function")
            name = inner.get("name") if isinstance(inner, dict) else value.get("name")
            if name in names:
                return True
    return False


# An answer's words count only where they are asserted: not after a negation or a hedge in
# their clause ("it is not snowing", "I don't know if it's snowing", "maybe 84"), and not
# inside a question ("Is it snowing?").
_NOT_ASSERTED = re.compile(r"\b(?:not|no|never|neither|nor|cannot|without|unsure|unclear|"
                           r"unknown|maybe|perhaps|possibly|might|may|could|whether|if|nie)\b|"
                           r"n't\b|n’t\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.;:!?,\n]|\bbut\b|\s[-–—]\s", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?\n]")
SENTENCE_REACH = 300  # characters read on each side of a match for its clause and sentence


def asserted(flat: str, match: re.Match[str]) -> bool:
    """Whether a pattern's match is stated, not negated, hedged or asked (_NOT_ASSERTED).
    Its clause and sentence are read within SENTENCE_REACH characters (bounded work per
    match: a reply may repeat the word a hundred thousand times)."""
    clauses = _CLAUSE_END.split(flat[max(0, match.start() - SENTENCE_REACH):match.start()])
    if _NOT_ASSERTED.search(clauses[-1] if clauses else ""):
        return False
    end = _SENTENCE_END.search(flat, match.end(), match.end() + SENTENCE_REACH)
    return end is None or end.group(0) != "?"


def answer_misses(text: str, patterns: Sequence[str]) -> list[str]:
    """The expected-answer patterns the text (whitespace collapsed, case ignored) misses: a
    pattern counts only where some match of it is asserted (`asserted`)."""
    flat = _SPACES.sub(" ", text).strip()
    return [p for p in patterns
            if not any(asserted(flat, m) for m in re.finditer(p, flat, re.IGNORECASE))]


def judge_turn(planned: PlannedTurn, text: str, calls: Sequence[Mapping[str, Any]],
               tools: Mapping[str, Mapping[str, Any]]) -> TurnVerdict:
    """One reply (`text`, `calls` as received) against its planned turn. `tools`: name →
    parameter schema. A reply that cannot be read fails the turn, with why (checks.guard)."""
    try:
        with model_text("the reply"):
            if planned.call is None:
                return _judge_answer(planned, text, calls, tools)
            return _judge_call(planned.call, text, calls, tools)
    except Unreadable as exc:
        return TurnVerdict("fail", exc.reason)


def _judge_answer(planned: PlannedTurn, text: str, calls: Sequence[Mapping[str, Any]],
                  tools: Mapping[str, Mapping[str, Any]]) -> TurnVerdict:
    if calls:
        names = ", ".join(shown(c.get("name")) for c in calls[:5])
        return TurnVerdict("fail", f"called {names} where a plain answer is expected",
                           false_call=True)
    if text_call(text, list(tools)):
        return TurnVerdict("fail", "wrote a tool call as text where a plain answer is expected",
                           false_call=True)
    misses = answer_misses(text, planned.answer)
    if misses:
        return TurnVerdict("fail", f"no tool call, but the answer does not match {misses[0]!r}"
                           " where it states something (a refusal, a negation, a question or "
                           "a hedge is not abstention)"
                           if text.strip() else "no tool call and no answer text")
    return TurnVerdict("pass", "no tool call; the answer matches", abstained=True)


def _judge_call(expected: Mapping[str, Any], text: str, calls: Sequence[Mapping[str, Any]],
                tools: Mapping[str, Mapping[str, Any]]) -> TurnVerdict:
    name = expected["name"]
    if not calls:
        if text_call(text, list(tools)):
            return TurnVerdict("fail", f"wrote the call as text instead of calling {name!r}")
        return TurnVerdict("fail", f"no tool call (expected {name!r})")
    parsed = [parse_arguments(c.get("arguments")) for c in calls]
    structured = all(isinstance(c.get("name"), str) and args is not None
                     for c, (args, _) in zip(calls, parsed, strict=True))
    if len(calls) > 1:
        got = ", ".join(shown(c.get("name")) for c in calls[:5])
        return TurnVerdict("fail", f"{len(calls)} calls ({got}) where one call to {name!r} is "
                           "expected (an extra call fails)", structured=structured)
    call, (arguments, malformed) = calls[0], parsed[0]
    if call.get("name") != name:
        return TurnVerdict("fail", f"called {shown(call.get('name'))} (expected {name!r})",
                           structured=structured)
    if arguments is None:
        return TurnVerdict("fail", f"malformed call: {malformed}", selection=True)
    problems = schema_problems(tools[name], arguments)
    if problems:
        return TurnVerdict("fail", f"arguments break the schema: {problems[0]}",
                           structured=True, selection=True)
    wrong = difference(arguments, expected.get("arguments") or {}, schema=tools[name])
    if wrong:
        return TurnVerdict("fail", wrong, structured=True, selection=True)
    return TurnVerdict("pass", f"called {name!r} with exactly the expected arguments",
                       structured=True, selection=True, arguments=True)


SKIPPED = TurnVerdict("skipped", "not reached: an earlier turn failed (counted as failed)")
