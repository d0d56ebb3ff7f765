"""Suite: one suite as tasks name it in `suite` — its frontmatter rules, the shape of one
attempt, and what it needs of the run's lanes (public: what a plugin suite makes).

A suite module makes one `Suite` value; benchrig.suites finds it by name (built-in, or the
`benchrig.suites` entry-point group of an installed package). The built-in attempt shapes
(`benchrig.suites.shapes`: one answer, a tool conversation, a window ladder) are public too,
so a new suite usually reuses one."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from benchrig.core.errors import DriverError
from benchrig.core.settings import Settings
from benchrig.core.task import TaskSpec
from benchrig.core.transcript import DriverOutput
from benchrig.core.verdict import Verdict

__all__ = ["AttemptInput", "Figure", "Outcome", "Shape", "Suite", "SuiteReport", "Validator",
           "no_problems"]


@dataclass(frozen=True)
class AttemptInput:
    """What the runner hands a suite for one attempt: the task, the driver and the request
    made for it (messages, settings, the attempt's one deadline), the run's sandbox pool.
    `driver` is a benchrig.drivers.base.Driver and `request` its DriverRequest, `sandboxes`
    a benchrig.sandbox.SandboxPool or None: typed loosely because suites sit below them."""

    task: TaskSpec
    driver: Any
    request: Any
    sandboxes: Any = None
    progress: Any = None  # a benchrig.drivers.base.Progress, or None: nothing to tell


@dataclass(frozen=True)
class Outcome:
    """One attempt as a suite ran it, before it is recorded: the settings to record (a
    window ladder records its widest window), what the driver produced (or the error it
    ended in), the verdict, how long checking took, and when the model's part ended
    (UTC ISO-8601: checking after the model answered is not the attempt's wall time)."""

    settings: Settings
    output: DriverOutput | None
    error: DriverError | None
    verdict: Verdict | None
    check_s: float | None
    ended: str


# One attempt: drive the model through the request, judge what came back. A failing model
# is an Outcome (error or verdict), never an exception.
Shape = Callable[[AttemptInput], Outcome]
# A task's whole frontmatter (schema-valid) and its prompt body → `field: what is wrong`.
Validator = Callable[[Mapping[str, Any], str], list[str]]


def no_problems(meta: Mapping[str, Any], body: str) -> list[str]:
    """The validator of a suite that needs nothing the schema does not already require."""
    return []


# One figure of a suite's report line, from one model's results on the suite (each read as
# its result file's top-level keys: r["result"], r["notes"], …): a number, a short text, or
# None when it does not apply.
FigureOf = Callable[[Sequence[Mapping[str, Any]]], float | int | str | None]


@dataclass(frozen=True)
class Figure:
    """A figure a suite adds to its report line: `name` is its CSV column
    (`<suite>_<name>`) and its key under the suite's `figures` in the JSON summary; the text
    and Markdown summaries show `<text> <value>` (`text` defaults to the name)."""

    name: str
    compute: FigureOf
    text: str = ""


@dataclass(frozen=True)
class SuiteReport:
    """How the report shows a suite (its report facet; the default is a plain pass-rate
    line). `rated`: its attempts have verdicts to rate (speed only measures); `by_checks`:
    its score is its checks' share (coding by assertion, context by window), not its tasks';
    `composite`: its score is averaged into the composite; `timed`: one timed generation per
    attempt, so its TTFT and decode rate enter a model's timing averages; `levels`: its
    results are levels of a sweep, never attempts (their own section); `pass_at_k`: a
    comparison shows pass@k of its tasks; `order`: where its line stands (then by name);
    `figures`: its own figures (`Figure`); `panel`: a built-in's bespoke figures in every
    view, `module:attr` of a benchrig.report.panels.Panel, resolved by the report when it
    renders (a suite never imports the report)."""

    rated: bool = True
    by_checks: bool = False
    composite: bool = False
    timed: bool = True
    levels: bool = False
    pass_at_k: bool = False
    order: int = 99
    figures: tuple[Figure, ...] = ()
    panel: str | None = None


@dataclass(frozen=True)
class Suite:
    """A suite: `attempt` runs one attempt (a shape of benchrig.suites.shapes, or its own);
    `validate` refuses at load a task this suite cannot run. Lane needs: `exclusive` — its
    figures are timings of the machine, so nothing else runs beside its attempts (and
    repeats are never re-sampled: they measure the machine, not the model);
    `embedded_only` — it measures the embedded model itself, so it runs only where the
    model runs in BenchRig's process or is served by it (another driver is refused before
    anything runs). `hidden_tests`: its tasks are judged by a `<id>.test.py` beside them.
    `opt_in`: run only when named (`--suite` or a task id), never by default.
    The prompt: `system`, the system message a chat model is sent before every task of the
    suite; `instructions`, by mode (`chat`: a model's chat, `agent`: a coding agent), the
    paragraph after the task's body (`{file}` stands for the task's solution file).
    `answer_scored`: its answer is checked, so a reply cut off at the token limit is
    truncated and a thinking model's token budget is multiplied (its trace comes first);
    `think`: thinking on or off by default (None: the model's own; benchrig.toml's `[think]`
    overrides it); `by_window`: its attempt judges one answer per context window (a window
    ladder), as the `needle` check needs. `report`: how summaries show it (`SuiteReport`)."""

    name: str
    attempt: Shape
    validate: Validator = no_problems
    exclusive: bool = False
    embedded_only: bool = False
    hidden_tests: bool = False
    opt_in: bool = False
    system: str | None = None
    instructions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    answer_scored: bool = False
    think: bool | None = None
    by_window: bool = False
    report: SuiteReport = SuiteReport()
