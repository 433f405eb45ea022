"""ATen operations that become fstitch builders, one small converter each.

A converter receives the lowering (for values, constants and the torch metadata of nodes),
the node, and its arguments with FX nodes replaced by what they lowered to. It returns an
fstitch Value (or a list of them for split), or raises AsOpaque when this instance of the
operation is better left to torch (a negative pad, an integer power). Dtypes follow torch:
the operation's result dtype comes from running it on meta tensors (see lowering.py), and
the computation happens in that dtype as in eager, or, for an f16 or bf16 result without
the eager_rounding option, in f32 (Lowering.held_dtype).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..functions import concat, where

aten = torch.ops.aten
prims = torch.ops.prims


class AsOpaque(Exception):
    """This node is run by torch as an opaque operation, though its op has a converter."""


CONVERTERS: dict[Any, Callable[..., Any]] = {}

#: Operations that only relabel the elements of their input (no arithmetic).
VIEW_OPS: set[Any] = set()


def _converts(*targets: Any, view: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        for target in targets:
            CONVERTERS[target] = function
            if view:
                VIEW_OPS.add(target)
        return function

    return register


def _dim(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


# -- elementwise ------------------------------------------------------------------------------

_BINARY = {
    aten.add.Tensor: lambda a, b: a + b,
    aten.add.Scalar: lambda a, b: a + b,
    aten.sub.Tensor: lambda a, b: a - b,
    aten.sub.Scalar: lambda a, b: a - b,
    aten.mul.Tensor: lambda a, b: a * b,
    aten.mul.Scalar: lambda a, b: a * b,
    aten.div.Tensor: lambda a, b: a / b,
    aten.div.Scalar: lambda a, b: a / b,
    aten.maximum.default: lambda a, b: a.maximum(b),
    aten.minimum.default: lambda a, b: a.minimum(b),
    aten.pow.Tensor_Tensor: lambda a, b: a.pow(b),
    aten.logical_and.default: lambda a, b: a.logical_and(b),
    aten.logical_or.default: lambda a, b: a.logical_or(b),
}

_COMPARISONS = {
    aten.eq.Tensor: lambda a, b: a == b,
    aten.eq.Scalar: lambda a, b: a == b,
    aten.ne.Tensor: lambda a, b: a != b,
    aten.ne.Scalar: lambda a, b: a != b,
    aten.lt.Tensor: lambda a, b: a < b,
    aten.lt.Scalar: lambda a, b: a < b,
    aten.le.Tensor: lambda a, b: a <= b,
    aten.le.Scalar: lambda a, b: a <= b,
    aten.gt.Tensor: lambda a, b: a > b,
    aten.gt.Scalar: lambda a, b: a > b,
    aten.ge.Tensor: lambda a, b: a >= b,
    aten.ge.Scalar: lambda a, b: a >= b,
}


def _binary_converter(build: Callable[[Any, Any], Any], comparison: bool) -> Callable[..., Any]:
    def convert(cx: Any, node: Any, a: Any, b: Any, alpha: Any = None) -> Any:
        # Comparisons compute in the promoted operand dtype; arithmetic in the result dtype
        # (true division of integers computes in the float result, as torch does).
        dtype = cx.promoted_dtype(node.args[0], node.args[1]) if comparison else cx.result_dtype(node)
        x = cx.as_value(a, dtype)
        y = cx.as_value(b, dtype)
        if alpha is not None and alpha != 1:
            y = y * cx.as_value(alpha, dtype)
        return build(x, y)

    return convert


for _target, _build in _BINARY.items():
    CONVERTERS[_target] = _binary_converter(_build, comparison=False)
for _target, _build in _COMPARISONS.items():
    CONVERTERS[_target] = _binary_converter(_build, comparison=True)


@_converts(aten.pow.Tensor_Scalar)
def _pow_scalar(cx: Any, node: Any, x: Any, exponent: Any) -> Any:
    dtype = cx.result_dtype(node)
    if not dtype.is_floating_point:
        raise AsOpaque("integer power")
    base = cx.as_value(x, dtype)
    if exponent == 2:  # exact, as eager's pow special-cases it
        return base * base
    if exponent == 1:
        return base
    if exponent == 0.5:
        return base.sqrt()
    return base.pow(cx.as_value(exponent, dtype))


@_converts(aten.pow.Scalar)
def _pow_base_scalar(cx: Any, node: Any, base: Any, exponent: Any) -> Any:
    dtype = cx.result_dtype(node)
    if not dtype.is_floating_point:
        raise AsOpaque("integer power")
    return cx.as_value(base, dtype).pow(cx.as_value(exponent, dtype))


_UNARY = {
    aten.neg.default: "neg",
    aten.abs.default: "abs",
    aten.exp.default: "exp",
    aten.log.default: "log",
    aten.sqrt.default: "sqrt",
    aten.rsqrt.default: "rsqrt",
    aten.reciprocal.default: "reciprocal",
    aten.tanh.default: "tanh",
    aten.sigmoid.default: "sigmoid",
    aten.relu.default: "relu",
    aten.silu.default: "silu",
    aten.erf.default: "erf",
    aten.sin.default: "sin",
    aten.cos.default: "cos",
    aten.floor.default: "floor",
    aten.ceil.default: "ceil",
    aten.round.default: "round",
    aten.sign.default: "sign",
}


def _unary_converter(op: str) -> Callable[..., Any]:
    def convert(cx: Any, node: Any, x: Any) -> Any:
        dtype = cx.result_dtype(node)
        if op in ("floor", "ceil", "round") and not dtype.is_floating_point:
            return cx.as_value(x, dtype)  # integers are already whole
        return getattr(cx.as_value(x, dtype), op)()

    return convert


for _target, _op in _UNARY.items():
    CONVERTERS[_target] = _unary_converter(_op)


@_converts(aten.logical_not.default, aten.bitwise_not.default)
def _logical_not(cx: Any, node: Any, x: Any) -> Any:
    if cx.result_dtype(node) is not torch.bool:
        raise AsOpaque("bitwise not of integers")
    return cx.as_value(x).logical_not()


@_converts(aten.bitwise_and.Tensor, aten.bitwise_or.Tensor)
def _bitwise(cx: Any, node: Any, a: Any, b: Any) -> Any:
    if cx.result_dtype(node) is not torch.bool:
        raise AsOpaque("bitwise operation on integers")
    x, y = cx.as_value(a, torch.bool), cx.as_value(b, torch.bool)
    return x.logical_and(y) if node.target is aten.bitwise_and.Tensor else x.logical_or(y)


@_converts(aten.gelu.default)
def _gelu(cx: Any, node: Any, x: Any, approximate: str = "none") -> Any:
    value = cx.as_value(x, cx.result_dtype(node))
    return value.gelu_tanh() if approximate == "tanh" else value.gelu()


@_converts(aten.clamp.default)
def _clamp(cx: Any, node: Any, x: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    dtype = cx.result_dtype(node)
    value = cx.as_value(x, dtype)
    if min is not None:
        value = value.maximum(cx.as_value(min, dtype))
    if max is not None:
        value = value.minimum(cx.as_value(max, dtype))
    return value


@_converts(aten.where.self)
def _where(cx: Any, node: Any, condition: Any, a: Any, b: Any) -> Any:
    dtype = cx.result_dtype(node)
    return where(cx.as_value(condition, torch.bool), cx.as_value(a, dtype), cx.as_value(b, dtype))


# -- casts and copies -------------------------------------------------------------------------


@_converts(prims.convert_element_type.default)
def _convert_element_type(cx: Any, node: Any, x: Any, dtype: Any) -> Any:
    return cx.as_cast(x, dtype)


@_converts(aten._to_copy.default)
def _to_copy(cx: Any, node: Any, x: Any, **kwargs: Any) -> Any:
    device = kwargs.get("device")
    if device is not None and not cx.on_graph_device(device):
        raise AsOpaque("a copy to another device")
    return cx.as_cast(x, cx.result_dtype(node))


@_converts(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default, aten.detach.default)
def _identity(cx: Any, node: Any, x: Any, **kwargs: Any) -> Any:
    return cx.as_value(x)


@_converts(aten.copy.default)
def _copy(cx: Any, node: Any, destination: Any, source: Any, non_blocking: bool = False) -> Any:
    shape = cx.meta(node).shape
    return cx.as_value(source, cx.result_dtype(node)).broadcast_to(tuple(shape))


@_converts(aten.full_like.default)
def _full_like(cx: Any, node: Any, x: Any, fill_value: Any, **kwargs: Any) -> Any:
    # Only x's shape matters; the result is the fill value broadcast over it, in its dtype.
    device = kwargs.get("device")
    if device is not None and not cx.on_graph_device(device):
        raise AsOpaque("a fill on another device")
    return cx.as_value(fill_value, cx.result_dtype(node)).broadcast_to(tuple(cx.meta(node).shape))


# -- reductions -------------------------------------------------------------------------------


def _axes(dim: Any, rank: int) -> tuple[int, ...]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(rank))
    if isinstance(dim, int):
        dim = [dim]
    return tuple(sorted({_dim(d, rank) for d in dim}))


def _reduction(method: str) -> Callable[..., Any]:
    def convert(cx: Any, node: Any, x: Any, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        value = cx.as_value(x, cx.result_dtype(node))
        if value.ndim == 0:
            return value
        return getattr(value, method)(axis=_axes(dim, value.ndim), keepdims=bool(keepdim))

    return convert


CONVERTERS[aten.sum.dim_IntList] = _reduction("sum")
CONVERTERS[aten.mean.dim] = _reduction("mean")
CONVERTERS[aten.amax.default] = _reduction("max")
CONVERTERS[aten.amin.default] = _reduction("min")


@_converts(aten.sum.default, aten.mean.default)
def _reduce_all(cx: Any, node: Any, x: Any, dtype: Any = None) -> Any:
    value = cx.as_value(x, cx.result_dtype(node))
    if value.ndim == 0:
        return value
    method = "sum" if node.target is aten.sum.default else "mean"
    return getattr(value, method)()


@_converts(aten.var.correction)
def _var(cx: Any, node: Any, x: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Any:
    value = cx.as_value(x, cx.result_dtype(node))
    axes = _axes(dim, value.ndim)
    count = math.prod(value.shape[a] for a in axes)
    centered = value - value.mean(axis=axes, keepdims=True)
    squares = (centered * centered).sum(axis=axes, keepdims=bool(keepdim))
    divisor = count - (1 if correction is None else correction)
    if divisor <= 0:
        raise AsOpaque("a variance of too few elements")
    return squares / float(divisor)


# -- layout (views) ---------------------------------------------------------------------------


@_converts(aten.view.default, aten._unsafe_view.default, aten.reshape.default, view=True)
def _reshape(cx: Any, node: Any, x: Any, shape: Any) -> Any:
    return cx.as_value(x).reshape(tuple(int(d) for d in shape))


@_converts(aten.expand.default, view=True)
def _expand(cx: Any, node: Any, x: Any, sizes: Any, implicit: bool = False) -> Any:
    value = cx.as_value(x)
    lead = len(sizes) - value.ndim
    shape = [
        value.shape[i - lead] if int(size) == -1 else int(size) for i, size in enumerate(sizes)
    ]
    if tuple(shape) == value.shape:
        return value
    return value.broadcast_to(tuple(shape))


@_converts(aten.permute.default, view=True)
def _permute(cx: Any, node: Any, x: Any, dims: Any) -> Any:
    value = cx.as_value(x)
    return value.permute(tuple(_dim(d, value.ndim) for d in dims))


@_converts(aten.t.default, view=True)
def _t(cx: Any, node: Any, x: Any) -> Any:
    value = cx.as_value(x)
    return value.transpose() if value.ndim == 2 else value


@_converts(aten.transpose.int, view=True)
def _transpose(cx: Any, node: Any, x: Any, dim0: int, dim1: int) -> Any:
    value = cx.as_value(x)
    perm = list(range(value.ndim))
    a, b = _dim(dim0, value.ndim), _dim(dim1, value.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return value.permute(tuple(perm))


@_converts(aten.unsqueeze.default, view=True)
def _unsqueeze(cx: Any, node: Any, x: Any, dim: int) -> Any:
    value = cx.as_value(x)
    shape = list(value.shape)
    shape.insert(_dim(dim, value.ndim + 1), 1)
    return value.reshape(tuple(shape))


@_converts(aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims, view=True)
def _squeeze(cx: Any, node: Any, x: Any, dim: Any = None) -> Any:
    value = cx.as_value(x)
    axes = set(range(value.ndim)) if dim is None else set(_axes(dim, value.ndim))
    shape = tuple(d for i, d in enumerate(value.shape) if not (i in axes and d == 1))
    return value.reshape(shape)


@_converts(aten.slice.Tensor, view=True)
def _slice(cx: Any, node: Any, x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    value = cx.as_value(x)
    axis = _dim(dim, value.ndim)
    bounds = slice(start, end, step).indices(value.shape[axis])
    starts = [0] * value.ndim
    stops = list(value.shape)
    steps = [1] * value.ndim
    starts[axis], stops[axis], steps[axis] = bounds
    if bounds == (0, value.shape[axis], 1):
        return value
    return value.slice(starts, stops, steps)


@_converts(aten.select.int, view=True)
def _select(cx: Any, node: Any, x: Any, dim: int, index: int) -> Any:
    value = cx.as_value(x)
    axis = _dim(dim, value.ndim)
    position = index + value.shape[axis] if index < 0 else index
    starts = [0] * value.ndim
    stops = list(value.shape)
    starts[axis], stops[axis] = position, position + 1
    shape = value.shape[:axis] + value.shape[axis + 1 :]
    return value.slice(starts, stops).reshape(shape)


@_converts(aten.split.Tensor, aten.split_with_sizes.default, view=True)
def _split(cx: Any, node: Any, x: Any, sizes: Any, dim: int = 0) -> Any:
    value = cx.as_value(x)
    axis = _dim(dim, value.ndim)
    if isinstance(sizes, int):
        length = value.shape[axis]
        sizes = [min(sizes, length - start) for start in range(0, length, sizes)]
    return value.split([int(s) for s in sizes], axis)


@_converts(aten.cat.default)
def _cat(cx: Any, node: Any, tensors: Any, dim: int = 0) -> Any:
    dtype = cx.result_dtype(node)
    parts = [cx.as_value(t, dtype) for t in tensors]
    parts = [p for p in parts if not (p.ndim == 1 and p.shape[0] == 0)]  # legacy empty inputs
    if len(parts) == 1:
        return parts[0]
    return concat(parts, _dim(dim, parts[0].ndim))


@_converts(aten.slice_scatter.default)
def _slice_scatter(
    cx: Any, node: Any, base: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
) -> Any:
    # base with a slice of it replaced by src (the gradient of a slice): for a unit step,
    # the part of base before the slice, src and the part after, joined along dim.
    dtype = cx.result_dtype(node)
    whole = cx.as_value(base, dtype)
    axis = _dim(dim, whole.ndim)
    first, last, stride = slice(start, end, step).indices(whole.shape[axis])
    if stride != 1:
        raise AsOpaque("a strided slice_scatter")
    def part(lo: int, hi: int) -> list[Any]:
        if hi <= lo:
            return []
        starts, stops = [0] * whole.ndim, list(whole.shape)
        starts[axis], stops[axis] = lo, hi
        return [whole.slice(starts, stops)]

    parts = part(0, first) + [cx.as_value(src, dtype)] + part(max(first, last), whole.shape[axis])
    return parts[0] if len(parts) == 1 else concat(parts, axis)


@_converts(aten.constant_pad_nd.default)
def _pad(cx: Any, node: Any, x: Any, pad: Any, value: Any = 0) -> Any:
    tensor = cx.as_value(x)
    if any(p < 0 for p in pad):
        raise AsOpaque("a negative pad")
    low = [0] * tensor.ndim
    high = [0] * tensor.ndim
    for i in range(len(pad) // 2):
        low[tensor.ndim - 1 - i] = int(pad[2 * i])
        high[tensor.ndim - 1 - i] = int(pad[2 * i + 1])
    return tensor.pad(low, high, float(value))


# -- normalization ----------------------------------------------------------------------------


@_converts(aten.native_layer_norm.default)
def _layer_norm(cx: Any, node: Any, x: Any, normalized_shape: Any, weight: Any, bias: Any, eps: float) -> Any:
    out_meta, mean_meta, rstd_meta = cx.meta(node)
    compute = torch.float64 if out_meta.dtype is torch.float64 else torch.float32
    value = cx.as_value(x, compute)
    axes = tuple(range(value.ndim - len(normalized_shape), value.ndim))
    mean = value.mean(axis=axes, keepdims=True)
    centered = value - mean
    rstd = ((centered * centered).mean(axis=axes, keepdims=True) + float(eps)).rsqrt()
    out = centered * rstd
    if weight is not None:
        out = out * cx.as_value(weight, compute)
    if bias is not None:
        out = out + cx.as_value(bias, compute)
    return [
        cx.as_value(out, out_meta.dtype),
        cx.as_value(mean, mean_meta.dtype).reshape(tuple(mean_meta.shape)),
        cx.as_value(rstd, rstd_meta.dtype).reshape(tuple(rstd_meta.shape)),
    ]


@_converts(aten._softmax.default, aten._log_softmax.default)
def _softmax(cx: Any, node: Any, x: Any, dim: int, half_to_float: bool) -> Any:
    result = cx.result_dtype(node)
    compute = torch.float64 if result is torch.float64 else torch.float32
    value = cx.as_value(x, compute)
    axis = _dim(dim, value.ndim) if value.ndim else 0
    if value.ndim == 0:
        return cx.as_value(value * 0.0 + (0.0 if node.target is aten._log_softmax.default else 1.0), result)
    shifted = value - value.max(axis=axis, keepdims=True)
    exponentials = shifted.exp()
    total = exponentials.sum(axis=axis, keepdims=True)
    if node.target is aten._log_softmax.default:
        return cx.as_value(shifted - total.log(), result)
    return cx.as_value(exponentials / total, result)
