"""Nothing a confined agent does reaches the host: it cannot rewrite a program in the user's
home, a helper planted first on PATH never runs, its `--version` runs confined, and its
environment is an allow-list recorded by name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchrig import environment, trusted
from benchrig.drivers import agent_process, confine, get_driver
from benchrig.orchestrate.runner import Overrides, run_attempt, settings_for
from benchrig.sandbox import confinement
from benchrig.spec import load_task
from tests.conftest import ROOT, cli_call
from tests.helpers.agents import (
    FIXTURES,
    LOG_PREFIX,
    fixture_log,
    needs_bwrap,
    sidecar_of,
    task_with_timeout,
    use_fixture,
    use_probing_claude,
)

HELPERS = ("bwrap", "setpriv", "kill", "nvidia-smi")


def claude_attempt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, probe: dict[str, Any],
                   pass_env: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One claude-fixture attempt on lru-cache that probes first, then solves the task; the
    result and the fixture's log (its --version run included: what it printed on stderr)."""
    log = use_probing_claude(monkeypatch, tmp_path, probe)
    monkeypatch.setattr(agent_process, "_versions", {})  # ask --version again
    asked: list[dict[str, Any]] = []
    real_run = subprocess.run

    def run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        done = real_run(*args, **kwargs)
        asked.extend(json.loads(line[len(LOG_PREFIX):]) for line in (done.stderr or "")
                     .splitlines() if line.startswith(LOG_PREFIX))
        return done

    monkeypatch.setattr(agent_process.subprocess, "run", run)
    staged = tmp_path / "tasks" / "lru-cache.md"  # a task folder outside the checkout
    task = load_task(staged if staged.exists() else task_with_timeout(tmp_path, 60))
    done = run_attempt(task, "sonnet", get_driver("claude"), None,
                       settings_for(task, Overrides()), tmp_path / "results", agent="claude",
                       pass_env=pass_env)
    monkeypatch.setattr(agent_process.subprocess, "run", real_run)
    return done.result, [*asked, *fixture_log(log, sidecar_of(done.path))]


def given(seen: list[str]) -> list[str]:
    """The names the agent was given, from those it saw: bubblewrap adds PWD, and a pyenv
    shim (a shell script) running its interpreter adds SHLVL, _ and PYENV_*."""
    return sorted(n for n in seen if n not in ("PWD", "SHLVL", "_") and "PYENV_" not in n)


