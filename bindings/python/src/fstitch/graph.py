"""fstitch.Graph: building, inspecting, printing, parsing and evaluating graphs."""

from __future__ import annotations

import contextlib
import ctypes
import math
import numbers
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _lib
from ._show import shown
from ._args import as_int, as_ints, as_name
from ._call import check, decode
from ._handle import OwnedHandle
from .context import Context
from .dtypes import DType, accepts, as_dtype, to_bf16_bits
from .errors import Error, Status, api, located, raised_in
from .ops import BINARY, REDUCE
from .specs import TensorSpec
from .value import SCALAR_TYPES, Value

if TYPE_CHECKING:
    from .fusion import Fusion

# Integer ranges of the integer dtypes, for constants taken from Python scalars.
_INTEGER_RANGES = {
    DType.I8: (-(2**7), 2**7 - 1),
    DType.I32: (-(2**31), 2**31 - 1),
    DType.I64: (-(2**63), 2**63 - 1),
    DType.U8: (0, 2**8 - 1),
}


def _tensor_array(data: Any, dtype: DType) -> np.ndarray:
    """`data` as a numpy array holding `dtype`'s storage format (see Graph.constant_tensor)."""
    if isinstance(data, np.ndarray):
        if not accepts(dtype, data.dtype):
            raise Error(
                Status.INVALID_ARGUMENT,
                f"data has numpy dtype {data.dtype}; a {dtype.value} constant needs {dtype.numpy}",
            )
        return data
    if dtype is DType.BF16:
        return to_bf16_bits(data)
    try:
        return np.asarray(data, dtype=dtype.numpy)
    except (TypeError, ValueError, OverflowError) as error:
        raise Error(Status.INVALID_ARGUMENT, f"data is not an array of {dtype.value}: {error}") from None


def _dims_array(dims: Sequence[int]) -> Any:
    return (ctypes.c_int64 * max(len(dims), 1))(*dims)


