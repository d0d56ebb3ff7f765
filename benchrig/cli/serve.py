"""`benchrig serve`: the embedded model behind an OpenAI-compatible API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from benchrig.ui import error, info

if TYPE_CHECKING:
    pass

from benchrig.cli.app import (
    Exit,
    Option,
    app,
    echo,
)


@app.command(short_help="Serve the embedded model over an OpenAI API.")
def serve(
    model: Annotated[str, Option("--model", "-m",
        help="smollm2 or the path to a .gguf file.")] = "smollm2",
    port: Annotated[int | None, Option(help="Port on 127.0.0.1 (default: a free one).")
                    ] = None,
    context_size: Annotated[int, Option(min=256, help="Context window.")] = 8192,
    threads: Annotated[int | None, Option(min=1,
        help="CPU threads. [default: every usable core but one]")] = None,
    chat_format: Annotated[str, Option(help="llama-cpp-python chat format.")] = "chatml",
) -> None:
    """Serve the embedded model over an OpenAI-compatible API until Ctrl-C."""
    import signal

    from benchrig.local.serve import EmbeddedServer, ServerConfig

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)  # stop cleanly when a supervisor terminates us
    server = EmbeddedServer(ServerConfig(model=model, port=port, context_size=context_size,
                                         threads=threads, chat_format=chat_format))
    info(f"starting {server.model_path.name} on 127.0.0.1:{server.port} …")
    with server:
        echo(server.base_url)
        info(f"serving model {server.alias!r} at {server.base_url} "
             f"({server.threads} threads, chat format {chat_format}); Ctrl-C stops it")
        assert server.proc is not None
        try:
            code = server.proc.wait()
        except KeyboardInterrupt:
            info("stopping")
            return
    error(f"the server stopped by itself (exit code {code})")
    raise Exit(1)
