"""A dataset task (frontmatter `dataset:`) expanded into its samples: one TaskSpec per row, its
prompt, check and hidden tests filled from the row, every row validated before anything runs."""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Mapping
from dataclasses import fields, replace
from types import MappingProxyType
from typing import Any

from benchrig.checks import check_problems
from benchrig.core.task import TaskSpec
from benchrig.dataset import FIELD, Row, Template, TemplateError, read_rows, template
from benchrig.resultio.files import Unreadable, read_regular
from benchrig.schemas import problems as schema_problems
from benchrig.suites import find_suite
from benchrig.textsafe import printable

# What a row fills: shown to the model (the prompt side) and hidden from it (the check side).
SHOWN = ("title", "entry_point", "tools")
HIDDEN = ("expected", "check")
TURNS = "turns"  # a tool case's turns: `user` and `result` are shown, `call`/`answer` hidden
SHOWN_IN_TURN = ("user", "result")
FILLED = (*SHOWN, *HIDDEN, TURNS)
ROW_TESTS = "row_tests"
ROW_TESTS_FILE = "row_tests_file"
# Frontmatter keys that are about the dataset itself, never filled.
OWN = ("dataset", "id_field", ROW_TESTS, ROW_TESTS_FILE)
SAME_PROBLEM = 5  # rows named one by one for a problem they share, before a count
TESTS_CAP = 16 << 20  # bytes of one row's test file, as of a task's
# A row's test file: under the task's folder, named plainly (no `..`, not absolute).
RELATIVE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*\.py")


def test_names_of(source: str) -> tuple[str, ...]:
    """The top-level `test_*` functions of a test module, in file order (one check each)."""
    tree = ast.parse(source)
    return tuple(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    )


def stand_in(value: Any) -> Any:
    """`value` with each string that has a `{field}` replaced by a plain word: the template
    as the schema can check it before any row fills it (each row is checked filled)."""
    if isinstance(value, str):
        return "x" if re.search(r"\{" + FIELD + r"(!code)?\}", value) else value
    if isinstance(value, list):
        return [stand_in(v) for v in value]
    if isinstance(value, dict):
        return {k: stand_in(v) for k, v in value.items()}
    return value


def _compiled(value: Any, where: str, problems: list[str]) -> Any:
    """Every string inside `value` read as a template (lists and mappings kept)."""
    if isinstance(value, str):
        try:
            return template(value)
        except TemplateError as exc:
            problems.append(f"{where}: {exc}")
            return value
    if isinstance(value, list):
        return [_compiled(v, f"{where}[{i}]", problems) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _compiled(v, f"{where}.{k}", problems) for k, v in value.items()}
    return value


def _fields(value: Any) -> set[str]:
    if isinstance(value, Template):
        return set(value.fields)
    if isinstance(value, list):
        return {f for v in value for f in _fields(v)}
    if isinstance(value, dict):
        return {f for v in value.values() for f in _fields(v)}
    return set()


def _filled(value: Any, values: Mapping[str, Any], where: str) -> Any:
    if isinstance(value, Template):
        try:
            return value.fill(values)
        except TemplateError as exc:
            raise TemplateError(f"{where}: {exc}") from None
    if isinstance(value, list):
        return [_filled(v, values, where) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, values, f"{where}.{k}") for k, v in value.items()}
    return value


def expand(task: TaskSpec, meta: Mapping[str, Any]) -> tuple[TaskSpec, list[TaskSpec],
                                                             list[str]]:
    """The task with its dataset's path, its samples, and every problem of the template or
    of a row (`file: dataset line N: where: what`): all of them, none run."""
    label = str(task.path)
    name = str(meta["dataset"])
    data = task.path.parent / name
    task = replace(task, dataset_path=data)
    problems: list[str] = []
    templates = {key: _compiled(meta[key], key, problems) for key in FILLED if key in meta}
    body = _compiled(task.body, "body", problems)
    tests = _compiled(meta[ROW_TESTS], ROW_TESTS, problems) if ROW_TESTS in meta else None
    if ROW_TESTS_FILE in meta:
        if tests is not None:
            problems.append(f"{ROW_TESTS_FILE}: give {ROW_TESTS} or {ROW_TESTS_FILE}, not both")
        tests = (ROW_TESTS_FILE, _compiled(meta[ROW_TESTS_FILE], ROW_TESTS_FILE, problems))
    turns = [t for t in templates.get(TURNS) or [] if isinstance(t, dict)]
    shown = _fields(body) | {f for key in SHOWN for f in _fields(templates.get(key))} | {
        f for t in turns for key in SHOWN_IN_TURN for f in _fields(t.get(key))}
    hidden = {f for key in HIDDEN for f in _fields(templates.get(key))} | {
        f for t in turns for key, v in t.items() if key not in SHOWN_IN_TURN
        for f in _fields(v)}
    leaked = sorted(shown & hidden)
    if leaked:  # the check's values are the answers: the prompt must never show them
        problems.extend(f"body: {{{f}}} is read by the check (expected, check, a turn's "
                        "call or answer), so it is hidden and may not appear in the prompt, "
                        "title, tools or a turn's user text" for f in leaked)
    if problems:
        return task, [], [f"{label}: {p}" for p in problems]
    rows, bad = read_rows(data, meta.get("id_field"))
    problems.extend(f"{name} {p}" if p.startswith("line ") else f"{name}: {p}" for p in bad)
    samples: list[TaskSpec] = []
    base = {f.name: getattr(task, f.name) for f in fields(task)}  # each sample's defaults
    for row in rows:
        try:
            samples.append(_sample(task, base, meta, row, body, templates, tests))
        except TemplateError as exc:
            problems.append(f"{name} line {row.line}: {exc}")
    problems.sort(key=_line)  # each bad row in file order, whatever found it
    return task, samples, [f"{label}: {printable(p, 400)}" for p in _collapsed(problems, name)]


