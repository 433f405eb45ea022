"""Running graphs and fusions: checking arrays against the graph, then calling the library."""

from __future__ import annotations

import ctypes
import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _lib
from ._args import as_address
from ._call import check, last_error
from ._show import shown
from .binding import bind_inputs, bind_outputs, pack
from .device_arrays import DeviceBuffer, device_buffer, has_interface
from .dtypes import DType
from .enums import Backend, ParamKind
from .errors import Error, Status, located
from .host_arrays import input_array, new_output, output_array, workspace_address
from .opaque import OpaqueCallback
from .specs import TensorSpec
from .streams import choose_stream, dlpack_stream, stream_handle


def _pointer_array(addresses: Sequence[int | None]) -> Any:
    return (ctypes.c_void_p * max(len(addresses), 1))(*addresses)


def _what(kind: str, spec: TensorSpec) -> str:
    return f"{kind} {shown(spec.name)}"


# -- host -----------------------------------------------------------------------------------


def _host_buffers(
    input_specs: Sequence[TensorSpec],
    output_specs: Sequence[TensorSpec],
    inputs: list[Any],
    outputs: list[Any] | None,
    backend: str,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    arrays_in = [
        input_array(spec, obj, _what("input", spec), backend)
        for spec, obj in zip(input_specs, inputs)
    ]
    if outputs is None:
        arrays_out = [new_output(spec) for spec in output_specs]
    else:
        arrays_out = [
            output_array(spec, obj, _what("output", spec), backend)
            for spec, obj in zip(output_specs, outputs)
        ]
    return arrays_in, arrays_out


def evaluate_graph(
    graph: Any, args: tuple[Any, ...], kwargs: dict[str, Any], opaque: Any = None
) -> Any:
    """Graph.evaluate: the reference evaluator on host arrays (opaque operations through
    the `opaque` callable, see opaque.py)."""
    callback = None if opaque is None else OpaqueCallback(opaque, graph, on_device=False)
    input_specs = graph.input_specs()
    output_specs = graph.output_specs()
    inputs, named = bind_inputs(input_specs, args, kwargs)
    arrays_in, arrays_out = _host_buffers(
        input_specs, output_specs, inputs, None, "the reference evaluator"
    )
    pointers = (
        _pointer_array([a.ctypes.data for a in arrays_in]),
        len(arrays_in),
        _pointer_array([a.ctypes.data for a in arrays_out]),
        len(arrays_out),
    )
    if callback is None:
        check(graph._call("fst_graph_evaluate_reference", *pointers))
    else:
        with graph._evaluating():
            status = graph._call(
                "fst_graph_evaluate_reference_with_opaque", *pointers, callback.function, None
            )
        callback.check(status)
    return pack(arrays_out, output_specs, named)


# -- CUDA -----------------------------------------------------------------------------------

_TORCH_DTYPES = {
    DType.F32: "float32",
    DType.F16: "float16",
    DType.BF16: "bfloat16",
    DType.F64: "float64",
    DType.I8: "int8",
    DType.I32: "int32",
    DType.I64: "int64",
    DType.U8: "uint8",
    DType.BOOL: "bool",
}


def _allocate_like(like: Any, like_what: str, spec: TensorSpec) -> Any:
    """A new device array for output `spec` from the library of `like` (torch or CuPy)."""
    library = type(like).__module__.split(".")[0]
    if library == "torch":
        torch = importlib.import_module("torch")
        return torch.empty(
            spec.shape, dtype=getattr(torch, _TORCH_DTYPES[spec.dtype]), device=like.device
        )
    if library == "cupy":
        cupy = importlib.import_module("cupy")
        dtype = np.uint16 if spec.dtype is DType.BF16 else spec.dtype.numpy
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(spec.shape, dtype=dtype)
    raise Error(
        Status.UNSUPPORTED,
        f"cannot allocate outputs like {like_what} "
        f"({type(like).__module__}.{type(like).__name__}): only torch and CuPy arrays are known;"
        " pass outputs=",
    )


def _check_device(
    spec: TensorSpec, buffer: DeviceBuffer, what: str, device: int, output: bool
) -> None:
    if spec.dtype not in buffer.dtypes:
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} has elements {buffer.element}; the graph declares {spec.dtype.value}",
        )
    if tuple(buffer.shape) != tuple(spec.shape):
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} has shape {tuple(buffer.shape)}; the graph declares {tuple(spec.shape)}",
        )
    if not buffer.contiguous:
        raise Error(
            Status.INVALID_ARGUMENT, f"{what} is not C-contiguous; make it contiguous first"
        )
    if buffer.device_id is not None and buffer.device_id != device:
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} is on CUDA device {buffer.device_id}; the context uses device {device}",
        )
    if output and buffer.readonly:
        raise Error(Status.INVALID_ARGUMENT, f"{what} is read-only")
    if buffer.pointer == 0:
        raise Error(Status.INVALID_ARGUMENT, f"{what} has a NULL data pointer")


