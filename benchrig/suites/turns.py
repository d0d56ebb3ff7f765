"""A tool case's conversation: the planned turns put to a driver's `tool_turn` one by one, each
reply judged as it comes so the first wrong turn ends it; fixture results fed back after a
right call. Nothing a model asks for is ever executed, read or searched."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from benchrig.checks.tool_calls import tool_schemas
from benchrig.checks.tool_turn import judge_turn, parse_arguments
from benchrig.core.errors import DriverError
from benchrig.core.measurements import Metrics
from benchrig.core.task import TaskSpec
from benchrig.core.toolcase import ToolReply, ToolsUnsupported, planned_turns, tool_definitions
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.drivers.base import Driver, DriverRequest


def unsupported(driver: Driver, reason: str, runtime: Mapping[str, Any] | None = None
                ) -> DriverOutput:
    """The output of a case this driver, runtime or model cannot run: no turn at all."""
    return DriverOutput(Transcript(answer="", unsupported=reason), Metrics(),
                        runtime=runtime or {"name": driver.name})


def _echo(reply: ToolReply, index: int) -> dict[str, Any]:
    """The model's own call, as the next request repeats it (arguments as JSON text)."""
    call = reply.calls[0]
    arguments, _ = parse_arguments(call.get("arguments"))
    return {"id": str(call.get("id") or f"call_{index}"), "type": "function",
            "function": {"name": call.get("name"),
                         "arguments": json.dumps(arguments, ensure_ascii=False)}}


def _known(values: list[int | None]) -> int | None:
    return sum(v for v in values if v is not None) if values and None not in values else None


def _output(replies: list[ToolReply], records: list[dict[str, Any]],
            runtime: Mapping[str, Any], effective: Mapping[str, Any]) -> DriverOutput:
    """The conversation as one output: every reply's evidence, request wall time summed.
    No TTFT, prefill or decode figures: the turns are not streamed (docs/suites.md)."""
    walls = [r.wall_s for r in replies]
    wall = sum(w for w in walls if w is not None) if walls and None not in walls else None
    inputs = _known([r.input_tokens for r in replies])
    outputs = _known([r.output_tokens for r in replies])
    sources = {r.tokens_source for r in replies}
    source = sources.pop() if len(sources) == 1 else None
    metrics = Metrics(wall_s=wall, input_tokens=inputs, output_tokens=outputs,
                      input_tokens_source=source if inputs is not None else None,
                      output_tokens_source=source if outputs is not None else None,
                      engine={"source": "tool conversation (not streamed)",
                              "turns": [{"wall_s": r.wall_s, "finish_reason": r.finish_reason,
                                         "raw": dict(r.raw)} for r in replies]})
    last = replies[-1] if replies else None
    transcript = Transcript(
        answer=last.text if last else "", finish_reason=last.finish_reason if last else None,
        tool_calls=tuple(c for r in replies for c in r.calls), turns=len(replies),
        tool_turns=tuple(records))
    return DriverOutput(transcript, metrics, runtime=runtime, effective=effective)


def converse(driver: Driver, request: DriverRequest, task: TaskSpec) -> DriverOutput:
    """Run the case's planned turns through `driver`; an error mid-way keeps the turns so far
    (never judged: an error is not a verdict)."""
    take = getattr(driver, "tool_turn", None)
    if take is None:
        return unsupported(driver, f"the {driver.name} driver ({driver.kind}) cannot send "
                           "tools")
    tools, schemas = tool_definitions(task.frontmatter), tool_schemas(task.frontmatter)
    messages: list[dict[str, Any]] = [dict(m) for m in request.messages]
    replies: list[ToolReply] = []
    records: list[dict[str, Any]] = []
    runtime: Mapping[str, Any] = {"name": driver.name}
    effective: Mapping[str, Any] = {}
    for index, planned in enumerate(planned_turns(task.frontmatter)):
        if planned.user is not None:
            messages.append({"role": "user", "content": planned.user})
        sent = [dict(m) for m in messages]
        request.progress.phase(f"turn {index + 1}")
        try:
            reply: ToolReply = take(request, sent, tools)
        except ToolsUnsupported as exc:
            if not replies:
                return unsupported(driver, str(exc), runtime)
            raise DriverError("infra", f"turn {index + 1}: {exc}",
                              _output(replies, records, runtime, effective)) from None
        except DriverError as exc:
            so_far = _output(replies, records, runtime, effective)
            raise DriverError(exc.kind, f"turn {index + 1}: {exc.message}",
                              exc.partial if exc.partial is not None and not replies
                              else so_far, phase=exc.phase) from None
        runtime, effective = reply.runtime or runtime, reply.effective or effective
        replies.append(reply)
        records.append({"messages": sent, **reply.to_json()})
        if not judge_turn(planned, reply.text, reply.calls, schemas).passed:
            break  # the first wrong turn ends the conversation
        if planned.call is not None:
            echo = _echo(reply, index)
            messages.append({"role": "assistant", "content": reply.text, "tool_calls": [echo]})
            messages.append({"role": "tool", "tool_call_id": echo["id"],
                             "name": echo["function"]["name"],
                             "content": json.dumps(planned.result, ensure_ascii=False)})
        else:
            messages.append({"role": "assistant", "content": reply.text})
    return _output(replies, records, runtime, effective)