def _collapsed(problems: list[str], name: str) -> list[str]:
    """Each problem, but one that SAME_PROBLEM rows share (a typo in the template fails every
    row) named for its first rows, then once with how many more rows have it."""
    seen: dict[str, list[int]] = {}
    for problem in problems:
        what = problem.split(": ", 1)[-1] if _line(problem) else problem
        seen.setdefault(what, []).append(_line(problem))
    kept = []
    for problem in problems:
        what = problem.split(": ", 1)[-1] if _line(problem) else problem
        lines = seen[what]
        if len(lines) <= SAME_PROBLEM or _line(problem) in lines[:SAME_PROBLEM - 1]:
            kept.append(problem)
        elif _line(problem) == lines[SAME_PROBLEM - 1]:
            kept.append(f"{name} lines {lines[SAME_PROBLEM - 1]}–{lines[-1]} "
                        f"({len(lines) - SAME_PROBLEM + 1} more rows): {what}")
    return kept


def _test_file(task: TaskSpec, name: Any, values: Mapping[str, Any]) -> tuple[Any, str]:
    """A row's test file (its path under the task's folder) and its text; TemplateError."""
    relative = name.fill(values) if isinstance(name, Template) else str(name)
    if not RELATIVE.fullmatch(relative):
        raise TemplateError(f"{ROW_TESTS_FILE}: {printable(relative, 80)!r} is not a .py file "
                            "under the task's folder (letters, digits, ._-, no '..')")
    path = task.path.parent / relative
    try:
        return path, read_regular(path, TESTS_CAP, follow=True).decode("utf-8")
    except (Unreadable, UnicodeDecodeError) as exc:
        raise TemplateError(f"{ROW_TESTS_FILE}: {relative}: {exc}") from None


def _line(problem: str) -> int:
    found = re.search(r" line (\d+): ", problem)
    return int(found.group(1)) if found else 0


def _sample(task: TaskSpec, base: dict[str, Any], meta: Mapping[str, Any], row: Row,
            body: Any, templates: dict[str, Any], tests: Any) -> TaskSpec:
    """One row's TaskSpec; TemplateError saying what is wrong with the row."""
    values = row.values
    filled = {key: _filled(value, values, key) for key, value in templates.items()}
    rendered = {k: v for k, v in meta.items() if k not in OWN} | filled
    suite = find_suite(task.suite)  # a check judging by window needs a suite asking so
    found = schema_problems("task", rendered) or check_problems(
        rendered, by_window=suite is not None and suite.by_window)
    if found:
        raise TemplateError("; ".join(found))
    prompt = _filled(body, values, "body").strip() if isinstance(body, Template) else task.body
    if not prompt:
        raise TemplateError("body: the prompt is empty")
    test_source, test_names, test_path = task.test_source, task.test_names, task.test_path
    if isinstance(tests, tuple):  # row_tests_file: each row names its test file
        test_path, test_source = _test_file(task, tests[1], values)
        tests = Template((test_source,))  # read as it is: a file is code, never filled
    if isinstance(tests, Template):
        try:
            test_source = tests.fill_code(values)
            test_names = test_names_of(test_source)
        except TemplateError as exc:
            raise TemplateError(f"{ROW_TESTS}: {exc}") from None
        except SyntaxError as exc:
            raise TemplateError(f"{ROW_TESTS}: line {exc.lineno}: {exc.msg}") from None
        if not test_names:
            raise TemplateError(f"{ROW_TESTS}: no top-level test_* function")
    digest = hashlib.sha256(f"{task.task_hash}\0{row.row_hash}\0".encode())
    if test_source is not None:
        digest.update(test_source.encode("utf-8", "surrogatepass"))
    entry = rendered.get("entry_point", ())
    check = dict(rendered.get("check") or ({"type": "tests"} if test_source else {}))
    heading = next((line[2:].strip() for line in prompt.splitlines() if line.startswith("# ")),
                   "")
    return TaskSpec(**{  # not dataclasses.replace: it reads the fields for each of 10,000
        **base, "title": str(rendered.get("title") or heading or task.id),
        "body": prompt,
        "task_hash": "sha256:" + digest.hexdigest(), "check": MappingProxyType(check),
        "entry_points": (entry,) if isinstance(entry, str) else tuple(entry),
        "test_source": test_source, "test_names": test_names,
        "test_path": test_path or (task.dataset_path if test_source else None),
        "frontmatter": MappingProxyType(rendered), "sample_id": row.sample_id,
        "row_hash": row.row_hash})

