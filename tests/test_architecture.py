"""The layers of docs/architecture.md, read from the code: no import circle, nothing imports up."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "benchrig"
DOC = ROOT / "docs" / "architecture.md"
# docs/architecture.md#layers, bottom first (its second column, row by row: held to it below).
# A module may import its own row and below, unless NARROWER says less.
LEAVES = ("benchrig", "benchrig.textsafe", "benchrig.jsonsafe", "benchrig.thinking",
          "benchrig.durable", "benchrig.streams", "benchrig.trusted", "benchrig.paths",
          "benchrig.events", "benchrig.ui", "benchrig.attempts", "benchrig.environment")
FOUNDATIONS = ("benchrig.prompt", "benchrig.schemas", "benchrig.resultio", "benchrig.config",
               "benchrig.metrics", "benchrig.plausible", "benchrig.local", "benchrig.sandbox",
               "benchrig.haystack", "benchrig.gateway", "benchrig.dataset",
               "benchrig.load.distributions")
STAGES = ("benchrig.drivers", "benchrig.checks", "benchrig.report")
LAYERS: list[tuple[str, ...]] = [
    LEAVES,
    ("benchrig.core",),
    # the Suite contract and the lookup by name; the built-in suites, their attempt shapes
    # and the shapes' loops sit higher (the lookup loads them by name, never imports them)
    ("benchrig.suites",),
    FOUNDATIONS,
    STAGES,  # they answer, judge and summarize: none of them may lean on another
    ("benchrig.spec", "benchrig.samples", "benchrig.execute"),
    # the loops of two attempt shapes: a window ladder, a tool conversation
    ("benchrig.suites.windows", "benchrig.suites.turns"),
    ("benchrig.orchestrate", "benchrig.suites.builtin", "benchrig.suites.shapes",
     "benchrig.load"),
    ("benchrig.packs",),
    # the library API: a facade over selection, plan, executor, runner and report
    ("benchrig.api",),
    ("benchrig.cli",),
]
BELOW_STAGES = frozenset({*LEAVES, "benchrig.core", "benchrig.suites", *FOUNDATIONS})
# The rows whose last column is narrower than "everything below": the owners (LAYERS entries)
# each may import, and single modules it may import of an owner it may not.
NARROWER: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "benchrig.spec": (BELOW_STAGES | {"benchrig.checks", "benchrig.samples"}, frozenset()),
    "benchrig.samples": (BELOW_STAGES | {"benchrig.checks", "benchrig.spec"}, frozenset()),
    "benchrig.execute": (BELOW_STAGES, frozenset({"benchrig.drivers", "benchrig.drivers.base"})),
    "benchrig.suites.windows": (BELOW_STAGES | {"benchrig.drivers", "benchrig.checks",
                                                "benchrig.suites.turns"}, frozenset()),
    "benchrig.suites.turns": (BELOW_STAGES | {"benchrig.drivers", "benchrig.checks",
                                              "benchrig.suites.windows"}, frozenset()),
}
# each package's contract: the one file name that may repeat (always named with its package)
REPEATABLE = {"__init__.py", "__main__.py", "base.py"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def owner(module: str) -> str:
    """The entry of LAYERS a module belongs to (a package covers its modules)."""
    names = [name for layer in LAYERS for name in layer]
    found = [n for n in names if module == n or module.startswith(n + ".")]
    assert found, f"{module} is in no layer of docs/architecture.md: add it"
    return max(found, key=len)


def layer_of(module: str) -> int:
    name = owner(module)
    return next(i for i, layer in enumerate(LAYERS) if name in layer)


@functools.cache  # parsed once for every rule below: the source does not change in a run
def imports() -> dict[str, set[str]]:
    """Module → the BenchRig modules it imports (at any depth of its code)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("benchrig")}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                    node.module.startswith("benchrig"):
                # `from benchrig.sandbox import child` imports the module `child`; any
                # other name comes from the module (or package face) named
                modules = {f"{node.module}.{a.name}" for a in node.names
                           if (PACKAGE.parent / f"{node.module}.{a.name}".replace(".", "/")
                               ).with_suffix(".py").exists()}
                found |= modules
                if len(modules) < len(node.names):
                    found.add(node.module)
        graph[name] = found - {name}
    return graph


def test_the_graph_is_read_from_the_code() -> None:
    graph = imports()
    assert "benchrig.orchestrate.runner" in graph and "benchrig.core.task" in \
        graph["benchrig.spec"] | graph["benchrig.orchestrate.runner"] | graph["benchrig.prompt"]


def test_nothing_imports_a_higher_layer() -> None:
    upward = sorted(f"{module} (layer {layer_of(module)}) imports {target} "
                    f"(layer {layer_of(target)})"
                    for module, targets in imports().items() for target in targets
                    if layer_of(target) > layer_of(module))
    assert upward == []


def test_no_stage_imports_another_stage() -> None:
    crossing = sorted(f"{module} imports {target}"
                      for module, targets in imports().items() for target in targets
                      if owner(module) in STAGES and owner(target) in STAGES
                      and owner(module) != owner(target))
    assert crossing == []


def test_there_is_no_import_circle() -> None:
    graph = imports()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if target not in graph:
                continue  # a name imported from a package's face, not a module
            if state.get(target) == 1:
                circles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


