"""The suites: which ones score an answer, and their per-suite defaults (a config file may
override them)."""

from __future__ import annotations

SUITES = ("speed", "coding", "reasoning", "context", "polish", "tool_use")
# Suites whose answer is checked: a response cut off at the token limit is `truncated` here,
# while speed and context generate to the limit on purpose.
ANSWER_SCORED = ("coding", "reasoning", "polish")
# Suites averaged into the composite score (speed measures, tool metrics stay out).
COMPOSITE = ("coding", "reasoning", "polish", "context")
# Thinking off where throughput and prompt latency are measured; elsewhere the model's own
# default (None). Task frontmatter `think` and the command line override these.
THINK_DEFAULTS: dict[str, bool | None] = {"speed": False, "context": False}


def think_default(suite: str) -> bool | None:
    return THINK_DEFAULTS.get(suite)
