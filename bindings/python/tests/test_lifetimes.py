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
