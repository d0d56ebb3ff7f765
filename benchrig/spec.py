"""Reads tasks/<id>.md (+ <id>.test.py) into a frozen TaskSpec, refusing malformed files."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import YAMLHandler

from benchrig.checks import check_problems
from benchrig.core.errors import TaskError
from benchrig.core.task import TEST_SUFFIX, TaskSpec
from benchrig.paths import tasks_dir
from benchrig.resultio.files import Unreadable, read_regular
from benchrig.samples import FILLED, expand, stand_in
from benchrig.samples import test_names_of as test_names_of  # its old home: bench/ imports it
from benchrig.schemas import problems as schema_problems
from benchrig.suites import find_suite, unregistered

TASK_FILE_CAP = 16 << 20  # bytes of a task file or its tests (the context filler is the largest)
# Values of a task's frontmatter once each alias stands for what it repeats: a bundled task
# has a few hundred; ten aliases of ten aliases… of a short list are billions.
MAX_FRONTMATTER_VALUES = 100_000
# Bytes of the frontmatter itself (a bundled task's is under 2 KB): PyYAML builds a Python
# object of a few hundred bytes for every value, so 16 MiB of `[1,1,…]` would take GBs.
FRONTMATTER_CAP = 256 << 10
# Lists and mappings inside one another: PyYAML constructs them, and BenchRig copies and
# validates them, recursively (500 deep was a RecursionError); a bundled task nests under 10.
MAX_FRONTMATTER_DEPTH = 64


class _Expands(Exception):
    """Frontmatter too long, or whose aliases stand for too many values or for themselves."""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: yaml.Node, limit: int, depth: int = MAX_FRONTMATTER_DEPTH
                     ) -> None:
    """_Expands when `root` stands for more than `limit` values with every alias expanded (an
    alias is the same node object met again, so this counts each node once: linear in the
    text, however much it would expand), contains itself, or nests more than `depth` deep."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # the nodes on the path from the root (a cycle meets one again)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > limit:
                raise _Expands(f"YAML aliases expand to more than {limit:,} values")
            continue
        if key in sizes:
            continue
        if key in open_:
            raise _Expands("a YAML alias refers to a value that contains it")
        open_.add(key)
        if len(open_) > depth:
            raise _Expands(f"nested more than {depth} deep")
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


class _Frontmatter(YAMLHandler):
    """python-frontmatter's YAML handler, composing first and constructing only frontmatter
    whose aliases stay within MAX_FRONTMATTER_VALUES (a 610-byte alias bomb is billions)."""

    def load(self, fm: str, **kwargs: Any) -> Any:
        if len(fm) > FRONTMATTER_CAP:
            raise _Expands(f"{len(fm):,} characters, over the cap of {FRONTMATTER_CAP:,}")
        loader = kwargs.get("Loader", getattr(yaml, "CSafeLoader", yaml.SafeLoader))(fm)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_expansion(node, MAX_FRONTMATTER_VALUES)
            return loader.construct_document(node)
        finally:
            loader.dispose()


def _plain(value: Any) -> Any:
    """YAML may yield dates; the schema speaks JSON, so dates become ISO strings."""
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _title(body: str, fallback: str) -> str:
    for line in body.splitlines():
        if line.startswith("# "):
            return line[2:].strip().removeprefix("Task:").strip() or fallback
    return fallback


def _load_tests(path: Path, label: str, problems: list[str]) -> tuple[str | None, tuple[str, ...]]:
    test_path = path.with_name(path.name.removesuffix(".md") + TEST_SUFFIX)
    if not test_path.is_file():
        problems.append(f"{label}: tests: {test_path.name} is missing (a task checked by "
                        "tests needs it)")
        return None, ()
    try:
        source = read_regular(test_path, TASK_FILE_CAP, follow=True).decode("utf-8")
        names = test_names_of(source)
    except (Unreadable, UnicodeDecodeError) as exc:
        problems.append(f"{test_path}: {exc}")
        return None, ()
    except SyntaxError as exc:
        problems.append(f"{test_path}: line {exc.lineno}: {exc.msg}")
        return None, ()
    if not names:
        problems.append(f"{test_path}: tests: no top-level test_* function")
    return source, names


_NOT_STRING = re.compile(r"^(?P<field>\S+): (?P<number>-?\d+) is not of type 'string'$")
# What YAML 1.1 reads as a base-60 number: 11:20 is 680, 1:02:03 is 3723.
_SEXAGESIMAL = re.compile(r"(?<![\w\"'.:])(\d+(?::[0-5]?\d)+)(?![\w\"'.:])")


def _readable(found: list[str], meta: dict[str, Any], text: str) -> list[str]:
    """The schema's problems as a task's author can act on them: without a valid `suite`
    only that one (what else is required depends on it), and a number YAML made of an
    unquoted time (11:20 → 680) named with the quoting that fixes it."""
    if meta.get("suite") is None or any(p.startswith("suite:") for p in found):
        found = [p for p in found if p.startswith("suite:")] or found
    frontmatter_text = text.split("\n---", 1)[0]
    times = {_base60(t): t for t in _SEXAGESIMAL.findall(frontmatter_text)}
    readable = []
    for problem in found:
        match = _NOT_STRING.match(problem)
        written = times.get(int(match["number"])) if match else None
        if match and written:
            problem = (f"{match['field']}: {written} is read by YAML as the number "
                       f"{match['number']} (base 60); quote it: \"{written}\"")
        readable.append(problem)
    return readable


def _base60(text: str) -> int:
    value = 0
    for part in text.split(":"):
        value = value * 60 + int(part)
    return value


