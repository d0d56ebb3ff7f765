"""Suite problems → BenchRig task files: the prompt framed as a coding task, the suite's own test.

The one converter for HumanEval (`bench/sandbox.py` uses it too) and MBPP-shaped records.
Everything here is pure text in, text out, so an import is byte-for-byte reproducible.
"""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass
from typing import Any

import yaml

from benchrig.core.errors import BenchRigError
from benchrig.textsafe import printable

PER_ASSERTION, PER_PROBLEM = "assertion", "problem"
# HumanEval and MBPP rate no difficulty; the task format requires one.
DIFFICULTY = "medium"
TIMEOUT_S = 120
CHECK_TIMEOUT_S = 10
# What a record's id may be: it names files and is written into generated code (as a literal).
SOURCE_ID = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}/[0-9]{1,6}")


class PackError(BenchRigError):
    """A source file or a record in it that cannot become a task."""


@dataclass(frozen=True)
class Converted:
    """One problem as files: the task, its hidden test, its reference and broken answers."""

    id: str
    source_id: str
    task: str
    test: str
    reference: str
    broken: str
    split: str  # PER_ASSERTION or PER_PROBLEM
    dropped: int = 0  # assertions that never touch the candidate, left out at import


def fenced(code: str) -> str:
    """`code` in a ```python block whose fence no backtick run inside it can close."""
    longest = max((len(run) for run in re.findall(r"`{3,}", code)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}python\n{code.rstrip()}\n{fence}\n"


def task_text(meta: dict[str, Any], body: str) -> str:
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{head}---\n\n{body.rstrip()}\n"


def _meta(task_id: str, pack: str, entries: tuple[str, ...]) -> dict[str, Any]:
    return {"id": task_id, "suite": "coding", "language": "python", "difficulty": DIFFICULTY,
            "tags": [pack], "timeout_s": TIMEOUT_S, "check_timeout_s": CHECK_TIMEOUT_S,
            "entry_point": entries[0] if len(entries) == 1 else list(entries)}


def _asserts(source: str, statements: list[ast.stmt], indent: int) -> list[str] | None:
    """Each statement's source when every one is an `assert` at column `indent` (docstrings
    aside), so each can run alone exactly as written; None when that is not faithful."""
    found: list[str] = []
    for node in statements:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if not isinstance(node, ast.Assert) or node.col_offset != indent:
            return None
        segment = ast.get_source_segment(source, node)
        if segment is None:
            return None
        found.append(segment)
    return found or None


def _touching(segments: list[str], names: set[str]) -> list[str]:
    """The assertions that read one of `names` (the candidate's): `assert True, …` tests no
    code, so as a check it would pass for any stub."""
    return [s for s in segments
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(ast.parse(s)))]


def _identifier(name: str, what: str, source_id: str) -> str:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise PackError(f"{source_id}: {what} {name[:80]!r} is not a Python name")
    return name


def _assertion_tests(segments: list[str], prelude: str) -> str:
    width = max(2, len(str(len(segments))))
    return "".join(f"\n\ndef test_assert_{n:0{width}d}() -> None:\n{prelude}    {segment}\n"
                   for n, segment in enumerate(segments, 1))


def _test_head(doc: str, names: tuple[str, ...]) -> str:
    # By name, not `from solution import *`: a star-import would also bind the modules the
    # candidate imports (`import math`), and a module cannot cross the sandbox boundary.
    # The docstring is a literal (repr), never text spliced between quotes: a record's id
    # is data and must not become code that runs on the host at `verify`.
    return f'{doc!r}\n\nfrom solution import {", ".join(names)}\n\n'


def _helpers(prompt: str, entry: str) -> str:
    """The prompt's own imports and helper definitions (all but the entry point), as code for
    the test: the test uses the trusted `poly` or `encode_cyclic`, never the candidate's."""
    keep = [n for n in ast.parse(prompt).body
            if isinstance(n, ast.Import | ast.ImportFrom)
            or (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name != entry)]
    return "".join(ast.unparse(n) + "\n\n" for n in keep)


def _defined(code: str) -> list[str]:
    """The functions and classes `code` defines at its top level, in order."""
    return list(dict.fromkeys(
        n.name for n in ast.parse(code).body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)))


