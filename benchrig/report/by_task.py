"""`benchrig summary --by task`: a task × model table of pass counts (`3/5`), so a reader
sees where two models differ."""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass

from benchrig.attempts import unit
from benchrig.core.errors import counts_against_model
from benchrig.report.facets import facet
from benchrig.report.grouping import Group
from benchrig.report.markdown import header, row
from benchrig.report.render_csv import writer
from benchrig.textsafe import label

DIFFERS = "≠"
WIDTH = 120  # columns the text table fits in (a wide terminal; piped output alike)
NOTE = ("passes / attempts that reached a verdict (errors not of the model's doing are "
        f"left out); — not run; {DIFFERS} the models' pass rates differ on this task")


@dataclass(frozen=True)
class Cell:
    """One task of one row: passes over the attempts that reached a verdict."""

    passed: int
    scored: int
    attempts: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None

    @property
    def text(self) -> str:
        return f"{self.passed}/{self.scored}" if self.scored else "—"


@dataclass(frozen=True)
class TaskTable:
    """Columns: one per row of the per-model table; rows: (suite, task)."""

    columns: list[str]  # printable: model · agent, with the settings that set a row apart
    tasks: list[tuple[str, str]]  # (suite, task) as in the results
    cells: dict[tuple[str, str], list[Cell | None]]  # None: this row never ran the task

    def differs(self, task: tuple[str, str]) -> bool:
        rates = {c.rate for c in self.cells[task] if c is not None and c.rate is not None}
        return len(rates) > 1


def task_table(groups: list[Group], per_sample: bool = False) -> TaskTable:
    """Rows by task, or (`per_sample`) by unit: each sample of a dataset task its own row."""
    counts: dict[tuple[str, str], list[Cell | None]] = {}
    for index, group in enumerate(groups):
        per_task: dict[tuple[str, str], list[int]] = {}
        for r in group.results:
            tally = per_task.setdefault((r.suite, unit(r) if per_sample else r.task),
                                        [0, 0, 0])
            scored = int(counts_against_model(r))
            tally[0] += scored * (r.result == "pass")
            tally[1] += scored
            tally[2] += 1
        for key, (passed, scored, attempts) in per_task.items():
            counts.setdefault(key, [None] * len(groups))[index] = Cell(passed, scored, attempts)
    tasks = sorted(counts, key=lambda k: (facet(k[0]).order, k[0], k[1]))
    columns = [label(f"{g.name} · {g.agent}") for g in groups]
    return TaskTable(columns, tasks, counts)


def _rows(table: TaskTable) -> list[list[str]]:
    return [[label(suite), label(task), DIFFERS if table.differs((suite, task)) else "",
             *("—" if c is None else c.text for c in table.cells[(suite, task)])]
            for suite, task in table.tasks]


def render_text(table: TaskTable, width: int = WIDTH) -> str:
    """The table in `width` columns: when the rows' names make it wider, they are numbered
    ([1], [2], … named below it), and when it is still wider, its columns are cut into
    blocks, each under the suite and task columns."""
    rows = _rows(table)
    headers = table.columns
    legend: list[str] = []
    if _width(["suite", "task", "", *headers], rows) > width:
        headers = [f"[{i + 1}]" for i in range(len(headers))]
        legend = [f"[{i + 1}] {name}" for i, name in enumerate(table.columns)]
    blocks: list[list[int]] = [[]]
    for index in range(len(headers)):
        trial = blocks[-1] + [index]
        if blocks[-1] and _width(["suite", "task", "", *(headers[i] for i in trial)],
                                 [row[:3] + [row[3 + i] for i in trial] for row in rows]) > width:
            blocks.append([index])
        else:
            blocks[-1] = trial
    out: list[str] = []
    for block in blocks:
        lines = [["suite", "task", "", *(headers[i] for i in block)],
                 *([*row[:3], *(row[3 + i] for i in block)] for row in rows)]
        widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
        text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
                for line in lines]
        text.insert(1, "  ".join("-" * w for w in widths))
        out += [*([""] if out else []), *text]
    note = textwrap.fill(NOTE[0].upper() + NOTE[1:] + ".", width)
    return "\n".join([*out, *(["", *legend] if legend else []), "", note]) + "\n"


def _width(header: list[str], rows: list[list[str]]) -> int:
    """The printed width of a table of `header` and `rows`, two spaces between columns."""
    return sum(max(len(line[i]) for line in [header, *rows]) for i in range(len(header))) + \
        2 * (len(header) - 1)


def render_markdown(table: TaskTable) -> str:
    lines = [*header(["suite", "task", "", *table.columns]), *map(row, _rows(table))]
    return "\n".join([*lines, "", NOTE[0].upper() + NOTE[1:] + "."]) + "\n"


def render_csv(table: TaskTable) -> str:
    """One row per task and column: passed, scored, attempts (machine-readable)."""
    out = io.StringIO()
    write = writer(out)
    write(["suite", "task", "row", "passed", "scored", "attempts"])
    for suite, task in table.tasks:
        for column, found in zip(table.columns, table.cells[(suite, task)], strict=True):
            if found is not None:
                write([label(suite), label(task), column, found.passed, found.scored,
                       found.attempts])
    return out.getvalue()
