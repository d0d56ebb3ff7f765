"""The suites: their names, which ones score an answer, which enter the composite.

Per-suite settings (thinking on or off) live in `config.py`, where benchrig.toml can
change them."""

from __future__ import annotations

SUITES = ("speed", "coding", "reasoning", "context", "polish", "tool_use", "load")
# Suites whose answer is checked: a response cut off at the token limit is `truncated` here,
# while speed and context generate to the limit on purpose; a thinking model's budget is
# multiplied in these (a tool turn's trace comes before its call too).
ANSWER_SCORED = ("coding", "reasoning", "polish", "tool_use")
# Suites averaged into the composite score (speed measures, tool metrics stay out).
COMPOSITE = ("coding", "reasoning", "polish", "context")
# Suites left out of the legacy timing averages (per-model table, the model's avg TTFT):
# tool conversations are several unstreamed requests, not one timed generation.
UNTIMED = ("tool_use", "load")  # load: a level is a distribution, not one generation
# Suites run only when asked for by name (--suite or a task id), never by default.
OPT_IN = ("tool_use", "load")
