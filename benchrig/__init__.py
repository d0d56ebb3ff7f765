"""BenchRig: a spec-driven, agent-agnostic benchmark runner for models and coding agents."""

__version__ = "0.1.0"
