"""BenchRig: a spec-driven, agent-agnostic benchmark runner for models and coding agents.

The public surface for plugin authors is small: `benchrig.core` (the shared data, the `@check`
decorator), `benchrig.drivers.base` (the Driver contract), `benchrig.metrics` (`measured`,
`StreamCollector`) and the lookups `benchrig.drivers` and `benchrig.checks` (each with an
entry-point group). Every other module is private to BenchRig and may change without notice.
"""

__version__ = "0.1.0"
