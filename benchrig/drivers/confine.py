"""How an agent CLI is confined: bubblewrap hides BenchRig's checkouts, tasks and results from it.

The agent runs as the host user (a real provider needs the user's credentials) in a mount
namespace of its own, with a user namespace, a pid namespace and no capabilities. It sees the
system read-only, its workspace and its private home writable, a /tmp and /var/tmp of its own
(other attempts' folders never), and in place of every BenchRig checkout (sources, tasks with
their hidden tests, .git, results) an empty read-only tmpfs, except the agent's own install
(`.agents/`) bound read-only. The host's home is read-only (its agent settings, key folders and
Ray's token hidden); the agent writes to a private home (drivers.agent_env). bubblewrap comes
from the system folders (benchrig.trusted). The network is the host's: agents talk to their
APIs, and to the embedded server on loopback; so no agent runs where a Ray node does
(`ray_node`). Without a working bubblewrap the agent runs as before, unconfined, and the result
says why.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchrig import paths, trusted

BUBBLEWRAP, NONE = "bubblewrap", "none"
# Where agents keep settings and keys on the host: hidden (the agent gets copies of what its
# provider needs in its private home), with the home's usual key folders.
CONFIG_VARS = ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR")
HOME_SECRETS = (".claude", ".codex", ".pi", ".ssh", ".gnupg", ".aws", ".config/gh", ".ray")
# Ray's session folders (its ports, sockets, logs): hidden wherever they are set to live
RAY_FOLDER_VARS = ("RAY_TMPDIR",)
# The socket a Ray node's raylet listens on: where one is, an agent on the host's network
# can join its cluster.
RAYLET_SOCKET = re.compile(rb"/\S*/session_[^/\s]*/sockets/raylet$", re.MULTILINE)
XDG_VARS = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
SCRATCH = ("/tmp", "/var/tmp")
TRIAL_TIMEOUT_S = 30


@dataclass(frozen=True)
class Support:
    """Whether agents can be confined here: bubblewrap's path, or why not."""

    bwrap: str | None
    reason: str | None = None

    @property
    def available(self) -> bool:
        return self.bwrap is not None and self.reason is None