# The report, the runner and the plan ask a task's suite (its declared attributes and its
# report facet), never its name: docs/security.md#a-suite-is-asked-never-named.
ASKS_THE_SUITE = ("benchrig/report", "benchrig/orchestrate/runner.py", "benchrig/execute",
                  "benchrig/checks", "benchrig/config.py")
# The name lists of benchrig.suites are the built-ins' facts kept for callers outside; a
# module that asks the suite has no use for them.
NAME_LISTS = {"SUITES", "COMPOSITE", "UNTIMED", "LEVELS", "ANSWER_SCORED", "OPT_IN"}


def _literals(node: ast.AST) -> list[str]:
    """The string constants `node` is, or holds as a tuple, list or set display."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [v for element in node.elts for v in _literals(element)]
    return []


def suite_name_branches(source: str, names: set[str]) -> list[str]:
    """Where `source` compares to, tests membership in, or subscripts by a literal suite name
    of `names`, or imports one of benchrig.suites' name lists: `line: what`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            hits = [v for part in (node.left, *node.comparators) for v in _literals(part)]
        elif isinstance(node, ast.Subscript):
            hits = _literals(node.slice)
        elif isinstance(node, ast.ImportFrom) and node.module == "benchrig.suites":
            hits = [a.name for a in node.names if a.name in NAME_LISTS]
            found += [f"{node.lineno}: imports {hit}" for hit in hits]
            continue
        else:
            continue
        found += [f"{node.lineno}: {hit!r}" for hit in hits if hit in names]
    return found


def test_no_suite_is_named_where_it_is_asked() -> None:
    from benchrig.suites import BUILTIN

    names = set(BUILTIN)
    paths = sorted(p for root in ASKS_THE_SUITE for p in
                   ((ROOT / root).rglob("*.py") if (ROOT / root).is_dir() else [ROOT / root]))
    branches = [f"{path.relative_to(ROOT)}:{where}" for path in paths
                for where in suite_name_branches(path.read_text(encoding="utf-8"), names)]
    assert branches == []


def test_the_scan_finds_a_suite_name_branch() -> None:
    names = {"context", "speed"}
    source = ('from benchrig.suites import UNTIMED\n'
              'a = r.suite == "context"\nb = s in ("speed", "x")\nc = card.suites["speed"]\n'
              'd = r.get("context")\ne = "context" if x else "y"\n')
    assert suite_name_branches(source, names) == [
        "1: imports UNTIMED", "2: 'context'", "3: 'speed'", "4: 'speed'"]


def narrower_breaches(graph: dict[str, set[str]]) -> list[str]:
    """Every import a row with a narrower rule than "everything below" may not make."""
    found = []
    for module, targets in graph.items():
        rule = NARROWER.get(owner(module))
        if rule is None:
            continue
        owners, singles = rule
        found += [f"{module} imports {target}" for target in sorted(targets)
                  if owner(target) != owner(module) and owner(target) not in owners
                  and target not in singles]
    return sorted(found)


def test_each_narrower_rule_holds() -> None:
    assert narrower_breaches(imports()) == []


@pytest.mark.parametrize(("module", "target"), [
    ("benchrig.execute.plan", "benchrig.checks.judge"),  # the plan judging: not its job
    ("benchrig.execute.plan", "benchrig.drivers.openai"),  # a driver recognised by module
    ("benchrig.execute.local", "benchrig.spec"),
    ("benchrig.execute.base", "benchrig.report.table"),
    ("benchrig.spec", "benchrig.drivers.replay"),
    ("benchrig.samples", "benchrig.report"),
    ("benchrig.suites.windows", "benchrig.report.context"),
    ("benchrig.suites.windows", "benchrig.execute.plan"),
    ("benchrig.suites.turns", "benchrig.spec"),
])
def test_a_planted_import_against_a_narrower_rule_is_caught(module: str, target: str) -> None:
    """The attack: an import that the layer order alone allows (it runs down) but the page's
    narrower rule forbids."""
    graph = {module: imports()[module] | {target}}
    assert layer_of(target) <= layer_of(module)  # the order alone would let it through
    assert narrower_breaches(graph) == [f"{module} imports {target}"]


def _doc_rows() -> list[tuple[str, ...]]:
    """The second column of docs/architecture.md#layers, row by row, as module names."""
    section = DOC.read_text(encoding="utf-8").split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # no header
    found = []
    for row in rows:
        names = re.findall(r"`([\w/]+)`", row.split(" | ")[1])
        found.append(tuple("benchrig" if name == "benchrig" else
                           "benchrig." + name.rstrip("/").replace("/", ".") for name in names))
    return found


def test_the_page_lists_the_layers_this_test_holds() -> None:
    assert [set(row) for row in _doc_rows()] == [set(row) for row in LAYERS]


def test_no_two_modules_share_a_name() -> None:
    """A path in a traceback, a doc or a review names one file (base.py, a package's contract,
    aside: it is always named with its package)."""
    by_name: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        by_name.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    shared = {name: paths for name, paths in by_name.items()
              if len(paths) > 1 and name not in REPEATABLE}
    assert shared == {}
