"""The aliasing contract of Fusion.run and Kernel.launch on numpy arrays: an output may take
an input's array for an in-place elementwise update; every other overlap (views included)
raises fstitch.Error naming both buffers, and leaves the arrays as they were."""

from __future__ import annotations

import numpy as np
import pytest

import fstitch


def _refused(excinfo, *parts: str) -> None:
    assert excinfo.value.status is fstitch.Status.INVALID_ARGUMENT
    for part in parts:
        assert part in str(excinfo.value)


def test_an_elementwise_update_writes_back_into_its_input(graph, rng):
    x = graph.input("x", "f32", (37, 29))  # not a multiple of the vector width
    a = graph.input("a", "f32", (37, 29))
    graph.output("y", x * a + 1)
    fusion = graph.fuse()
    data = rng.standard_normal((37, 29)).astype(np.float32)
    scale = rng.standard_normal((37, 29)).astype(np.float32)
    expected = graph.evaluate(x=data, a=scale)["y"]
    result = fusion.run(x=data, a=scale, outputs={"y": data})
    assert result["y"] is data
    np.testing.assert_allclose(data, expected, rtol=1e-6)


def test_an_in_place_transpose_is_refused(graph, rng):
    x = graph.input("x", "f32", (8, 8))
    graph.output("y", x.transpose())
    fusion = graph.fuse()
    data = rng.standard_normal((8, 8)).astype(np.float32)
    before = data.copy()
    with pytest.raises(fstitch.Error) as excinfo:
        fusion.run(x=data, outputs=[data])
    _refused(excinfo, 'outputs[0] ("y") overlaps inputs[0] ("x")', "permute")
    np.testing.assert_array_equal(data, before)
    kernel = fusion.kernels[0]
    with pytest.raises(fstitch.Error) as excinfo:
        kernel.launch([data, data])
    _refused(excinfo, 'args[1] (output 0 "y") overlaps args[0] (input 0 "x")')


def test_two_outputs_in_one_array_are_refused(graph):
    x = graph.input("x", "f32", 16)
    graph.output("a", x + 1)
    graph.output("b", x * 2)
    fusion = graph.fuse()
    shared = np.zeros(16, np.float32)
    with pytest.raises(fstitch.Error) as excinfo:
        fusion.run(x=np.ones(16, np.float32), outputs=[shared, shared])
    _refused(excinfo, '("a")', '("b")', "outputs must not share memory")


def test_views_that_overlap_in_part_are_refused(graph):
    x = graph.input("x", "f32", 16)
    graph.output("y", x + 1)
    fusion = graph.fuse()
    storage = np.arange(24, dtype=np.float32)
    before = storage.copy()
    with pytest.raises(fstitch.Error) as excinfo:
        fusion.run(x=storage[:16], outputs=[storage[4:20]])
    _refused(excinfo, 'outputs[0] ("y") overlaps inputs[0] ("x") in part')
    np.testing.assert_array_equal(storage, before)


def test_an_input_read_by_a_later_kernel_cannot_be_overwritten(graph):
    x = graph.input("x", "f32", 64)
    graph.output("first", x + 1)
    graph.output("second", x * 3)
    fusion = graph.fuse(policy="none")
    data = np.linspace(-1, 1, 64, dtype=np.float32)
    with pytest.raises(fstitch.Error) as excinfo:
        fusion.run(x=data, outputs=[data, np.empty(64, np.float32)])
    _refused(excinfo, 'reads input "x" after kernel', 'has written output "first"')
    first = np.empty(64, np.float32)
    original = data.copy()
    fusion.run(x=data, outputs=[first, data])  # the last kernel may update x
    np.testing.assert_allclose(first, original + 1, rtol=1e-6)
    np.testing.assert_allclose(data, original * 3, rtol=1e-6)
