"""Element types: the DType enum and its conversions to and from numpy.

f16 is stored as ``numpy.float16``. bf16 has no numpy type: it is exchanged as
``ml_dtypes.bfloat16`` arrays when the ml_dtypes package is installed, and otherwise as
``numpy.uint16`` arrays holding the bit patterns (:func:`to_bf16_bits` and
:func:`from_bf16_bits` convert). Inputs accept either form; outputs use the first available.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from . import _lib
from ._show import shown
from .errors import Error, Status

try:  # optional: a real bfloat16 numpy dtype
    import ml_dtypes as _ml_dtypes  # type: ignore[import-not-found]

    _BFLOAT16: np.dtype | None = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _BFLOAT16 = None


class DType(str, enum.Enum):
    """An element type. Members compare equal to their text-format names ("f32", ...)."""

    F32 = "f32"
    F16 = "f16"
    BF16 = "bf16"
    F64 = "f64"
    I8 = "i8"
    I32 = "i32"
    I64 = "i64"
    U8 = "u8"
    BOOL = "bool"

    def __str__(self) -> str:
        return self.value

    @property
    def code(self) -> int:
        """The C ``fst_dtype`` value."""
        return _CODES[self]

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return _ITEMSIZES[self]

    @property
    def is_floating(self) -> bool:
        """True for f32, f16, bf16 and f64."""
        return self in (DType.F32, DType.F16, DType.BF16, DType.F64)

    @property
    def is_integer(self) -> bool:
        """True for i8, i32, i64 and u8."""
        return self in (DType.I8, DType.I32, DType.I64, DType.U8)

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype of arrays of this type (bf16: uint16 bit patterns without ml_dtypes)."""
        if self is DType.BF16:
            return _BFLOAT16 if _BFLOAT16 is not None else np.dtype(np.uint16)
        return _NUMPY[self]

    @classmethod
    def from_code(cls, code: int) -> DType:
        """The DType of a C ``fst_dtype`` value."""
        for member, member_code in _CODES.items():
            if member_code == code:
                return member
        raise Error(Status.INTERNAL, f"the library returned the unknown fst_dtype {code}")


_CODES: dict[DType, int] = {
    DType.F32: _lib.ENUMS["fst_dtype"]["FST_F32"],
    DType.F16: _lib.ENUMS["fst_dtype"]["FST_F16"],
    DType.BF16: _lib.ENUMS["fst_dtype"]["FST_BF16"],
    DType.F64: _lib.ENUMS["fst_dtype"]["FST_F64"],
    DType.I8: _lib.ENUMS["fst_dtype"]["FST_I8"],
    DType.I32: _lib.ENUMS["fst_dtype"]["FST_I32"],
    DType.I64: _lib.ENUMS["fst_dtype"]["FST_I64"],
    DType.U8: _lib.ENUMS["fst_dtype"]["FST_U8"],
    DType.BOOL: _lib.ENUMS["fst_dtype"]["FST_BOOL"],
}

_ITEMSIZES: dict[DType, int] = {
    DType.F32: 4,
    DType.F16: 2,
    DType.BF16: 2,
    DType.F64: 8,
    DType.I8: 1,
    DType.I32: 4,
    DType.I64: 8,
    DType.U8: 1,
    DType.BOOL: 1,
}

_NUMPY: dict[DType, np.dtype] = {
    DType.F32: np.dtype(np.float32),
    DType.F16: np.dtype(np.float16),
    DType.F64: np.dtype(np.float64),
    DType.I8: np.dtype(np.int8),
    DType.I32: np.dtype(np.int32),
    DType.I64: np.dtype(np.int64),
    DType.U8: np.dtype(np.uint8),
    DType.BOOL: np.dtype(np.bool_),
}

# Other names accepted for dtypes: numpy's names.
_ALIASES: dict[str, DType] = {
    "float32": DType.F32,
    "float16": DType.F16,
    "bfloat16": DType.BF16,
    "float64": DType.F64,
    "int8": DType.I8,
    "int32": DType.I32,
    "int64": DType.I64,
    "uint8": DType.U8,
}

f32 = DType.F32
f16 = DType.F16
bf16 = DType.BF16
f64 = DType.F64
i8 = DType.I8
i32 = DType.I32
i64 = DType.I64
u8 = DType.U8
bool_ = DType.BOOL


def _names() -> str:
    return ", ".join(member.value for member in DType)


def as_dtype(spec: Any, what: str = "dtype") -> DType:
    """The DType named by `spec`.

    Accepts a DType, a name ("f32", "bf16", or numpy's "float32", "bfloat16", ...), a numpy
    dtype or scalar type (numpy.float32, numpy.dtype("f2"), ml_dtypes.bfloat16) and the
    Python types bool, int (i64) and float (f64).

    Raises:
        Error: INVALID_ARGUMENT naming `what` when `spec` names no fstitch dtype.
    """
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, str):
        try:
            return DType(spec)
        except ValueError:
            if spec in _ALIASES:
                return _ALIASES[spec]
        raise Error(
            Status.INVALID_ARGUMENT, f"{what} {shown(spec)} is not a dtype; expected one of {_names()}"
        )
    if spec is bool:
        return DType.BOOL
    if spec is int:
        return DType.I64
    if spec is float:
        return DType.F64
    try:
        numpy_dtype = np.dtype(spec)
    except (TypeError, ValueError):
        numpy_dtype = None
    if numpy_dtype is not None and spec is not None:
        if numpy_dtype.name == "bfloat16":
            return DType.BF16
        for member, member_dtype in _NUMPY.items():
            if numpy_dtype == member_dtype:
                return member
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} {numpy_dtype} has no fstitch dtype; expected one of {_names()}"
            + (
                " (bf16 takes uint16 bit patterns as data, but name it 'bf16')"
                if numpy_dtype == np.uint16
                else ""
            ),
        )
    raise Error(
        Status.INVALID_ARGUMENT, f"{what} {shown(spec)} is not a dtype; expected one of {_names()}"
    )


def accepts(dtype: DType, array_dtype: np.dtype) -> bool:
    """Whether an array of numpy dtype `array_dtype` may hold data of `dtype`."""
    if dtype is DType.BF16:
        return array_dtype == np.dtype(np.uint16) or array_dtype.name == "bfloat16"
    return array_dtype == _NUMPY[dtype]


def to_bf16_bits(values: Any) -> np.ndarray:
    """bfloat16 bit patterns (uint16) of `values`, rounded to nearest even; NaN stays NaN."""
    single = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    bits = single.view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    rounded = ((bits + rounding) >> 16).astype(np.uint16)
    return np.where(np.isnan(single), np.uint16(0x7FC0), rounded).astype(np.uint16)


def from_bf16_bits(bits: Any) -> np.ndarray:
    """float32 values of bfloat16 bit patterns (a uint16 or ml_dtypes.bfloat16 array)."""
    array = np.ascontiguousarray(np.asarray(bits))
    if array.dtype.name == "bfloat16":
        array = array.view(np.uint16)
    if array.dtype != np.uint16:
        raise Error(
            Status.INVALID_ARGUMENT, f"bits have dtype {array.dtype}; expected uint16 bit patterns"
        )
    return (array.astype(np.uint32) << 16).view(np.float32)
