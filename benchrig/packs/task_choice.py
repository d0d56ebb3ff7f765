"""Which tasks a command line chooses when `--suite`/`--pack` may name an imported pack."""

from __future__ import annotations

from pathlib import Path

from benchrig.core.errors import UsageError
from benchrig.core.task import TaskSpec
from benchrig.packs import expand, installed
from benchrig.paths import imports_dir, tasks_dir
from benchrig.spec import load_tasks, task_paths


def load_selection(selectors: list[str], suites: list[str], known_suites: tuple[str, ...],
                   base: Path | None = None) -> list[TaskSpec]:
    """The tasks named (all bundled ones by default; a pack's name stands for its folder),
    kept when their suite is among `suites` or they belong to a pack named there."""
    root = base or tasks_dir()
    imports = base or imports_dir()
    packs = installed(imports)
    unknown = [s for s in suites if s not in known_suites and s not in packs]
    if unknown:
        imported = (f"imported packs: {', '.join(packs)}" if packs else
                    "no pack imported (`benchrig import humaneval` imports one)")
        raise UsageError(f"{unknown[0]} is not a suite; suites: {', '.join(known_suites)}; "
                         f"{imported}")
    chosen = {(imports / s).resolve() for s in suites if s in packs}
    wanted = set(suites) - set(packs)
    if chosen and not selectors:
        selectors = [str(root)] if wanted else []
        selectors += sorted(str(folder) for folder in chosen)
    tasks = load_tasks(task_paths(expand(selectors, base), root))
    if not suites:
        return tasks
    return [t for t in tasks if t.suite in wanted or t.path.parent.resolve() in chosen]
