"""The test suite's own rules on markers: a module that starts a Ray node is marked `ray`, so
`make test` runs it alone, after the rest: a Ray node on the host stops every agent attempt
from starting (docs/security.md, "The test suite keeps Ray and agents apart too")."""

from __future__ import annotations

import re

from tests.conftest import ROOT

# What starts a Ray node, or joins one, in a test: a local cluster, ray.init, the CLI's own
# cluster options, `ray start`.
STARTS_RAY = re.compile(r"ray\.cluster_utils|\bray\.init\(|--ray-address|\bray start\b")


def test_every_module_that_starts_ray_is_marked_ray() -> None:
    starts = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
              for path in sorted((ROOT / "tests").rglob("test_*.py"))
              if STARTS_RAY.search(path.read_text(encoding="utf-8"))
              and path.name != "test_markers.py"}
    assert starts, "no test starts a Ray node any more: is STARTS_RAY still right?"
    unmarked = [path for path, text in starts.items() if "pytest.mark.ray" not in text]
    assert not unmarked, f"start a Ray node but are not marked `ray`: {unmarked}"
