"""Building graphs with the Pythonic API, checked through the reference evaluator against numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_close

import fstitch
from fstitch import DType

_erf = np.vectorize(math.erf)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# numpy float64 forms of every unary op, on inputs inside each op's domain.
UNARY_REFERENCES = {
    "neg": (lambda x: -x, None),
    "abs": (np.abs, None),
    "exp": (np.exp, None),
    "log": (np.log, "positive"),
    "sqrt": (np.sqrt, "positive"),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), "positive"),
    "reciprocal": (lambda x: 1.0 / x, "positive"),
    "tanh": (np.tanh, None),
    "sigmoid": (_sigmoid, None),
    "relu": (lambda x: np.maximum(x, 0.0), None),
    "gelu": (lambda x: x * 0.5 * (1.0 + _erf(x / math.sqrt(2.0))), None),
    "gelu_tanh": (
        lambda x: x * 0.5 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
        None,
    ),
    "silu": (lambda x: x * _sigmoid(x), None),
    "erf": (_erf, None),
    "sin": (np.sin, None),
    "cos": (np.cos, None),
    "floor": (np.floor, None),
    "ceil": (np.ceil, None),
    "round": (np.round, None),  # half to even, as numpy
    "sign": (np.sign, None),
}


def test_every_unary_op_is_checked_here():
    assert set(UNARY_REFERENCES) | {"logical_not"} == set(fstitch.ops.UNARY)


@pytest.mark.parametrize("op", sorted(UNARY_REFERENCES))
def test_unary_methods(graph, rng, op):
    reference, domain = UNARY_REFERENCES[op]
    data = rng.standard_normal((6, 10)).astype(np.float32) * 3
    if domain == "positive":
        data = np.abs(data) + 0.1
    if op == "round":
        data[0, :4] = [0.5, 1.5, 2.5, -0.5]
    x = graph.input("x", "f32", (6, 10))
    graph.output("method", getattr(x, op)())
    graph.output("function", getattr(fstitch, op)(x))
    result = graph.evaluate(x=data)
    expected = reference(data.astype(np.float64))
    assert_close(result["method"], expected)
    assert_close(result["function"], expected)


def test_logical_not_and_invert(graph):
    data = np.array([[0.0, 1.5, -2.0, 0.0]], dtype=np.float32)
    x = graph.input("x", "f32", (1, 4))
    graph.output("not", x.logical_not())
    graph.output("invert", ~(x > 0))
    result = graph.evaluate(x=data)
    assert result["not"].dtype == np.bool_
    assert result["not"].tolist() == [[True, False, False, True]]
    assert result["invert"].tolist() == [[True, False, True, True]]


def test_arithmetic_operators_and_scalars(graph, rng):
    a_data = rng.standard_normal((4, 8)).astype(np.float32)
    b_data = np.abs(rng.standard_normal(8)).astype(np.float32) + 0.5
    a = graph.input("a", "f32", (4, 8))
    b = graph.input("b", "f32", (8,))
    expressions = {
        "add": (a + b, a_data + b_data),
        "sub": (a - b, a_data - b_data),
        "mul": (a * b, a_data * b_data),
        "div": (a / b, a_data / b_data),
        "pow": (b**a, b_data ** a_data.astype(np.float64)),
        "scalar_add": (a + 2, a_data + 2.0),
        "radd": (2.5 + a, 2.5 + a_data),
        "rsub": (1 - a, 1.0 - a_data),
        "rmul": (np.float32(3) * a, 3.0 * a_data),
        "rdiv": (1 / b, 1.0 / b_data),
        "rpow": (2**a, 2.0 ** a_data.astype(np.float64)),
        "square": (b**2, b_data.astype(np.float64) ** 2),
        "neg": (-a, -a_data),
        "pos": (+a, a_data),
        "abs": (abs(a), np.abs(a_data)),
        "maximum": (a.maximum(b), np.maximum(a_data, b_data)),
        "minimum": (fstitch.minimum(a, 0.25), np.minimum(a_data, 0.25)),
        "max_value": (a.max(b), np.maximum(a_data, b_data)),
        "min_value": (b.min(a), np.minimum(a_data, b_data)),
        "power": (fstitch.power(b, 0.5), np.sqrt(b_data.astype(np.float64))),
    }
    for name, (value, _) in expressions.items():
        graph.output(name, value)
    result = graph.evaluate(a=a_data, b=b_data)
    for name, (_, expected) in expressions.items():
        assert result[name].shape == np.shape(expected), name
        assert_close(result[name], np.broadcast_to(expected, result[name].shape))


def test_comparisons_build_bool_values(graph):
    a_data = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    b_data = np.array([[2.0], [1.0]], dtype=np.float32)
    a = graph.input("a", "f32", (1, 3))
    b = graph.input("b", "f32", (2, 1))
    comparisons = {
        "lt": a < b,
        "le": a <= b,
        "gt": a > b,
        "ge": a >= b,
        "eq": a == b,
        "ne": a != b,
        "scalar_eq": a == 2,
        "reflected": 2 < a,
    }
    for name, value in comparisons.items():
        assert isinstance(value, fstitch.Value) and value.dtype is DType.BOOL
        graph.output(name, value)
    result = graph.evaluate(a=a_data, b=b_data)
    expected = {
        "lt": a_data < b_data,
        "le": a_data <= b_data,
        "gt": a_data > b_data,
        "ge": a_data >= b_data,
        "eq": a_data == b_data,
        "ne": a_data != b_data,
        "scalar_eq": a_data == 2,
        "reflected": 2 < a_data,
    }
    for name, value in expected.items():
        assert result[name].tolist() == np.broadcast_to(value, result[name].shape).tolist(), name


def test_logical_operators(graph):
    p_data = np.array([True, True, False, False])
    q_data = np.array([True, False, True, False])
    p = graph.input("p", "bool", 4)
    q = graph.input("q", fstitch.bool_, 4)
    graph.output("and", p & q)
    graph.output("or", p | q)
    graph.output("rand", True & q)
    graph.output("logical_and", fstitch.logical_and(p, q))
    graph.output("logical_or", p.logical_or(q))
    result = graph.evaluate(p=p_data, q=q_data)
    assert result["and"].tolist() == (p_data & q_data).tolist()
    assert result["or"].tolist() == (p_data | q_data).tolist()
    assert result["rand"].tolist() == q_data.tolist()
    assert result["logical_and"].tolist() == (p_data & q_data).tolist()
    assert result["logical_or"].tolist() == (p_data | q_data).tolist()


def test_bitwise_operators_need_bool(graph):
    x = graph.input("x", "f32", 4)
    for build in (lambda: x & x, lambda: x | x, lambda: ~x):
        with pytest.raises(fstitch.Error) as caught:
            build()
        assert caught.value.status is fstitch.Status.DTYPE
    graph.output("still usable", x + 1)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize(
    "axis, keepdims", [(None, False), (1, False), (-1, True), ((0, 2), False), ([0], True)]
)
def test_reductions(graph, rng, op, axis, keepdims):
    data = (rng.standard_normal((3, 4, 5)) * 0.5 + 1.0).astype(np.float32)
    x = graph.input("x", "f32", (3, 4, 5))
    graph.output("y", getattr(x, op)(axis=axis, keepdims=keepdims))
    numpy_axis = tuple(axis) if isinstance(axis, list) else axis
    expected = getattr(data.astype(np.float64), op)(axis=numpy_axis, keepdims=keepdims)
    assert_close(graph.evaluate(x=data)["y"], expected)


def test_layout_operations(graph, rng):
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x = graph.input("x", "f32", (2, 3, 4))
    values = {
        "reshape": (x.reshape(6, 4), data.reshape(6, 4)),
        "reshape_tuple": (x.reshape((4, -1)), data.reshape(4, -1)),
        "permute": (x.permute(2, 0, 1), data.transpose(2, 0, 1)),
        "transpose": (x.transpose(), data.transpose()),
        "transpose_axes": (x.transpose((1, 0, 2)), data.transpose(1, 0, 2)),
        "T": (x.T, data.T),
        "broadcast": (
            x.sum(axis=2, keepdims=True).broadcast_to(2, 3, 4),
            np.broadcast_to(data.astype(np.float64).sum(axis=2, keepdims=True), (2, 3, 4)),
        ),
        "broadcast_rank": (x.broadcast_to((5, 2, 3, 4)), np.broadcast_to(data, (5, 2, 3, 4))),
    }
    for name, (value, expected) in values.items():
        assert value.shape == expected.shape, name
        graph.output(name, value)
    result = graph.evaluate(x=data)
    for name, (_, expected) in values.items():
        assert_close(result[name], expected)


def test_casts(graph):
    data = np.array([1.7, -1.7, np.nan, 3e10, -3e10, 0.0], dtype=np.float32)
    x = graph.input("x", "f32", 6)
    graph.output("i32", x.cast("i32"))
    graph.output("bool", x.astype(bool))
    graph.output("f64", x.cast(np.float64))
    result = graph.evaluate(x=data)
    assert result["i32"].dtype == np.int32
    assert result["i32"].tolist() == [
        1,
        -1,
        0,
        2**31 - 1,
        -(2**31),
        0,
    ]  # truncates, saturates, NaN gives 0
    assert result["bool"].tolist() == [True, True, True, True, True, False]
    assert result["f64"].dtype == np.float64


def test_where(graph, rng):
    a_data = rng.standard_normal((3, 4)).astype(np.float32)
    b_data = rng.standard_normal(4).astype(np.float32)
    a = graph.input("a", "f32", (3, 4))
    b = graph.input("b", "f32", 4)
    graph.output("where", fstitch.where(a > b, a, b))
    graph.output("scalar", graph.where(a > 0, a, 0.0))
    graph.output("method", (a > 0).where(1.0, a))
    graph.output("select", graph.select(a > 0, -1, a))
    result = graph.evaluate(a=a_data, b=b_data)
    assert_close(result["where"], np.where(a_data > b_data, a_data, b_data))
    assert_close(result["scalar"], np.where(a_data > 0, a_data, 0.0))
    assert_close(result["method"], np.where(a_data > 0, 1.0, a_data))
    assert_close(result["select"], np.where(a_data > 0, -1.0, a_data))


def test_iota_and_constants(graph):
    graph.output("iota", graph.iota("i32", (2, 3), axis=1))
    graph.output("iota0", graph.iota(np.float32, (2, 3)))
    base = graph.constant(2, "i64")
    graph.output("int", base + graph.iota("i64", 4) * 3)
    graph.output("float", graph.constant(0.5, "f16") + graph.iota("f16", 3))
    graph.output("bool", graph.constant(True, "bool").broadcast_to(2))
    result = graph.evaluate()
    assert result["iota"].tolist() == [[0, 1, 2], [0, 1, 2]]
    assert result["iota0"].tolist() == [[0, 0, 0], [1, 1, 1]]
    assert result["int"].dtype == np.int64 and result["int"].tolist() == [2, 5, 8, 11]
    assert result["float"].dtype == np.float16 and result["float"].tolist() == [0.5, 1.5, 2.5]
    assert result["bool"].tolist() == [True, True]


def test_integer_arithmetic(graph):
    a_data = np.array([7, -7, 5, 100], dtype=np.int32)
    b_data = np.array([2, 2, 0, 7], dtype=np.int32)
    a = graph.input("a", "i32", 4)
    b = graph.input("b", "i32", 4)
    graph.output("div", a / b)
    graph.output("scaled", a * 3 + 1)
    graph.output("sum", a.sum())
    result = graph.evaluate(a=a_data, b=b_data)
    assert result["div"].tolist() == [3, -3, 0, 14]  # truncation toward zero; x / 0 is 0
    assert result["scaled"].tolist() == [22, -20, 16, 301]
    assert result["sum"].tolist() == 105


def test_scalar_constants_follow_the_value_dtype(graph):
    x = graph.input("x", "u8", 3)
    y = x + 1
    assert y.dtype is DType.U8
    h = graph.input("h", "f16", 3)
    assert (h * 0.5).dtype is DType.F16
    assert (2.0 * x).dtype is DType.U8  # an integral float is accepted for an integer value
    with pytest.raises(fstitch.Error) as caught:
        x + 0.5
    assert caught.value.status is fstitch.Status.DTYPE
    with pytest.raises(fstitch.Error) as caught:
        x + 300
    assert caught.value.status is fstitch.Status.INVALID_ARGUMENT and "u8" in caught.value.message
    graph.output("y", y)  # the graph is still usable after those Python-side refusals
    assert graph.evaluate(x=np.array([1, 2, 255], dtype=np.uint8), h=np.zeros(3, np.float16))[
        "y"
    ].tolist() == [2, 3, 0]


def test_value_properties(graph):
    x = graph.input("x", fstitch.f16, (2, 3))
    s = graph.input("s", "f32")
    y = x.sum(axis=0)
    assert (x.dtype, x.shape, x.ndim, x.size, x.name) == (DType.F16, (2, 3), 2, 6, "x")
    assert (s.shape, s.ndim, s.name) == ((), 0, "s")
    assert (y.shape, y.name) == ((3,), None)
    assert y.graph is graph
    assert "f16[2,3]" in repr(x) and "'x'" in repr(x)


def test_graph_queries(graph):
    x = graph.input("x", "f32", (2, 3))
    w = graph.input("w", "f32", 3)
    y = x * w
    graph.output("y", y)
    graph.output("x_too", x)
    assert graph.input_names == ["x", "w"]
    assert [v.handle for v in graph.inputs] == [x.handle, w.handle]
    assert graph.output_names == ["y", "x_too"]
    assert {name: v.handle for name, v in graph.outputs.items()} == {
        "y": y.handle,
        "x_too": x.handle,
    }
    assert graph.input_specs() == [("x", DType.F32, (2, 3)), ("w", DType.F32, (3,))]
    assert graph.output_specs()[0] == fstitch.TensorSpec("y", DType.F32, (2, 3))
    assert graph.value_count >= 4
    graph.verify()


def test_values_are_symbols(graph):
    x = graph.input("x", "f32", 3)
    y = x + 1
    with pytest.raises(TypeError):
        bool(x)
    with pytest.raises(TypeError):
        if x == y:  # noqa: SIM108 - the comparison builds a value, which has no truth value
            pass
    names = {x: "x", y: "y"}  # identity hashing
    assert names[x] == "x" and names[y] == "y"
    assert isinstance(x == y, fstitch.Value)
    assert (x == None) is False  # noqa: E711 - not an operand: Python's identity fallback
    with pytest.raises(TypeError):
        np.ones(3) + x
    with pytest.raises(TypeError):
        x + "one"
    with pytest.raises(TypeError):
        x @ x


def test_evaluate_argument_forms(graph, rng):
    a_data = rng.standard_normal(3).astype(np.float32)
    b_data = rng.standard_normal(3).astype(np.float32)
    a = graph.input("a", "f32", 3)
    b = graph.input("b", "f32", 3)
    graph.output("sum", a + b)
    graph.output("diff", a - b)
    by_kwargs = graph.evaluate(a=a_data, b=b_data)
    by_dict = graph.evaluate({"b": b_data, "a": a_data})
    by_list = graph.evaluate([a_data, b_data])
    by_args = graph.evaluate(a_data, b_data)
    assert list(by_kwargs) == ["sum", "diff"]
    for result in (
        by_dict,
        dict(zip(["sum", "diff"], by_list)),
        dict(zip(["sum", "diff"], by_args)),
    ):
        for name in ("sum", "diff"):
            np.testing.assert_array_equal(result[name], by_kwargs[name])
    assert_close(by_kwargs["sum"], a_data.astype(np.float64) + b_data)


def test_evaluate_copies_strided_inputs(graph, rng):
    data = rng.standard_normal((4, 6)).astype(np.float32)
    x = graph.input("x", "f32", (6, 4))
    graph.output("y", x * 2)
    assert_close(graph.evaluate(x=data.T)["y"], data.T * 2.0)


def test_half_precision(graph, rng):
    data = rng.standard_normal((4, 32)).astype(np.float16)
    x = graph.input("x", "f16", (4, 32))
    graph.output("y", (x - x.max(axis=1, keepdims=True)).exp())
    expected = np.exp(data.astype(np.float64) - data.astype(np.float64).max(axis=1, keepdims=True))
    result = graph.evaluate(x=data)["y"]
    assert result.dtype == np.float16
    assert_close(result, expected, 1e-2)


def test_bf16_as_bit_patterns(graph, rng):
    data = rng.standard_normal((4, 8)).astype(np.float32)
    bits = fstitch.to_bf16_bits(data)
    x = graph.input("x", "bf16", (4, 8))
    graph.output("y", x * 2)
    graph.output("f32", x.cast("f32"))
    result = graph.evaluate(x=bits)
    np.testing.assert_array_equal(result["f32"], fstitch.from_bf16_bits(bits))
    np.testing.assert_array_equal(
        fstitch.from_bf16_bits(result["y"]), fstitch.from_bf16_bits(bits) * 2
    )


def test_text_round_trip(ctx, graph):
    x = graph.input("x", "f32", (2, 3))
    graph.output("y", (x * 0.1).exp().sum(axis=1))
    text = graph.text()
    assert text.startswith("fstitch.graph 1")
    parsed = fstitch.Graph.parse(ctx, text)
    assert parsed.text() == text
    assert ctx.parse(text).text() == text
    assert parsed.input_names == ["x"] and parsed.output_names == ["y"]
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(parsed.evaluate(x=data)["y"], graph.evaluate(x=data)["y"])


def test_opaque_operations(graph, rng):
    a = graph.input("a", "f32", (2, 3))
    product = graph.opaque("matmul", [a, a.T], "f32", (2, 2))
    assert product.shape == (2, 2) and product.dtype is DType.F32
    graph.output("y", product.exp())
    assert 'opaque "matmul"' in graph.text()
    with pytest.raises(fstitch.Error) as caught:
        graph.evaluate(a=np.zeros((2, 3), np.float32))
    assert caught.value.status is fstitch.Status.UNSUPPORTED


def test_bf16_with_ml_dtypes(graph):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = graph.input("x", ml_dtypes.bfloat16, 4)
    graph.output("y", x * 2)
    result = graph.evaluate(x=np.array([1.0, 2.0, 3.0, 0.5], dtype=ml_dtypes.bfloat16))["y"]
    assert result.dtype == np.dtype(ml_dtypes.bfloat16)  # outputs use ml_dtypes when installed
    assert result.astype(np.float32).tolist() == [2.0, 4.0, 6.0, 1.0]
    bits = graph.evaluate(x=fstitch.to_bf16_bits([1.0, 2.0, 3.0, 0.5]))["y"]  # bit patterns too
    assert fstitch.from_bf16_bits(bits).tolist() == [2.0, 4.0, 6.0, 1.0]
