"""What the agent drivers share: the figures parsed from an agent's event stream, and one
attempt around it — workspace, spawn, per-line parsing, metrics, errors that keep what was
measured."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchrig.core.errors import DriverError, ErrorKind
from benchrig.core.measurements import TokenSource, reported_source
from benchrig.core.transcript import DriverOutput, Transcript
from benchrig.drivers.agent_env import Needs, build, passed_names, private_home
from benchrig.drivers.agent_process import (
    Finished,
    Line,
    Workspace,
    cli_version,
    stream_process,
)
from benchrig.drivers.base import DriverRequest, Progress
from benchrig.drivers.confine import BUBBLEWRAP, SCRATCH, confine, ray_node, unseen
from benchrig.jsonsafe import NUMERIC_ERRORS, finite
from benchrig.metrics import measured
from benchrig.textsafe import PRINT_CAP, stored, type_name

MAX_EVENT_RECORDS = 100_000  # sidecar lines kept per attempt; the rest are counted
PARSE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, *NUMERIC_ERRORS)
# Once a tool runs, it can write lines into the agent's own stdout (/proc/$PPID/fd/1): a figure
# in an event read after that is the model's word, not a measurement.
AFTER_TOOLS = ("counted only from the events before the model's first tool ran (a tool can "
               "write forged events into the agent's output)")


# Settings an agent CLI keeps to itself (it sends no seed, and its own sampling and
# budget): unknown, so null, unless a driver knows them.
UNCONTROLLED: dict[str, Any] = dict.fromkeys(
    ("temperature", "max_tokens", "context_size", "think", "seed", "threads"))


@dataclass
class AgentRun:
    """Figures a parser collects from the stream; times are seconds since the spawn."""

    answer: str = ""
    thinking_chars: int | None = 0
    first_any_s: float | None = None
    first_answer_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_source: TokenSource | None = None
    output_source: TokenSource | None = None
    cost_usd: float | None = None
    cost_source: str | None = None
    turns: int | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    failure: str | None = None  # the agent itself reported that it could not finish
    # the exit code of a limit of its own its closing event named (Gemini CLI's session
    # turns: 53): that exit ends the run, its work still checked, and is no crash
    limit_exit: int | None = None
    completed: bool = False  # the stream's closing event arrived
    deltas: int = 0  # streamed pieces seen: progress, and a token count when there is no usage
    engine: dict[str, Any] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)  # figure → why it is unknown
    partial: dict[str, str] = field(default_factory=dict)  # figure → why it is a lower bound
    # the agent's own figures set aside (agent_clis.keep_reported): metrics.reported_*
    reported: dict[str, Any] = field(default_factory=dict)
    tools_began_s: float | None = None  # the model's first tool began: figures stop here
    decode_end_s: float | None = None  # the last figure counted arrived: the decode span ends

    def unreadable(self, name: str, raw: Any) -> None:
        """The agent sent `raw` for figure `name`, and it is no number that figure can be."""
        if raw is not None:
            self.rejected[name] = f"{str(raw)[:40]} is not a finite number of at least 0"

    def tool_began(self, t: float) -> None:
        """A tool of the model starts to run at `t`: from here on the agent's output may hold
        lines the tool wrote, so no later event's figure is counted (`figures_trusted`)."""
        if self.tools_began_s is None:
            self.tools_began_s = t

    @property
    def figures_trusted(self) -> bool:
        """Whether a figure read now is the agent's own: no tool of the model has run yet."""
        return self.tools_began_s is None

    def untrusted(self, *names: str) -> None:
        """Figures the agent reported after a tool ran were left out: those it has are partial,
        those it has none of are unknown."""
        for name in names:
            if getattr(self, name) is None:
                self.rejected.setdefault(name, f"reported after the model's first tool ran: "
                                               f"not counted; {AFTER_TOOLS}")
            else:
                self.partial.setdefault(name, AFTER_TOOLS)

    def saw_thinking(self, t: float) -> None:
        if self.first_any_s is None:
            self.first_any_s = t

    def thought(self, t: float, text: str) -> None:
        """Thinking text arrived at `t` (counted only before the first tool, as every figure)."""
        self.saw_thinking(t)
        if self.figures_trusted:
            self.thinking_chars = (self.thinking_chars or 0) + len(text)
        elif text:
            self.partial.setdefault("thinking_chars", AFTER_TOOLS)

    def saw_answer(self, t: float) -> None:
        self.saw_thinking(t)
        if self.first_answer_s is None:
            self.first_answer_s = t