def host_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.slow
@needs_bwrap
def test_an_agent_cannot_rewrite_a_program_in_the_home_that_benchrig_runs_later(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = host_home(monkeypatch, tmp_path)
    bin_dir = home / ".local" / "bin"
    # its own CLI installed in the home (as npm-global, ~/.local/bin or nvm would), and a tool
    for name in ("claude", "fake_cli.py"):
        shutil.copy2(FIXTURES / name, bin_dir / name)
    tool = bin_dir / "tool"
    tool.write_text("#!/bin/sh\necho the user's tool\n")
    tool.chmod(0o755)
    before = {p: p.read_bytes() for p in bin_dir.iterdir()}
    probe = {"rewrite": [str(bin_dir / "claude"), str(tool)],
             "write": [str(home / "planted"), "$HOME/mine"]}
    use_fixture(monkeypatch, tmp_path, "claude", "claude-success")
    monkeypatch.setenv("BENCHRIG_CLAUDE_BIN", str(bin_dir / "claude"))
    for _ in range(2):  # the second attempt runs (and asks the version of) the same file
        r, log = claude_attempt(monkeypatch, tmp_path, probe)
        seen = next(entry["probe"] for entry in log if "probe" in entry)
        assert all(outcome.startswith("OSError: EROFS") for outcome in seen["rewrite"].values()
                   ), seen["rewrite"]
        assert {p: p.read_bytes() for p in bin_dir.iterdir()} == before
        assert not (home / "planted").exists()
        # its own home is private: written to, then thrown away
        private = next(entry["env"]["HOME"] for entry in log if "argv" in entry)
        assert private != str(home) and seen["write"][f"{private}/mine"] == "ok"
        assert not os.path.exists(private)
        assert r["result"] == "pass", r.get("error")
        assert r["environment"]["runtime"]["version"] == "2.0.14"
        assert os.path.realpath(home) in r["settings"]["agent_confinement"]["read_only"]


@needs_bwrap
def test_the_agent_gets_copies_of_its_login_and_never_the_host_files(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = host_home(monkeypatch, tmp_path)
    (home / ".claude").mkdir()
    login = home / ".claude" / ".credentials.json"
    login.write_text('{"token": "host login"}')
    (home / ".codex").mkdir()
    (home / ".codex" / "auth.json").write_text('{"key": "another agent\'s"}')
    probe = {"read": ["$HOME/.claude/.credentials.json", str(login),
                      str(home / ".codex" / "auth.json")],
             "rewrite": [str(login)]}
    r, log = claude_attempt(monkeypatch, tmp_path, probe)
    seen = next(entry["probe"] for entry in log if "probe" in entry)
    private = next(entry["env"]["HOME"] for entry in log if "argv" in entry)
    assert seen["read"][f"{private}/.claude/.credentials.json"] == '{"token": "host login"}'
    assert seen["rewrite"][str(login)].startswith("OSError: EROFS")
    assert seen["read"][str(login)].startswith("FileNotFoundError")  # ~/.claude is hidden
    assert seen["read"][str(home / ".codex" / "auth.json")].startswith("FileNotFoundError")
    assert login.read_text() == '{"token": "host login"}'
    assert r["settings"]["agent_confinement"]["home_files"] == [".claude/.credentials.json"]


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder first on PATH holding a bwrap, setpriv, kill and nvidia-smi that leave a mark."""
    fake = tmp_path / "planted-bin"
    fake.mkdir()
    for name in HELPERS:
        script = fake / name
        script.write_text(f"#!/bin/sh\necho ran >> {tmp_path}/ran-{name}\nexit 0\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    caches = (trusted.program, confine.detect, confinement.detect, environment.machine)
    for cache in caches:
        cache.cache_clear()
    yield tmp_path
    for cache in caches:  # found again without the planted folder
        cache.cache_clear()


def test_helpers_planted_first_on_path_never_run(planted: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    support, conf = confine.detect(), confinement.detect()
    environment.machine()
    confinement.kill_as(confinement.allocate_uid(conf) or confinement.UID_BLOCK[0])
    assert not list(planted.glob("ran-*"))
    assert support.bwrap == conf.bwrap == "/usr/bin/bwrap"
    assert conf.describe()["bwrap"] == "/usr/bin/bwrap"
    if conf.dedicated_uid:
        assert conf.describe()["setpriv"] == "/usr/bin/setpriv"

    # and the result of an agent's attempt names the bubblewrap that ran
    r, _ = claude_attempt(monkeypatch, planted, {})
    assert not list(planted.glob("ran-*"))
    assert r["result"] == "pass"
    assert r["settings"]["agent_confinement"]["bwrap"] == ("/usr/bin/bwrap" if support.available
                                                           else None)


def test_a_program_anyone_can_replace_is_not_trusted(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "bwrap"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    # under /tmp (world-writable): anyone could have swapped the folder above it
    assert "can be changed" in (trusted.untrusted_because(str(program)) or "")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert "under the home" in (trusted.untrusted_because(str(program)) or "")
    assert trusted.untrusted_because("/usr/bin/bwrap") is None


@needs_bwrap
def test_version_runs_confined_in_the_workspace_with_the_allow_list(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCHRIG_TEST_SECRET", "s3cr3t-value")
    monkeypatch.chdir(ROOT)  # where `benchrig run` is typically started
    r, log = claude_attempt(monkeypatch, tmp_path, {})
    asked = next(entry["version_run"] for entry in log if "version_run" in entry)
    ran = next(entry for entry in log if "argv" in entry)
    assert asked["sees_checkout"] is False
    assert asked["cwd"] != str(ROOT) and asked["cwd"] == ran["cwd"]  # the scratch workspace
    assert "BENCHRIG_TEST_SECRET" not in asked["env"]
    assert r["environment"]["runtime"]["version"] == "2.0.14"


def test_the_agent_environment_is_an_allow_list_recorded_by_name(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCHRIG_TEST_SECRET", "s3cr3t-value")
    monkeypatch.setenv("BENCHRIG_TEST_PASSED", "passed-value")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "claude-key-value")
    monkeypatch.setenv("OPENAI_API_KEY", "other-provider-key")
    monkeypatch.setenv("LC_TIME", "C")
    r, log = claude_attempt(monkeypatch, tmp_path, {}, pass_env=("BENCHRIG_TEST_PASSED",))
    names = next(entry["env_names"] for entry in log if "argv" in entry)
    assert "BENCHRIG_TEST_SECRET" not in names and "OPENAI_API_KEY" not in names
    assert {"BENCHRIG_TEST_PASSED", "ANTHROPIC_API_KEY", "LC_TIME", "HOME", "PATH",
            "IS_SANDBOX"} <= set(names)
    assert r["settings"]["agent_env"] == given(names)
    assert "BENCHRIG_TEST_PASSED" in r["settings"]["agent_pass_env"]
    text = json.dumps(r)
    assert "passed-value" not in text and "claude-key-value" not in text
    assert r["result"] == "pass"


@pytest.mark.slow
def test_pass_env_on_the_command_line(tmp_path: Path, results_dir: Path) -> None:
    log = tmp_path / "log.jsonl"
    env = {"BENCHRIG_CLAUDE_BIN": str(FIXTURES / "claude"), "FAKE_AGENT_LOG": str(log),
           "FAKE_AGENT_SCENARIO": str(FIXTURES / "streams" / "claude-is-error.jsonl"),
           "BENCHRIG_TEST_PASSED": "x", "BENCHRIG_TEST_SECRET": "y"}
    ran = cli_call("run", "lru-cache", "-m", "sonnet", "-d", "claude", "--pass-env",
                   "BENCHRIG_TEST_PASSED", results_dir=results_dir, env=env)
    assert ran.code == 1, ran.stderr  # the scenario is an agent error; it still ran
    names = next(entry["env_names"] for entry in fixture_log(
        log, *results_dir.glob("*.transcript.jsonl")) if "argv" in entry)
    assert "BENCHRIG_TEST_PASSED" in names and "BENCHRIG_TEST_SECRET" not in names
    result = json.loads(next(results_dir.glob("*.json")).read_text())
    assert result["settings"]["agent_env"] == given(names)
