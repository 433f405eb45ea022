"""Tensor constants: Graph.constant_tensor from arrays and bytes, its errors, the text round
trip, fused runs on the host backend against numpy, and the fusion's constants for kernels
launched one by one."""

from __future__ import annotations

import numpy as np
import pytest

import fstitch
from fstitch import ParamKind, Status


def raises(status, call, *fragments):
    with pytest.raises(fstitch.Error) as info:
        call()
    assert info.value.status is status, str(info.value)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_arrays_bytes_and_lists_make_constants(graph):
    table = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = graph.constant_tensor(table, "f32")
    assert (c.dtype, c.shape) == (fstitch.DType.F32, (2, 3))
    r = graph.constant_tensor(table.tobytes(), "f32", (3, 2))
    assert r.shape == (3, 2)
    flat = graph.constant_tensor(table, "f32", 6)  # row-major in another shape
    assert flat.shape == (6,)
    ids = graph.constant_tensor([[0, 1], [2, 3]], "i64")
    assert (ids.dtype, ids.shape) == (fstitch.DType.I64, (2, 2))
    bf = graph.constant_tensor([1.0, -2.0], "bf16")  # values rounded to bf16 bit patterns
    assert bf.dtype is fstitch.DType.BF16
    graph.output("c", c)
    assert "tensor [0x00000000, 0x3f800000" in graph.text()


def test_bad_data_is_refused(ctx):
    def fresh():
        return ctx.graph()

    raises(Status.INVALID_ARGUMENT, lambda: fresh().constant_tensor(b"\0" * 12, "f32"), "shape is required")
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fresh().constant_tensor(b"\0" * 10, "f32", 3),
        "bytes is 10, but a f32[3] tensor has 12",
    )
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fresh().constant_tensor(np.zeros(3, dtype=np.float64), "f32"),
        "numpy dtype float64",
    )
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fresh().constant_tensor(np.array([0, 1, 2], dtype=np.uint8).tobytes(), "bool", 3),
        "element 2 is byte 2",
    )
    raises(Status.SHAPE, lambda: fresh().constant_tensor(np.zeros(4, np.float32), "f32", (3,)), "4 element(s)")
    raises(Status.INVALID_ARGUMENT, lambda: fresh().constant_tensor([1, 2], "nope"))


def test_text_round_trip_keeps_every_bit(ctx):
    g = ctx.graph()
    bits = np.array([0x7FC00001, 0x80000000, 0x7F800000], dtype=np.uint32)
    g.output("c", g.constant_tensor(bits.view(np.float32), "f32"))
    again = ctx.parse(g.text())
    assert again.text() == g.text()
    assert "0x7fc00001, 0x80000000, 0x7f800000" in g.text()


def _rotary_like(ctx):
    g = ctx.graph()
    rows, cols = 4, 24
    x = g.input("x", "f32", (rows, cols))
    cos = np.linspace(-1.0, 1.0, cols, dtype=np.float32)
    mask = (np.arange(rows * cols).reshape(rows, cols) % 3 != 0)
    c = g.constant_tensor(cos, "f32")
    m = g.constant_tensor(mask, "bool")
    y = fstitch.where(m, x * c, 0.0)
    g.output("y", y)
    g.output("sum", y.sum(axis=1))
    g.output("table", c)
    return g, cos, mask


@pytest.mark.parametrize("policy", ["stitch", "none"])
def test_fused_runs_match_numpy(ctx, rng, policy):
    g, cos, mask = _rotary_like(ctx)
    x = rng.standard_normal((4, 24), dtype=np.float32)
    result = g.fuse(policy=policy).run(x=x)
    expected = np.where(mask, x * cos, np.float32(0.0))
    np.testing.assert_allclose(result["y"], expected, rtol=1e-6)
    np.testing.assert_allclose(result["sum"], expected.sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(result["table"], cos)


def test_kernels_launched_one_by_one_take_the_fusions_constants(ctx, rng):
    g, cos, mask = _rotary_like(ctx)
    fusion = g.fuse()
    constants = fusion.constants
    assert len(constants) == 2
    assert constants[0] == cos.tobytes()
    assert constants[1] == mask.astype(np.uint8).tobytes()
    x = rng.standard_normal((4, 24), dtype=np.float32)
    outputs = {spec.name: np.full(spec.shape, np.nan, dtype=np.float32) for spec in fusion.output_specs}
    names = fusion.output_names
    seen_constant = False
    for kernel in fusion.kernels:
        args = []
        for param in kernel.params:
            if param.kind is ParamKind.INPUT:
                args.append(x)
            elif param.kind is ParamKind.OUTPUT:
                args.append(outputs[names[param.index]])
            else:
                assert param.kind is ParamKind.CONSTANT
                seen_constant = True
                args.append(None)  # the fusion's own copy, on the host backend
        kernel.launch(args)
    assert seen_constant
    np.testing.assert_allclose(outputs["y"], np.where(mask, x * cos, np.float32(0.0)), rtol=1e-6)
    np.testing.assert_array_equal(outputs["table"], cos)