@dataclass(frozen=True)
class Plan:
    """What the agent sees: host paths hidden, shown read-only, shown writable (real paths),
    and folders that are a fresh, empty, writable tmpfs of its own (`private`: /tmp, /var/tmp)."""

    hidden: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    private: tuple[str, ...] = ()

    def mounts(self) -> list[str]:
        """bubblewrap's mount arguments, outermost first, so that what is shown inside a hidden
        or private folder is mounted on top of its tmpfs; a hidden tmpfs is made read-only
        last."""
        ops = {p: "--bind" for p in self.writable}
        ops |= {p: "--tmpfs" for p in (*self.private, *self.hidden)}
        ops |= {p: "--ro-bind" for p in self.read_only}
        args: list[str] = []
        for path in sorted(ops, key=lambda p: (len(Path(p).parts), p)):
            args += [ops[path], path] if ops[path] == "--tmpfs" else [ops[path], path, path]
        for path in self.hidden:
            args += ["--remount-ro", path]
        return args

    def argv(self, bwrap: str, cwd: str, command: list[str]) -> list[str]:
        return [bwrap, "--unshare-user", "--unshare-pid", "--cap-drop", "ALL",
                "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                *self.mounts(), "--chdir", cwd, "--", *command]


@dataclass(frozen=True)
class Confined:
    """The command that runs the agent, and how it was confined (for the result)."""

    argv: list[str]
    record: dict[str, Any] = field(default_factory=dict)


_attempts: list[Path] = []  # this process's folder of agent workspaces and homes, once made
_attempts_lock = threading.Lock()


def attempts_folder() -> Path:
    """The folder, private to this BenchRig process (0700), that holds every agent workspace
    and private home it makes; each confined agent is shown its own two and nothing else of
    it (`plan` hides it), so attempts that run at once never share a writable folder."""
    with _attempts_lock:
        if not _attempts or not _attempts[0].is_dir():
            _attempts[:] = [Path(tempfile.mkdtemp(prefix="benchrig-agents-"))]
            atexit.register(shutil.rmtree, _attempts[0], True)
        return _attempts[0]


def _real(path: str | Path) -> str:
    return os.path.realpath(path)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _read_pointer(file: Path, prefix: str = "") -> Path | None:
    """A path stored in a git pointer file (`gitdir: X`, `commondir`), relative to its folder."""
    try:
        text = file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(prefix) or not text[len(prefix):].strip():
        return None
    return (file.parent / text[len(prefix):].strip()).resolve()


def checkouts(root: Path) -> list[Path]:
    """The checkout and everything git shares with it: for a linked worktree, the repository's
    common .git folder, its main checkout and every other worktree it lists."""
    found = [root]
    dot_git = root / ".git"
    common: Path | None = dot_git if dot_git.is_dir() else None
    if dot_git.is_file() and (gitdir := _read_pointer(dot_git, "gitdir:")) is not None:
        common = _read_pointer(gitdir / "commondir") or gitdir
    if common is None or not common.is_dir():
        return found
    found.append(common)
    if common.name == ".git":
        found.append(common.parent)
    for pointer in sorted((common / "worktrees").glob("*/gitdir")):
        if (linked := _read_pointer(pointer)) is not None:
            found.append(linked.parent)
    return found


def results_folders() -> list[Path]:
    """Every results folder BenchRig knows of beside the run's own: the configured one, the
    checkout's `results/` and the one in the current folder (where `run.sh` writes), whichever
    exist. Their transcripts hold other models' solutions."""
    found = [paths.results_dir(), paths.ROOT / "results"]
    with contextlib.suppress(OSError):  # a current folder that is gone holds none
        found.append(Path.cwd() / "results")
    return found


def benchrig_paths(extra: Iterable[Path] = ()) -> list[str]:
    """What an agent must not see: BenchRig's checkouts (or, installed elsewhere, its package),
    the tasks folder and where imports go (packs hold reference answers), every results
    folder, and `extra` (the attempt's task folders and results); for each, the folder its
    symbolic links lead to."""
    root = paths.ROOT
    own = checkouts(root) if (root / "pyproject.toml").is_file() else [root / "benchrig"]
    found = [*own, paths.tasks_dir(), paths.imports_dir(), *results_folders(), *extra]
    return [_real(p) for p in found if os.path.isdir(p) and _real(p) != "/"]


def _home_secrets(host: Mapping[str, str]) -> list[str]:
    """Folders of the host's home an agent has no use for (it gets copies of what it needs)."""
    home = Path(host.get("HOME") or os.path.expanduser("~"))
    found = [home / name for name in HOME_SECRETS]
    found += [Path(host[name]) for name in (*CONFIG_VARS, *RAY_FOLDER_VARS) if host.get(name)]
    return [_real(p) for p in found if p.is_dir() and _real(p) != "/"]


def plan(*, workspace: Path, home: Path, agent_binary: str, private: Iterable[Path] = (),
         host: Mapping[str, str] | None = None) -> Plan:
    """Hide BenchRig from an agent working in `workspace` with the private `home`; the host's
    home (and every other folder) read-only, its agent settings and keys hidden."""
    host = os.environ if host is None else host
    # other attempts' workspaces and homes: only this attempt's own are bound in below
    others = [_real(p) for p in _attempts[:1] if p.is_dir()]
    hidden = sorted(set(benchrig_paths(private)) | set(_home_secrets(host)) | set(others))
    # Only the outermost hidden folders get a tmpfs: anything inside one is hidden with it.
    hidden = [p for p in hidden if not any(q != p and _inside(p, q) for q in hidden)]
    read_only = []
    scratch = [_real(p) for p in SCRATCH if os.path.isdir(p)]
    binary = _real(agent_binary)
    if any(_inside(binary, h) for h in [*hidden, *scratch]):  # its install, nothing more
        agents = _real(paths.ROOT / ".agents")
        read_only.append(agents if _inside(binary, agents) else os.path.dirname(binary))
    # "/" is shown read-only; the host's home is named too, for when it lies in /tmp.
    homes = [host.get("HOME", ""), *(host.get(name, "") for name in XDG_VARS)]
    read_only += [_real(p) for p in homes if p and os.path.isdir(p) and _real(p) != "/"]
    # Its own /tmp and /var/tmp (above): nothing another attempt (or anyone) leaves there
    # reaches it, and nothing it leaves there reaches them.
    writable = [_real(workspace), _real(home)]
    shown = set(read_only) - set(hidden) - set(writable)
    return Plan(tuple(hidden), tuple(sorted(shown)), tuple(sorted(set(writable) - set(hidden))),
                tuple(sorted(set(scratch) - set(hidden))))


def unseen(record: Mapping[str, Any], named: Iterable[str]) -> list[str]:
    """The host paths among `named` (an argument or a variable the driver gives the agent) that
    the confined agent would not find as they are: inside a hidden folder or a private /tmp,
    unless a folder shown inside that one holds them (the deepest mount decides)."""
    if record.get("method") != BUBBLEWRAP:
        return []
    mounts = {p: False for p in (*record.get("hidden", ()), *record.get("private", ()))}
    mounts |= {p: True for p in (*record.get("read_only", ()), *record.get("writable", ()))}
    missing = []
    for value in named:
        if not value.startswith("/") or any(c.isspace() for c in value):
            continue
        # a file the agent is to write (a trajectory) does not exist yet: its folder does
        place = value if os.path.exists(value) else os.path.dirname(value)
        if not os.path.isdir(place) and place != value:
            continue
        real = _real(place)
        covering = [p for p in mounts if _inside(real, p)]
        if covering and not mounts[max(covering, key=len)]:
            missing.append(value)
    return missing


def ray_node() -> str | None:
    """Why no agent may run here, if a Ray node runs in this network namespace (the one a
    confined agent shares): with the cluster's address it could join it and run a task outside
    its confinement (as the worker's user, in the host's namespaces). A raylet listens on a
    Unix socket `<session>/sockets/raylet`, which /proc/net/unix lists (one read, ~0.4 ms)."""
    try:
        with open("/proc/net/unix", "rb") as listing:
            found = RAYLET_SOCKET.search(listing.read())
    except OSError:  # no /proc: nothing to tell
        return None
    if found is None:
        return None
    return (f"a Ray node runs on this host ({found.group(0).decode(errors='replace')}): an "
            "agent shares the host's network and could join its cluster and run tasks outside "
            "its confinement, so no agent attempt runs here (run agents where no Ray node "
            "runs; see docs/security.md#agents)")


def _trial(bwrap: str) -> str | None:
    """Confine a shell as an agent would be; None if the secret stayed hidden, else why not."""
    try:
        return _try(bwrap)
    except OSError as exc:  # no temporary folder to try it in
        return str(exc)


def _try(bwrap: str) -> str | None:
    with tempfile.TemporaryDirectory(prefix="benchrig-confine-") as scratch:
        secret, workspace = Path(scratch, "secret"), Path(scratch, "workspace")
        secret.mkdir()
        workspace.mkdir()
        (secret / "hidden").write_text("if the agent can read this, it is not confined")
        trial = Plan(hidden=(_real(secret),), writable=(_real(workspace),))
        script = (f"test ! -e {secret}/hidden && : > {workspace}/written && "
                  "grep -Eq '^CapEff:[[:space:]]*0+$' /proc/self/status")
        try:
            done = subprocess.run(trial.argv(bwrap, _real(workspace), ["/bin/sh", "-c", script]),
                                  capture_output=True, text=True, timeout=TRIAL_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        if done.returncode != 0 or not (workspace / "written").exists():
            lines = done.stderr.strip().splitlines()
            return lines[-1] if lines else f"the trial exited with code {done.returncode}"
    return None


@functools.cache
def detect() -> Support:
    """Whether bubblewrap can confine an agent here (tried for real once per process)."""
    bwrap = trusted.program("bwrap")
    if bwrap is None:
        return Support(None, "bubblewrap is not installed in the system folders "
                             f"({', '.join(trusted.SYSTEM_FOLDERS)}; apt install bubblewrap)")
    why = _trial(bwrap)
    return Support(bwrap, f"bubblewrap cannot confine an agent here: {why}" if why else None)


def warning(support: Support) -> str | None:
    """The one-time warning when agents would run unconfined."""
    if support.available:
        return None
    return (f"agents run unconfined: {support.reason}; they can read the hidden tests and "
            "change BenchRig's files (see docs/security.md)")


def confine(argv: list[str], *, workspace: Path, home: Path, private: Iterable[Path] = (),
            support: Support | None = None) -> Confined:
    """`argv` wrapped in bubblewrap where it works, else as it is; with the record of which."""
    support = support or detect()
    if not support.available:
        return Confined(argv, {"method": NONE, "reason": support.reason, "bwrap": None,
                               "hidden": [], "read_only": [], "writable": []})
    assert support.bwrap is not None
    chosen = plan(workspace=workspace, home=home, agent_binary=argv[0], private=private)
    if any(_inside(os.path.abspath(argv[0]), h) for h in chosen.hidden):
        # reached through a link in a hidden folder (a worktree's .agents): run the file itself
        argv = [_real(argv[0]), *argv[1:]]
    return Confined(chosen.argv(support.bwrap, _real(workspace), argv), {
        "method": BUBBLEWRAP, "reason": None, "bwrap": support.bwrap,
        "hidden": list(chosen.hidden), "read_only": list(chosen.read_only),
        "writable": list(chosen.writable), "private": list(chosen.private),
        "system": "read-only",
        "home": "private, thrown away after the attempt; the host's home read-only",
        "namespaces": ["user", "pid", "mount"], "capabilities": "none",
        "network": "shared with the host"})
