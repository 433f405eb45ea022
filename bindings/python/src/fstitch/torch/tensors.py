"""Torch tensors and dtypes on the fstitch side: dtype names, numpy views of CPU tensors
(the host backend's arrays) in both directions, and tensors over the device buffers of the
CUDA backend's opaque calls, without copies where torch allows."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..dtypes import DType

_TO_FSTITCH = {
    torch.float32: DType.F32,
    torch.float16: DType.F16,
    torch.bfloat16: DType.BF16,
    torch.float64: DType.F64,
    torch.int8: DType.I8,
    torch.int32: DType.I32,
    torch.int64: DType.I64,
    torch.uint8: DType.U8,
    torch.bool: DType.BOOL,
}


class UnsupportedDtype(Exception):
    """A torch dtype that fstitch has no element type for (complex, fp8, int16, ...)."""


def fstitch_dtype(dtype: torch.dtype) -> DType:
    """The fstitch element type of a torch dtype; raises UnsupportedDtype when there is none."""
    try:
        return _TO_FSTITCH[dtype]
    except KeyError:
        raise UnsupportedDtype(f"fstitch has no element type for torch.{dtype}".replace("torch.torch.", "torch.")) from None


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A numpy view of a CPU tensor (bf16 as uint16 bit patterns, which fstitch takes)."""
    tensor = tensor.detach()
    if tensor.is_conj() or tensor.is_neg():
        tensor = tensor.resolve_conj().resolve_neg()
    if tensor.dtype is torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(np.uint16)
    return tensor.numpy()


def from_device(buffer: Any, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A tensor of `dtype` over a device buffer of an opaque call (fstitch.DeviceTensor, whose
    __cuda_array_interface__ carries bf16 as uint16), without a copy."""
    tensor = torch.as_tensor(buffer, device=device)
    return tensor if tensor.dtype == dtype else tensor.view(dtype)


def from_numpy(array: Any, dtype: torch.dtype) -> torch.Tensor:
    """A tensor of `dtype` over the numpy array `array` (no copy); writable arrays only."""
    if dtype is torch.bfloat16:
        return torch.from_numpy(np.asarray(array).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.asarray(array))
