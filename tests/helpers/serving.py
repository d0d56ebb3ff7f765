"""A test's HTTP server on a thread of its own, stopped as soon as the test is done with it."""

from __future__ import annotations

import contextlib
import socketserver
import threading
from collections.abc import Iterator

# How often serve_forever looks for a stop request. Its default, 0.5 s, was waited out at
# every stop: about half a second for each server a test stood up (issue 23).
POLL_S = 0.01


@contextlib.contextmanager
def running(server: socketserver.BaseServer) -> Iterator[None]:
    """Serve `server` until the block ends; then stop it, close it and join its thread."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_S},
                              daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
