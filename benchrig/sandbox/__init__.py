"""Runs untrusted candidate code confined, and talks to it only in plain data.

`confinement` decides how a candidate is confined here; `process` runs one candidate
process (its program is `child`, with `codec` for the values that cross); `pool` starts
them, the next one ahead of time; `proxy` is module `solution` as the hidden tests see it.
"""

from benchrig.sandbox.codec import BoundaryError
from benchrig.sandbox.confinement import DEGRADED, FULL, NONE, Confinement, detect, warning
from benchrig.sandbox.pool import MODULE_FILE, SandboxPool
from benchrig.sandbox.process import (
    CandidateFailure,
    CandidateProcess,
    CandidateTimeout,
    Limits,
    child_source,
)
from benchrig.sandbox.proxy import MODULE, RemoteModule, Session, read_exports

__all__ = ["DEGRADED", "FULL", "MODULE", "MODULE_FILE", "NONE", "BoundaryError", "CandidateFailure",
           "CandidateProcess", "CandidateTimeout", "Confinement", "Limits", "RemoteModule",
           "SandboxPool", "Session", "child_source", "detect", "read_exports", "warning"]
