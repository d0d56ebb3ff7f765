"""The strict tool-call rules, one by one, and the validator of a tool case's frontmatter."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchrig.checks.tool_calls import validate_tool_case
from benchrig.checks.tool_turn import difference, judge_turn, parse_arguments, text_call
from benchrig.core.errors import TaskError
from benchrig.core.toolcase import PlannedTurn
from benchrig.spec import load_task
from tests.conftest import TASKS
from tests.helpers.toolcases import meta

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["n", "tags"],
          "properties": {"n": {"type": "integer"}, "x": {"type": "number"},
                         "flag": {"type": "boolean"},
                         "tags": {"type": "array", "items": {"type": "string"}},
                         "where": {"type": "object"}}}
TOOLS = {"f": SCHEMA, "g": {"type": "object"}}
PLANNED = PlannedTurn(None, {"name": "f", "arguments": {"n": 5, "tags": ["a", "b"]}})


def judged(arguments: Any, name: str = "f", text: str = "") -> str:
    verdict = judge_turn(PLANNED, text, [{"name": name, "arguments": arguments}], TOOLS)
    return verdict.verdict + ": " + verdict.reason


def test_key_order_is_ignored() -> None:
    assert judged('{"tags": ["a", "b"], "n": 5}').startswith("pass")


@pytest.mark.parametrize(("arguments", "words"), [
    ('{"n": "5", "tags": ["a", "b"]}', "n: '5' is not of type 'integer'"),
    ('{"n": 5.0, "tags": ["a", "b"]}', "n: 5.0 is not of type 'integer'"),
    ('{"n": true, "tags": ["a", "b"]}', "is not of type 'integer'"),
    ('{"n": 5, "tags": ["b", "a"]}', "arguments.tags[0]"),
    ('{"n": 5, "tags": ["a", "B"]}', "arguments.tags[1]"),
    ('{"n": 5, "tags": ["a", "b"], "x": 1.5}', "extra argument 'x'"),
    ('{"n": 5}', "'tags' is a required property"),
    ('{"n": 5, "n": 5, "tags": ["a", "b"]}', "duplicate key 'n'"),
    ('{"n": 5, "tags": ["a", "b"]', "not valid JSON"),
    ('[5, ["a", "b"]]', "not an object"),
])
def test_strict_arguments(arguments: str, words: str) -> None:
    assert judged(arguments).startswith("fail") and words in judged(arguments)


def test_an_object_from_ollama_is_judged_alike() -> None:
    assert judged({"n": 5, "tags": ["a", "b"]}).startswith("pass")
    assert "not of type 'integer'" in judged({"n": 5.0, "tags": ["a", "b"]})


def test_types_are_exact_where_the_schema_leaves_them_open() -> None:
    # `where` is any object: a number in it must still be the expected one, as a number
    planned = PlannedTurn(None, {"name": "g", "arguments": {"k": 1, "on": True}})
    for wrong in ('{"k": "1", "on": true}', '{"k": 1, "on": 1}', '{"k": 1, "on": "true"}'):
        verdict = judge_turn(planned, "", [{"name": "g", "arguments": wrong}], TOOLS)
        assert verdict.verdict == "fail" and verdict.selection, wrong


def test_selection_and_structure_are_told_apart() -> None:
    wrong = judge_turn(PLANNED, "", [{"name": "g", "arguments": "{}"}], TOOLS)
    assert (wrong.selection, wrong.structured, wrong.arguments) == (False, True, False)
    broken = judge_turn(PLANNED, "", [{"name": "f", "arguments": "{"}], TOOLS)
    assert (broken.selection, broken.structured) == (True, False)
    text = judge_turn(PLANNED, '{"name": "f", "arguments": {"n": 5, "tags": ["a", "b"]}}',
                      [], TOOLS)
    assert text.verdict == "fail" and "as text" in text.reason and not text.structured


@pytest.mark.parametrize("text", [
    'Sure: {"name": "f", "arguments": {"n": 5}}',
    '{"function": {"name": "g", "arguments": {}}}',
    "functions.f:\n{\"n\": 5}",
    "<tool_call>{\"name\": \"f\"}</tool_call>",
])
def test_calls_written_as_text_are_seen(text: str) -> None:
    assert text_call(text, ["f", "g"])


def test_prose_with_braces_is_not_a_call() -> None:
    assert not text_call('Use {"name": "other"} or {n} in a template.', ["f", "g"])


def test_a_refusal_is_not_abstention() -> None:
    planned = PlannedTurn(None, None, answer=(r"\b84\b",))
    refusal = judge_turn(planned, "I cannot help with that.", [], TOOLS)
    right = judge_turn(planned, "It is 84.", [], TOOLS)
    called = judge_turn(planned, "", [{"name": "g", "arguments": "{}"}], TOOLS)
    assert (refusal.verdict, refusal.abstained, refusal.false_call) == ("fail", False, False)
    assert (right.verdict, right.abstained) == ("pass", True)
    assert (called.verdict, called.false_call) == ("fail", True)


def test_difference_keeps_integer_and_number_apart_only_through_the_schema() -> None:
    assert difference({"x": 2}, {"x": 2.0}, schema=SCHEMA) is None  # declared `number`
    assert difference({"x": "2"}, {"x": 2}, schema=SCHEMA) is not None
    assert difference({"x": 2}, {"x": 2.0}) is not None  # no schema: the exact type


@pytest.mark.parametrize("arguments", ['{"k": 5.0}', '{"k": 5.00}', '{"k": 5e0}'])
def test_a_float_is_not_the_expected_integer_where_the_schema_gives_no_type(
        arguments: str) -> None:
    # `g` takes any object: nothing declares `k` a number, so 5.0 is not the expected 5
    planned = PlannedTurn(None, {"name": "g", "arguments": {"k": 5}})
    verdict = judge_turn(planned, "", [{"name": "g", "arguments": arguments}], TOOLS)
    assert verdict.verdict == "fail" and "(number) where 5 (integer) is expected" in verdict.reason
    nested = PlannedTurn(None, {"name": "g", "arguments": {"k": [{"n": 5}]}})
    deep = judge_turn(nested, "", [{"name": "g", "arguments": '{"k": [{"n": 5.0}]}'}], TOOLS)
    assert deep.verdict == "fail" and "arguments.k[0].n" in deep.reason
    typed = {"f": SCHEMA, "g": {"type": "object", "properties": {"k": {"type": "number"}}}}
    assert judge_turn(planned, "", [{"name": "g", "arguments": arguments}], typed).passed
    assert parse_arguments("5") == (None, "arguments are a JSON int, not an object")


def write_case(folder: Path, changes: dict[str, Any]) -> Path:
    data = copy.deepcopy(meta("tool-integer-dice"))
    data.update(changes)
    path = folder / f"{data['id']}.md"
    path.write_text("---\n" + yaml.safe_dump(data, allow_unicode=True) + "---\n\nRoll.\n")
    return path


@pytest.mark.parametrize(("change", "words"), [
    (lambda m: m["turns"][0]["call"]["arguments"].update(count="2"),
     "turns[0].call.arguments: invalid against 'roll_dice': count: '2' is not of type"),
    (lambda m: m["turns"][0]["call"]["arguments"].update(sides=7),
     "sides: 7 is not one of"),
    (lambda m: m["turns"][0]["call"]["arguments"].update(extra=1),
     "Additional properties are not allowed"),
    (lambda m: m["turns"][0]["call"].update(name="roll"), "no tool 'roll'"),
    (lambda m: m["turns"][0].pop("result"), "turns[0].result: a call followed by"),
    (lambda m: m["turns"][0].update(user="Hi"), "turns[0].user: the first user message"),
    (lambda m: m["tools"][0]["function"]["parameters"].update(type="array"),
     "type must be object"),
    (lambda m: m["tools"][0]["function"]["parameters"].update(required=5),
     "not a JSON Schema"),
    (lambda m: m["tools"].append(m["tools"][0]), "'roll_dice' is defined twice"),
    (lambda m: m["turns"].append({"answer": ["a.*b"]}), "unbounded gap"),
    (lambda m: m["turns"].append({"answer": ["(unclosed"]}), "not a valid regular"),
])
def test_validate_refuses_a_broken_case(change: Any, words: str, tmp_path: Path) -> None:
    data = copy.deepcopy(meta("tool-integer-dice"))
    change(data)
    assert any(words in p for p in validate_tool_case(data)), validate_tool_case(data)
    with pytest.raises(TaskError) as raised:
        load_task(write_case(tmp_path, data))
    assert any(words in p for p in raised.value.problems)


@pytest.mark.parametrize(("turn", "words"), [
    ({"call": {"name": "roll_dice", "arguments": {}}, "answer": ["x"]}, "turns"),
    ({"answer": ["x"], "result": 1}, "turns"),
    ({}, "turns"),
])
def test_the_task_schema_refuses_a_turn_of_two_kinds(turn: dict[str, Any], words: str,
                                                     tmp_path: Path) -> None:
    with pytest.raises(TaskError) as raised:
        load_task(write_case(tmp_path, {"turns": [turn]}))
    assert any(words in p for p in raised.value.problems)


def test_every_bundled_case_validates() -> None:
    for path in sorted(TASKS.glob("tool-*.md")):
        assert load_task(path).check_type == "tool_calls"


def test_a_file_name_is_not_a_call_written_as_text() -> None:
    assert not text_call("The helpers live in functions.py: see line 3.", ["f", "g"])
    assert text_call("functions.g: {}", ["f", "g"])


def test_a_huge_model_value_is_quoted_capped() -> None:
    huge = "x" * 100_000
    for arguments in ({"n": huge, "tags": ["a", "b"]}, {"n": 5, "tags": [huge, "b"]},
                      {"n": 5, "tags": ["a", "b"], huge: 1}):
        verdict = judge_turn(PLANNED, "", [{"name": "f", "arguments": arguments}], TOOLS)
        assert verdict.verdict == "fail" and len(verdict.reason) < 1000
    verdict = judge_turn(PLANNED, "", [{"name": huge, "arguments": "{}"}], TOOLS)
    assert len(verdict.reason) < 1000


ANSWER_TURN = PlannedTurn(None, None, answer=(r"\b(yes|snow|snowing)\b",))
NUMBER_TURN = PlannedTurn(None, None, answer=(r"\b84\b",))


@pytest.mark.parametrize(("planned", "text"), [
    (ANSWER_TURN, "No, it is not snowing in Oslo."),
    (ANSWER_TURN, "I don't know if it's snowing."),
    (ANSWER_TURN, "I do not know whether it is snowing."),
    (ANSWER_TURN, "It isn't snowing right now."),
    (ANSWER_TURN, "Is it snowing in Oslo? I cannot tell."),
    (ANSWER_TURN, "Maybe it is snowing."),
    (ANSWER_TURN, "It might be snowing, I'm not sure."),
    (ANSWER_TURN, "There is no snow in Oslo."),
    (ANSWER_TURN, "It is never snowing in Oslo in this season."),
    (NUMBER_TURN, "The answer is not 84."),
    (NUMBER_TURN, "Could it be 84?"),
])
def test_a_negated_asked_or_hedged_answer_does_not_match(planned: PlannedTurn,
                                                         text: str) -> None:
    verdict = judge_turn(planned, text, [], TOOLS)
    assert verdict.verdict == "fail" and not verdict.abstained, text
    assert "does not match" in verdict.reason and "a negation" in verdict.reason


@pytest.mark.parametrize(("planned", "text"), [
    (ANSWER_TURN, "Yes, it is snowing in Oslo right now (-3 °C)."),
    (ANSWER_TURN, "Yes."),
    (ANSWER_TURN, "It's snowing in Oslo: -3 °C and snow."),
    (ANSWER_TURN, "According to the weather tool, it is snowing in Oslo."),
    (ANSWER_TURN, "I checked: not sunny, but it is snowing."),
    (NUMBER_TURN, "12 multiplied by 7 is 84, not 85."),
    (NUMBER_TURN, "It's not 85. It is 84."),
])
def test_a_stated_answer_still_matches(planned: PlannedTurn, text: str) -> None:
    assert judge_turn(planned, text, [], TOOLS).passed, text


@pytest.mark.parametrize("text", ["{" * 300_000, '{"a": "' + "{" * 200_000,
                                  '{"k":[' * 30_000, '{"name": 1, ' * 50_000])
def test_looking_for_a_call_written_as_text_reads_a_bounded_amount(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # each decode error costs json its offset (it counts the lines before it): reading every
    # `{` of 300,000 against the whole text took 35 s; now a bounded window, bounded times
    import json

    from benchrig.checks import tool_turn as toolcalls

    read: list[int] = []
    original = json.JSONDecoder.raw_decode

    def counting(self: json.JSONDecoder, s: str, idx: int = 0) -> Any:
        read.append(len(s) - idx)
        return original(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    assert not text_call(text, ["get_weather"])
    assert len(read) <= toolcalls.TEXT_CALLS
    assert all(n <= toolcalls.TEXT_CALL_CHARS for n in read)


def test_a_call_written_as_text_after_prose_is_still_seen() -> None:
    call = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert text_call("x" * 100_000 + call, ["get_weather"])
    assert text_call("{not json} " * 50 + call, ["get_weather"])
