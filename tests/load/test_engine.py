"""A level against the paced stand-in (bench/paced_server.py): counts, bounds, arrivals,
and a dead server as counted errors. Timings are checked by order against the stand-in's
known schedule, never against a wall-clock figure."""

from __future__ import annotations

from typing import Any

import pytest

from benchrig.load.engine import Level, Workload, arrivals, event_loop, run_level
from benchrig.load.measure import measured
from benchrig.load.wire import Endpoint
from benchrig.local.embedded_server import free_port
from tests.helpers.paced import paced

DELAY_S = 0.05


def workload(url: str, max_tokens: int = 8) -> Workload:
    return Workload(Endpoint.of(url), "m", ("one", "two"), max_tokens, timeout_s=30.0)


def test_a_concurrency_level_sends_its_count_and_times_every_request() -> None:
    with paced(DELAY_S, tokens=8) as url:
        run = run_level(workload(url), Level(concurrency=4, requests=8, warmup=2))
    assert len(run.records) == 8 and len(run.warmup) == 2
    assert all(r.ok for r in run.records)
    figures = [measured(r) for r in run.records]
    # the stand-in writes its first byte DELAY_S after the request arrives: no client can
    # see it sooner (an order, not a timed bound)
    assert all(f.ttft_ms >= DELAY_S * 1000 for f in figures)
    assert all(f.output_tokens == 8 and f.tokens_source == "server" for f in figures)
    assert all(f.e2e_ms >= f.ttft_ms for f in figures)


def test_a_rate_level_sends_at_its_seeded_arrivals() -> None:
    times = arrivals(50.0, "poisson", 7, 6, None)
    assert times == arrivals(50.0, "poisson", 7, 6, None) != arrivals(50.0, "poisson", 8, 6,
                                                                       None)
    assert arrivals(4.0, "constant", 0, None, 1.0) == [0.0, 0.25, 0.5, 0.75]
    with paced(DELAY_S, tokens=4) as url:
        run = run_level(workload(url), Level(rate=50.0, arrivals="poisson", requests=6,
                                             seed=7))
    assert len(run.records) == 6 and all(r.ok for r in run.records) and len(run.lag_ms) == 6


def test_a_duration_bound_starts_no_request_after_it() -> None:
    with paced(DELAY_S, tokens=4) as url:
        run = run_level(workload(url), Level(concurrency=2, duration_s=0.2))
    # each worker's requests take at least DELAY_S: a worker starts at most one past the
    # bound's last start, so the count is bounded by the bound's length over the delay
    assert 2 <= len(run.records) <= 2 * (int(0.2 / DELAY_S) + 1)


def test_a_dead_server_is_a_level_of_counted_errors() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    run = run_level(workload(url), Level(concurrency=3, requests=6, warmup=1))
    assert len(run.records) == 6 and not any(r.ok for r in run.records)
    assert {r.error_kind for r in run.records} == {"connect"}