def _device_buffers(
    items: list[tuple[str, Any]], explicit_stream: Any
) -> tuple[list[DeviceBuffer], int]:
    """Reads (what, object) pairs as device buffers and chooses the stream (see streams.py)."""
    buffers: list[DeviceBuffer | None] = [None] * len(items)
    for i, (what, obj) in enumerate(items):
        if has_interface(obj):
            buffers[i] = device_buffer(obj, what, 0)
    interface_buffers = [(items[i][0], b) for i, b in enumerate(buffers) if b is not None]
    stream = choose_stream(explicit_stream, [obj for _, obj in items], interface_buffers)
    for i, (what, obj) in enumerate(items):
        if buffers[i] is None:
            buffers[i] = device_buffer(obj, what, dlpack_stream(stream))
    return [b for b in buffers if b is not None], stream


def _device_workspace(obj: Any, size: int) -> tuple[int | None, Any]:
    if obj is None:
        return None, None
    if isinstance(obj, int) and not isinstance(obj, bool):
        return as_address(obj, "workspace address") or None, None
    buffer = device_buffer(obj, "workspace", 1)
    if not buffer.contiguous:
        raise Error(Status.INVALID_ARGUMENT, "workspace is not contiguous")
    if buffer.nbytes < size:
        raise Error(
            Status.INVALID_ARGUMENT,
            f"workspace has {buffer.nbytes} bytes; the fusion needs {size}",
        )
    return buffer.pointer, buffer


# -- fusions --------------------------------------------------------------------------------


def _on_cuda(fusion: Any) -> bool:
    return fusion.context._active is Backend.CUDA


def run_fusion(
    fusion: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    outputs: Any,
    workspace: Any,
    stream: Any,
    opaque: Any = None,
) -> Any:
    """Fusion.run (opaque operations through the `opaque` callable, see opaque.py)."""
    callback = None
    if opaque is not None:
        callback = OpaqueCallback(opaque, fusion._graph_ref(), on_device=_on_cuda(fusion))
    input_specs = fusion.input_specs
    output_specs = fusion.output_specs
    inputs, named = bind_inputs(input_specs, args, kwargs)
    given = bind_outputs(output_specs, outputs)
    fusion._handle  # noqa: B018 - raises when the fusion is closed
    size = fusion.workspace_size
    keepalive: list[Any] = []  # what the C call reads, referenced until it returns
    if _on_cuda(fusion):
        if given is None:
            if not inputs:
                raise Error(
                    Status.UNSUPPORTED,
                    "the graph has no inputs to allocate outputs like; pass outputs=",
                )
            like_what = _what("input", input_specs[0])
            given = [_allocate_like(inputs[0], like_what, spec) for spec in output_specs]
        items = [(_what("input", s), o) for s, o in zip(input_specs, inputs)]
        items += [(_what("output", s), o) for s, o in zip(output_specs, given)]
        buffers, run_stream = _device_buffers(items, stream)
        device = fusion.context.device
        for (what, _), spec, buffer in zip(items, list(input_specs) + list(output_specs), buffers):
            _check_device(spec, buffer, what, device, output=what.startswith("output"))
        space, space_buffer = _device_workspace(workspace, size)
        keepalive += [buffers, space_buffer]
        addresses_in = [b.pointer for b in buffers[: len(inputs)]]
        addresses_out = [b.pointer for b in buffers[len(inputs) :]]
        results = given
    else:
        backend = "the context runs on the host backend, which"
        arrays_in, arrays_out = _host_buffers(input_specs, output_specs, inputs, given, backend)
        space = workspace_address(workspace, size, backend)
        stream_handle(stream)  # checked, then ignored: the host backend runs synchronously
        run_stream = 0
        keepalive += [arrays_in, arrays_out, workspace]
        addresses_in = [a.ctypes.data for a in arrays_in]
        addresses_out = [a.ctypes.data for a in arrays_out]
        results = arrays_out
    arguments = (
        _pointer_array(addresses_in),
        len(addresses_in),
        _pointer_array(addresses_out),
        len(addresses_out),
        space,
        run_stream or None,
    )
    if callback is None:
        status = fusion._call("fst_fusion_run", *arguments)
        if status != Status.OK:
            raise _with_opaque_hint(fusion, last_error(status))
    else:
        status = fusion._call("fst_fusion_run_with_opaque", *arguments, callback.function, None)
        callback.check(status)
    return pack(list(results), output_specs, named)


