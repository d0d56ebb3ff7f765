"""Probes a driver's preflight makes before any attempt: a server that answers, a model it
lists, a key that is set, a binary that exists, a host that can be reached. Each failure is
one UsageError line (exit 2): a run that cannot work writes nothing."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from benchrig.core.errors import DriverError, UsageError
from benchrig.textsafe import printable

# One probe waits at most this long: a healthy loopback server answers in milliseconds, and
# a setup failure should be said at once, not after an attempt's timeout.
PROBE_TIMEOUT_S = 3.0
LISTED_NAMES = 8  # names of listed models shown when the one asked for is missing


def get_json(url: str, what: str, headers: Mapping[str, str] | None = None) -> Any | None:
    """The JSON `url` answers with; None when the server has no such route (404, 405: the
    listing is optional). A refused connection, a timeout, a refused key or a body that is
    not JSON → UsageError naming `what`."""
    import httpx

    from benchrig.drivers.httpstream import client

    try:
        with client(PROBE_TIMEOUT_S, url) as http:
            reply = http.get(url, headers=dict(headers or {}))
    except httpx.HTTPError as exc:
        raise UsageError(f"{what} is not reachable at {printable(url)} "
                         f"({printable(type(exc).__name__)}: {printable(str(exc))[:200]}); "
                         "start it, or name another in the provider slot") from None
    if reply.status_code in (401, 403):
        raise UsageError(f"{what} refused the key at {printable(url)} (HTTP "
                         f"{reply.status_code}); set or correct its API key")
    if reply.status_code in (404, 405, 501):
        return None
    if reply.status_code >= 400:
        raise UsageError(f"{what} answered HTTP {reply.status_code} at {printable(url)}")
    try:
        return reply.json()
    except ValueError:
        raise UsageError(f"{what} at {printable(url)} did not answer JSON: is it the right "
                         "server?") from None


def need_model(model: str, listed: Iterable[str], what: str, hint: str) -> None:
    """UsageError unless `model` is among the names the server listed."""
    names = sorted({name for name in listed if name})
    if model in names:
        return
    shown = ", ".join(printable(n) for n in names[:LISTED_NAMES])
    more = f" (and {len(names) - LISTED_NAMES} more)" if len(names) > LISTED_NAMES else ""
    raise UsageError(f"{what} has no model {printable(model)}; it has "
                     f"{shown + more if names else 'none'}; {hint}")


def listed_names(reply: Any, key: str, fields: tuple[str, ...]) -> list[str] | None:
    """The strings under reply[key][*][field] (Ollama's models[].name, OpenAI's data[].id);
    None when the reply is not such a listing (a server that answers every route alike)."""
    entries = reply.get(key) if isinstance(reply, dict) else None
    if not isinstance(entries, list):
        return None
    return [entry[f] for entry in entries if isinstance(entry, dict)
            for f in fields if isinstance(entry.get(f), str)]


def need_binary(name: str, env_var: str, install_hint: str) -> str:
    """The agent's executable, or UsageError with the install hint."""
    from benchrig.drivers.agent_process import locate

    try:
        return locate(name, env_var, install_hint)
    except DriverError as exc:
        raise UsageError(exc.message) from None


def need_key(agent: str, provider: str, names: tuple[str, ...], login: str | None) -> None:
    """UsageError unless one of `names` is set, or the agent's login file `login` exists."""
    if not names or any(os.environ.get(n) for n in names):
        return
    if login is not None and os.path.isfile(login):
        return
    also = f" (or a login in {login})" if login else ""
    raise UsageError(f"{agent}: provider {printable(provider)} needs {' or '.join(names)} "
                     f"set{also}")


def need_host(url: str, what: str) -> None:
    """UsageError unless `url`'s host resolves and takes a TCP connection (through the
    HTTPS proxy when one is set: then the proxy is what must answer)."""
    proxy = os.environ.get("https_proxy") or os.environ.get("HTTPS_PROXY")
    target = urlsplit(proxy if proxy else url)
    host = target.hostname or ""
    port = target.port or (443 if target.scheme == "https" else 80)
    via = f" (through the proxy {printable(proxy)})" if proxy else ""
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            return
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UsageError(f"{what}: cannot reach {printable(host)}:{port}{via} "
                         f"({printable(str(reason))}); check the network") from None
