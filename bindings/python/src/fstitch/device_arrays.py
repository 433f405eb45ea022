"""CUDA arrays from other libraries: ``__cuda_array_interface__`` (v2 and v3) and DLPack.

An object is read through its CUDA Array Interface when it has one that works (torch CUDA
tensors, CuPy, Numba), else through DLPack when ``__dlpack_device__()`` reports CUDA
memory (torch bf16 tensors, JAX). The result, a :class:`DeviceBuffer`, is what a run
checks against the graph and passes to the library.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from . import dlpack
from .dtypes import _NUMPY, DType
from .errors import Error, Status


class DeviceBuffer(NamedTuple):
    """A device array as the library needs it, with what is checked against the graph."""

    pointer: int
    shape: tuple[int, ...]
    nbytes: int
    element: str  # the element type in words, for messages
    dtypes: frozenset[DType]  # the fstitch dtypes these elements can hold
    contiguous: bool
    readonly: bool
    stream: int | None  # the CUDA Array Interface v3 "stream" field; None if absent
    device_id: int | None
    source: Any  # the object itself (outputs are returned as these)
    keepalive: Any  # what must live while the pointer is used (a DLPack capsule)


def _dtypes_of_numpy(dtype: np.dtype) -> frozenset[DType]:
    if dtype == np.dtype(np.uint16) or dtype.name == "bfloat16":
        return frozenset({DType.BF16})
    return frozenset(member for member, member_dtype in _NUMPY.items() if member_dtype == dtype)


_DLPACK_DTYPES = {
    (dlpack.KDL_FLOAT, 32): DType.F32,
    (dlpack.KDL_FLOAT, 16): DType.F16,
    (dlpack.KDL_BFLOAT, 16): DType.BF16,
    (dlpack.KDL_FLOAT, 64): DType.F64,
    (dlpack.KDL_INT, 8): DType.I8,
    (dlpack.KDL_INT, 32): DType.I32,
    (dlpack.KDL_INT, 64): DType.I64,
    (dlpack.KDL_UINT, 8): DType.U8,
    (dlpack.KDL_BOOL, 8): DType.BOOL,
}
_DLPACK_CODE_NAMES = {
    dlpack.KDL_INT: "int",
    dlpack.KDL_UINT: "uint",
    dlpack.KDL_FLOAT: "float",
    dlpack.KDL_BFLOAT: "bfloat",
    dlpack.KDL_BOOL: "bool",
}


def _compact(shape: tuple[int, ...], strides: tuple[int, ...] | None, unit: int) -> bool:
    """Whether `strides` (in multiples of `unit`) describe a dense row-major layout."""
    if strides is None:
        return True
    expected = unit
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def _nbytes(shape: tuple[int, ...], unit: int, what: str) -> int:
    """Exact bytes of a dense array of `shape` (Python ints: no int64 wrap); negative dims
    are refused, since two of them would multiply to a plausible size."""
    if any(dim < 0 for dim in shape):
        raise Error(Status.INVALID_ARGUMENT, f"{what}: shape {shape} has a negative dim")
    return math.prod(shape) * unit


def _detached(obj: Any) -> Any:
    """torch tensors that require grad refuse both protocols; the data is all a run needs."""
    if getattr(obj, "requires_grad", False) and hasattr(obj, "detach"):
        return obj.detach()
    return obj


def _type_name(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__name__}"


def cuda_array_interface(obj: Any) -> dict | None:
    """The object's CUDA Array Interface dict, or None when it has none that works."""
    try:
        interface = obj.__cuda_array_interface__
    except Exception:  # noqa: BLE001 - torch raises TypeError for bf16, AttributeError on CPU
        return None
    return interface if isinstance(interface, dict) else None


def dlpack_device(obj: Any) -> tuple[int, int] | None:
    """(device type, device id) from ``__dlpack_device__()``, or None."""
    method = getattr(obj, "__dlpack_device__", None)
    if method is None:
        return None
    try:
        device_type, device_id = method()
        return int(device_type), int(device_id)
    except Exception:  # noqa: BLE001 - a broken protocol is treated as absent
        return None


