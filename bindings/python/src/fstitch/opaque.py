"""Steps of a fusion and opaque operations: what a plan runs in which order, and the calls
of the caller's code for the operations fstitch does not implement.

A fusion runs as an ordered list of steps (:attr:`Fusion.steps`), each launching a kernel
or running an opaque operation (an :class:`OpaqueOp`: a matmul, say). ``Fusion.run`` and
``Graph.evaluate`` take ``opaque=``, a Python callable that receives an :class:`OpaqueCall`
for each opaque step and fills its result. The callable runs inside a C callback: what it
raises is caught there, handed to the library as the failure's text, and raised again in
the caller once the run has returned (see :class:`OpaqueCallback`).
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import numpy as np

from . import _lib
from ._call import check, decode, last_error
from .dtypes import DType
from .enums import ParamKind, StepKind, from_c
from .errors import Error, Status
from .value import Value


class OpaqueTensor(NamedTuple):
    """Where an operand or the result of an opaque operation lives when its step runs.

    Attributes:
        kind: a graph input, a graph output or the workspace.
        index: the input or output index, or the byte offset in the workspace.
        dtype: the element type.
        shape: the dims; the buffer is dense and row-major.
    """

    kind: ParamKind
    index: int  # type: ignore[assignment]  # the C API's name; shadows tuple.index
    dtype: DType
    shape: tuple[int, ...]


@dataclass(frozen=True)
class OpaqueOp:
    """An opaque operation of a fusion (in graph order), as the plan places it.

    Attributes:
        index: its opaque index (``Fusion.opaque_ops[index]``).
        name: the name given to ``Graph.opaque``.
        handle: the C ``fst_value`` of the operation, valid for the graph it came from.
        value: that value as a :class:`Value` while the graph is alive and open, else None
            (not compared: ``==`` on Values builds an operation).
        operands: where each operand is read from.
        result: where the result must be written.
    """

    index: int
    name: str
    handle: int
    value: Value | None = field(compare=False)
    operands: tuple[OpaqueTensor, ...]
    result: OpaqueTensor


@dataclass(frozen=True)
class Step:
    """One step of a fusion: ``kind`` says which of ``kernel`` and ``opaque`` it runs.

    Attributes:
        kind: :attr:`StepKind.KERNEL` or :attr:`StepKind.OPAQUE`.
        index: the kernel index (``Fusion.kernels``) or the opaque index
            (``Fusion.opaque_ops``).
        kernel: the kernel to launch, for a kernel step; else None.
        opaque: the operation to run, for an opaque step; else None.
    """

    kind: StepKind
    index: int
    kernel: Any = None  # fusion.Kernel (imported lazily: fusion.py imports this module)
    opaque: OpaqueOp | None = None


def _dims(rank: int, dims: Any) -> tuple[int, ...]:
    return tuple(int(dims[i]) for i in range(rank)) if rank else ()


def _tensor(kind: int, location: int, dtype: int, rank: int, dims: Any) -> OpaqueTensor:
    return OpaqueTensor(
        from_c(ParamKind, kind), location, DType.from_code(dtype), _dims(rank, dims)
    )


def _value_of(graph: Any, handle: int) -> Value | None:
    return Value(graph, handle) if graph is not None and not graph.closed else None


def opaque_op(fusion: Any, index: int) -> OpaqueOp:
    """The `index`-th opaque operation of `fusion`, read through the C queries."""
    name = ctypes.c_char_p()
    count = ctypes.c_size_t()
    handle = _lib.fst_value()
    names = (ctypes.byref(name), ctypes.byref(count), ctypes.byref(handle))
    check(fusion._call("fst_fusion_opaque", index, *names))
    kind, location = ctypes.c_int(), ctypes.c_size_t()
    dtype, rank = ctypes.c_int(), ctypes.c_size_t()
    dims = ctypes.POINTER(ctypes.c_int64)()
    out = (ctypes.byref(kind), ctypes.byref(location), ctypes.byref(dtype), ctypes.byref(rank))
    operands = []
    for operand in range(count.value):
        check(fusion._call("fst_fusion_opaque_operand", index, operand, *out, ctypes.byref(dims)))
        operands.append(_tensor(kind.value, location.value, dtype.value, rank.value, dims))
    check(fusion._call("fst_fusion_opaque_result", index, *out, ctypes.byref(dims)))
    result = _tensor(kind.value, location.value, dtype.value, rank.value, dims)
    return OpaqueOp(
        index=index,
        name=decode(name.value),
        handle=handle.value,
        value=_value_of(fusion._graph_ref(), handle.value),
        operands=tuple(operands),
        result=result,
    )


def opaque_ops(fusion: Any) -> list[OpaqueOp]:
    """Every opaque operation of `fusion`, in graph order."""
    count = ctypes.c_size_t()
    check(fusion._call("fst_fusion_opaque_count", ctypes.byref(count)))
    return [opaque_op(fusion, index) for index in range(count.value)]


def steps(fusion: Any) -> list[Step]:
    """The steps of `fusion` in the order they run."""
    count = ctypes.c_size_t()
    check(fusion._call("fst_fusion_step_count", ctypes.byref(count)))
    kernels = fusion.kernels
    ops = opaque_ops(fusion)
    result = []
    for position in range(count.value):
        kind = ctypes.c_int()
        index = ctypes.c_size_t()
        check(fusion._call("fst_fusion_step", position, ctypes.byref(kind), ctypes.byref(index)))
        step_kind = from_c(StepKind, kind.value)
        if step_kind is StepKind.KERNEL:
            result.append(Step(step_kind, index.value, kernel=kernels[index.value]))
        else:
            result.append(Step(step_kind, index.value, opaque=ops[index.value]))
    return result


# -- calls ------------------------------------------------------------------------------------


class DeviceTensor:
    """A device buffer of an opaque call on the CUDA backend.

    It has ``__cuda_array_interface__`` (version 3, with the call's stream), so
    ``torch.as_tensor(t, device="cuda")`` or ``cupy.asarray(t)`` wrap it without a copy.
    bf16 travels as uint16 there (the interface has no bfloat16). Valid only while the
    callback runs.

    Attributes:
        pointer: the device address.
        dtype: the fstitch element type.
        shape: the dims (dense, row-major).
        readonly: True for operands, False for the result.
        stream: the run's CUstream (0: the default stream).
    """

    def __init__(
        self, pointer: int, dtype: DType, shape: tuple[int, ...], readonly: bool, stream: int
    ) -> None:
        self.pointer = pointer
        self.dtype = dtype
        self.shape = shape
        self.readonly = readonly
        self.stream = stream

    @property
    def nbytes(self) -> int:
        """Bytes of the buffer."""
        return math.prod(self.shape) * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self) -> dict:  # noqa: N802 - the protocol's name
        numpy_dtype = np.dtype(np.uint16) if self.dtype is DType.BF16 else self.dtype.numpy
        return {
            "shape": self.shape,
            "typestr": numpy_dtype.str,
            "data": (self.pointer, self.readonly),
            "version": 3,
            "strides": None,
            # The interface spells the legacy default stream 1 (0 is not allowed).
            "stream": self.stream or 1,
        }

    def __repr__(self) -> str:
        return (
            f"<fstitch.DeviceTensor {self.dtype.value}{list(self.shape)} at 0x{self.pointer:x}"
            f"{' read-only' if self.readonly else ''}>"
        )


def _host_array(pointer: int, dtype: DType, shape: tuple[int, ...], writable: bool) -> np.ndarray:
    """A numpy array over `pointer` without a copy (read-only unless `writable`)."""
    count = math.prod(shape)
    if count == 0 or not pointer:
        array = np.empty(shape, dtype=dtype.numpy)
    else:
        memory = (ctypes.c_char * (count * dtype.itemsize)).from_address(pointer)
        array = np.frombuffer(memory, dtype=dtype.numpy, count=count).reshape(shape)
    if not writable:
        array.flags.writeable = False
    return array


class OpaqueCall:
    """One call of an opaque operation, as the ``opaque=`` callable receives it.

    On the host backend and in reference evaluation, :attr:`operands` are read-only numpy
    arrays and :attr:`result` a writable one, all over fstitch's buffers (no copies): write
    the result into it (``np.matmul(a, b, out=call.result)`` or ``call.result[...] = ...``)
    before returning. On the CUDA backend they are :class:`DeviceTensor` objects, and the
    work must be queued on :attr:`stream`, after the kernels fstitch queued there.

    Everything here is valid only while the callable runs: do not keep the arrays.
    f16 arrays are numpy.float16; bf16 arrays are ml_dtypes.bfloat16 when ml_dtypes is
    installed, else uint16 bit patterns (:attr:`operand_dtypes` and :attr:`result_dtype`
    say which fstitch dtype each one holds).

    Attributes:
        name: the operation's name, as given to ``Graph.opaque``.
        handle: the C ``fst_value`` of the operation.
        value: that value as a :class:`Value` while its graph is alive and open, else None.
        operands: the operand buffers, in order.
        operand_dtypes: the fstitch dtype of each operand.
        result: the result buffer to fill.
        result_dtype: its fstitch dtype.
        stream: the run's CUstream as an int (always 0 on the host and in evaluation).
    """

    def __init__(self, pointer: Any, graph: Any, on_device: bool) -> None:
        lib = _lib.library()
        name = ctypes.c_char_p()
        check(lib.fst_opaque_call_name(pointer, ctypes.byref(name)))
        handle = _lib.fst_value()
        check(lib.fst_opaque_call_value(pointer, ctypes.byref(handle)))
        stream = ctypes.c_void_p()
        check(lib.fst_opaque_call_stream(pointer, ctypes.byref(stream)))
        count = ctypes.c_size_t()
        check(lib.fst_opaque_call_operand_count(pointer, ctypes.byref(count)))
        self.name = decode(name.value)
        self.handle = handle.value
        self.value = _value_of(graph, handle.value)
        self.stream = stream.value or 0

        data = ctypes.c_void_p()
        dtype, rank = ctypes.c_int(), ctypes.c_size_t()
        dims = ctypes.POINTER(ctypes.c_int64)()
        out = (ctypes.byref(data), ctypes.byref(dtype), ctypes.byref(rank), ctypes.byref(dims))

        def buffer(writable: bool) -> tuple[Any, DType]:
            kind = DType.from_code(dtype.value)
            shape = _dims(rank.value, dims)
            if on_device:
                return DeviceTensor(data.value or 0, kind, shape, not writable, self.stream), kind
            return _host_array(data.value or 0, kind, shape, writable), kind

        operands = []
        for index in range(count.value):
            check(lib.fst_opaque_call_operand(pointer, index, *out))
            operands.append(buffer(writable=False))
        check(lib.fst_opaque_call_result(pointer, *out))
        self.result, self.result_dtype = buffer(writable=True)
        self.operands = tuple(array for array, _ in operands)
        self.operand_dtypes = tuple(kind for _, kind in operands)

    def __repr__(self) -> str:
        return f"<fstitch.OpaqueCall {self.name!r} operands={len(self.operands)}>"


def _failure_text(error: BaseException) -> bytes:
    if isinstance(error, Error):
        text = error.message
    else:
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text.replace("\0", "\\0").encode("utf-8", errors="replace")


def _status_of(error: BaseException) -> int:
    """The status a failing callable stops the run with: an fstitch Error's own, otherwise
    FST_ERROR_LAUNCH (the opaque step failed to run)."""
    if isinstance(error, Error) and error.status is not Status.OK:
        return int(error.status)
    return int(Status.LAUNCH)


class OpaqueCallback:
    """A Python callable as an ``fst_opaque_callback`` for one run or evaluation.

    The C callback (:attr:`function`) builds an :class:`OpaqueCall` and calls the callable;
    it never lets an exception out into C: the first one is kept, its text goes to
    fst_opaque_call_fail(), and an error status stops the run. :meth:`check` then raises,
    in the caller: an :class:`Error` with the library's message (which names the operation
    and carries the text) chained to the original exception, or the original itself when
    it is no ``Exception`` (KeyboardInterrupt, SystemExit). The object keeps the ctypes
    callback alive; it must live until the C call returns.
    """

    def __init__(self, callable_: Callable[[OpaqueCall], Any], graph: Any, on_device: bool):
        if not callable(callable_):
            raise Error(
                Status.INVALID_ARGUMENT,
                f"opaque is {type(callable_).__name__}; expected a callable that takes an "
                "fstitch.OpaqueCall (an input named 'opaque' must be passed in a dict)",
            )
        self._callable = callable_
        self._graph = graph
        self._on_device = on_device
        self._raised: BaseException | None = None
        self.function = _lib.fst_opaque_callback(self._trampoline)

    def _trampoline(self, pointer: Any, _user_data: Any) -> int:
        try:
            self._callable(OpaqueCall(pointer, self._graph, self._on_device))
            return int(Status.OK)
        except BaseException as error:  # noqa: BLE001 - nothing may cross into C
            try:
                if self._raised is None:
                    self._raised = error
                _lib.library().fst_opaque_call_fail(pointer, _failure_text(error))
                return _status_of(error)
            except BaseException:  # noqa: BLE001 - still nothing may cross into C
                return int(Status.LAUNCH)

    def check(self, status: int) -> None:
        """Raises for a failed run: the callable's exception, or the library's error."""
        if status == Status.OK:
            return
        error = last_error(status)  # first: before any other call on this thread
        raised, self._raised = self._raised, None
        if raised is None:
            raise error
        if not isinstance(raised, Exception):
            raise raised
        raise error from raised
