"""benchrig.toml: which models think, their token multiplier, and per-suite think defaults.

    thinking_models = ["deepseek-r1", "qwq", "magistral", "qwen3"]
    thinking_token_multiplier = 12

    [think]            # per suite: true, false, or "default" (the model's own default)
    speed = false
    context = false
    coding = "default"

Read from `benchrig.toml` in the working directory, or the file given with `--config`.
Every key is optional; a missing file means the defaults. Unknown keys are refused, so a
typo never silently falls back to a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from benchrig.core.errors import UsageError
from benchrig.suites import find_suite, known_suites

CONFIG_NAME = "benchrig.toml"
DEFAULT_THINKING_MODELS = ("deepseek-r1", "qwq", "magistral", "qwen3")
DEFAULT_MULTIPLIER = 12
MODEL_DEFAULT = "default"


def _model_base(model: str) -> str:
    """`hf.co/org/Qwen3-8B-GGUF:Q4_K_M` → `qwen3-8b-gguf`; `deepseek-r1:7b` → `deepseek-r1`."""
    return model.rsplit("/", 1)[-1].split(":", 1)[0].lower()


@dataclass(frozen=True)
class Config:
    """The settings of benchrig.toml (or the defaults), and where they came from."""

    thinking_models: tuple[str, ...] = DEFAULT_THINKING_MODELS
    thinking_token_multiplier: int = DEFAULT_MULTIPLIER
    # benchrig.toml's `[think]`, by suite; a suite it leaves out keeps its own (Suite.think)
    think: Mapping[str, bool | None] = field(default_factory=lambda: MappingProxyType({}))
    path: Path | None = None

    def is_thinking_model(self, model: str) -> bool:
        """A model whose name (without its org/ prefix and :tag) starts with a listed name."""
        base = _model_base(model)
        return any(base.startswith(name.lower()) for name in self.thinking_models)

    def think_default(self, suite: str) -> bool | None:
        """Thinking on, off, or None (the model's own) for the suite's tasks: benchrig.toml's
        word, else the suite's (speed and context measure the engine: off)."""
        if suite in self.think:
            return self.think[suite]
        found = find_suite(suite)
        return None if found is None else found.think

    def multiplier(self, model: str, suite: str) -> int:
        """How many times the task's token budget this model gets in this suite."""
        found = find_suite(suite)  # an answer-scored suite: the trace comes before the answer
        if found is not None and found.answer_scored and self.is_thinking_model(model):
            return self.thinking_token_multiplier
        return 1

    def to_json(self) -> dict[str, Any]:
        return {"file": str(self.path) if self.path else None,
                "thinking_models": list(self.thinking_models),
                "thinking_token_multiplier": self.thinking_token_multiplier,
                "think": dict(self.think)}


def _problem(path: Path, key: str, what: str) -> UsageError:
    return UsageError(f"{path}: {key}: {what}")


def _parse(path: Path, data: dict[str, Any]) -> Config:
    known = {"thinking_models", "thinking_token_multiplier", "think"}
    for key in data:
        if key not in known:
            raise _problem(path, key, f"unknown key; known keys: {', '.join(sorted(known))}")
    models = data.get("thinking_models", list(DEFAULT_THINKING_MODELS))
    if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
        raise _problem(path, "thinking_models", "must be a list of model names")
    multiplier = data.get("thinking_token_multiplier", DEFAULT_MULTIPLIER)
    if isinstance(multiplier, bool) or not isinstance(multiplier, int) or multiplier < 1:
        raise _problem(path, "thinking_token_multiplier", "must be an integer ≥ 1")
    table = data.get("think", {})
    if not isinstance(table, dict):
        raise _problem(path, "think", "must be a table of suite = true | false | \"default\"")
    think: dict[str, bool | None] = {}
    for suite, value in table.items():
        if find_suite(suite) is None:  # a plugin's suite is one too
            raise _problem(path, f"think.{suite}",
                           f"unknown suite; suites: {', '.join(known_suites())}")
        if value == MODEL_DEFAULT:
            think[suite] = None
        elif isinstance(value, bool):
            think[suite] = value
        else:
            raise _problem(path, f"think.{suite}", 'must be true, false or "default"')
    return Config(tuple(models), multiplier, MappingProxyType(think), path)


def load_config(path: Path | None = None, cwd: Path | None = None) -> Config:
    """`path` (which must exist), else ./benchrig.toml if there is one, else the defaults."""
    if path is None:
        found = (cwd or Path.cwd()) / CONFIG_NAME
        if not found.is_file():
            return Config()
        path = found
    elif not path.is_file():
        raise UsageError(f"config file not found: {path}")
    import tomllib  # only when there is a file: most runs have none

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from None
    return _parse(path, data)
