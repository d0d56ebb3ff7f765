"""`benchrig serve`: the model gateway, standalone, in front of the embedded model or an
OpenAI-compatible server."""

from __future__ import annotations

from typing import Annotated

from typer import Exit, Option, echo

from benchrig.cli.app import app
from benchrig.ui import error, info


@app.command(short_help="Serve a model through BenchRig's metering gateway.")
def serve(
    model: Annotated[str | None, Option("--model", "-m",
        help="smollm2, the path to a .gguf file, or script:<file> (a scripted stand-in) "
             "[default: smollm2]; with --upstream or --ollama, the model to ask for there "
             "[default: each client's own].")] = None,
    port: Annotated[int | None, Option(help="Port on 127.0.0.1 (default: a free one).")
                    ] = None,
    context_size: Annotated[int, Option(min=256, help="Context window.")] = 8192,
    threads: Annotated[int | None, Option(min=1,
        help="CPU threads. [default: every usable core but one]")] = None,
    upstream: Annotated[str | None, Option(
        help="Forward to this OpenAI-compatible base URL (…/v1) instead.")] = None,
    upstream_key_env: Annotated[str | None, Option(
        help="The variable holding the upstream's API key (sent upstream only).")] = None,
    ollama: Annotated[str | None, Option(
        help="Forward to the Ollama at this URL (its native /api/chat) instead.")] = None,
) -> None:
    """Serve a model over an OpenAI-compatible API on loopback until Ctrl-C; every call is
    metered (GET /v1/benchrig/calls lists them)."""
    import signal
    import threading

    from benchrig.core.errors import DriverError, UsageError
    from benchrig.gateway import Gateway, GatewaySpec

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)  # stop cleanly when a supervisor terminates us
    if upstream and ollama:
        error("benchrig serve: give --upstream or --ollama, not both")
        raise Exit(2)
    if upstream:
        spec = GatewaySpec(backend="upstream", base_url=upstream, model=model,
                           api_key_env=upstream_key_env)
    elif ollama:
        spec = GatewaySpec(backend="ollama", base_url=ollama, model=model)
    else:
        spec = GatewaySpec.for_local_model(model or "smollm2", context_size, threads)
    info(f"starting the gateway ({spec.backend}: {upstream or ollama or spec.model}) …")
    try:
        gateway = Gateway(spec.build(), port=port or 0, open_default=True)
    except (OSError, ValueError, UsageError, DriverError) as exc:
        error(f"benchrig serve: {exc}")
        raise Exit(2) from None
    with gateway:
        echo(f"{gateway.url}/v1")
        served = gateway.backend.model_id(spec.model or "") or "each client's model"
        info(f"serving {served!r} at {gateway.url}/v1 "
             f"(sessions: {gateway.url}/s/<token>/v1); Ctrl-C stops it")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            info("stopping")
