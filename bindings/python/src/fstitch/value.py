"""fstitch.Value: one SSA value of a graph, with Python operators that build operations."""

from __future__ import annotations

import ctypes
import math
import numbers
from typing import Any

import numpy as np

from . import _lib
from ._show import shown
from ._args import as_ints, shape_args
from ._call import check
from .dtypes import DType
from .errors import Error, Status, api, raised_in
from .ops import UNARY

#: What may stand for a constant operand next to a Value.
SCALAR_TYPES = (numbers.Number, np.bool_)


class Value:
    """A value of a :class:`Graph`: its dtype and shape are fixed when it is built.

    Operators build operations in the value's graph: ``+ - * / **``, unary ``-``,
    ``abs()``, the comparisons ``< <= > >= == !=`` (bool values: ``==`` builds an
    operation, it does not compare Value objects), and ``& | ~`` on bool values. A Python
    scalar operand becomes a constant of the value's dtype; shapes broadcast as in numpy.
    Values hash by identity, so they can be dict keys; they have no truth value.

    A Value keeps its graph alive.
    """

    __slots__ = ("_graph", "_handle", "_dtype", "_shape")

    # numpy must not treat a Value as an object scalar: `array + value` raises TypeError.
    __array_ufunc__ = None
    # __eq__ builds an operation, so identity hashing is restored deliberately.
    __hash__ = object.__hash__

    def __init__(self, graph: Any, handle: int) -> None:
        self._graph = graph
        self._handle = int(handle)
        self._dtype: DType | None = None
        self._shape: tuple[int, ...] | None = None

    # -- description -------------------------------------------------------------------

    @property
    def graph(self):
        """The graph this value belongs to."""
        return self._graph

    @property
    def handle(self) -> int:
        """The C ``fst_value``."""
        return self._handle

    @property
    def dtype(self) -> DType:
        """Element type."""
        if self._dtype is None:
            code = ctypes.c_int()
            check(self._graph._call("fst_value_dtype", self._handle, ctypes.byref(code)))
            self._dtype = DType.from_code(code.value)
        return self._dtype

    @property
    def shape(self) -> tuple[int, ...]:
        """Dims, row-major."""
        if self._shape is None:
            dims = (ctypes.c_int64 * _lib.MAX_RANK)()
            rank = ctypes.c_size_t()
            check(self._graph._call("fst_value_rank", self._handle, ctypes.byref(rank)))
            check(self._graph._call("fst_value_dims", self._handle, _lib.MAX_RANK, dims))
            self._shape = tuple(int(dims[i]) for i in range(rank.value))
        return self._shape

    @property
    def ndim(self) -> int:
        """Rank."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def name(self) -> str | None:
        """The input name when this value is a graph input, else None."""
        return self._graph._input_name(self)

    def __repr__(self) -> str:
        if self._graph.closed:
            return "<fstitch.Value of a closed graph>"
        dims = ",".join(str(d) for d in self.shape)
        name = self.name
        label = f" {shown(name)}" if name is not None else ""
        return f"<fstitch.Value{label} {self.dtype.value}[{dims}]>"

    def __bool__(self) -> bool:
        raise TypeError(
            "an fstitch Value has no truth value: it is a symbol of a graph; "
            "use fstitch.where() for a choice inside the graph"
        )

    # -- building ----------------------------------------------------------------------

    def _unary(self, op: str) -> Value:
        with raised_in(op):
            return self._graph._build("fst_unary", UNARY[op], self._graph._operand(self, "x"))

    def _binary(self, op: str, other: Any, reflected: bool = False) -> Value:
        if reflected:
            return self._graph._binary(op, other, self, self.dtype)
        return self._graph._binary(op, self, other, self.dtype)

    def _reduce(self, op: str, axis: Any, keepdims: bool) -> Value:
        with raised_in(op):
            axes = tuple(range(self.ndim)) if axis is None else as_ints(axis, "axis")
        return self._graph._reduce(op, self, axes, keepdims)

    # -- operators ---------------------------------------------------------------------

    def _operator(self, op: str, other: Any, reflected: bool = False) -> Any:
        if not isinstance(other, (Value,) + SCALAR_TYPES):
            return NotImplemented
        return self._binary(op, other, reflected)

    def __add__(self, other: Any) -> Value:
        return self._operator("add", other)

    def __radd__(self, other: Any) -> Value:
        return self._operator("add", other, True)

    def __sub__(self, other: Any) -> Value:
        return self._operator("sub", other)

    def __rsub__(self, other: Any) -> Value:
        return self._operator("sub", other, True)

    def __mul__(self, other: Any) -> Value:
        return self._operator("mul", other)

    def __rmul__(self, other: Any) -> Value:
        return self._operator("mul", other, True)

    def __truediv__(self, other: Any) -> Value:
        return self._operator("div", other)

    def __rtruediv__(self, other: Any) -> Value:
        return self._operator("div", other, True)

    def __pow__(self, other: Any) -> Value:
        return self._operator("pow", other)

    def __rpow__(self, other: Any) -> Value:
        return self._operator("pow", other, True)

    def __lt__(self, other: Any) -> Value:
        return self._operator("lt", other)

    def __le__(self, other: Any) -> Value:
        return self._operator("le", other)

    def __gt__(self, other: Any) -> Value:
        return self._operator("gt", other)

    def __ge__(self, other: Any) -> Value:
        return self._operator("ge", other)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._operator("eq", other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return self._operator("ne", other)

    def _require_bool(self, operator: str) -> None:
        if self.dtype is not DType.BOOL:
            raise Error(
                Status.DTYPE,
                f"{operator} is logical and takes bool values; this value is {self.dtype.value} "
                f"(use logical_and/logical_or/logical_not for x != 0 semantics)",
            )

    def __and__(self, other: Any) -> Value:
        self._require_bool("&")
        return self._operator("logical_and", other)

    def __rand__(self, other: Any) -> Value:
        self._require_bool("&")
        return self._operator("logical_and", other, True)

    def __or__(self, other: Any) -> Value:
        self._require_bool("|")
        return self._operator("logical_or", other)

    def __ror__(self, other: Any) -> Value:
        self._require_bool("|")
        return self._operator("logical_or", other, True)

    def __invert__(self) -> Value:
        self._require_bool("~")
        return self._unary("logical_not")

    def __neg__(self) -> Value:
        return self._unary("neg")

    def __pos__(self) -> Value:
        return self

    def __abs__(self) -> Value:
        return self._unary("abs")

    # -- elementwise methods -----------------------------------------------------------

    def maximum(self, other: Any) -> Value:
        """Elementwise maximum with `other` (NaN if either is NaN)."""
        return self._binary("max", other)

    def minimum(self, other: Any) -> Value:
        """Elementwise minimum with `other` (NaN if either is NaN)."""
        return self._binary("min", other)

    def pow(self, other: Any) -> Value:
        """Elementwise self ** other (floating point only)."""
        return self._binary("pow", other)

    def logical_and(self, other: Any) -> Value:
        """self != 0 and other != 0, as bool."""
        return self._binary("logical_and", other)

    def logical_or(self, other: Any) -> Value:
        """self != 0 or other != 0, as bool."""
        return self._binary("logical_or", other)

    def where(self, a: Any, b: Any) -> Value:
        """self ? a : b elementwise; self must be bool."""
        return self._graph.where(self, a, b)

    def cast(self, dtype: Any) -> Value:
        """Converted to `dtype` (float to integer truncates and saturates, NaN gives 0)."""
        return self._graph._cast(self, dtype)

    astype = cast

    # -- reductions ----------------------------------------------------------------------

    def sum(self, axis: Any = None, keepdims: bool = False) -> Value:
        """Sum over `axis` (an int, a sequence of ints, or None for every axis)."""
        return self._reduce("sum", axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Value:
        """Mean over `axis` (floating point only)."""
        return self._reduce("mean", axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Value:
        """Maximum over `axis`, as numpy's; given a Value instead, the elementwise maximum.

        ``x.max(1)`` reduces axis 1; ``x.max(y)`` with a Value ``y`` is ``x.maximum(y)``
        (as torch's ``max(other)``).
        """
        if isinstance(axis, Value):
            return self._elementwise_instead("max", axis, keepdims)
        return self._reduce("max", axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Value:
        """Minimum over `axis`, as numpy's; given a Value instead, the elementwise minimum."""
        if isinstance(axis, Value):
            return self._elementwise_instead("min", axis, keepdims)
        return self._reduce("min", axis, keepdims)

    def _elementwise_instead(self, op: str, other: Value, keepdims: bool) -> Value:
        if keepdims:
            with raised_in(op):
                raise Error(
                    Status.INVALID_ARGUMENT, "keepdims applies to reductions, not to a Value"
                )
        return self._binary(op, other)

    def prod(self, axis: Any = None, keepdims: bool = False) -> Value:
        """Product over `axis`."""
        return self._reduce("prod", axis, keepdims)

    # -- layout ----------------------------------------------------------------------------

    @api("reshape")
    def reshape(self, *shape: Any) -> Value:
        """The same elements with new dims: reshape(2, 3) or reshape((2, 3)); one dim may be -1."""
        return self._graph._layout("fst_reshape", self, shape_args(shape, "shape"))

    @api("permute")
    def permute(self, *perm: Any) -> Value:
        """Axes permuted: result dim i is this value's dim perm[i]."""
        return self._graph._layout("fst_permute", self, shape_args(perm, "perm"))

    @api("transpose")
    def transpose(self, *axes: Any) -> Value:
        """As numpy.transpose: no arguments reverse the axes."""
        if not axes:
            return self.permute(tuple(reversed(range(self.ndim))))
        return self.permute(*axes)

    @property
    def T(self) -> Value:  # noqa: N802 - numpy's name
        """The axes reversed."""
        return self.transpose()

    @api("broadcast_to")
    def broadcast_to(self, *shape: Any) -> Value:
        """Broadcast to `shape` by numpy rules."""
        return self._graph._layout("fst_broadcast", self, shape_args(shape, "shape"))

    # -- data movement -------------------------------------------------------------------

    def __getitem__(self, key: Any) -> Value:
        """numpy-style indexing: ``x[1:3, ::2]``, ``x[..., :4]``, ``x[0]`` (drops the axis).

        Steps are positive; bounds follow Python's slices. An integer Value as the key
        gathers along the first axis, as :meth:`take`.
        """
        from . import movement

        return movement.getitem(self, key)

    def slice(self, starts: Any, stops: Any, steps: Any = None) -> Value:
        """One start, stop and (positive) step per axis, as Python's slice bounds."""
        from . import movement

        return movement.slice_value(self, starts, stops, steps)

    def pad(self, low: Any, high: Any, value: float = 0.0) -> Value:
        """`low[i]` elements of `value` before axis i and `high[i]` after (pads >= 0)."""
        from . import movement

        return movement.pad(self, low, high, value)

    def take(self, indices: Value, axis: int = 0) -> Value:
        """Gather along `axis` at the i32/i64 Value `indices` (numpy.take's result shape).

        An index i with -n <= i < n picks element i (from the end when negative); any other
        index gives 0 (False for bool).
        """
        from . import movement

        return movement.take(self, indices, axis)

    def split(self, sections: Any, axis: int = -1) -> list[Value]:
        """Consecutive slices along `axis`: `sections` equal parts (int) or these sizes."""
        from . import movement

        return movement.split(self, sections, axis)


def _unary_method(op: str):
    def method(self: Value) -> Value:
        return self._unary(op)

    method.__name__ = op
    method.__qualname__ = f"Value.{op}"
    method.__doc__ = f"Elementwise {op} (C: FST_UNARY_{op.upper()})."
    return method


def _add_unary_methods() -> None:
    """One method per fst_unary_op: exp(), rsqrt(), gelu_tanh(), logical_not(), ..."""
    for op in UNARY:
        if not hasattr(Value, op):
            setattr(Value, op, _unary_method(op))


_add_unary_methods()
