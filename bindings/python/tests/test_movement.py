"""Slices (x[...] and Value.slice), concat, pad, take and split: shapes and values against
numpy, through the reference evaluator and a fused host run, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close

import fstitch
from fstitch import Status


def test_getitem_matches_numpy_basic_indexing(graph, rng):
    x = graph.input("x", "f32", (4, 6, 5))
    keys = [
        (slice(1, 3),),
        (Ellipsis, slice(None, 4)),
        (slice(None), slice(-4, None, 2), 3),
        (-1,),
        (slice(None, None, 3), Ellipsis, slice(100)),
        (2, Ellipsis, -2),
    ]
    for i, key in enumerate(keys):
        graph.output(f"y{i}", x[key])
    data = rng.standard_normal((4, 6, 5)).astype(np.float32)
    result = graph.evaluate(x=data)
    for i, key in enumerate(keys):
        np.testing.assert_array_equal(result[f"y{i}"], data[key])


def test_concat_pad_take_split_match_numpy(graph, rng):
    x = graph.input("x", "f32", (3, 8))
    idx = graph.input("idx", "i64", (2, 2))
    graph.output("cat", fstitch.concat([x, -x[:, :2]], axis=-1))
    graph.output("cat_rows", graph.concat([x, x], axis=0))
    graph.output("pad", x.pad((1, 0), (0, 2), value=-3.5))
    graph.output("take", x.take(idx, axis=1))
    graph.output("rows", x[idx])
    parts = x.split([2, 6], axis=1)
    thirds = graph.input("t", "i32", (6,)).split(3)
    graph.output("p0", parts[0])
    graph.output("p1", parts[1] * 2.0)
    for k, part in enumerate(thirds):
        graph.output(f"t{k}", part)
    data = rng.standard_normal((3, 8)).astype(np.float32)
    # 8 and -9 are out of range for both axes: they give zeros, as documented.
    indices = np.array([[0, -1], [8, -9]], dtype=np.int64)
    t = np.arange(6, dtype=np.int32)
    result = graph.evaluate(x=data, idx=indices, t=t)
    np.testing.assert_array_equal(result["cat"], np.concatenate([data, -data[:, :2]], axis=1))
    np.testing.assert_array_equal(result["cat_rows"], np.concatenate([data, data]))
    np.testing.assert_array_equal(
        result["pad"], np.pad(data, ((1, 0), (0, 2)), constant_values=np.float32(-3.5))
    )
    expected_take = np.zeros((3, 2, 2), dtype=np.float32)
    expected_take[:, 0, 0] = data[:, 0]
    expected_take[:, 0, 1] = data[:, -1]
    np.testing.assert_array_equal(result["take"], expected_take)
    expected_rows = np.zeros((2, 2, 8), dtype=np.float32)
    expected_rows[0, 0] = data[0]
    expected_rows[0, 1] = data[-1]
    np.testing.assert_array_equal(result["rows"], expected_rows)
    np.testing.assert_array_equal(result["p0"], data[:, :2])
    np.testing.assert_array_equal(result["p1"], data[:, 2:] * 2)
    for k in range(3):
        np.testing.assert_array_equal(result[f"t{k}"], t[2 * k : 2 * k + 2])


def test_rotate_half_fuses_into_one_kernel_and_matches(graph, rng):
    x = graph.input("x", "f32", (16, 64))
    cos = graph.input("cos", "f32", (16, 64))
    sin = graph.input("sin", "f32", (16, 64))
    rotated = fstitch.concat([-x[..., 32:], x[..., :32]], axis=-1)
    graph.output("y", x * cos + rotated * sin)
    fusion = graph.fuse()
    assert len(fusion.kernels) == 1
    data = {name: rng.standard_normal((16, 64)).astype(np.float32) for name in ("x", "cos", "sin")}
    expected = (
        data["x"] * data["cos"]
        + np.concatenate([-data["x"][:, 32:], data["x"][:, :32]], axis=1) * data["sin"]
    )
    assert_close(fusion.run(**data)["y"], expected)


def test_movement_errors_name_the_operation(graph):
    x = graph.input("x", "f32", (4, 6))
    cases = [
        (lambda: x[::-1], Status.SHAPE, "positive steps"),
        (lambda: x[4], Status.SHAPE, "out of range"),
        (lambda: x[1, 2, 3], Status.SHAPE, "3 indices"),
        (lambda: x[..., ...], Status.INVALID_ARGUMENT, "one Ellipsis"),
        (lambda: x[None], Status.INVALID_ARGUMENT, "not supported"),
        (lambda: x.split(4, axis=1), Status.SHAPE, "equal parts"),
        (lambda: x.pad((0, 0), (0,)), Status.SHAPE, "high pads"),
        (lambda: fstitch.concat([]), Status.INVALID_ARGUMENT, "at least one"),
        (lambda: x.slice((0, 0), (4, 6), (1, 2, 3)), Status.SHAPE, "one per axis"),
    ]
    for build, status, detail in cases:
        with pytest.raises(fstitch.Error) as info:
            build()
        assert info.value.status == status, info.value
        assert detail in str(info.value)
    assert graph.value_count == 1  # Python-side checks added nothing


def test_library_errors_are_sticky_on_the_graph(ctx):
    for build, status, detail in [
        (lambda g, x: x.pad((0, -1), (0, 0)), Status.SHAPE, "must not be negative"),
        (lambda g, x: x.take(x), Status.DTYPE, "i32 or i64"),
        (lambda g, x: x.split([1, 2], axis=0), Status.SHAPE, "add up to 3"),
        (lambda g, x: x[2:2], Status.SHAPE, "empty"),
        (lambda g, x: g.concat([x, x.cast("f64")]), Status.DTYPE, "insert a cast"),
    ]:
        g = ctx.graph()
        x = g.input("x", "f32", (4, 6))
        with pytest.raises(fstitch.Error) as info:
            build(g, x)
        assert info.value.status == status, info.value
        assert detail in str(info.value)
        with pytest.raises(fstitch.Error):
            g.input("later", "f32", (1,))
        g.close()
