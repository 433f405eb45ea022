"""Reading the tensor description out of a DLPack capsule (dlpack.h v0.8 and v1.x).

The binding only looks at the tensor: it does not consume the capsule (it does not rename
it to "used_dltensor"), so the producer's capsule destructor releases the tensor when the
capsule is collected, as the DLPack protocol specifies for unconsumed capsules. The capsule
is kept alive for as long as the data pointer is used.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    POINTER,
    Structure,
    c_char_p,
    c_int32,
    c_int64,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any, NamedTuple

from .errors import Error, Status

#: DLDeviceType values this binding meets.
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
#: Device types whose memory a CUDA kernel can address.
CUDA_DEVICE_TYPES = (KDL_CUDA, KDL_CUDA_MANAGED)

#: DLDataTypeCode values.
KDL_INT = 0
KDL_UINT = 1
KDL_FLOAT = 2
KDL_BFLOAT = 4
KDL_BOOL = 6

#: DLPACK_FLAG_BITMASK_READ_ONLY of DLManagedTensorVersioned.flags.
_FLAG_READ_ONLY = 1


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


class TensorView(NamedTuple):
    """What a DLPack capsule says about its tensor."""

    pointer: int
    device_type: int
    device_id: int
    code: int
    bits: int
    lanes: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None  # in elements; None means compact row-major
    readonly: bool


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = c_void_p
_get_pointer.argtypes = [ctypes.py_object, c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, c_char_p]


def view(capsule: Any, what: str) -> TensorView:
    """The tensor behind a "dltensor" or "dltensor_versioned" capsule (not consumed)."""
    readonly = False
    if _is_valid(capsule, b"dltensor"):
        managed = DLManagedTensor.from_address(_get_pointer(capsule, b"dltensor"))
        tensor = managed.dl_tensor
    elif _is_valid(capsule, b"dltensor_versioned"):
        versioned = DLManagedTensorVersioned.from_address(
            _get_pointer(capsule, b"dltensor_versioned")
        )
        if versioned.version.major != 1:
            raise Error(
                Status.UNSUPPORTED,
                f"{what}: DLPack version {versioned.version.major}."
                f"{versioned.version.minor} is not supported",
            )
        tensor = versioned.dl_tensor
        readonly = bool(versioned.flags & _FLAG_READ_ONLY)
    else:
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what}: __dlpack__() did not return an unconsumed DLPack capsule",
        )
    ndim = int(tensor.ndim)
    shape = tuple(int(tensor.shape[i]) for i in range(ndim))
    strides = tuple(int(tensor.strides[i]) for i in range(ndim)) if tensor.strides else None
    return TensorView(
        pointer=int(tensor.data or 0) + int(tensor.byte_offset),
        device_type=int(tensor.device.device_type),
        device_id=int(tensor.device.device_id),
        code=int(tensor.dtype.code),
        bits=int(tensor.dtype.bits),
        lanes=int(tensor.dtype.lanes),
        shape=shape,
        strides=strides,
        readonly=readonly,
    )
