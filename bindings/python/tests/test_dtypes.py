"""DType naming, numpy correspondence and the bf16 bit conversions."""

from __future__ import annotations

import numpy as np
import pytest

import fstitch
from fstitch import DType


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("f32", DType.F32),
        ("float32", DType.F32),
        (np.float32, DType.F32),
        (np.dtype("f4"), DType.F32),
        (fstitch.f32, DType.F32),
        ("f16", DType.F16),
        (np.float16, DType.F16),
        ("bf16", DType.BF16),
        ("bfloat16", DType.BF16),
        ("f64", DType.F64),
        (float, DType.F64),
        (np.float64, DType.F64),
        ("i8", DType.I8),
        (np.int8, DType.I8),
        ("i32", DType.I32),
        (np.int32, DType.I32),
        ("i64", DType.I64),
        (int, DType.I64),
        ("u8", DType.U8),
        (np.uint8, DType.U8),
        ("bool", DType.BOOL),
        (bool, DType.BOOL),
        (np.bool_, DType.BOOL),
        (fstitch.bool_, DType.BOOL),
    ],
)
def test_dtype_specs(spec, expected):
    assert fstitch.as_dtype(spec) is expected


@pytest.mark.parametrize(
    "spec", ["f33", "float", "", "F32", None, np.uint16, np.complex64, object, 3]
)
def test_bad_dtype_specs(spec):
    with pytest.raises(fstitch.Error) as caught:
        fstitch.as_dtype(spec)
    assert caught.value.status is fstitch.Status.INVALID_ARGUMENT
    assert "f32, f16, bf16, f64, i8, i32, i64, u8, bool" in caught.value.message


def test_uint16_hints_at_bf16():
    with pytest.raises(fstitch.Error, match="bf16"):
        fstitch.as_dtype(np.uint16)


def test_members_compare_with_their_names():
    assert fstitch.f32 == "f32" and str(fstitch.bf16) == "bf16"
    assert DType.F32.itemsize == 4 and DType.BOOL.itemsize == 1 and DType.I64.itemsize == 8
    assert DType.F16.is_floating and DType.U8.is_integer and not DType.BOOL.is_integer


def test_numpy_types():
    assert DType.F16.numpy == np.dtype(np.float16)
    assert DType.BOOL.numpy == np.dtype(np.bool_)
    assert DType.BF16.numpy in (np.dtype(np.uint16),) or DType.BF16.numpy.name == "bfloat16"


def test_to_bf16_bits_rounds_to_nearest_even():
    values = np.array(
        [
            1.0,
            -2.0,
            1.0 + 2.0**-8,
            1.0 + 3 * 2.0**-8,
            1.0 + 2.0**-8 + 2.0**-20,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
        ],
        dtype=np.float32,
    )
    expected = [0x3F80, 0xC000, 0x3F80, 0x3F82, 0x3F81, 0x7F80, 0xFF80, 0x0000, 0x8000]
    assert fstitch.to_bf16_bits(values).tolist() == expected


def test_to_bf16_bits_keeps_nan():
    bits = fstitch.to_bf16_bits(np.array([np.nan], dtype=np.float32))
    assert np.isnan(fstitch.from_bf16_bits(bits)).all()


def test_from_bf16_bits_is_exact():
    bits = np.array([0x3F80, 0xC000, 0x3F81, 0x7F80], dtype=np.uint16)
    assert fstitch.from_bf16_bits(bits).tolist() == [1.0, -2.0, 1.0078125, np.inf]


def test_from_bf16_bits_refuses_other_dtypes():
    with pytest.raises(fstitch.Error):
        fstitch.from_bf16_bits(np.zeros(3, dtype=np.float32))
