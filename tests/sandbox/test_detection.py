"""Detecting the confinement costs one trial sandbox at most, and none in a process after one
that proved full isolation on this machine as it is; a proof never stands in for a sandbox's
own check of its confinement. Each case runs in a fresh interpreter (detect() is cached per
process), with the proofs kept in the test's own folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchrig.core.errors import SandboxError
from benchrig.sandbox import SandboxPool, confinement, proof
from tests.conftest import ROOT

FULL = confinement.detect().level == confinement.FULL
needs_full = pytest.mark.skipif(not FULL, reason="needs root and bubblewrap")

# Every process detect() starts, recorded as it starts (the real one still runs).
PROBE = r"""
import json, subprocess
from benchrig.sandbox import confinement, proof
started = []
real = subprocess.Popen.__init__
def spy(self, args, *rest, **options):
    started.append([str(a) for a in args])
    real(self, args, *rest, **options)
subprocess.Popen.__init__ = spy
conf = confinement.detect()
bwrap = conf.bwrap or "/usr/bin/bwrap"
print(json.dumps({"conf": conf.describe(), "flags": list(conf.bwrap_flags),
                  "processes": len(started),
                  "bubblewrap": sum(any(a == bwrap for a in argv) for argv in started),
                  "key": proof.machine_key(conf.interpreter, conf.bwrap, conf.setpriv,
                                           conf.bwrap_flags)}))
"""


def detect_afresh(cache: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=True,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache),
                               "PYTHONPATH": str(ROOT)})
    found: dict[str, object] = json.loads(done.stdout)
    return found


@needs_full
def test_detection_starts_bubblewrap_once_and_a_later_process_not_at_all(
        tmp_path: Path) -> None:
    # It used to start three processes, bubblewrap twice: `bwrap --help` for its options,
    # a trial of the uid switch alone, then a trial under bubblewrap.
    first = detect_afresh(tmp_path)
    assert first["conf"]["isolation"] == "full"  # type: ignore[index]
    assert (first["processes"], first["bubblewrap"]) == (1, 1)
    assert first["flags"] == ["--disable-userns"]  # bubblewrap 0.8+, read in its binary
    second = detect_afresh(tmp_path)
    assert (second["processes"], second["bubblewrap"]) == (0, 0)
    assert (second["conf"], second["flags"]) == (first["conf"], first["flags"])


@needs_full
def test_a_proof_under_another_key_or_in_a_file_others_may_write_is_not_taken(
        tmp_path: Path) -> None:
    key = str(detect_afresh(tmp_path)["key"])
    stored = tmp_path / "benchrig" / "isolation.json"
    stored.write_text(json.dumps({"format": proof.FORMAT, "full": ["another machine"]}))
    assert detect_afresh(tmp_path)["bubblewrap"] == 1
    stored.write_text(json.dumps({"format": proof.FORMAT, "full": [key]}))
    stored.chmod(0o666)
    assert detect_afresh(tmp_path)["bubblewrap"] == 1
    stored.chmod(0o600)
    assert detect_afresh(tmp_path)["bubblewrap"] == 0


def test_a_sandbox_that_does_not_start_forgets_the_proof(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    proof.remember("this machine")
    assert proof.proven("this machine")
    broken = confinement.Confinement(interpreter="/bin/false", namespaces=False,
                                     dedicated_uid=False)  # starts, and ends before its hello
    with pytest.raises(SandboxError), SandboxPool(broken, prestart=False) as pool:
        pool.take("solution.py").ready()
    assert not proof.proven("this machine")
    assert not proof.cache_file().exists()
