"""The layers of docs/architecture.md, read from the code: no import circle, nothing imports up."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "benchrig"
# docs/architecture.md#layers, bottom first. A module may import its own layer and below.
LAYERS: list[tuple[str, ...]] = [
    ("benchrig", "benchrig.textsafe", "benchrig.jsonsafe", "benchrig.thinking",
     "benchrig.streams", "benchrig.trusted", "benchrig.paths",
     "benchrig.events", "benchrig.ui", "benchrig.attempts", "benchrig.environment"),
    ("benchrig.core",),
    # the Suite contract and the lookup by name; the built-in suites and their attempt
    # shapes sit with the runner (the lookup loads them by name, never imports them)
    ("benchrig.suites",),
    ("benchrig.prompt", "benchrig.schemas", "benchrig.resultio",
     "benchrig.config",
     "benchrig.metrics", "benchrig.plausible", "benchrig.local", "benchrig.sandbox",
     "benchrig.haystack", "benchrig.gateway", "benchrig.dataset",
     "benchrig.load.distributions"),
    ("benchrig.drivers", "benchrig.checks", "benchrig.report"),
    ("benchrig.spec", "benchrig.samples", "benchrig.execute"),
    ("benchrig.orchestrate.windows",),
    ("benchrig.orchestrate", "benchrig.suites.builtin", "benchrig.suites.shapes",
     "benchrig.load"),
    ("benchrig.packs",),
    # the library API: a facade over selection, plan, executor, runner and report
    ("benchrig.api",),
    ("benchrig.cli",),
]
# The stages answer, judge and summarize: none of them may lean on another.
STAGES = ("benchrig.drivers", "benchrig.checks", "benchrig.report")


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
