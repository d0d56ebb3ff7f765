"""TaskSpec: one validated task, as spec.py loads it and every later stage reads it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any


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

    @property
    def check_type(self) -> str | None:
        kind = self.check.get("type")
        return str(kind) if kind is not None else ("tests" if self.test_source else None)
