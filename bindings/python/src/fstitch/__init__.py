"""fstitch: fusion and stitching of memory-intensive deep-learning operators.

A Python interface to libfstitch over its C API (ctypes; no compiler needed). Build a
graph with numpy-like operators, fuse it into CUDA kernels, inspect them, and run them on
the CUDA backend (torch/CuPy arrays) or the host backend (numpy arrays)::

    import numpy as np
    import fstitch

    ctx = fstitch.Context(backend="host")
    g = fstitch.Graph(ctx)
    x = g.input("x", "f32", (8, 16))
    g.output("y", (x - x.mean(axis=1, keepdims=True)).exp())
    fusion = g.fuse()
    y = fusion.run(x=np.random.rand(8, 16).astype(np.float32))["y"]

The library is found through $FSTITCH_LIBRARY, $FSTITCH_LIB_DIR, pkg-config or the dynamic
linker, when first needed; importing this package never fails for want of it.
"""

from __future__ import annotations

from . import _lib
from ._call import decode
from .compile_stats import CompileStats
from .context import Context
from .dtypes import (
    DType,
    as_dtype,
    bf16,
    bool_,
    f16,
    f32,
    f64,
    from_bf16_bits,
    i8,
    i32,
    i64,
    to_bf16_bits,
    u8,
)
from .enums import Backend, LaunchKind, LogLevel, ParamKind, Policy, StepKind
from .errors import Error, Status
from .functions import (
    UNARY_FUNCTIONS,
    concat,
    logical_and,
    logical_or,
    maximum,
    minimum,
    power,
    where,
)
from .fusion import EstimatedBytes, Fusion, Kernel, LaunchConfig, Param
from .graph import Graph
from .opaque import DeviceTensor, OpaqueCall, OpaqueOp, OpaqueTensor, Step
from .specs import TensorSpec
from .value import Value

__version__ = "{}.{}.{}".format(
    _lib.MACROS["FST_VERSION_MAJOR"],
    _lib.MACROS["FST_VERSION_MINOR"],
    _lib.MACROS["FST_VERSION_PATCH"],
)

globals().update(UNARY_FUNCTIONS)  # fstitch.exp(x), fstitch.rsqrt(x), ...


def library_version() -> str:
    """The version of the loaded libfstitch, e.g. "0.3.0" (loads it if needed)."""
    return decode(_lib.library().fst_version_string())


def library_path() -> str:
    """Where the loaded libfstitch came from (loads it if needed)."""
    return _lib.library_path()


__all__ = [
    "Backend",
    "CompileStats",
    "Context",
    "DType",
    "DeviceTensor",
    "Error",
    "EstimatedBytes",
    "Fusion",
    "Graph",
    "Kernel",
    "LaunchConfig",
    "LaunchKind",
    "LogLevel",
    "OpaqueCall",
    "OpaqueOp",
    "OpaqueTensor",
    "Param",
    "ParamKind",
    "Policy",
    "Status",
    "Step",
    "StepKind",
    "TensorSpec",
    "Value",
    "as_dtype",
    "bf16",
    "bool_",
    "concat",
    "f16",
    "f32",
    "f64",
    "from_bf16_bits",
    "i8",
    "i32",
    "i64",
    "library_path",
    "library_version",
    "logical_and",
    "logical_or",
    "maximum",
    "minimum",
    "power",
    "to_bf16_bits",
    "u8",
    "where",
] + sorted(name for name in UNARY_FUNCTIONS if name not in ("abs", "round"))