def test_figures_agree_with_the_stand_ins_truth() -> None:
    """Against the stand-in's own record of each request (GET /truth, keyed by the model
    each request names): tokens exact, and each request's mean ITL as the client saw it
    against the span the stand-in really wrote over. The tolerance is a ratio (0.5–2), so
    a busy machine cannot fail it; a client that dropped, doubled or mis-spread tokens
    would (bench/load_fidelity.py measures the milliseconds)."""
    import json
    from urllib.request import urlopen

    from bench.load_fidelity import Named

    tokens = 20
    with paced(DELAY_S, tokens=tokens, rate=200.0, per_event=1, per_write=1) as url:
        work = Named(Endpoint.of(url), "req", ("hi",), tokens, timeout_s=60.0)
        run = run_level(work, Level(concurrency=8, requests=16))
        with urlopen(url.removesuffix("/v1") + "/truth", timeout=30) as answer:
            truth = json.loads(answer.read())
    assert all(r.ok for r in run.records)
    ratios = []
    for index, record in enumerate(run.records):
        figures = measured(record)
        assert figures.output_tokens == tokens and figures.tokens_source == "server"
        known = truth[f"req-{index}"]
        true_mean = (known["last_write"] - known["first_write"]) * 1000 / (tokens - 1)
        seen = (record.chunks[-1] - record.chunks[0]) * 1000 / (tokens - 1)
        assert abs(sum(figures.itl_ms) - (record.chunks[-1] - record.chunks[0]) * 1000) \
            < 1e-6 * tokens  # spreading moves latency between tokens, never adds any
        ratios.append(seen / true_mean)
    ratios.sort()
    assert 0.5 < ratios[len(ratios) // 2] < 2.0


def test_a_ctrl_c_while_the_loop_is_built_leaves_no_half_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that landed while asyncio built a level's loop left half a loop, whose
    finalizer printed "Exception ignored … no attribute '_ssock'" with a traceback on the
    terminal (seen in a real `benchrig run --suite load` interrupted between levels). The
    loop is built with SIGINT held; the interrupt is raised once it is whole, and closed."""
    import gc
    import os
    import signal
    import sys
    from asyncio import selector_events

    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    real = selector_events.BaseSelectorEventLoop._make_self_pipe

    def interrupted(self: selector_events.BaseSelectorEventLoop) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, while the loop is half made
        real(self)  # type: ignore[arg-type]

    monkeypatch.setattr(selector_events.BaseSelectorEventLoop, "_make_self_pipe", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_level(workload(f"http://127.0.0.1:{free_port()}/v1"),
                      Level(concurrency=1, requests=1))
        gc.collect()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert unraisable == []


def test_a_ctrl_c_as_the_level_starts_is_an_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that landed just after asyncio.Runner.run set its SIGINT handler cancelled the
    level's task, and Runner then reset its interrupt count: the cancel escaped as a
    CancelledError traceback from `_level` (seen under xdist in
    tests/load/test_cli.py::test_ctrl_c_keeps_every_finished_level). The user's Ctrl-C is
    delivered here the instant a SIGINT handler is set; it must be a KeyboardInterrupt, and
    the level, whose task is made after it, is cancelled before it runs: a level left to run
    on would load the server after the user stopped the sweep."""
    import signal

    from benchrig.load import engine

    began: list[Level] = []

    async def recorded(work: Workload, level: Level) -> engine.LevelRun:
        began.append(level)  # reached only by a task that was not cancelled first
        return engine.LevelRun(level, [], [], 0.0, [], 0)

    monkeypatch.setattr(engine, "_level", recorded)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    real = signal.signal
    fired: list[int] = []

    def installing(number: int, handler: Any) -> Any:
        was = real(number, handler)
        if number == signal.SIGINT and callable(handler) and not fired:
            fired.append(number)
            signal.raise_signal(signal.SIGINT)  # the Ctrl-C, right after the handler is set
        return was

    try:
        with event_loop() as loop:
            monkeypatch.setattr(signal, "signal", installing)
            with pytest.raises(KeyboardInterrupt):
                run_level(workload(f"http://127.0.0.1:{free_port()}/v1"),
                          Level(concurrency=1, requests=1), loop)
            monkeypatch.setattr(signal, "signal", real)
    finally:
        real(signal.SIGINT, previous)
    assert fired and began == []


def test_a_ctrl_c_the_level_swallows_is_still_an_interrupt(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A level whose coroutine swallows its cancel (as a wait_for racing its inner future can)
    returned normally, and the sweep went on past the user's Ctrl-C. The interrupt is a flag
    read when the level's loop returns, however the level ended."""
    import asyncio
    import contextlib
    import signal

    from benchrig.load import engine

    async def stubborn(work: Workload, level: Level) -> engine.LevelRun:
        asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGINT)
        with contextlib.suppress(asyncio.CancelledError):  # swallowed
            await asyncio.sleep(3600)
        return engine.LevelRun(level, [], [], 0.0, [], 0)

    monkeypatch.setattr(engine, "_level", stubborn)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_level(workload(f"http://127.0.0.1:{free_port()}/v1"),
                      Level(concurrency=1, requests=1))
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_whose_cleanup_fails_is_still_an_interrupt(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A level whose cleanup raised on its cancel (here a RuntimeError) let that error escape
    in place of the user's Ctrl-C: however the level took the cancel, it is an interrupt,
    with the level's error kept as its cause."""
    import asyncio
    import signal

    from benchrig.load import engine

    async def messy(work: Workload, level: Level) -> engine.LevelRun:
        asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGINT)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise RuntimeError("the level's cleanup failed") from None
        return engine.LevelRun(level, [], [], 0.0, [], 0)

    monkeypatch.setattr(engine, "_level", messy)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt) as stopped:
            run_level(workload(f"http://127.0.0.1:{free_port()}/v1"),
                      Level(concurrency=1, requests=1))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert isinstance(stopped.value.__cause__, RuntimeError)


def test_a_ctrl_c_before_the_handler_is_set_leaves_no_task_behind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C after the level's task was made but before a SIGINT handler of the level's was
    set (asyncio.Runner.run looks the handler up in between) left the task to the loop's
    shutdown with its coroutine closed under it: "unhandled exception during asyncio.run()
    shutdown … cannot reuse already awaited coroutine", a traceback after "interrupted" (seen
    in test_ctrl_c_keeps_every_finished_level). The Ctrl-C here lands as the handler is
    looked up; nothing may be left for the shutdown to report."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    real = signal.getsignal
    fired: list[int] = []

    def looking(number: int) -> Any:
        if number == signal.SIGINT and not fired:
            fired.append(number)
            signal.raise_signal(signal.SIGINT)  # the Ctrl-C, as the handler is looked up
        return real(number)

    problems: list[dict[str, Any]] = []
    try:
        with pytest.raises(KeyboardInterrupt), event_loop() as loop:
            loop.get_loop().set_exception_handler(lambda _, context: problems.append(context))
            monkeypatch.setattr(signal, "getsignal", looking)
            run_level(workload(f"http://127.0.0.1:{free_port()}/v1"),
                      Level(concurrency=1, requests=1), loop)
    finally:
        monkeypatch.setattr(signal, "getsignal", real)
        signal.signal(signal.SIGINT, previous)
    assert fired and problems == []