def load_task(path: Path) -> TaskSpec:
    """Parse and validate one task file (a dataset task: every row too); raise TaskError
    naming the file and field. A dataset task comes back as its template, unfilled."""
    return _load(path)[0]


def load_samples(path: Path) -> list[TaskSpec]:
    """What a task file runs as: itself, or (a dataset task) one TaskSpec per row."""
    task, samples = _load(path)
    return samples if task.dataset_path is not None else [task]


def _load(path: Path) -> tuple[TaskSpec, list[TaskSpec]]:
    label = str(path)
    if not path.exists():  # anything else there is read_regular's to refuse, saying why
        raise TaskError([f"{label}: file not found"])
    try:  # a task may be a link (packs, shared folders), but only to a regular file
        raw = read_regular(path, TASK_FILE_CAP, follow=True)
    except Unreadable as exc:
        raise TaskError([f"{label}: {exc}"]) from None
    try:
        text = raw.decode("utf-8")
        yaml_handler = _Frontmatter()  # what python-frontmatter detects otherwise is as it was
        post = frontmatter.loads(text, handler=yaml_handler if yaml_handler.detect(text)
                                 else None)
    except UnicodeDecodeError as exc:
        raise TaskError([f"{label}: file is not UTF-8 ({exc.reason})"]) from None
    except (_Expands, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, _Expands) else "nested too deep"
        raise TaskError([f"{label}: frontmatter: {reason}"]) from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f"line {where.line + 1}: " if where is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise TaskError([f"{label}: frontmatter: {line}invalid YAML: {reason}"]) from None
    meta = _plain(dict(post.metadata))
    if not meta:
        raise TaskError([f"{label}: frontmatter: missing (the file must start with a --- block)"])
    dataset = "dataset" in meta
    # a dataset task's filled keys are templates: the schema checks them filled, per row
    unfilled = {k: stand_in(v) if k in FILLED else v for k, v in meta.items()} if dataset \
        else meta
    problems = [f"{label}: {p}" for p in _readable(schema_problems("task", unfilled), meta,
                                                   raw.decode("utf-8"))]
    name = meta.get("suite")
    suite = find_suite(name) if isinstance(name, str) else None
    if not problems:  # an unknown suite alone: what else is required depends on it
        # a dataset task's check is checked filled, per row
        problems = [f"{label}: {p}" for p in (
            [unregistered(str(name))] if suite is None else
            [] if dataset else check_problems(meta, by_window=suite.by_window))]
    stem = path.name.removesuffix(".md")
    if isinstance(meta.get("id"), str) and meta["id"] != stem:
        problems.append(f"{label}: id: {meta['id']!r} does not match the file name {stem!r}")
    body = post.content.strip()
    if not body:
        problems.append(f"{label}: body: the prompt is empty")
    test_source: str | None = None
    test_names: tuple[str, ...] = ()
    check_type = (meta.get("check") or {}).get("type") if isinstance(meta.get("check"), dict) \
        else None
    if suite is not None:  # the suite's own rules for its fields
        problems.extend(f"{label}: {p}" for p in suite.validate(meta, body))
    if ((suite is not None and suite.hidden_tests) or check_type == "tests") and \
            not {"row_tests", "row_tests_file"} & set(meta):
        test_source, test_names = _load_tests(path, label, problems)
    if problems:
        raise TaskError(problems)
    digest = hashlib.sha256(raw)
    if test_source is not None:
        digest.update(test_source.encode("utf-8"))
    entry = meta.get("entry_point", ())
    check = dict(meta.get("check") or ({"type": "tests"} if test_source else {}))
    task = TaskSpec(
        id=meta["id"],
        suite=meta["suite"],
        language=meta["language"],
        difficulty=meta["difficulty"],
        tags=tuple(meta["tags"]),
        timeout_s=meta["timeout_s"],
        title=meta.get("title") or _title(body, meta["id"]),
        body=body,
        path=path,
        task_hash="sha256:" + digest.hexdigest(),
        max_tokens=meta.get("max_tokens"),
        temperature=meta.get("temperature"),
        think=meta.get("think"),
        check=MappingProxyType(check),
        check_timeout_s=float(meta.get("check_timeout_s", 5.0)),
        entry_points=(entry,) if isinstance(entry, str) else tuple(entry),
        solution_file=meta.get("solution_file", "solution.py"),
        test_path=path.with_name(stem + TEST_SUFFIX) if test_source is not None else None,
        test_source=test_source,
        test_names=test_names,
        frontmatter=MappingProxyType(meta),
    )
    if not dataset:
        return task, []
    task, samples, problems = expand(task, meta)
    if problems:
        raise TaskError(problems)
    return task, samples


def task_paths(selectors: Iterable[str] = (), base: Path | None = None) -> list[Path]:
    """Task ids, task files or folders → task file paths (all of `base` when none given)."""
    base = base or tasks_dir()
    chosen = list(selectors) or [str(base)]
    paths: list[Path] = []
    for item in chosen:
        candidate = Path(item)
        if candidate.is_dir():
            paths.extend(sorted(candidate.glob("*.md")))
        elif candidate.suffix == ".md" or candidate.exists():
            paths.append(candidate)
        else:
            paths.append(base / f"{item}.md")
    return paths


def load_tasks(paths: Iterable[Path]) -> list[TaskSpec]:
    """Load every task (a dataset task: its samples) or raise one TaskError listing the
    problems of all of them."""
    tasks: list[TaskSpec] = []
    problems: list[str] = []
    for path in paths:
        try:
            tasks.extend(load_samples(path))
        except TaskError as exc:
            problems.extend(exc.problems)
    if problems:
        raise TaskError(problems)
    return tasks
