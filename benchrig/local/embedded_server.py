"""EmbeddedServer: the embedded model behind llama-cpp-python's OpenAI-compatible server, in a
child process (`benchrig serve` itself is now the gateway, benchrig/gateway/)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from benchrig.core.errors import DriverError
from benchrig.local.function_calling import TOOL_FORMAT_NOTE

# chatml accepts list-of-parts message content (as pi sends); the GGUF's own Jinja
# template fails on it. chatml also drops SmolLM2's default system prompt, so the chat
# format is recorded with every result.
DEFAULT_CHAT_FORMAT = "chatml"
STARTUP_TIMEOUT_S = 120.0


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class ServerConfig:
    model: str = "smollm2"
    port: int | None = None
    host: str = "127.0.0.1"
    context_size: int = 8192
    threads: int | None = None
    chat_format: str = DEFAULT_CHAT_FORMAT
    alias: str | None = None


class EmbeddedServer:
    """Starts the server in its own session, waits until it answers, stops it cleanly.

    Use as a context manager; `base_url` ends in `/v1`. It serves one request at a time:
    llama-cpp-python's default lets a new request cancel a stream in progress, which
    returns empty answers to concurrent clients, so that is turned off. The child process
    (embedded_server_child.py) also turns off prompt-prefix reuse and keeps llama.cpp's counters.
    """

    def __init__(self, config: ServerConfig) -> None:
        from benchrig.local.model import default_threads, resolve_model

        self.config = config
        self.model_path = resolve_model(config.model)
        self.alias = config.alias or (config.model if not config.model.endswith(".gguf")
                                      else self.model_path.stem)
        self.threads = config.threads or default_threads()
        self.port = config.port or free_port(config.host)
        self.base_url = f"http://{config.host}:{self.port}/v1"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_path = ""

    def command(self) -> list[str]:
        c = self.config
        child = {"host": c.host, "port": self.port, "model_path": str(self.model_path),
                 "alias": self.alias, "context_size": c.context_size, "threads": self.threads,
                 "chat_format": c.chat_format, "settings": self.settings()}
        return [sys.executable, "-m", "benchrig.local.embedded_server_child", json.dumps(child)]

    def settings(self) -> dict[str, Any]:
        """What every result served by this server records about it (the openai driver reads
        it back from `/v1/benchrig/server`)."""
        from importlib.metadata import version

        return {"server": "llama-cpp-python", "version": version("llama_cpp_python"),
                "chat_format": self.config.chat_format, "threads": self.threads,
                "context_size": self.config.context_size, "interrupt_requests": False,
                "prompt_prefix_reuse": False, "logits_all": False,
                "model_path": str(self.model_path), "alias": self.alias,
                "tool_chat_format": TOOL_FORMAT_NOTE}

    def start(self) -> EmbeddedServer:
        import httpx

        fd, self._log_path = tempfile.mkstemp(prefix="benchrig-serve-", suffix=".log")
        try:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=fd,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            os.close(fd)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.log_tail()
                self.stop()
                raise DriverError("infra", f"benchrig serve: the server exited "
                                  f"(code {self.proc.returncode}): {log}")
            with contextlib.suppress(httpx.HTTPError):
                # this machine's own server: never through HTTP(S)_PROXY
                if httpx.get(f"{self.base_url}/models", timeout=1.0,
                             trust_env=False).status_code == 200:
                    return self
            time.sleep(0.1)
        self.stop()
        raise DriverError("infra", f"benchrig serve: no answer within {STARTUP_TIMEOUT_S:g} s")

    def log_tail(self, size: int = 2000) -> str:
        try:
            return Path(self._log_path).read_text(errors="replace")[-size:].strip()
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM the server's session, SIGKILL it if it lingers; remove the log."""
        if self.proc is not None and self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, sig)
                try:
                    self.proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self._log_path:
            with contextlib.suppress(OSError):
                os.unlink(self._log_path)

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
