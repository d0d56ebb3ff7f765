"""The `tool_calls` check: a tool case's conversation judged turn by turn (the first wrong turn
ends it; later planned turns fail as skipped), and its frontmatter validated: tool schemas,
and every expected call valid against its tool's schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchrig.checks.answers import truncation_note
from benchrig.checks.rules import UNBOUNDED_GAP, compile_pattern
from benchrig.checks.tool_turn import SKIPPED, TurnVerdict, judge_turn, schema_problems
from benchrig.core.check import CheckContext, check
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.toolcase import PlannedTurn, planned_turns
from benchrig.core.transcript import Transcript
from benchrig.core.verdict import CheckDetail, Verdict

# What a result's evidence.tool_use.counts holds (summed by the report).
COUNTS = ("call_turns", "answer_turns", "passed_turns", "skipped_turns", "selection",
          "arguments", "structured", "abstention", "false_calls")


def tool_schemas(meta: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Tool name → its parameter schema."""
    return {t["function"]["name"]: t["function"].get("parameters") or {"type": "object"}
            for t in meta.get("tools") or ()}


def _tool_problems(meta: Mapping[str, Any]) -> list[str]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    problems: list[str] = []
    names = [t["function"]["name"] for t in meta.get("tools") or ()]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"tools: {name!r} is defined twice")
    for index, tool in enumerate(meta.get("tools") or ()):
        parameters = tool["function"].get("parameters")
        if parameters is None:
            continue
        try:
            Draft202012Validator.check_schema(parameters)
        except SchemaError as exc:
            problems.append(f"tools[{index}].function.parameters: not a JSON Schema: "
                            f"{exc.message}")
            continue
        if parameters.get("type") != "object":
            problems.append(f"tools[{index}].function.parameters: type must be object")
    return problems


