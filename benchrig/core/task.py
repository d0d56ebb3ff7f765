"""TaskSpec: one validated task, as spec.py loads it and the checks read it; TaskView: what a
driver sees of it (no hidden tests, no expected answer)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

TEST_SUFFIX = ".test.py"  # a task's hidden tests: <id>.test.py beside <id>.md


@dataclass(frozen=True)
class TaskSpec:
    """One validated task: its frontmatter, its prompt body and (coding) its hidden tests."""

    id: str
    suite: str
    language: str
    difficulty: str
    tags: tuple[str, ...]
    timeout_s: int
    title: str
    body: str
    path: Path
    task_hash: str
    max_tokens: int | None = None
    temperature: float | None = None
    think: bool | None = None
    check: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    check_timeout_s: float = 5.0
    entry_points: tuple[str, ...] = ()
    solution_file: str = "solution.py"
    test_path: Path | None = None
    test_source: str | None = None
    test_names: tuple[str, ...] = ()
    frontmatter: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # A dataset task's sample: its row's id and hash, and the dataset file (hidden too).
    sample_id: str | None = None
    row_hash: str | None = None
    dataset_path: Path | None = None

    @property
    def check_type(self) -> str | None:
        kind = self.check.get("type")
        return str(kind) if kind is not None else ("tests" if self.test_source else None)

    @property
    def folders(self) -> tuple[Path, ...]:
        """Where the task file, its hidden tests and its dataset live (an agent must not see
        them): the folder that names each, and, for a file that is a symbolic link, its real
        folder."""
        files = [p for p in (self.path, self.test_path, self.dataset_path) if p is not None]
        found = [*(p.parent for p in files), *(p.resolve().parent for p in files)]
        return tuple(dict.fromkeys(found))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with its mappings as dicts (a mapping proxy does not pickle), so an
        attempt can be sent to another process or machine."""
        values = {f.name: getattr(self, f.name) for f in fields(self)
                  if f.name not in ("check", "frontmatter")}
        return _task_spec, (values, dict(self.check), dict(self.frontmatter))

    def view(self) -> TaskView:
        """What a driver is given of this task: the fields a TaskView has, nothing else."""
        return TaskView(**{f.name: getattr(self, f.name) for f in fields(TaskView)})


def _task_spec(values: dict[str, Any], check: dict[str, Any],
               frontmatter: dict[str, Any]) -> TaskSpec:
    return TaskSpec(**{**values, "check": MappingProxyType(check),
                       "frontmatter": MappingProxyType(frontmatter)})


def sandboxed(tasks: Iterable[TaskSpec]) -> int:
    """How many of `tasks` are judged by hidden tests, each in a sandbox of its own: the
    sandboxes a run of them takes (a pool told the count boots none past the last)."""
    return sum(task.check_type == "tests" for task in tasks)


@dataclass(frozen=True)
class TaskView:
    """What a driver sees of a task: its prompt and limits. Never its hidden tests, its
    expected answer or its check (the frontmatter holds them), nor where its file lives: the
    runner hands those folders over as paths to hide (DriverRequest.hidden_paths)."""

    id: str
    suite: str
    language: str
    difficulty: str
    tags: tuple[str, ...]
    timeout_s: int
    title: str
    body: str
    max_tokens: int | None = None
    temperature: float | None = None
    think: bool | None = None
    solution_file: str = "solution.py"
    entry_points: tuple[str, ...] = ()
