"""Every failure raises fstitch.Error with the right status, where the mistake is."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import fstitch
from fstitch import Status


def raises(status, call, *fragments):
    """Runs `call`, expecting an Error of `status` whose message holds every fragment."""
    with pytest.raises(fstitch.Error) as caught:
        call()
    error = caught.value
    assert error.status is status, str(error)
    for fragment in fragments:
        assert fragment in error.message, (fragment, error.message)
    assert str(error) == f"{status.c_name}: {error.message}"
    return error


# -- the exception itself -------------------------------------------------------------------------


def test_error_shape():
    error = fstitch.Error(Status.SHAPE, "fst_binary: shapes do not broadcast")
    assert isinstance(error, Exception)
    assert str(error) == "FST_ERROR_SHAPE: fst_binary: shapes do not broadcast"
    assert error.status is Status.SHAPE and error.message == "fst_binary: shapes do not broadcast"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.status, copy.message) == (error.status, error.message)
    assert fstitch.Error(99, "x").status is Status.INTERNAL


# -- builders -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda g: g.input("x", "f33", 3),
        lambda g: g.input("x", None, 3),
        lambda g: g.constant(1.0, "float"),
        lambda g: g.iota("int", 3),
        lambda g: g.input("x", "f32", 3).cast("x"),
        lambda g: g.input("x", "f32", 3).astype(np.complex64),
    ],
)
def test_bad_dtype_names_leave_the_graph_usable(graph, build):
    raises(Status.INVALID_ARGUMENT, lambda: build(graph), "expected one of f32, f16, bf16")
    y = graph.input("y", "f32", 2)
    graph.output("out", y + 1)
    graph.verify()


def test_shape_mismatch_raises_at_the_call_and_sticks(graph):
    x = graph.input("x", "f32", (8, 16))
    w = graph.input("w", "f32", 3)
    raises(Status.SHAPE, lambda: x + w, "fst_binary", "[8,16]", "[3]")
    # The library keeps the graph in its first error: later calls report it.
    raises(Status.SHAPE, lambda: x * 2, "fst_binary", "[8,16]")
    raises(Status.SHAPE, lambda: graph.output("y", x), "[8,16]")
    raises(Status.SHAPE, graph.text)
    raises(Status.SHAPE, graph.fuse)
    raises(Status.SHAPE, graph.verify)


@pytest.mark.parametrize(
    "build, status, fragment",
    [
        (lambda x: x.sum(axis=2), Status.SHAPE, "fst_reduce"),
        (lambda x: x.sum(axis=(1, 1)), Status.SHAPE, "fst_reduce"),
        (lambda x: x.reshape(5, 5), Status.SHAPE, "fst_reshape"),
        (lambda x: x.reshape(-1, -1), Status.SHAPE, "fst_reshape"),
        (lambda x: x.permute(0, 0), Status.SHAPE, "fst_permute"),
        (lambda x: x.permute(0, 1, 2), Status.SHAPE, "fst_permute"),
        (lambda x: x.broadcast_to(3, 3), Status.SHAPE, "fst_broadcast"),
        (lambda x: x.broadcast_to(4), Status.SHAPE, "fst_broadcast"),
        (lambda x: x + x.graph.input("i", "i32", (2, 4)), Status.DTYPE, "fst_binary"),
        (lambda x: x.cast("i32").exp(), Status.DTYPE, "fst_unary"),
        (lambda x: x.cast("bool").sum(), Status.DTYPE, "fst_reduce"),
        (lambda x: fstitch.where(x, x, x), Status.DTYPE, "fst_select"),
        (lambda x: x.graph.input("x", "f32", 2), Status.INVALID_ARGUMENT, "fst_input"),
        (lambda x: x.graph.input("", "f32", 2), Status.INVALID_ARGUMENT, "fst_input"),
        (lambda x: x.graph.input("z", "f32", (2, -1)), Status.SHAPE, "fst_input"),
        (lambda x: x.graph.input("z", "f32", (2, 0)), Status.UNSUPPORTED, "empty tensors"),
        (lambda x: x.graph.input("z", "f32", (1,) * 9), Status.SHAPE, "fst_input"),
        (lambda x: x.graph.iota("bool", (2, 2)), Status.DTYPE, "fst_iota"),
        (lambda x: x.graph.iota("i32", (2, 2), axis=2), Status.SHAPE, "fst_iota"),
        (
            lambda x: x.graph.opaque("mat mul", [x], "f32", (2,)),
            Status.INVALID_ARGUMENT,
            "fst_opaque",
        ),
        (
            lambda x: (x.graph.output("y", x), x.graph.output("y", x)),
            Status.INVALID_ARGUMENT,
            "fst_output",
        ),
    ],
)
def test_library_builder_errors(graph, build, status, fragment):
    x = graph.input("x", "f32", (2, 4))
    raises(status, lambda: build(x), fragment)
    assert graph.text  # the graph object survives; it is in the error state
    raises(status, graph.verify)


@pytest.mark.parametrize(
    "build, fragment",
    [
        (lambda g, x: g.input(3, "f32", 2), "name"),
        (lambda g, x: g.input("a\0b", "f32", 2), "NUL"),
        (lambda g, x: g.input("z", "f32", (2, "3")), "shape[1]"),
        (lambda g, x: g.input("z", "f32", 2.0), "shape"),
        (lambda g, x: x.sum(axis="0"), "axis"),
        (lambda g, x: x.sum(axis=1.0), "axis"),
        (lambda g, x: x.reshape(2, None), "shape"),
        (lambda g, x: g.iota("i32", 3, axis=True), "axis"),
        (lambda g, x: g.output("y", 3), "value"),
        (lambda g, x: g.where(x > 0, 1.0, 2.0), "a or b must be a Value"),
        (lambda g, x: g.where(1, x, x), "cond"),
        (lambda g, x: g.opaque("m", [x, "y"], "f32", 2), "inputs[1]"),
        (lambda g, x: fstitch.exp(np.ones(3)), "x is ndarray"),
        (lambda g, x: fstitch.maximum(1, 2), "no operand is an fstitch Value"),
        (lambda g, x: g.constant("1", "f32"), "not a real number"),
        (lambda g, x: g.constant(1.5, "i32"), "not an integer"),
        (lambda g, x: g.input("z", "f32", 2**70), "shape 1180591620717411303424 is outside"),
        (lambda g, x: g.input("z", "f32", (2, 2**70)), "shape[1] 1180591620717411303424 is"),
        (lambda g, x: x.sum(axis=2**64), "axis 18446744073709551616 is outside"),
        (lambda g, x: g.iota("i32", 3, axis=-(2**63) - 1), "axis -9223372036854775809 is outside"),
    ],
)
def test_python_side_argument_errors_leave_the_graph_usable(graph, build, fragment):
    x = graph.input("x", "f32", (2, 4))
    error = raises(
        Status.DTYPE if "not an integer" in fragment else Status.INVALID_ARGUMENT,
        lambda: build(graph, x),
        fragment,
    )
    assert ": " in error.message  # names the call: "Graph.input: ...", "sum: ...", ...
    graph.output("y", x * 2)
    graph.verify()


def test_values_of_another_graph_are_refused(ctx, graph):
    other = ctx.graph()
    x = graph.input("x", "f32", 2)
    y = other.input("y", "f32", 2)
    raises(Status.INVALID_ARGUMENT, lambda: x + y, "add: b belongs to another graph")
    raises(Status.INVALID_ARGUMENT, lambda: graph.output("y", y), "belongs to another graph")
    raises(Status.INVALID_ARGUMENT, lambda: graph.where(x > 0, y, x), "belongs to another graph")
    graph.output("x2", x * 2)
    graph.verify()
    other.close()


# -- parsing --------------------------------------------------------------------------------------


def test_parse_errors(ctx):
    raises(
        Status.PARSE,
        lambda: fstitch.Graph.parse(ctx, 'fstitch.graph 1\n%0 = input "x" : f32[2\n'),
        "line 2, column",
    )
    raises(
        Status.SHAPE,
        lambda: fstitch.Graph.parse(
            ctx,
            'fstitch.graph 1\n%0 = input "x" : f32[2]\n%1 = input "y" : f32[3]\n'
            "%2 = add %0, %1 : f32[2]\n",
        ),
        "line 4",
    )
    raises(Status.INVALID_ARGUMENT, lambda: fstitch.Graph.parse(ctx, b"bytes"), "text is bytes")
    raises(Status.INVALID_ARGUMENT, lambda: fstitch.Graph.parse("ctx", ""), "context is str")


# -- context and fusion options -------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, status, fragment",
    [
        ({"backend": "gpu"}, Status.INVALID_ARGUMENT, "backend 'gpu'"),
        ({"backend": 3}, Status.INVALID_ARGUMENT, "backend 3"),
        ({"log_level": "loud"}, Status.INVALID_ARGUMENT, "log_level 'loud'"),
        ({"log_level": 9}, Status.INVALID_ARGUMENT, "log_level 9"),
        ({"device": -1}, Status.INVALID_ARGUMENT, "device ordinal -1"),
        ({"device": "0"}, Status.INVALID_ARGUMENT, "device '0'"),
        ({"device": 2**31}, Status.INVALID_ARGUMENT, "device 2147483648 is outside"),
        ({"cache_dir": ""}, Status.INVALID_ARGUMENT, "empty"),
        ({"cache_dir": 3}, Status.INVALID_ARGUMENT, "cache_dir 3 is not a path"),
        ({"log": "print"}, Status.INVALID_ARGUMENT, "log is not callable"),
    ],
)
def test_context_argument_errors(kwargs, status, fragment):
    raises(status, lambda: fstitch.Context(**kwargs), fragment)


def test_cuda_without_a_driver(monkeypatch):
    monkeypatch.setenv("FSTITCH_CUDA_DRIVER", "/nonexistent/libcuda.so.1")
    raises(
        Status.NO_DRIVER,
        lambda: fstitch.Context(backend="cuda"),
        "fst_context_create",
        "/nonexistent/libcuda.so.1",
    )
    with fstitch.Context(backend="auto", cache_dir="off") as auto:
        assert auto.active_backend is fstitch.Backend.HOST


@pytest.mark.parametrize(
    "kwargs, status, fragment",
    [
        ({"policy": "fast"}, Status.INVALID_ARGUMENT, "policy 'fast'"),
        ({"policy": None}, Status.INVALID_ARGUMENT, "policy None"),
        ({"target": 70}, Status.UNSUPPORTED, "sm_70"),
        ({"target": "90"}, Status.INVALID_ARGUMENT, "target '90'"),
        ({"shared_memory": 10}, Status.INVALID_ARGUMENT, "shared memory budget 10"),
        ({"shared_memory": -1}, Status.INVALID_ARGUMENT, "shared_memory -1 is outside 0 .."),
        ({"target": 2**40}, Status.INVALID_ARGUMENT, "target 1099511627776 is outside"),
        ({"registers": 300}, Status.INVALID_ARGUMENT, "register cap 300"),
    ],
)
def test_fuse_option_errors(graph, kwargs, status, fragment):
    x = graph.input("x", "f32", 4)
    graph.output("y", x.exp())
    raises(status, lambda: graph.fuse(**kwargs), fragment)


def test_fusing_a_graph_without_outputs(graph):
    graph.input("x", "f32", 4)
    raises(Status.INVALID_ARGUMENT, graph.fuse, "no outputs")
    raises(
        Status.INVALID_ARGUMENT, lambda: graph.evaluate(x=np.zeros(4, np.float32)), "no outputs"
    )


# -- runs -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scaled(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", (2, 3))
    w = g.input("w", "f32", 3)
    g.output("y", x * w)
    fusion = g.fuse()
    return g, fusion


GOOD_X = np.ones((2, 3), np.float32)
GOOD_W = np.ones(3, np.float32)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (
            lambda run: run(x=GOOD_X, w=np.ones(4, np.float32)),
            "input 'w' has shape (4,); the graph declares (3,)",
        ),
        (
            lambda run: run(x=GOOD_X.astype(np.float64), w=GOOD_W),
            "input 'x' has dtype float64; the graph declares f32",
        ),
        (lambda run: run(x=GOOD_X, w=[1, 2, 3]), "input 'w' has dtype int64"),
        (
            lambda run: run(x=GOOD_X, w=GOOD_W, z=GOOD_W),
            "unknown input 'z'; the graph's inputs are 'x', 'w'",
        ),
        (lambda run: run(x=GOOD_X), "missing input(s) 'w'"),
        (lambda run: run([GOOD_X]), "1 input(s) given; the graph has 2 ('x', 'w')"),
        (lambda run: run(GOOD_X, w=GOOD_W), "either by position or by name"),
        (lambda run: run(x=GOOD_X, w=object()), "input 'w'"),
    ],
)
def test_run_and_evaluate_argument_errors(scaled, call, fragment):
    graph, fusion = scaled
    raises(Status.INVALID_ARGUMENT, lambda: call(fusion.run), fragment)
    raises(Status.INVALID_ARGUMENT, lambda: call(graph.evaluate), fragment)


@pytest.mark.parametrize(
    "outputs, fragment",
    [
        ({"y": np.zeros((3, 2), np.float32)}, "output 'y' has shape (3, 2)"),
        ({"y": np.zeros((2, 3), np.float64)}, "output 'y' has dtype float64"),
        ({"y": np.zeros((3, 2), np.float32).T}, "output 'y' is not C-contiguous"),
        ({"y": np.zeros((2, 3), np.float32)[None][0].view()}, None),
        ({"z": np.zeros((2, 3), np.float32)}, "unknown output 'z'"),
        ([], "0 output(s) given"),
        ({"y": [[0.0] * 3] * 2}, "expected a numpy array to write"),
        ("y", "outputs is str"),
    ],
)
def test_run_output_errors(scaled, outputs, fragment):
    _, fusion = scaled
    if fragment is None:  # a valid view is written in place
        result = fusion.run(x=GOOD_X, w=GOOD_W, outputs=outputs)
        assert result["y"] is outputs["y"] and (outputs["y"] == 1).all()
        return
    raises(
        Status.INVALID_ARGUMENT, lambda: fusion.run(x=GOOD_X, w=GOOD_W, outputs=outputs), fragment
    )


def test_read_only_outputs_are_refused(scaled):
    _, fusion = scaled
    output = np.zeros((2, 3), np.float32)
    output.flags.writeable = False
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=GOOD_X, w=GOOD_W, outputs=[output]),
        "read-only",
    )


def test_workspace_and_stream_errors(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", 64)
    g.output("y", x.exp().sum())
    fusion = g.fuse(policy="none")
    assert fusion.workspace_size > 0
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=np.ones(64, np.float32), workspace=np.zeros(1, np.uint8)),
        f"the fusion needs {fusion.workspace_size}",
    )
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=np.ones(64, np.float32), workspace=-5),
        "workspace address -5 is outside 0 ..",
    )
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=np.ones(64, np.float32), workspace="big"),
        "workspace is str",
    )
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=np.ones(64, np.float32), stream="s"),
        "not a CUDA stream",
    )
    raises(
        Status.INVALID_ARGUMENT, lambda: fusion.run(x=np.ones(64, np.float32), stream=True), "bool"
    )
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=np.ones(64, np.float32), stream=2**64),
        "stream handle 18446744073709551616 is outside",
    )


class FakeDeviceArray:
    """A CUDA array by the CUDA Array Interface, which a host context must refuse."""

    def __init__(self, shape, typestr="<f4"):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (0x1000, False),
            "version": 3,
            "strides": None,
            "stream": None,
        }


def test_device_arrays_on_a_host_context(scaled):
    graph, fusion = scaled
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=FakeDeviceArray((2, 3)), w=GOOD_W),
        "input 'x' is a CUDA array",
        "host backend",
    )
    raises(
        Status.INVALID_ARGUMENT,
        lambda: graph.evaluate(x=GOOD_X, w=FakeDeviceArray((3,))),
        "input 'w' is a CUDA array",
        "reference evaluator",
    )
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=GOOD_X, w=GOOD_W, outputs=[FakeDeviceArray((2, 3))]),
        "output 'y' is a CUDA array",
    )


def test_opaque_plans_do_not_run(ctx):
    g = ctx.graph()
    a = g.input("a", "f32", (2, 3))
    g.output("y", g.opaque("matmul", [a, a.T], "f32", (2, 2)).exp())
    fusion = g.fuse()
    raises(
        Status.UNSUPPORTED,
        lambda: fusion.run(a=np.zeros((2, 3), np.float32)),
        'opaque operation "matmul"',
    )


# -- closed objects -------------------------------------------------------------------------------


def test_closed_graph(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", 3)
    g.close()
    g.close()  # twice is fine
    assert g.closed
    raises(Status.INVALID_ARGUMENT, lambda: g.input("y", "f32", 3), "Graph.input: graph is closed")
    raises(Status.INVALID_ARGUMENT, lambda: x + 1, "graph is closed")
    raises(Status.INVALID_ARGUMENT, lambda: x.exp(), "graph is closed")
    raises(Status.INVALID_ARGUMENT, lambda: x.shape, "graph is closed")
    raises(Status.INVALID_ARGUMENT, g.text, "graph is closed")
    raises(Status.INVALID_ARGUMENT, g.fuse, "graph is closed")
    assert "closed" in repr(g) and "closed" in repr(x)


def test_closed_fusion(ctx):
    g = ctx.graph()
    x = g.input("x", "f32", 3)
    g.output("y", x + 1)
    fusion = g.fuse()
    kernel = fusion.kernels[0]
    fusion.close()
    raises(
        Status.INVALID_ARGUMENT,
        lambda: fusion.run(x=np.ones(3, np.float32)),
        "Fusion.run: fusion is closed",
    )
    raises(Status.INVALID_ARGUMENT, lambda: fusion.kernels, "fusion is closed")
    raises(Status.INVALID_ARGUMENT, lambda: fusion.plan, "fusion is closed")
    raises(Status.INVALID_ARGUMENT, lambda: kernel.source, "fusion is closed")
    assert "closed" in repr(fusion) and "closed" in repr(kernel)


def test_closed_context(cache_dir):
    context = fstitch.Context(backend="host", cache_dir=cache_dir)
    context.close()
    raises(Status.INVALID_ARGUMENT, context.graph, "context is closed")
    raises(Status.INVALID_ARGUMENT, lambda: context.active_backend, "context is closed")
    raises(Status.INVALID_ARGUMENT, lambda: context.log("warn", "x"), "context is closed")
    raises(Status.INVALID_ARGUMENT, lambda: fstitch.Graph(object()), "context is object")


# -- user text in messages --------------------------------------------------------------------------


def test_huge_and_hostile_names_give_short_messages(ctx):
    huge = "n" * (1 << 20)
    graph = fstitch.Graph(ctx)
    error = raises(Status.INVALID_ARGUMENT, lambda: graph.input(huge + "\0", "f32", (2,)), "NUL")
    assert len(error.message) < 400, len(error.message)
    error = raises(Status.INVALID_ARGUMENT, lambda: graph.input("bad\nname" + huge, "f32", (2,)))
    assert "\n" not in error.message and len(error.message) < 400, error.message[:500]
    graph = fstitch.Graph(ctx)
    x = graph.input(huge, "f32", (2,))
    graph.output("y", x * 2.0)
    fusion = graph.fuse()
    error = raises(Status.INVALID_ARGUMENT, lambda: fusion.run(**{huge + "x": np.zeros(2, np.float32)}))
    assert len(error.message) < 600, len(error.message)
