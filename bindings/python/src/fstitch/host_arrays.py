"""Host (numpy) arrays for the host backend and the reference evaluator."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ._args import as_address
from .device_arrays import is_device_array
from .dtypes import DType, accepts
from .errors import Error, Status
from .specs import TensorSpec


def _expected(spec: TensorSpec) -> str:
    if spec.dtype is DType.BF16:
        return "bf16 (uint16 bit patterns or ml_dtypes.bfloat16)"
    return f"{spec.dtype.value} (numpy {spec.dtype.numpy})"


def _check(spec: TensorSpec, array: np.ndarray, what: str) -> None:
    if not accepts(spec.dtype, array.dtype):
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} has dtype {array.dtype}; the graph declares {_expected(spec)}",
        )
    if tuple(array.shape) != tuple(spec.shape):
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} has shape {tuple(array.shape)}; the graph declares {tuple(spec.shape)}",
        )


def _refuse_device(obj: Any, what: str, backend: str) -> None:
    if is_device_array(obj):
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} is a CUDA array ({type(obj).__module__}.{type(obj).__name__}) but {backend} "
            "works on host memory; pass a numpy array",
        )


def input_array(spec: TensorSpec, obj: Any, what: str, backend: str) -> np.ndarray:
    """`obj` as a C-contiguous numpy array of the input's dtype and shape (copied if strided)."""
    _refuse_device(obj, what, backend)
    try:
        array = np.asarray(obj)
    except Exception as error:  # noqa: BLE001 - any conversion failure is the caller's argument
        raise Error(Status.INVALID_ARGUMENT, f"{what} is not an array: {error}") from None
    _check(spec, array, what)
    with _allocation(what):
        return np.ascontiguousarray(array)


def output_array(spec: TensorSpec, obj: Any, what: str, backend: str) -> np.ndarray:
    """A caller's output array, which is written in place: it must fit exactly."""
    _refuse_device(obj, what, backend)
    if not isinstance(obj, np.ndarray):
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} is {type(obj).__name__}; expected a numpy array to write",
        )
    _check(spec, obj, what)
    if not obj.flags.c_contiguous:
        raise Error(
            Status.INVALID_ARGUMENT, f"{what} is not C-contiguous; outputs are written in place"
        )
    if not obj.flags.writeable:
        raise Error(Status.INVALID_ARGUMENT, f"{what} is read-only")
    return obj


def new_output(spec: TensorSpec) -> np.ndarray:
    """A fresh output array of the spec's dtype and shape."""
    with _allocation(f"output '{spec.name}' ({spec.describe()})"):
        return np.empty(spec.shape, dtype=spec.dtype.numpy)


@contextmanager
def _allocation(what: str) -> Iterator[None]:
    """numpy's refusals of an array too large to allocate, as Error(OUT_OF_MEMORY)."""
    try:
        yield
    except MemoryError as error:
        raise Error(Status.OUT_OF_MEMORY, f"{what}: out of memory ({error})") from None
    except ValueError as error:  # "array is too big": more bytes than numpy can address
        if "too big" not in str(error) and "maximum" not in str(error):
            raise
        raise Error(Status.OUT_OF_MEMORY, f"{what}: out of memory ({error})") from None


def workspace_address(obj: Any, size: int, backend: str) -> int | None:
    """The address of a host workspace: None, an int, or a numpy array of at least `size` bytes."""
    if obj is None:
        return None
    if isinstance(obj, int) and not isinstance(obj, bool):
        return as_address(obj, "workspace address") or None
    _refuse_device(obj, "workspace", backend)
    if not isinstance(obj, np.ndarray):
        raise Error(
            Status.INVALID_ARGUMENT,
            f"workspace is {type(obj).__name__}; expected a numpy array or an address",
        )
    if not obj.flags.c_contiguous or not obj.flags.writeable:
        raise Error(Status.INVALID_ARGUMENT, "workspace must be a writable C-contiguous array")
    if obj.nbytes < size:
        raise Error(
            Status.INVALID_ARGUMENT, f"workspace has {obj.nbytes} bytes; the fusion needs {size}"
        )
    return int(obj.ctypes.data)
