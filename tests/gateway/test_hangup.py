"""A client that hangs up before its refusal is written: the call is recorded, nothing is
printed, and the gateway goes on serving."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from benchrig.gateway import Gateway
from benchrig.gateway.call import CallContext, ChatRequest, Event, RequestError
from benchrig.gateway.scripted import ScriptedBackend
from tests.gateway.helpers import DONE, chat


class SlowRefusal(ScriptedBackend):
    """Reads the prompt for a while (as the embedded model does), then finds it too big."""

    refuse = True

    def complete(self, request: ChatRequest, context: CallContext) -> Iterator[Event]:
        if self.refuse:
            time.sleep(0.5)
            raise RequestError("the prompt does not fit the window (nothing was cut)")
        yield from super().complete(request, context)


@pytest.mark.parametrize("stream", [True, False])
def test_a_refusal_to_a_client_that_hung_up_is_recorded_not_printed(
        stream: bool, capfd: pytest.CaptureFixture[str]) -> None:
    backend = SlowRefusal([DONE])
    with Gateway(backend) as gw:
        session = gw.open_session("hang-up")
        url = urlsplit(session.base_url)
        body = (b'{"model":"m","stream":%s,"messages":[{"role":"user","content":"hi"}]}'
                % (b"true" if stream else b"false"))
        with socket.create_connection((url.hostname, url.port)) as client:
            client.sendall(b"POST %s/chat/completions HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                           % (url.path.encode(), len(body), body))
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00"
                              b"\x00\x00\x00\x00")  # close with a reset, as a killed agent
        for _ in range(100):
            if session.calls():
                break
            time.sleep(0.05)
        [call] = session.calls()
        assert call.status.startswith("refused: the prompt does not fit")
        backend.refuse = False
        assert chat(session.base_url).status_code == 200  # still serving
    assert "Traceback" not in capfd.readouterr().err
