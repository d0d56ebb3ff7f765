"""What an agent gets from the host: an allow-listed environment (its provider's variables,
locale, proxies, a sane PATH, TERM, what the user passes) and a private home holding copies of
the credential files its provider needs; nothing else of BenchRig's environment or home."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchrig.drivers.confine import attempts_folder

# Named by `benchrig run --pass-env NAME`; also read from BENCHRIG_PASS_ENV (comma or space
# separated), for wrappers that cannot add an option.
PASS_ENV_VAR = "BENCHRIG_PASS_ENV"
BASE = ("TERM", "COLORTERM", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME")
PROXY = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
         "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
         "REQUESTS_CA_BUNDLE")
LOCALE = re.compile(r"LC_[A-Z_]+")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# Set by BenchRig: the private home and what follows from it; --pass-env cannot change them.
OWN = ("HOME", "PATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FILE_CAP_BYTES = 16 << 20  # a credential or config file; anything larger is not copied


@dataclass(frozen=True)
class Needs:
    """What one agent run needs from the host, as its driver says."""

    variables: tuple[str, ...] = ()  # host variables its provider reads (keys, base URLs)
    files: tuple[tuple[Path, str], ...] = ()  # (host file, where it goes in the private home)
    fixed: Mapping[str, str] = field(default_factory=dict)  # values the driver sets itself
    home: Path | None = None  # a private home the driver prepared (pi's local provider)


def passed_names(flagged: Iterable[str], host: Mapping[str, str]) -> tuple[str, ...]:
    """The variable names the user passes: --pass-env, then BENCHRIG_PASS_ENV."""
    names = [*flagged, *re.split(r"[\s,]+", host.get(PASS_ENV_VAR, ""))]
    return tuple(sorted({n for n in names if NAME.fullmatch(n) and n not in OWN}))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def sane_path(value: str | None, writable: Iterable[str]) -> str:
    """The host's PATH without relative entries and without folders the agent can write (a
    program it plants there would be run by its next command); the system's when none is left."""
    places = [os.path.realpath(p) for p in writable]
    kept: list[str] = []
    for entry in (value or "").split(os.pathsep):
        if not entry.startswith("/") or entry in kept:
            continue
        if any(_inside(os.path.realpath(entry), place) for place in places):
            continue
        kept.append(entry)
    return os.pathsep.join(kept) or DEFAULT_PATH


def build(host: Mapping[str, str], needs: Needs, passed: Iterable[str], home: Path,
          writable: Iterable[str]) -> dict[str, str]:
    """The agent's whole environment."""
    allowed = {*BASE, *PROXY, *needs.variables, *passed}
    env = {name: value for name, value in host.items()
           if (name in allowed or LOCALE.fullmatch(name)) and name not in OWN}
    env.update(needs.fixed)
    env.update({"HOME": str(home), "PATH": sane_path(host.get("PATH"), writable),
                "XDG_CONFIG_HOME": f"{home}/.config", "XDG_CACHE_HOME": f"{home}/.cache",
                "XDG_DATA_HOME": f"{home}/.local/share",
                "XDG_STATE_HOME": f"{home}/.local/state"})
    return env


def _copy(source: Path, target: Path) -> bool:
    """A regular file (followed through links: it is the user's own setup) copied, 0600."""
    try:
        info = source.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > FILE_CAP_BYTES:
            return False
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copyfile(source, target)
        target.chmod(0o600)
    except OSError:
        return False
    return True


@contextlib.contextmanager
def private_home(needs: Needs) -> Iterator[tuple[Path, list[str]]]:
    """The agent's home for one attempt, with copies of the files its provider needs, and which
    were copied (paths inside it); thrown away afterwards unless the driver owns it."""
    home = needs.home or Path(tempfile.mkdtemp(prefix="benchrig-agent-home-",
                                               dir=attempts_folder()))
    try:
        copied = [inside for source, inside in needs.files if _copy(source, home / inside)]
        yield home, copied
    finally:
        if needs.home is None:
            shutil.rmtree(home, ignore_errors=True)


def host_home(host: Mapping[str, str]) -> Path:
    return Path(host.get("HOME") or os.path.expanduser("~"))


def config_dir(host: Mapping[str, str], variable: str, default: str) -> Path:
    """An agent's configuration folder on the host: $variable, else ~/default."""
    value = host.get(variable)
    return Path(value) if value else host_home(host) / default
