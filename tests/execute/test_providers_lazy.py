"""A run lists the installed drivers (a scan of every package's metadata) only when a
`--provider NAME=VALUE` names a driver that is not the run's own."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest

from benchrig.core.errors import UsageError
from benchrig.execute.plan import providers
from tests.conftest import ROOT

REFERENCES = str(ROOT / "tasks" / ".references")


def _never() -> Collection[str]:
    raise AssertionError("the installed drivers were listed")


def test_a_run_naming_only_its_own_drivers_never_lists_the_installed_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost: `drivers.known()` scans every installed package's entry points; one replay
    of a saved answer (the one-sample start-up, issue 27) has no use for it."""
    import benchrig.drivers as drivers
    from benchrig import api

    monkeypatch.setattr(drivers, "_targets", _never)
    monkeypatch.setenv("BENCHRIG_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.chdir(ROOT)
    found = list(api.run(["lru-cache"], ["reference"], driver="replay", provider=REFERENCES))
    assert [r["result"] for r in found] == ["pass"]


def test_a_pair_for_a_driver_the_run_does_not_use_is_still_refused() -> None:
    assert providers(["replay"], [f"replay={REFERENCES}"], ["m"], _never) == {
        "replay": REFERENCES}
    with pytest.raises(UsageError, match="codex is not one of this run's"):
        providers(["claude"], ["codex=y"], ["sonnet"], lambda: ["claude", "codex"])
