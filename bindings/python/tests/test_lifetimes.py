"""Ownership of the C handles: close, context managers, garbage collection, keeping alive."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import fstitch


def test_a_value_keeps_its_graph_alive(ctx):
    def make_value():
        g = ctx.graph()
        return g.input("x", "f32", (2, 3))

    x = make_value()
    gc.collect()
    assert not x.graph.closed
    y = (x * 2).sum(axis=1)
    x.graph.output("y", y)
    assert x.graph.evaluate(x=np.ones((2, 3), np.float32))["y"].tolist() == [6.0, 6.0]


def test_graphs_are_released_with_their_last_reference(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", 3)
    probe = weakref.ref(g)
    del g
    gc.collect()
    assert probe() is not None  # x still holds it
    del x
    gc.collect()
    assert probe() is None


def test_context_managers_close(cache_dir):
    with fstitch.Context(backend="host", cache_dir=cache_dir) as context:
        with context.graph() as g:
            x = g.input("x", "f32", 4)
            g.output("y", x + 1)
            with g.fuse() as fusion:
                assert fusion.run(x=np.zeros(4, np.float32))["y"].tolist() == [1.0] * 4
            assert fusion.closed
        assert g.closed
    assert context.closed


def test_close_is_idempotent_and_thread_safe(ctx):
    for _ in range(20):
        g = ctx.graph()
        threads = [threading.Thread(target=g.close) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert g.closed
        g.close()


def test_a_graph_outlives_its_closed_context(cache_dir):
    context = fstitch.Context(backend="host", cache_dir=cache_dir)
    g = context.graph()
    context.close()
    x = g.input("x", "f32", 3)
    g.output("y", x.exp())
    fusion = g.fuse()
    assert fusion.run(x=np.zeros(3, np.float32))["y"].tolist() == [1.0] * 3


def test_a_kernel_keeps_its_fusion_alive(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", 3)
    g.output("y", x.exp())
    kernel = g.fuse().kernels[0]
    gc.collect()
    assert kernel.name in kernel.source


def test_many_objects_come_and_go(ctx):
    for i in range(200):
        g = ctx.graph()
        x = g.input("x", "f32", (2, 2))
        g.output("y", x * i)
        if i % 50 == 0:
            g.fuse().close()
    gc.collect()


def test_log_callback(cache_dir):
    received = []
    context = fstitch.Context(
        backend="host",
        cache_dir=cache_dir,
        log_level="info",
        log=lambda level, message: received.append((level, message)),
    )
    assert context.log_level is fstitch.LogLevel.INFO
    assert any(
        level is fstitch.LogLevel.INFO and "backend host" in message for level, message in received
    )
    context.log("warn", "hello from Python")
    context.log(fstitch.LogLevel.ERROR, "second")
    assert any(
        lvl is fstitch.LogLevel.WARN and "hello from Python" in msg for lvl, msg in received
    )
    assert any(lvl is fstitch.LogLevel.ERROR and "second" in msg for lvl, msg in received)
    count = len(received)
    context.log("debug", "filtered out")  # above the context's level
    assert len(received) == count
    with pytest.raises(fstitch.Error) as caught:
        context.log("off", "not a message level")
    assert caught.value.status is fstitch.Status.INVALID_ARGUMENT
    # The graph keeps the C context, which keeps calling the Python callback.
    g = context.graph()
    context.close()
    x = g.input("x", "f32", 3)
    g.output("y", x + 1)
    g.fuse()
    assert any("fused" in message for _, message in received[count:])


def test_a_raising_log_callback_does_not_break_calls(cache_dir):
    def broken(level, message):
        raise RuntimeError("callback failure")

    with fstitch.Context(
        backend="host", cache_dir=cache_dir, log_level="info", log=broken
    ) as context:
        context.log("warn", "still fine")
        assert context.cache_dir == cache_dir


def test_context_queries(ctx, cache_dir):
    assert ctx.backend is fstitch.Backend.HOST and ctx.active_backend == "host"
    assert ctx.device_arch is None and ctx.device == 0
    assert ctx.cache_dir == cache_dir
    with fstitch.Context(backend="host", cache_dir="off") as off:
        assert off.cache_dir == "off"
    assert "backend=host" in repr(ctx)


class _HeldCall:
    """Stands in for the library function `name`: each call signals that it has started and
    waits for release() before calling the real function. Also records when the handle's
    destroy function runs; a destroy while the call is held is recorded and skipped (it
    would free what the call is using)."""

    def __init__(self, monkeypatch, name: str, destroy: str) -> None:
        lib = fstitch._lib.library()
        self.started = threading.Event()
        self._released = threading.Event()
        self.events: list[str] = []
        real_call = getattr(lib, name)
        real_destroy = getattr(lib, destroy)

        def held(*args):
            self.started.set()
            assert self._released.wait(60), "the test never released the call"
            status = real_call(*args)
            self.events.append("returned")
            return status

        def recorded_destroy(pointer):
            if self.started.is_set() and "returned" not in self.events:
                self.events.append("destroyed during the call")
                return
            self.events.append("destroyed")
            real_destroy(pointer)

        monkeypatch.setattr(lib, name, held)
        monkeypatch.setattr(lib, destroy, recorded_destroy)

    def release(self) -> None:
        self._released.set()


def _in_thread(function):
    """Runs `function` on a new thread; returns the thread and a list that gets its result
    or the exception it raised."""
    outcome: list = []

    def body():
        try:
            outcome.append(function())
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome.append(error)

    thread = threading.Thread(target=body)
    thread.start()
    return thread, outcome


def test_fusion_close_during_a_run_waits_for_the_run(ctx, monkeypatch):
    g = ctx.graph()
    x = g.input("x", "f32", 64)
    g.output("y", x * 2 + 1)
    fusion = g.fuse()
    data = np.arange(64, dtype=np.float32)
    fusion.run(x=data)  # compiled before the call is held
    held = _HeldCall(monkeypatch, "fst_fusion_run", "fst_fusion_destroy")
    thread, outcome = _in_thread(lambda: fusion.run(x=data)["y"])
    assert held.started.wait(60)
    fusion.close()  # returns at once; the run still holds the handle
    assert fusion.closed
    with pytest.raises(fstitch.Error, match="fusion is closed"):
        fusion.run(x=data)
    assert held.events == []
    held.release()
    thread.join()
    assert not isinstance(outcome[0], BaseException), outcome[0]
    np.testing.assert_array_equal(outcome[0], data * 2 + 1)
    assert held.events == ["returned", "destroyed"]
    fusion.close()
    assert held.events == ["returned", "destroyed"]


def test_fusion_close_during_a_kernel_launch_waits_for_it(ctx, monkeypatch):
    g = ctx.graph()
    x = g.input("x", "f32", 8)
    g.output("y", x + 1)
    fusion = g.fuse()
    kernel = fusion.kernels[0]
    data = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    kernel.launch([data, out])
    held = _HeldCall(monkeypatch, "fst_kernel_launch", "fst_fusion_destroy")
    thread, outcome = _in_thread(lambda: kernel.launch([data, out]))
    assert held.started.wait(60)
    fusion.close()
    with pytest.raises(fstitch.Error, match="fusion is closed"):
        kernel.launch([data, out])
    held.release()
    thread.join()
    assert outcome == [None]
    assert held.events == ["returned", "destroyed"]


def test_graph_close_during_evaluate_waits_for_it(ctx, monkeypatch):
    g = ctx.graph()
    x = g.input("x", "f32", 4)
    g.output("y", x - 1)
    data = np.ones(4, np.float32)
    held = _HeldCall(monkeypatch, "fst_graph_evaluate_reference", "fst_graph_destroy")
    thread, outcome = _in_thread(lambda: g.evaluate(x=data)["y"])
    assert held.started.wait(60)
    g.close()
    assert g.closed
    with pytest.raises(fstitch.Error, match="graph is closed"):
        g.evaluate(x=data)
    held.release()
    thread.join()
    assert not isinstance(outcome[0], BaseException), outcome[0]
    assert outcome[0].tolist() == [0.0] * 4
    assert held.events == ["returned", "destroyed"]