class Graph(OwnedHandle):
    """A graph of values, built with Python operators and the methods below.

    ``Graph(context)`` or ``context.graph()`` makes an empty one; ``Graph.parse(context,
    text)`` reads the text format. A builder that the library rejects (shapes that do not
    broadcast, an axis out of range, a dtype an operation does not take) raises
    :class:`Error` at the call; the library then keeps the graph in that error state, so
    every later builder raises the same error: build a new graph. Mistakes caught in Python
    (an argument of the wrong type, an unknown dtype name, a value of another graph) raise
    before reaching the library and leave the graph usable.

    Building needs one thread at a time; once built, queries, evaluate() and fuse() may run
    concurrently.
    """

    _destroy = "fst_graph_destroy"

    @api("Graph")
    def __init__(self, context: Context, *, _pointer: Any = None) -> None:
        if not isinstance(context, Context):
            raise Error(
                Status.INVALID_ARGUMENT,
                f"context is {type(context).__name__}; expected fstitch.Context",
            )
        super().__init__(None, "graph")
        self._context = context
        self._build_lock = threading.RLock()
        self._evaluations = 0  # evaluations in flight that call back into Python
        if _pointer is None:
            _pointer = _lib.GraphP()
            check(context._call("fst_graph_create", ctypes.byref(_pointer)))
        self._pointer = _pointer

    @classmethod
    @api("Graph.parse")
    def parse(cls, context: Context, text: str) -> Graph:
        """A graph read from the text format (docs/text-format.md).

        Raises:
            Error: PARSE (syntax, with line:column), SHAPE or DTYPE (an operation that does
                not type-check).
        """
        if not isinstance(context, Context):
            raise Error(
                Status.INVALID_ARGUMENT,
                f"context is {type(context).__name__}; expected fstitch.Context",
            )
        if not isinstance(text, str):
            raise Error(Status.INVALID_ARGUMENT, f"text is {type(text).__name__}; expected str")
        data = text.encode("utf-8")
        pointer = _lib.GraphP()
        check(
            context._call("fst_graph_parse", data, len(data), ctypes.byref(pointer))
        )
        return cls(context, _pointer=pointer)

    @property
    def context(self) -> Context:
        """The context the graph was made in."""
        return self._context

    # -- builders ----------------------------------------------------------------------------

    def _raise_builder_error(self) -> None:
        lib = _lib.library()
        status = self._call("fst_graph_status")
        if status == Status.OK:  # not a graph error (cannot happen for a live graph)
            status = lib.fst_last_error_status()
            raise located(Error(status, decode(lib.fst_last_error_message())))
        raise located(Error(status, decode(self._call("fst_graph_error_message"))))

    @contextlib.contextmanager
    def _evaluating(self) -> Iterator[None]:
        """Marks the graph as read by an evaluation that calls back into Python (an opaque
        callable): building on it then would change it under the evaluator."""
        with self._build_lock:
            self._evaluations += 1
        try:
            yield
        finally:
            with self._build_lock:
                self._evaluations -= 1

    def _refuse_building_while_evaluated(self) -> None:
        if self._evaluations:
            raise Error(
                Status.INVALID_ARGUMENT,
                "the graph is being evaluated (an opaque callable is running); build on it "
                "after evaluate() returns",
            )

    def _build(self, function: str, *args: Any) -> Value:
        """Calls the builder `function` on this graph; raises at once when it fails."""
        with self._build_lock:
            self._refuse_building_while_evaluated()
            handle = self._call(function, *args)
            if handle == _lib.VALUE_INVALID:
                self._raise_builder_error()
        return Value(self, handle)

    def _constant(self, scalar: Any, dtype: DType) -> Value:
        """A rank-0 constant of `dtype` holding the Python or numpy scalar `scalar`."""
        if isinstance(scalar, np.generic):
            scalar = scalar.item()
        if isinstance(scalar, complex) or not isinstance(scalar, (numbers.Real, bool)):
            raise Error(
                Status.INVALID_ARGUMENT, f"constant {shown(scalar)} is not a real number or bool"
            )
        if dtype is DType.BOOL:
            return self._build("fst_constant_i64", dtype.code, 1 if scalar else 0)
        if dtype.is_integer:
            if isinstance(scalar, numbers.Integral):
                integer = int(scalar)
            elif math.isfinite(float(scalar)) and float(scalar).is_integer():
                integer = int(float(scalar))
            else:
                raise Error(
                    Status.DTYPE,
                    f"constant {shown(scalar)} is not an integer; it cannot be of dtype {dtype.value}",
                )
            low, high = _INTEGER_RANGES[dtype]
            if not low <= integer <= high:
                raise Error(
                    Status.INVALID_ARGUMENT,
                    f"constant {integer} is outside the range of {dtype.value}",
                )
            return self._build("fst_constant_i64", dtype.code, integer)
        if isinstance(scalar, numbers.Integral) and -(2**63) <= int(scalar) < 2**63:
            return self._build("fst_constant_i64", dtype.code, int(scalar))
        return self._build("fst_constant_f64", dtype.code, float(scalar))

    def _check_operand(self, operand: Any, what: str, scalar_ok: bool = False) -> None:
        """Raises unless `operand` is a Value of this open graph (or, if allowed, a scalar)."""
        if isinstance(operand, Value):
            if operand._graph is not self:
                raise Error(Status.INVALID_ARGUMENT, f"{what} belongs to another graph")
            self._handle  # noqa: B018 - raises when this graph is closed
            return
        if scalar_ok and isinstance(operand, SCALAR_TYPES):
            return
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} is {type(operand).__name__}; expected an fstitch Value"
            + (" or a Python scalar" if scalar_ok else ""),
        )

    def _operand(self, operand: Any, what: str, dtype: DType | None = None) -> int:
        """The C handle of `operand`: a Value of this graph, or a scalar as a `dtype` constant."""
        self._check_operand(operand, what, scalar_ok=dtype is not None)
        if isinstance(operand, Value):
            return operand._handle
        assert dtype is not None
        return self._constant(operand, dtype)._handle

    def _binary(self, op: str, a: Any, b: Any, dtype: DType) -> Value:
        with raised_in(op):
            return self._binary_unnamed(op, a, b, dtype)

    def _binary_unnamed(self, op: str, a: Any, b: Any, dtype: DType) -> Value:
        # Both operands are checked before a constant is added for either.
        self._check_operand(a, "a", scalar_ok=True)
        self._check_operand(b, "b", scalar_ok=True)
        a_handle = self._operand(a, "a", dtype)
        b_handle = self._operand(b, "b", dtype)
        return self._build("fst_binary", BINARY[op], a_handle, b_handle)

    def _reduce(self, op: str, x: Value, axes: tuple[int, ...], keepdims: bool) -> Value:
        with raised_in(op):
            x_handle = self._operand(x, "x")
        return self._build(
            "fst_reduce", REDUCE[op], x_handle, len(axes), _dims_array(axes), 1 if keepdims else 0
        )

    def _layout(self, function: str, x: Value, dims: tuple[int, ...]) -> Value:
        with raised_in(function[len("fst_") :]):
            x_handle = self._operand(x, "x")
        return self._build(function, x_handle, len(dims), _dims_array(dims))

    @api("cast")
    def _cast(self, x: Value, dtype: Any) -> Value:
        target = as_dtype(dtype)
        return self._build("fst_cast", self._operand(x, "x"), target.code)

    @api("Graph.input")
    def input(self, name: str, dtype: Any, shape: Any = ()) -> Value:
        """Declares the input `name` of `dtype` and `shape` (an int, a sequence, or ())."""
        encoded = as_name(name, "name")
        target = as_dtype(dtype)
        dims = as_ints(shape, "shape")
        return self._build("fst_input", encoded, target.code, len(dims), _dims_array(dims))

    @api("Graph.constant")
    def constant(self, value: Any, dtype: Any) -> Value:
        """A scalar constant of `dtype`; it broadcasts against any shape."""
        return self._constant(value, as_dtype(dtype))

    @api("Graph.constant_tensor")
    def constant_tensor(self, data: Any, dtype: Any, shape: Any = None) -> Value:
        """A constant tensor of `dtype` from host data, copied now (rotary tables, masks...).

        `data` is a numpy array (or anything numpy.asarray takes: nested lists, scalars) or a
        bytes-like object (bytes, bytearray, memoryview) holding the elements row-major in
        the storage format of `dtype`. An array must already have the numpy dtype of `dtype`
        (bf16: uint16 bit patterns or ml_dtypes.bfloat16) -- nothing is converted silently;
        other objects are converted to it. `shape` defaults to the array's shape and is
        required for bytes; an array with the same element count is read row-major in
        `shape`. bool data must be 0 or 1.
        """
        target = as_dtype(dtype)
        if isinstance(data, (bytes, bytearray, memoryview)):
            if shape is None:
                raise Error(Status.INVALID_ARGUMENT, "shape is required when data is bytes")
            dims = as_ints(shape, "shape")
            raw = bytes(memoryview(data).cast("B"))
        else:
            array = _tensor_array(data, target)
            dims = tuple(array.shape) if shape is None else as_ints(shape, "shape")
            if shape is not None and math.prod(dims) != array.size:
                raise Error(
                    Status.SHAPE,
                    f"data has {array.size} element(s); shape {tuple(dims)} has {math.prod(dims)}",
                )
            raw = np.ascontiguousarray(array).tobytes()
        buffer = ctypes.create_string_buffer(raw, len(raw)) if raw else None
        return self._build(
            "fst_constant_tensor",
            target.code,
            len(dims),
            _dims_array(dims),
            ctypes.cast(buffer, ctypes.c_void_p) if buffer is not None else None,
            len(raw),
        )

    @api("Graph.iota")
    def iota(self, dtype: Any, shape: Any, axis: int = 0) -> Value:
        """A tensor of `shape` whose elements are their index along `axis`."""
        target = as_dtype(dtype)
        dims = as_ints(shape, "shape")
        return self._build(
            "fst_iota", target.code, len(dims), _dims_array(dims), as_int(axis, "axis")
        )

    @api("where")
    def where(self, cond: Any, a: Any, b: Any) -> Value:
        """cond ? a : b elementwise with broadcasting; one of `a`, `b` may be a Python scalar."""
        self._check_operand(cond, "cond")
        self._check_operand(a, "a", scalar_ok=True)
        self._check_operand(b, "b", scalar_ok=True)
        anchor = a if isinstance(a, Value) else b
        if not isinstance(anchor, Value):
            raise Error(
                Status.INVALID_ARGUMENT,
                "where: a or b must be a Value, to give the result's dtype",
            )
        cond_handle = self._operand(cond, "cond")
        a_handle = self._operand(a, "a", anchor.dtype)
        b_handle = self._operand(b, "b", anchor.dtype)
        return self._build("fst_select", cond_handle, a_handle, b_handle)

    select = where

    @api("Graph.opaque")
    def opaque(self, name: str, inputs: Sequence[Value], dtype: Any, shape: Any) -> Value:
        """An operation fstitch does not fuse (a matmul, say) with the declared dtype and shape.

        The planner partitions the graph around it; the caller runs it between the kernels:
        evaluate() and Fusion.run() call their ``opaque=`` callable for it (without one they
        refuse the graph with UNSUPPORTED), or a framework follows ``Fusion.steps``.
        """
        encoded = as_name(name, "name")
        handles = [self._operand(value, f"inputs[{i}]") for i, value in enumerate(list(inputs))]
        target = as_dtype(dtype)
        dims = as_ints(shape, "shape")
        array = (_lib.fst_value * max(len(handles), 1))(*handles)
        return self._build(
            "fst_opaque", encoded, len(handles), array, target.code, len(dims), _dims_array(dims)
        )

    def concat(self, values: Sequence[Value], axis: int = 0) -> Value:
        """The values (of this graph) one after another along `axis`."""
        from . import movement

        for i, value in enumerate(list(values)):
            with raised_in("concat"):
                self._check_operand(value, f"values[{i}]")
        return movement.concat(values, axis)

    @api("Graph.output")
    def output(self, name: str, value: Value) -> Value:
        """Names `value` as the graph output `name`; returns `value`."""
        encoded = as_name(name, "name")
        handle = self._operand(value, "value")
        with self._build_lock:
            self._refuse_building_while_evaluated()
            status = self._call("fst_output", encoded, handle)
            if status != Status.OK:
                self._raise_builder_error()
        return value

    # -- queries -----------------------------------------------------------------------------

    def _entries(self, kind: str) -> list[tuple[str, Value]]:
        count = ctypes.c_size_t()
        check(self._call(f"fst_graph_{kind}_count", ctypes.byref(count)))
        entries = []
        for index in range(count.value):
            handle = _lib.fst_value()
            name = ctypes.c_char_p()
            check(
                self._call(f"fst_graph_{kind}", index, ctypes.byref(handle), ctypes.byref(name))
            )
            entries.append((decode(name.value), Value(self, handle.value)))
        return entries

    def _input_name(self, value: Value) -> str | None:
        for name, entry in self._entries("input"):
            if entry._handle == value._handle:
                return name
        return None

    @property
    def inputs(self) -> list[Value]:
        """The inputs in declaration order."""
        return [value for _, value in self._entries("input")]

    @property
    def input_names(self) -> list[str]:
        """The input names in declaration order."""
        return [name for name, _ in self._entries("input")]

    @property
    def outputs(self) -> dict[str, Value]:
        """The outputs by name, in declaration order."""
        return dict(self._entries("output"))

    @property
    def output_names(self) -> list[str]:
        """The output names in declaration order."""
        return [name for name, _ in self._entries("output")]

    def input_specs(self) -> list[TensorSpec]:
        """Name, dtype and shape of each input, in order."""
        return [
            TensorSpec(name, value.dtype, value.shape) for name, value in self._entries("input")
        ]

    def output_specs(self) -> list[TensorSpec]:
        """Name, dtype and shape of each output, in order."""
        return [
            TensorSpec(name, value.dtype, value.shape) for name, value in self._entries("output")
        ]

    @property
    def value_count(self) -> int:
        """Number of values (operations) in the graph."""
        count = ctypes.c_size_t()
        check(self._call("fst_graph_value_count", ctypes.byref(count)))
        return count.value

    def verify(self) -> None:
        """Checks the graph (no builder error, at least one output, types); raises Error if not."""
        check(self._call("fst_graph_verify"))

    def text(self) -> str:
        """The graph in the text format; Graph.parse() reads it back."""
        lib = _lib.library()
        text = ctypes.c_char_p()
        check(self._call("fst_graph_print", ctypes.byref(text)))
        try:
            return decode(text.value)
        finally:
            lib.fst_string_free(text)

    def __repr__(self) -> str:
        if self.closed:
            return "<fstitch.Graph closed>"
        return (
            f"<fstitch.Graph inputs={self.input_names} outputs={self.output_names} "
            f"values={self.value_count}>"
        )

    # -- running -----------------------------------------------------------------------------

    @api("Graph.evaluate")
    def evaluate(self, *args: Any, opaque: Any = None, **kwargs: Any) -> Any:
        """Runs the graph with the reference evaluator (float64 inside) on host arrays.

        Inputs by name (``evaluate(x=a, w=b)`` or ``evaluate({"x": a})``) give a dict of
        outputs by name; a list (``evaluate([a, b])``) gives a list in output order.
        Arrays must have the declared dtype and shape (see the package documentation for
        f16 and bf16); non-contiguous arrays are copied.

        Args:
            opaque: a callable run for each opaque operation, in graph order, with an
                :class:`OpaqueCall` on host buffers (operands in their storage dtypes), as
                for :meth:`Fusion.run`; None when the graph has none (an input named
                ``opaque`` must then be passed in a dict).
        """
        from .run import evaluate_graph

        return evaluate_graph(self, args, kwargs, opaque)

    @api("Graph.fuse")
    def fuse(
        self,
        policy: Any = "stitch",
        target: int | None = None,
        shared_memory: int | None = None,
        registers: int | None = None,
        device: str | None = None,
    ) -> Fusion:
        """Plans the graph into fused kernels and generates their CUDA C.

        Args:
            policy: "stitch" (default), "loop" or "none" (or a :class:`Policy`).
            target: architecture as 10 * major + minor, 80 or 90; None for the context's
                device, or sm_90 without one.
            shared_memory: shared memory per block the planner may use, in bytes.
            registers: registers per thread the planner may plan for.
            device: plan for a named device model, "a100", "h100" or "h200" (this sets the
                target too); None for the context's device as it reports itself, or the
                target's default (A100 for sm_80, H100 for sm_90) without one.
        """
        from .fusion import Fusion

        return Fusion._create(self, policy, target, shared_memory, registers, device)
