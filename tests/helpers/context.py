"""The bundled context scenario with a ladder of our own: a short one where a test needs only
the ladder's behaviour, not every window of the real one."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import TASKS

BUNDLED_STEPS = "steps: [512, 1024, 2048, 4096, 8192]"


def scenario(folder: Path, name: str, steps: list[int]) -> Path:
    """tasks/context-needle.md as task `name` with windows `steps`, written into `folder`."""
    text = (TASKS / "context-needle.md").read_text(encoding="utf-8")
    assert BUNDLED_STEPS in text, "the bundled ladder changed: update BUNDLED_STEPS"
    path = folder / f"{name}.md"
    path.write_text(text.replace("id: context-needle", f"id: {name}")
                    .replace(BUNDLED_STEPS, f"steps: {steps}"), encoding="utf-8")
    return path
