"""The llamacpp driver's loaded model is closed at exit, never under an attempt using it."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchrig.core.errors import DriverError
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


def _request() -> Any:
    return SimpleNamespace(model="m.gguf", settings=SimpleNamespace(threads=1))


def _driver_call(driver: llamacpp.LlamaCppDriver, kind: str) -> Any:
    if kind == "run":
        return driver.run(_request())
    return driver.tool_turn(_request(), [], [])


@pytest.mark.parametrize("kind", ["run", "tool_turn"])
def test_the_driver_holds_its_model_while_it_decodes(
        monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """The driver itself, not a test, keeps the exit from closing a model mid-decode."""
    model = FakeModel()
    monkeypatch.setattr(llamacpp, "_LOADED", {("m.gguf", 512, 1): model})
    monkeypatch.setattr(llamacpp, "resolve_model", lambda name: Path(name))
    monkeypatch.setattr(llamacpp.LlamaCppDriver, "_loaded",
                        staticmethod(lambda request, path, threads: (model, None)))
    decoding, done = threading.Event(), threading.Event()

    def decode(*_args: Any) -> None:
        decoding.set()
        done.wait()

    monkeypatch.setattr(llamacpp.LlamaCppDriver, "_run" if kind == "run" else "_tool_turn",
                        decode)
    thread = threading.Thread(target=_driver_call, args=(llamacpp.LlamaCppDriver(), kind))
    thread.start()
    try:
        assert decoding.wait(30)
        llamacpp.unload(wait_s=0.01)
        assert not model.closed
    finally:
        done.set()
        thread.join()


def test_a_load_under_way_does_not_hold_up_the_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A load cannot be cut: an attempt abandoned while one goes on must not make the exit
    wait for it (the exit closes what is loaded and goes)."""
    model = FakeModel()
    monkeypatch.setattr(llamacpp, "_LOADED", {("m.gguf", 512, 1): model})
    monkeypatch.setattr(llamacpp, "resolve_model", lambda name: Path(name))
    loading, done = threading.Event(), threading.Event()

    def load(request: Any, path: Path, threads: int) -> tuple[Any, None]:
        loading.set()
        done.wait()
        raise DriverError("infra", "the load was abandoned")

    monkeypatch.setattr(llamacpp.LlamaCppDriver, "_loaded", staticmethod(load))
    errors: list[BaseException] = []

    def attempt() -> None:
        try:
            llamacpp.LlamaCppDriver().run(_request())
        except DriverError as exc:
            errors.append(exc)

    thread = threading.Thread(target=attempt)
    thread.start()
    try:
        assert loading.wait(30)
        llamacpp.unload(wait_s=30)  # waits out the load if the driver holds the model for it
        assert model.closed
    finally:
        done.set()
        thread.join()
    assert errors


def test_after_the_exit_no_attempt_left_running_touches_the_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the exit closed the model, an abandoned attempt that gets as far as its decode
    fails as BenchRig's error instead of calling into a freed model."""
    model = FakeModel()
    monkeypatch.setattr(llamacpp, "_LOADED", {("m.gguf", 512, 1): model})
    monkeypatch.setattr(llamacpp, "_EXITING", threading.Event())
    monkeypatch.setattr(llamacpp, "resolve_model", lambda name: Path(name))
    monkeypatch.setattr(llamacpp.LlamaCppDriver, "_loaded",
                        staticmethod(lambda request, path, threads: (model, None)))
    decoded: list[str] = []
    monkeypatch.setattr(llamacpp.LlamaCppDriver, "_run",
                        lambda *args: decoded.append("decoded"))
    llamacpp._at_exit()
    assert model.closed
    with pytest.raises(DriverError) as caught:
        llamacpp.LlamaCppDriver().run(_request())
    assert caught.value.kind == "infra" and not decoded


def test_a_load_that_ends_after_the_exit_closes_its_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An abandoned load that finishes once the exit has closed the cache neither keeps its
    model for the interpreter's teardown nor changes the cache under `unload`."""
    model = FakeModel()
    exiting = threading.Event()
    exiting.set()
    monkeypatch.setattr(llamacpp, "_EXITING", exiting)
    monkeypatch.setattr(llamacpp, "_LOADED", {})
    monkeypatch.setattr(llamacpp, "new_llama", lambda *args, **kwargs: model)
    with pytest.raises(DriverError):
        llamacpp._load(Path("m.gguf"), 512, 1)
    assert model.closed and not llamacpp._LOADED


def test_after_the_exit_a_cached_model_is_not_read_by_the_load_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A model taken from the cache just before the exit closed it is not asked its trained
    window (a NULL model crashes llama.cpp): the step fails as BenchRig's error."""
    model = FakeModel()
    asked: list[object] = []
    monkeypatch.setattr(llamacpp, "_EXITING", threading.Event())
    monkeypatch.setattr(llamacpp, "_LOADED", {})
    monkeypatch.setattr(llamacpp, "_load", lambda path, n_ctx, threads: (model, None))
    monkeypatch.setattr(llamacpp, "_past_training",
                        lambda llm, n_ctx: asked.append(llm))
    request = SimpleNamespace(
        progress=SimpleNamespace(phase=lambda text: None),
        deadline=SimpleNamespace(spend=lambda phase: None, expired=False),
        settings=SimpleNamespace(context_size=512), strict_context=False)
    llamacpp._at_exit()
    with pytest.raises(DriverError):
        llamacpp.LlamaCppDriver._loaded(request, Path("m.gguf"), 1)  # type: ignore[arg-type]
    assert asked == []


def test_a_second_ctrl_c_during_the_exit_s_wait_ends_it_quietly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Users press Ctrl-C again exactly when an exit seems to hang: it ends the wait, with
    no traceback from an atexit hook."""
    def interrupted(wait_s: float = 0.0) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(llamacpp, "_EXITING", threading.Event())
    monkeypatch.setattr(llamacpp, "unload", interrupted)
    llamacpp._at_exit()  # returns: the interrupt ended the wait
    assert llamacpp._EXITING.is_set()
