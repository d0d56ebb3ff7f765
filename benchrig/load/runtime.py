"""The runtime a sweep measured, as the server names it (`GET …/v1/benchrig/server`, which
benchrig serve answers), asked once before the first level; outside text, made printable."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from benchrig.load.wire import _tls
from benchrig.textsafe import NAME_CAP, printable, type_name

INFO_CAP = 64 * 1024  # benchrig serve's answer is a few hundred bytes
INFO_TIMEOUT_S = 5.0


def _text(value: Any) -> str | None:
    return printable(value, NAME_CAP) if isinstance(value, str) and value.strip() else None


def server_runtime(base_url: str, driver: str, api_key: str | None) -> dict[str, Any]:
    """The result's `environment.runtime`: the runtime's name and version as the server
    reports them (`served_by`: the server in front of it), else the driver's name, version
    null and `version_reason` saying why. Never raises: a server without the route is
    still measured."""
    url = base_url.rstrip("/") + "/benchrig/server"
    headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
    if api_key:  # sent as the requests send it, never recorded
        headers["Authorization"] = f"Bearer {api_key}"
    found: Any = None
    reason = None
    try:
        request = urllib.request.Request(url, headers=headers)
        with urllib.request.urlopen(request, timeout=INFO_TIMEOUT_S,  # http(s): Endpoint.of
                                    context=_tls() if url.startswith("https") else None) as reply:
            found = json.loads(reply.read(INFO_CAP + 1)[:INFO_CAP])
    except urllib.error.HTTPError as exc:
        reason = f"GET {url} answered {exc.code}"
    except (OSError, ValueError) as exc:  # refused, timeout, not JSON
        reason = f"GET {url} failed: {type_name(exc)}"
    info = found if isinstance(found, dict) else {}
    # benchrig serve's gateway names itself `server` and the runtime behind it `runtime`,
    # whose version it gives; the embedded server alone gives `server` and `version`
    server, behind = _text(info.get("server")), _text(info.get("runtime"))
    version = _text(info.get("version"))
    if reason is None and version is None:
        reason = f"GET {url} names no version"
    runtime: dict[str, Any] = {"name": behind or server or driver, "version": version}
    if behind and server:
        runtime["served_by"] = server
    if version is None:
        runtime["version_reason"] = printable(reason or "", NAME_CAP * 2)
    return runtime