class StreamParser:
    """Reads one agent's JSON events into an AgentRun; a subclass handles its event types."""

    closing_event = "the closing event"

    def __init__(self) -> None:
        self.run = AgentRun()

    def event(self, t: float, event: Any) -> None:
        raise NotImplementedError

    def record(self, event: Any) -> Any:
        """The event as the sidecar keeps it."""
        return event

    def finish(self) -> AgentRun:
        return self.run


def message_text(message: dict[str, Any]) -> str:
    """The text blocks of an assistant message (pi and Claude share the shape), joined."""
    return "".join(block.get("text", "") for block in message.get("content") or []
                   if isinstance(block, dict) and block.get("type") == "text")


def amount(value: Any) -> float | None:
    """A cost as the agent sent it: a finite number of at least 0, else unknown."""
    cost = finite(value)
    return cost if cost is not None and cost >= 0 else None


def _ms(seconds: float | None) -> float | None:
    return seconds * 1000.0 if seconds is not None else None


def _exit_reason(code: int, bwrap: bool = False) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    if bwrap and code > 128:  # bubblewrap reports a child killed by signal N as 128 + N
        try:
            return f"was killed by {signal.Signals(code - 128).name} (exit code {code})"
        except ValueError:
            pass
    return f"exited with code {code}"


@dataclass
class EventLog:
    """What an agent's output lines leave behind: the sidecar's records (at most
    MAX_EVENT_RECORDS, the rest counted), the line counts and when stdout first spoke; each
    stdout line that is JSON goes to the parser."""

    parser: StreamParser
    progress: Progress
    records: list[Mapping[str, Any]] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=lambda: {"stdout": 0, "stderr": 0})
    dropped: int = 0
    unparsed: int = 0  # known events in an unexpected shape
    first_output_s: float | None = None

    def full(self) -> bool:
        return len(self.records) >= MAX_EVENT_RECORDS

    def keep(self, record: Mapping[str, Any]) -> None:
        if self.full():
            self.dropped += 1
        else:
            self.records.append(record)

    def on_line(self, line: Line) -> None:
        self.lines[line.stream] += 1
        stamp = round(line.t, 6)
        if line.stream == "stderr":
            self.keep({"kind": "stderr", "t_s": stamp, "text": stored(line.text)})
            return
        if self.first_output_s is None:
            self.first_output_s = line.t
        try:
            data = json.loads(line.text)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read
            if line.text.strip():
                self.keep({"kind": "stdout", "t_s": stamp, "text": stored(line.text)})
            return
        self._parse(line.t, data)
        if self.full():  # the sidecar is full: no record to build
            self.dropped += 1
            return
        self.keep({"kind": "event", "t_s": stamp, "event": self._record(data)})

    def _parse(self, t: float, data: Any) -> None:
        try:
            self.parser.event(t, data)
        except PARSE_ERRORS:  # a known event in an unexpected shape: keep it, count it
            self.unparsed += 1
        self.progress.tokens(self.parser.run.deltas)

    def _record(self, data: Any) -> Any:
        try:
            return self.parser.record(data)
        except PARSE_ERRORS:
            return data

    def events(self) -> tuple[Mapping[str, Any], ...]:
        """The sidecar's records, with a note of how many lines were not kept."""
        note = ({"kind": "note", "text": f"{self.dropped} more lines not kept"},
                ) if self.dropped else ()
        return (*self.records, *note)

    def finish(self) -> tuple[AgentRun, str | None]:
        """The parser's figures, and why its stream could not be read to the end, if so."""
        try:
            return self.parser.finish(), None
        except Exception as exc:  # an event shape no parser foresaw: the stream's fault
            return self.parser.run, f"{type_name(exc)}: {stored(str(exc), PRINT_CAP)}"


