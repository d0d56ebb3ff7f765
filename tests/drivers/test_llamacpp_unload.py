"""The llamacpp driver's loaded model is closed at exit, never under an attempt using it."""

from __future__ import annotations

import threading

import pytest

from benchrig.drivers import llamacpp


class FakeModel:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_unload_closes_and_forgets_the_loaded_model(monkeypatch: pytest.MonkeyPatch) -> None:
    model = FakeModel()
    monkeypatch.setattr(llamacpp, "_LOADED", {("m.gguf", 512, 1): model})
    llamacpp.unload()
    assert model.closed and not llamacpp._LOADED


def test_a_model_an_attempt_still_uses_is_left_to_the_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An attempt abandoned at Ctrl-C may still be decoding at exit: freeing the model under
    it would crash the process where it should end with its "interrupted" line."""
    model = FakeModel()
    monkeypatch.setattr(llamacpp, "_LOADED", {("m.gguf", 512, 1): model})
    using, done = threading.Event(), threading.Event()

    def attempt() -> None:
        with llamacpp._IN_USE:
            using.set()
            done.wait()

    thread = threading.Thread(target=attempt)
    thread.start()
    try:
        assert using.wait(30)
        llamacpp.unload(wait_s=0.01)
        assert not model.closed and llamacpp._LOADED
    finally:
        done.set()
        thread.join()
    llamacpp.unload()
    assert model.closed