def _turn_problems(meta: Mapping[str, Any], schemas: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    turns = planned_turns(meta)
    for index, turn in enumerate(turns):
        where = f"turns[{index}]"
        if index == 0 and turn.user is not None:
            problems.append(f"{where}.user: the first user message is the task body")
        if turn.call is not None:
            name = turn.call["name"]
            if name not in schemas:
                problems.append(f"{where}.call.name: no tool {name!r} (tools: "
                                f"{', '.join(schemas)})")
                continue
            for problem in schema_problems(schemas[name], turn.call.get("arguments") or {}):
                problems.append(f"{where}.call.arguments: invalid against {name!r}: {problem}")
            follows = turns[index + 1] if index + 1 < len(turns) else None
            if follows is not None and "result" not in meta["turns"][index]:
                problems.append(f"{where}.result: a call followed by another turn needs the "
                                "fixture result fed back to the model")
        for number, pattern in enumerate(turn.answer):
            field = f"{where}.answer[{number}]"
            if compile_pattern(pattern, field, problems) and UNBOUNDED_GAP.search(pattern):
                problems.append(f"{field}: {pattern!r} has an unbounded gap (.* or .+): use "
                                "a bounded one such as .{0,40}")
    return problems


def validate_tool_case(meta: Mapping[str, Any]) -> list[str]:
    """`field: what is wrong` for a tool case (the task schema has checked its shape)."""
    if not meta.get("tools") or not meta.get("turns"):
        return ["check.type: tool_calls needs `tools` and `turns` in the frontmatter"]
    problems = _tool_problems(meta)
    if problems:
        return problems
    return _turn_problems(meta, tool_schemas(meta))


def _detail_name(index: int, turn: PlannedTurn) -> str:
    """`turn N: call <tool>` or `turn N: answer` (the report reads the kind from it)."""
    return f"turn {index + 1}: " + (f"call {turn.call['name']}" if turn.call is not None
                                    else "answer")


def judged_turns(meta: Mapping[str, Any], replies: tuple[Mapping[str, Any], ...]
                 ) -> list[TurnVerdict]:
    """Each planned turn's verdict: replies judged in order until the first wrong one; the
    turns after it, and any turn never reached, are skipped (failed)."""
    schemas = tool_schemas(meta)
    verdicts: list[TurnVerdict] = []
    for index, planned in enumerate(planned_turns(meta)):
        if index >= len(replies) or (verdicts and not verdicts[-1].passed):
            verdicts.append(SKIPPED)
            continue
        reply = replies[index]
        verdicts.append(judge_turn(planned, str(reply.get("text") or ""),
                                   list(reply.get("calls") or ()), schemas))
    return verdicts


def counts(meta: Mapping[str, Any], verdicts: list[TurnVerdict]) -> dict[str, int]:
    """The numerators and denominators of one attempt (COUNTS)."""
    turns = planned_turns(meta)
    calls = [v for t, v in zip(turns, verdicts, strict=True) if t.call is not None]
    answers = [v for t, v in zip(turns, verdicts, strict=True) if t.call is None]
    return {"call_turns": len(calls), "answer_turns": len(answers),
            "passed_turns": sum(v.passed for v in verdicts),
            "skipped_turns": sum(v.verdict == "skipped" for v in verdicts),
            "selection": sum(v.selection for v in calls),
            "arguments": sum(v.arguments for v in calls),
            "structured": sum(v.structured for v in calls),
            "abstention": sum(v.abstained for v in answers),
            "false_calls": sum(v.false_call for v in answers)}


def unjudged_turns(task: TaskSpec, reason: str) -> tuple[CheckDetail, ...]:
    """A timeout: every planned turn fails."""
    return tuple(CheckDetail(_detail_name(i, t), False, reason, 0.0)
                 for i, t in enumerate(planned_turns(task.frontmatter)))


@check("tool_calls", validate=validate_tool_case, unjudged=unjudged_turns)
def check_tool_calls(task: TaskSpec, transcript: Transcript, settings: Settings,
                     context: CheckContext) -> Verdict:
    """Pass when every planned turn passes; the verdict per turn and why, in the evidence."""
    if transcript.unsupported is not None:
        return Verdict("unsupported", notes=f"tools unsupported: {transcript.unsupported}",
                       evidence={"tool_use": {"unsupported": transcript.unsupported}})
    meta = task.frontmatter
    replies = transcript.tool_turns
    verdicts = judged_turns(meta, replies)
    planned = planned_turns(meta)
    details = tuple(CheckDetail(_detail_name(i, t), v.passed, v.reason, 0.0)
                    for i, (t, v) in enumerate(zip(planned, verdicts, strict=True)))
    turns = []
    for index, verdict in enumerate(verdicts):
        reply = replies[index] if index < len(replies) else None
        turns.append({"turn": index + 1, "expected": _detail_name(index, planned[index])
                      .split(": ", 1)[1], **verdict.to_json(),
                      "request_messages": list(reply.get("messages") or ()) if reply else None,
                      "reply": {k: v for k, v in reply.items() if k != "messages"}
                      if reply else None})
    failed = next((d for d in details if not d.passed), None)
    notes = (f"{failed.name}: {failed.message}" if failed else
             f"all {len(details)} turns as planned")
    cut = cut_turn(replies, verdicts)
    if cut is not None:
        notes = truncation_note(settings, f"turn {cut + 1} stopped at the token limit; {notes}")
    return Verdict("fail" if failed else "pass", details, notes=notes, truncated=cut is not None,
                   evidence={"tool_use": {"turns": turns, "counts": counts(meta, verdicts)}})


def cut_turn(replies: tuple[Mapping[str, Any], ...], verdicts: list[TurnVerdict]
             ) -> int | None:
    """The turn (index) that failed because the token limit cut its reply off (finish
    reason `length`), as an answer check's `truncated`; None when no failed reply was cut."""
    return next((i for i, (reply, verdict) in enumerate(zip(replies, verdicts, strict=False))
                 if not verdict.passed and verdict.verdict != "skipped"
                 and reply.get("finish_reason") == "length"), None)