def _with_opaque_hint(fusion: Any, error: Error) -> Error:
    """`error` of a run without opaque=; when it is the library's refusal of a plan with
    opaque operations (UNSUPPORTED, after every buffer check), says what to do in Python."""
    if error.status is not Status.UNSUPPORTED:
        return error
    count = ctypes.c_size_t()
    check(fusion._call("fst_fusion_opaque_count", ctypes.byref(count)))
    if count.value == 0:
        return error
    return located(
        Error(
            error.status,
            f"{error.message} (in Python: pass opaque=, a callable that runs each opaque "
            "operation with an fstitch.OpaqueCall, or follow fusion.steps)",
        )
    )


def _param_spec(fusion: Any, kind: ParamKind, index: int) -> tuple[str, TensorSpec] | None:
    if kind is ParamKind.INPUT:
        return "input", fusion.input_specs[index]
    if kind is ParamKind.OUTPUT:
        return "output", fusion.output_specs[index]
    return None


def launch_kernel(kernel: Any, args: list[Any], stream: Any) -> None:
    """Kernel.launch: one kernel with one buffer per parameter."""
    fusion = kernel.fusion
    params = kernel.params
    if len(args) != len(params):
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{len(args)} argument(s) given; kernel {kernel.name} has {len(params)}",
        )
    on_cuda = _on_cuda(fusion)
    addresses: list[int | None] = [None] * len(args)
    keepalive: list[Any] = []  # what the C call reads, referenced until it returns
    device_items: list[tuple[int, str, Any, tuple[str, TensorSpec] | None]] = []
    backend = "the context runs on the host backend, which"
    for i, (param, arg) in enumerate(zip(params, args)):
        what = f"argument {i} ({param.kind.value} {param.index})"
        if isinstance(arg, int) and not isinstance(arg, bool):
            if as_address(arg, f"{what} address") == 0:
                raise Error(Status.INVALID_ARGUMENT, f"{what} address is NULL")
            addresses[i] = arg
            continue
        if param.kind is ParamKind.CONSTANT and arg is None:
            if on_cuda:
                raise Error(
                    Status.INVALID_ARGUMENT,
                    f"{what}: on the CUDA backend pass a device copy of Fusion.constants"
                    f"[{param.index}] (None takes the fusion's host copy on the host backend)",
                )
            addresses[i] = fusion._constant_address(param.index)
            continue
        described = _param_spec(fusion, param.kind, param.index)
        if on_cuda:
            device_items.append((i, what, arg, described))
            continue
        if described is None:
            addresses[i] = workspace_address(arg, 0, backend)
        elif described[0] == "input":
            array = input_array(described[1], arg, what, backend)
            keepalive.append(array)
            addresses[i] = array.ctypes.data
        else:
            addresses[i] = output_array(described[1], arg, what, backend).ctypes.data
    run_stream = 0
    if on_cuda:
        buffers, run_stream = _device_buffers(
            [(what, arg) for _, what, arg, _ in device_items], stream
        )
        keepalive.append(buffers)
        for (i, what, _, described), buffer in zip(device_items, buffers):
            if described is not None:
                _check_device(
                    described[1],
                    buffer,
                    what,
                    fusion.context.device,
                    output=described[0] == "output",
                )
            elif not buffer.contiguous:
                raise Error(Status.INVALID_ARGUMENT, f"{what} is not contiguous")
            addresses[i] = buffer.pointer
    else:
        stream_handle(stream)  # checked, then ignored: the host backend runs synchronously
    check(
        kernel._call(
            "fst_kernel_launch", _pointer_array(addresses), len(addresses), run_stream or None
        )
    )
