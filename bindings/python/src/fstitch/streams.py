"""Choosing the CUDA stream of a run.

In order:

1. the ``stream=`` argument: an int (a CUstream handle; 0 is the default stream), an
   object with ``.cuda_stream`` (torch.cuda.Stream) or ``.ptr`` (cupy.cuda.Stream), or one
   with ``__cuda_stream__()`` (the CUDA Python stream protocol). The caller vouches that
   the arrays are ready on it: no synchronization is added.
2. the current torch stream of the device, when an array is a torch tensor, as torch's own
   kernels would use.
3. the ``stream`` field of the arrays read through the CUDA Array Interface v3: the
   producer's work is queued there, so running on the same stream orders the run after it
   with no synchronization. Arrays that name different streams are refused (the binding
   does not synchronize streams itself); pass ``stream=`` after synchronizing them.
   Per the interface, 1 is the legacy default stream and 2 the per-thread default stream;
   both are also CUstream handles with that meaning.
4. the default stream (0).

DLPack producers receive the chosen stream as ``__dlpack__(stream=...)`` (1 in place of 0,
as the protocol requires) and make their data ready on it themselves.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from ._show import shown
from ._args import as_address
from .device_arrays import DeviceBuffer
from .errors import Error, Status


def stream_handle(stream: Any) -> int | None:
    """The CUstream handle of a ``stream=`` argument, None when it is None."""
    if stream is None:
        return None
    if isinstance(stream, bool):
        raise Error(
            Status.INVALID_ARGUMENT, f"stream {shown(stream)} is a bool; expected a CUDA stream"
        )
    handle: Any = stream
    if not isinstance(stream, int):
        if hasattr(stream, "__cuda_stream__"):
            handle = stream.__cuda_stream__()[1]
        elif hasattr(stream, "cuda_stream"):
            handle = stream.cuda_stream
        elif hasattr(stream, "ptr"):
            handle = stream.ptr
        else:
            raise Error(
                Status.INVALID_ARGUMENT,
                f"stream {shown(stream)} is not a CUDA stream; pass an int handle or an object with "
                ".cuda_stream (torch) or .ptr (CuPy)",
            )
    try:
        value = int(handle)
    except (TypeError, ValueError):
        raise Error(Status.INVALID_ARGUMENT, f"stream {shown(stream)} has no integer handle") from None
    return as_address(value, "stream handle")


def _torch_stream(objects: Iterable[Any]) -> int | None:
    """The current torch stream of the first torch tensor's device, if any is a tensor."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for obj in objects:
        if isinstance(obj, torch.Tensor) and obj.is_cuda:
            return int(torch.cuda.current_stream(obj.device).cuda_stream)
    return None


def _interface_stream(buffers: Iterable[tuple[str, DeviceBuffer]]) -> int | None:
    """The one stream the CUDA Array Interface arrays name, refusing disagreement."""
    chosen: int | None = None
    chosen_by = ""
    for what, buffer in buffers:
        if buffer.stream is None:
            continue
        if chosen is None:
            chosen, chosen_by = buffer.stream, what
        elif buffer.stream != chosen:
            raise Error(
                Status.INVALID_ARGUMENT,
                f"{chosen_by} is on CUDA stream {chosen:#x} but {what} is on stream "
                f"{buffer.stream:#x}; synchronize them and pass stream=",
            )
    return chosen


def choose_stream(
    explicit: Any, objects: Iterable[Any], interface_buffers: Iterable[tuple[str, DeviceBuffer]]
) -> int:
    """The run's stream by the rules of this module.

    Args:
        explicit: the ``stream=`` argument.
        objects: the arrays as the caller gave them.
        interface_buffers: (what, DeviceBuffer) of the arrays read through the CUDA Array
            Interface.
    """
    handle = stream_handle(explicit)
    if handle is not None:
        return handle
    handle = _torch_stream(objects)
    if handle is not None:
        return handle
    handle = _interface_stream(interface_buffers)
    return 0 if handle is None else handle


def dlpack_stream(stream: int) -> int:
    """The value to pass as ``__dlpack__(stream=...)`` for a run on `stream`."""
    return 1 if stream == 0 else stream