def humaneval(problem: dict[str, Any], pack: str = "humaneval") -> Converted:
    """A HumanEval record (task_id, prompt, entry_point, canonical_solution, test)."""
    try:
        source_id, prompt = str(problem["task_id"]), str(problem["prompt"])
        entry, test = str(problem["entry_point"]), str(problem["test"])
        solution = str(problem["canonical_solution"])
        if not SOURCE_ID.fullmatch(source_id):
            raise ValueError(f"task_id {source_id[:80]!r} is not <name>/<number>")
        number = int(source_id.rsplit("/", 1)[-1])
        tree = ast.parse(test)
        # the tests call helpers the prompt defines beside the entry point (poly,
        # encode_cyclic): the prompt's own definitions, trusted, go into the test
        helpers = _helpers(prompt, entry)
    except (KeyError, ValueError, SyntaxError, RecursionError, MemoryError) as exc:
        shown = printable(str(problem.get("task_id", "?")), 80)
        raise PackError(f"{shown}: not a HumanEval record: {type(exc).__name__}: "
                        f"{printable(str(exc), 200)}") from None
    task_id = f"{pack}-{number:03d}"
    _identifier(entry, "entry_point", source_id)
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if len(checks) != 1:
        raise PackError(f"{source_id}: its test defines no single check(candidate)")
    argument = checks[0].args.args[0].arg if checks[0].args.args else "candidate"
    found = _asserts(test, checks[0].body, 4)
    segments = _touching(found, {argument, entry}) if found else None
    body = (f"# {source_id}: {entry}\n\nComplete the Python function `{entry}` below. Keep the "
            "code given (its imports, the signature and any helper functions) and write the "
            "body the docstring describes.\n\n" + fenced(prompt))
    head = _test_head(f"{source_id}'s own test, check({argument}), "
                      + ("one check per assertion." if segments else "as one check."),
                      (entry,)) + helpers
    if segments:
        tests = _assertion_tests(segments, f"    {argument} = {entry}\n")
    else:
        tests = f"\n\ndef test_check() -> None:\n    check({entry})\n"
    return Converted(
        id=task_id, source_id=source_id,
        task=task_text(_meta(task_id, pack, (entry,)), body),
        test=head + test.strip("\n") + "\n" + tests,
        reference=fenced(prompt + solution),
        broken=fenced(prompt.rstrip("\n") + "\n    raise NotImplementedError\n"),
        split=PER_ASSERTION if segments else PER_PROBLEM,
        dropped=len(found) - len(segments) if found and segments else 0)


def _signatures(code: str, names: tuple[str, ...]) -> str:
    """The reference's definitions of `names`, each reduced to its signature raising
    NotImplementedError: the deliberately broken answer."""
    lines: list[str] = []
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names:
            node.body = [ast.Raise(ast.Name("NotImplementedError"))]
            node.decorator_list = []
            lines.append(ast.unparse(node))
        elif isinstance(node, ast.ClassDef) and node.name in names:
            lines.append(f"class {node.name}:\n    def __init__(self, *args, **kwargs):\n"
                         "        raise NotImplementedError")
    return "\n\n\n".join(lines) + "\n"


def mbpp(record: dict[str, Any], pack: str = "mbpp") -> Converted:
    """An MBPP record (task_id, text, code, test_list, test_setup_code)."""
    try:
        number, text = int(record["task_id"]), str(record["text"]).strip()
        code = str(record["code"]).replace("\r\n", "\n")
        tests = [str(t).replace("\r\n", "\n").strip() for t in record["test_list"]]
        setup = str(record.get("test_setup_code") or "").replace("\r\n", "\n").strip()
        if type(record["task_id"]) is not int or not 0 <= record["task_id"] < 10**6:
            raise ValueError(f"task_id {str(record['task_id'])[:80]!r} is not a number")
        defined = _defined(code)
        used = {n.id for t in tests for n in ast.walk(ast.parse(t)) if isinstance(n, ast.Name)}
    except (KeyError, TypeError, ValueError, SyntaxError, RecursionError, MemoryError) as exc:
        shown = printable(str(record.get("task_id", "?")), 80)
        raise PackError(f"{shown}: not an MBPP record: {type(exc).__name__}: "
                        f"{printable(str(exc), 200)}") from None
    entries = tuple(name for name in defined if name in used)
    source_id, task_id = f"MBPP/{number}", f"{pack}-{number:03d}"
    if not tests or not entries:
        raise PackError(f"{source_id}: its tests call no function its code defines")
    shown = "\n".join(tests)
    body = (f"# {source_id}: {entries[0]}\n\n{text}\n\nYour code should pass these tests:\n\n"
            + fenced(shown))
    each = [_asserts(t, ast.parse(t).body, 0) for t in tests]
    every = [s for found in each for s in found or ()]
    segments = _touching(every, set(entries))
    faithful = bool(segments) and all(found is not None and len(found) == 1 for found in each)
    head = _test_head(f"{source_id}'s own tests (test_list), "
                      + ("one check per assertion." if faithful else "as one check."), entries)
    head += f"{setup}\n" if setup else ""
    if faithful:
        checks = _assertion_tests(segments, "")
    else:
        indented = "\n".join("    " + line for t in tests for line in t.splitlines())
        checks = f"\n\ndef test_check() -> None:\n{indented}\n"
    return Converted(
        id=task_id, source_id=source_id, task=task_text(_meta(task_id, pack, entries), body),
        test=head.rstrip("\n") + "\n" + checks, reference=fenced(code),
        broken=fenced(_signatures(code, entries)),
        split=PER_ASSERTION if faithful else PER_PROBLEM,
        dropped=len(every) - len(segments) if faithful else 0)