@dataclass(frozen=True)
class Launch:
    """How the agent is started (its confined command and environment) and what the result
    records of it."""

    argv: list[str]
    env: dict[str, str]
    bwrap: bool
    runtime: dict[str, Any]
    effective: dict[str, Any]


def _launch(request: DriverRequest, argv: list[str], needs: Needs, workspace: Path,
            home: Path, copied: list[str], runtime: Mapping[str, Any],
            effective: Mapping[str, Any]) -> Launch:
    """The agent's command and its `--version`, both confined alike; its environment."""
    hidden = request.hidden_paths
    confined = confine(argv, workspace=workspace, home=home, private=hidden)
    asked = confine([argv[0], "--version"], workspace=workspace, home=home, private=hidden)
    missing = unseen(confined.record, [*argv[1:], *needs.fixed.values()])
    if missing:  # BenchRig's own mistake: the agent would not find what it is told to use
        raise DriverError("harness", f"the confined agent cannot see {', '.join(missing)}, "
                          "which its driver names to it (a driver's files belong in the "
                          "agent's private home: agent_env.driver_home)")
    passed = passed_names(request.pass_env, os.environ)
    env = build(os.environ, needs, passed, home,
                [*confined.record["writable"], *SCRATCH, str(workspace), str(home)])
    version = cli_version(argv[0], asked.argv, cwd=workspace, env=env)
    return Launch(
        confined.argv, env, confined.record["method"] == BUBBLEWRAP,
        runtime={**runtime, "version": version},
        effective={**UNCONTROLLED, **effective, "agent_confinement": {
            **confined.record, "home_files": copied}, "agent_env": sorted(env),
            "agent_pass_env": list(passed)})


def _partial(run: AgentRun) -> dict[str, str]:
    """The run's partial figures; the decode rate is then that of the part they cover."""
    if "output_tokens" not in run.partial:
        return run.partial
    return {**run.partial, "tokens_per_s": "over the output the agent reported before the "
            "model's first tool ran (a tool can write forged events into the agent's output)"}


def reported_figures(run: AgentRun, agent: str) -> dict[str, Any]:
    """The agent's own figures the parser set aside, with where they were read (`source`):
    metrics.reported_*, the one place every path keeps them; {} when none were set aside."""
    return {**run.reported, "source": reported_source(agent)} if run.reported else {}


def _output(request: DriverRequest, agent: str, launch: Launch, log: EventLog, run: AgentRun,
            finished: Finished, solution: tuple[str | None, str],
            load_time_s: float | None) -> DriverOutput:
    """What the attempt measured, kept whether or not it ends in an error."""
    code, how = solution
    engine = {
        "source": f"{agent} event stream",
        **run.engine,
        "turns": run.turns,
        "tool_calls": len(run.tool_calls),
        "exit_code": finished.exit_code,
        "first_output_s": log.first_output_s,
        "stdout_lines": log.lines["stdout"],
        "stderr_lines": log.lines["stderr"],
        "unparsed_events": log.unparsed,
        "solution_file": f"{request.task.solution_file}: {how}",
    }
    metrics = measured(
        wall_s=finished.wall_s, ttft_ms=_ms(run.first_any_s),
        answer_ttft_ms=_ms(run.first_answer_s), thinking_chars=run.thinking_chars,
        output_tokens=run.output_tokens, output_source=run.output_source,
        input_tokens=run.input_tokens, input_source=run.input_source, engine=engine,
        cost_usd=run.cost_usd, cost_source=run.cost_source, load_time_s=load_time_s,
        rejected=run.rejected, partial=_partial(run),
        # partial output: the decode rate over the span it covers, not the whole run
        decode_end_s=run.decode_end_s if "output_tokens" in run.partial else None)
    metrics = replace(metrics, reported=reported_figures(run, agent))
    # no received_bytes: an agent's reasoning may be hidden
    transcript = Transcript(answer=run.answer, finish_reason=run.finish_reason,
                            tool_calls=tuple(run.tool_calls),
                            files={request.task.solution_file: code} if code is not None else {},
                            turns=run.turns)
    return DriverOutput(transcript, metrics, launch.runtime, launch.effective,
                        events=log.events())