def is_device_array(obj: Any) -> bool:
    """Whether `obj` is a CUDA array by either protocol."""
    obj = _detached(obj)
    if cuda_array_interface(obj) is not None:
        return True
    device = dlpack_device(obj)
    return device is not None and device[0] in dlpack.CUDA_DEVICE_TYPES


def _from_interface(obj: Any, interface: dict, what: str) -> DeviceBuffer:
    try:
        shape = tuple(int(d) for d in interface["shape"])
        dtype = np.dtype(interface["typestr"])
        pointer, readonly = interface["data"]
    except (KeyError, TypeError, ValueError) as error:
        raise Error(
            Status.INVALID_ARGUMENT, f"{what}: malformed __cuda_array_interface__ ({error})"
        ) from None
    if interface.get("mask") is not None:
        raise Error(Status.UNSUPPORTED, f"{what}: masked CUDA arrays are not supported")
    strides = interface.get("strides")
    strides = None if strides is None else tuple(int(s) for s in strides)
    stream = interface.get("stream") if int(interface.get("version", 0)) >= 3 else None
    device = dlpack_device(obj)
    return DeviceBuffer(
        pointer=int(pointer or 0),
        shape=shape,
        nbytes=_nbytes(shape, dtype.itemsize, what),
        element=str(dtype),
        dtypes=_dtypes_of_numpy(dtype),
        contiguous=_compact(shape, strides, dtype.itemsize),
        readonly=bool(readonly),
        stream=None if stream is None else int(stream),
        device_id=device[1] if device is not None else None,
        source=obj,
        keepalive=None,
    )


def _from_dlpack(obj: Any, stream: int, what: str) -> DeviceBuffer:
    try:
        capsule = obj.__dlpack__(stream=stream)
    except TypeError:  # producers without the stream keyword
        capsule = obj.__dlpack__()
    tensor = dlpack.view(capsule, what)
    if tensor.device_type not in dlpack.CUDA_DEVICE_TYPES:
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what}: DLPack device type {tensor.device_type} is not CUDA memory",
        )
    kind = _DLPACK_DTYPES.get((tensor.code, tensor.bits)) if tensor.lanes == 1 else None
    element = f"{_DLPACK_CODE_NAMES.get(tensor.code, f'code{tensor.code}')}{tensor.bits}"
    if tensor.lanes != 1:
        element += f"x{tensor.lanes}"
    return DeviceBuffer(
        pointer=tensor.pointer,
        shape=tensor.shape,
        nbytes=_nbytes(tensor.shape, tensor.bits * tensor.lanes // 8, what),
        element=element,
        dtypes=frozenset({kind}) if kind is not None else frozenset(),
        contiguous=_compact(tensor.shape, tensor.strides, 1),
        readonly=tensor.readonly,
        stream=None,
        device_id=tensor.device_id,
        source=obj,
        keepalive=capsule,
    )


def has_interface(obj: Any) -> bool:
    """Whether `obj` will be read through the CUDA Array Interface."""
    return cuda_array_interface(_detached(obj)) is not None


def device_buffer(obj: Any, what: str, dlpack_stream: int) -> DeviceBuffer:
    """`obj` as a DeviceBuffer.

    Args:
        dlpack_stream: the consumer stream passed to ``__dlpack__`` (1 for the legacy
            default stream), on which the producer makes the data ready.

    Raises:
        Error: INVALID_ARGUMENT when `obj` is not a CUDA array, naming `what`.
    """
    source = obj
    obj = _detached(obj)
    interface = cuda_array_interface(obj)
    if interface is not None:
        buffer = _from_interface(obj, interface, what)
    else:
        device = dlpack_device(obj)
        if device is None or device[0] not in dlpack.CUDA_DEVICE_TYPES:
            raise Error(
                Status.INVALID_ARGUMENT,
                f"{what} is a host object ({_type_name(source)}) but the context runs on the CUDA "
                "backend; pass a CUDA array (a torch CUDA tensor, a CuPy array, or any object "
                "with __cuda_array_interface__ or a CUDA __dlpack_device__)",
            )
        buffer = _from_dlpack(obj, dlpack_stream, what)
    return buffer._replace(source=source)