def test_a_second_ctrl_c_stops_a_level_that_swallowed_the_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A level that ignores its cancel is not waited for past a second Ctrl-C, and its task is
    then ended by the loop's shutdown with nothing to report."""
    import asyncio
    import signal

    from benchrig.load import engine

    async def deaf(work: Workload, level: Level) -> engine.LevelRun:
        loop = asyncio.get_running_loop()
        loop.call_soon(signal.raise_signal, signal.SIGINT)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            loop.call_soon(signal.raise_signal, signal.SIGINT)  # the user presses it again
            await asyncio.sleep(3600)
        return engine.LevelRun(level, [], [], 0.0, [], 0)

    monkeypatch.setattr(engine, "_level", deaf)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    problems: list[dict[str, Any]] = []
    try:
        with pytest.raises(KeyboardInterrupt), event_loop() as loop:
            loop.get_loop().set_exception_handler(lambda _, context: problems.append(context))
            run_level(workload(f"http://127.0.0.1:{free_port()}/v1"),
                      Level(concurrency=1, requests=1), loop)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert problems == []


def _sweep_under(stop: Any, url: str, levels: list[Level], results: Any,
                 recorded: Any = None) -> tuple[Any, list[Any]]:
    """A three-level sweep in a thread of its own under `stop`, as an executor runs an
    attempt; the thread and what the sweep returned."""
    import threading

    from benchrig.core.deadline import stop_scope
    from benchrig.load.sweep import Target, run_sweep
    from benchrig.load.sweep_plan import prompts
    from benchrig.orchestrate.runner import Overrides, settings_for
    from benchrig.spec import load_tasks, task_paths

    task = load_tasks(task_paths(["load-chat-short"]))[0]
    settings = settings_for(task, Overrides(max_tokens=4), model="m")
    returned: list[Any] = []

    def sweep() -> None:
        with stop_scope(stop):
            returned.extend(run_sweep(task, Target("m", "openai", "openai", url, url),
                                      settings, levels, prompts(task, 0), {}, results,
                                      recorded=recorded))

    thread = threading.Thread(target=sweep, daemon=True)
    thread.start()
    return thread, returned


def test_a_sweep_runs_no_level_after_its_runs_stop(tmp_path: Any) -> None:
    # A run's stop reached the matrix runner, never a sweep: it ran every level to its end.
    from benchrig.core.deadline import Stop

    stop = Stop()
    with paced(DELAY_S, tokens=4) as url:
        levels = [Level(concurrency=1, requests=2), Level(concurrency=1, requests=40),
                  Level(concurrency=1, requests=40)]
        thread, returned = _sweep_under(stop, url, levels, tmp_path,
                                        lambda _: stop.set("the run was stopped"))
        thread.join(120)  # a bound on a hang, not a timing
    assert not thread.is_alive()
    assert [a.result["evidence"]["load"]["index"] for a in returned] == [0]
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_a_sweep_stops_within_a_level_and_records_no_part_of_it(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from benchrig.core.deadline import Stop
    from benchrig.load import engine

    stop = Stop()
    sent: list[int] = []
    second_level = threading.Event()
    real = engine.stream_chat

    async def counted(*args: Any) -> Any:
        sent.append(1)
        if len(sent) > 2:  # the second level is under way
            second_level.set()
        return await real(*args)

    monkeypatch.setattr(engine, "stream_chat", counted)
    with paced(DELAY_S, tokens=4) as url:
        # 30 s a level, at most: no request starts after it
        levels = [Level(concurrency=1, requests=2), Level(concurrency=2, duration_s=30.0),
                  Level(concurrency=2, duration_s=30.0)]
        thread, returned = _sweep_under(stop, url, levels, tmp_path)
        assert second_level.wait(120)
        stop.set("the run was stopped")
        thread.join(120)  # a bound on a hang, not a timing
    assert not thread.is_alive()
    assert [a.result["evidence"]["load"]["index"] for a in returned] == [0]
    assert len(list(tmp_path.glob("*.json"))) == 1
    # 30 s of two streams at DELAY_S a request is over a thousand requests
    assert len(sent) < 200