def _outcome(output: DriverOutput, *, agent: str, finished: Finished, run: AgentRun,
            unreadable: str | None, closing_event: str, bwrap: bool,
            timeout_s: float) -> DriverOutput:
    """How the agent's run ended, as its output or as DriverError with that output: killed at
    the deadline, an unreadable stream, an error it reported, a bad exit, or no closing event."""
    if finished.timed_out:
        raise DriverError("timeout", f"{agent} did not finish within the attempt's timeout_s="
                          f"{timeout_s:g}; its process group was killed",
                          partial=output, phase="agent")
    # Once the model has run tools, a crash, an exit code, a reported error or an unreadable
    # stream may be its own doing (a tool can kill the agent or write forged events to its
    # stdout): such an error counts against it (kind `model`); before that, it is `infra`.
    kind: ErrorKind = "model" if run.tool_calls else "infra"
    after = (f" (after {len(run.tool_calls)} tool call{'s' if len(run.tool_calls) > 1 else ''}"
             " of the model)" if run.tool_calls else "")
    if unreadable is not None:
        raise DriverError(kind, f"{agent}'s events could not be read ({unreadable}){after}",
                          partial=output)
    if run.failure:
        raise DriverError(kind, f"{agent} reported an error: {run.failure}{after}",
                          partial=output)
    assert finished.exit_code is not None
    if finished.exit_code not in (0, run.limit_exit):
        tail = finished.stderr_tail[-600:].replace("\n", " | ")
        raise DriverError(kind, f"{agent} {_exit_reason(finished.exit_code, bwrap)}"
                          + (f": {tail}" if tail else "") + after, partial=output)
    if not run.completed:
        raise DriverError(kind, f"{agent} exited without {closing_event}{after}",
                          partial=output)
    return output


def drive(request: DriverRequest, *, agent: str, argv: list[str], needs: Needs,
          parser: StreamParser, runtime: Mapping[str, Any], effective: Mapping[str, Any],
          load_time_s: float | None = None, use_pty: bool = False) -> DriverOutput:
    """Run the agent once in a fresh workspace with a private home and an allow-listed
    environment (drivers.agent_env), confined where the machine allows it (drivers.confine:
    BenchRig's checkout, the task and the results hidden, the host read-only) — its
    `--version` too; its output, or DriverError with what was measured (timeout, crash, or an
    error the agent reported even with exit code 0)."""
    refused = ray_node()
    if refused is not None:
        raise DriverError("infra", f"{agent} was not started: {refused}")
    log = EventLog(parser, request.progress)
    with Workspace() as workspace, private_home(needs) as (home, copied):
        launch = _launch(request, argv, needs, workspace.path, home, copied, runtime,
                         effective)
        request.progress.phase(f"running {agent}")
        try:
            # what is left of the attempt's deadline (setting up and --version spent from it)
            finished = stream_process(launch.argv, cwd=workspace.path, env=launch.env,
                                      timeout_s=request.deadline.spend("agent"),
                                      on_line=log.on_line, use_pty=use_pty)
        except OSError as exc:
            raise DriverError("infra", f"could not start {agent}: {exc}") from None
        solution = workspace.read(request.task.solution_file)
    run, unreadable = log.finish()
    output = _output(request, agent, launch, log, run, finished, solution, load_time_s)
    return _outcome(output, agent=agent, finished=finished, run=run, unreadable=unreadable,
                    closing_event=parser.closing_event, bwrap=launch.bwrap,
                    timeout_s=request.settings.timeout_s)


def prompt_text(request: DriverRequest) -> str:
    """The rendered messages as one prompt argument. A leading `-` or `@` would read as an
    option (or, for pi, a file to include), so such a prompt starts on a new line."""
    text = "\n\n".join(message["content"] for message in request.messages)
    return "\n" + text if text.startswith(("-", "@")) else text
