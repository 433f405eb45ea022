"""ctypes declarations of the whole C API in include/fstitch.h.

Everything the header declares is listed here as data: the enums (``ENUMS``), the integer
macros (``MACROS``) and every ``FST_API`` function with its return and argument types
(``FUNCTIONS``). :func:`library` loads libfstitch once, checks its version and applies
the declarations; the rest of the package calls the C API only through it.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_uint,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Any

from . import _loader
from .errors import Error, Status

# ---------------------------------------------------------------------------------------
# Integer macros of the header.

MACROS: dict[str, int] = {
    "FST_VERSION_MAJOR": 0,
    "FST_VERSION_MINOR": 3,
    "FST_VERSION_PATCH": 0,
    "FST_ABI_VERSION": 1,
    "FST_MAX_RANK": 8,
    "FST_VALUE_INVALID": 0,
}

#: The library major version this binding is written against, and the oldest minor
#: version that has every function declared below.
EXPECTED_MAJOR = MACROS["FST_VERSION_MAJOR"]
MINIMUM_MINOR = MACROS["FST_VERSION_MINOR"]
MAX_RANK = MACROS["FST_MAX_RANK"]
VALUE_INVALID = MACROS["FST_VALUE_INVALID"]

# ---------------------------------------------------------------------------------------
# Enums of the header, by C type name.

ENUMS: dict[str, dict[str, int]] = {
    "fst_status": {
        "FST_OK": 0,
        "FST_ERROR_INVALID_ARGUMENT": 1,
        "FST_ERROR_SHAPE": 2,
        "FST_ERROR_DTYPE": 3,
        "FST_ERROR_UNSUPPORTED": 4,
        "FST_ERROR_OUT_OF_MEMORY": 5,
        "FST_ERROR_NO_DEVICE": 6,
        "FST_ERROR_NO_DRIVER": 7,
        "FST_ERROR_NO_COMPILER": 8,
        "FST_ERROR_COMPILE": 9,
        "FST_ERROR_LAUNCH": 10,
        "FST_ERROR_PARSE": 11,
        "FST_ERROR_INTERNAL": 12,
    },
    "fst_dtype": {
        "FST_F32": 1,
        "FST_F16": 2,
        "FST_BF16": 3,
        "FST_F64": 4,
        "FST_I8": 5,
        "FST_I32": 6,
        "FST_I64": 7,
        "FST_U8": 8,
        "FST_BOOL": 9,
    },
    "fst_backend": {
        "FST_BACKEND_AUTO": 0,
        "FST_BACKEND_CUDA": 1,
        "FST_BACKEND_HOST": 2,
    },
    "fst_log_level": {
        "FST_LOG_OFF": 0,
        "FST_LOG_ERROR": 1,
        "FST_LOG_WARN": 2,
        "FST_LOG_INFO": 3,
        "FST_LOG_DEBUG": 4,
        "FST_LOG_TRACE": 5,
    },
    "fst_compile_stat": {
        "FST_COMPILE_STAT_COMPILED": 0,
        "FST_COMPILE_STAT_MEMORY_HITS": 1,
        "FST_COMPILE_STAT_DISK_HITS": 2,
        "FST_COMPILE_STAT_DISK_WRITES": 3,
        "FST_COMPILE_STAT_DISK_DISCARDS": 4,
        "FST_COMPILE_STAT_COMPILE_NANOSECONDS": 5,
    },
    "fst_unary_op": {
        "FST_UNARY_NEG": 1,
        "FST_UNARY_ABS": 2,
        "FST_UNARY_EXP": 3,
        "FST_UNARY_LOG": 4,
        "FST_UNARY_SQRT": 5,
        "FST_UNARY_RSQRT": 6,
        "FST_UNARY_RECIPROCAL": 7,
        "FST_UNARY_TANH": 8,
        "FST_UNARY_SIGMOID": 9,
        "FST_UNARY_RELU": 10,
        "FST_UNARY_GELU": 11,
        "FST_UNARY_GELU_TANH": 12,
        "FST_UNARY_SILU": 13,
        "FST_UNARY_ERF": 14,
        "FST_UNARY_SIN": 15,
        "FST_UNARY_COS": 16,
        "FST_UNARY_FLOOR": 17,
        "FST_UNARY_CEIL": 18,
        "FST_UNARY_ROUND": 19,
        "FST_UNARY_SIGN": 20,
        "FST_UNARY_LOGICAL_NOT": 21,
    },
    "fst_binary_op": {
        "FST_BINARY_ADD": 1,
        "FST_BINARY_SUB": 2,
        "FST_BINARY_MUL": 3,
        "FST_BINARY_DIV": 4,
        "FST_BINARY_POW": 5,
        "FST_BINARY_MAX": 6,
        "FST_BINARY_MIN": 7,
        "FST_BINARY_EQ": 8,
        "FST_BINARY_NE": 9,
        "FST_BINARY_LT": 10,
        "FST_BINARY_LE": 11,
        "FST_BINARY_GT": 12,
        "FST_BINARY_GE": 13,
        "FST_BINARY_LOGICAL_AND": 14,
        "FST_BINARY_LOGICAL_OR": 15,
    },
    "fst_reduce_op": {
        "FST_REDUCE_SUM": 1,
        "FST_REDUCE_MEAN": 2,
        "FST_REDUCE_MAX": 3,
        "FST_REDUCE_MIN": 4,
        "FST_REDUCE_PROD": 5,
    },
    "fst_fusion_policy": {
        "FST_POLICY_STITCH": 0,
        "FST_POLICY_LOOP": 1,
        "FST_POLICY_NONE": 2,
    },
    "fst_param_kind": {
        "FST_PARAM_INPUT": 1,
        "FST_PARAM_OUTPUT": 2,
        "FST_PARAM_WORKSPACE": 3,
        "FST_PARAM_CONSTANT": 4,
    },
    "fst_launch_kind": {
        "FST_LAUNCH_REGULAR": 0,
        "FST_LAUNCH_COOPERATIVE": 1,
        "FST_LAUNCH_CLUSTER": 2,
    },
    "fst_step_kind": {
        "FST_STEP_KERNEL": 1,
        "FST_STEP_OPAQUE": 2,
    },
}

# Every constant of every enum as a module attribute (FST_OK, FST_F32, ...).
globals().update({name: value for members in ENUMS.values() for name, value in members.items()})

# ---------------------------------------------------------------------------------------
# Types.


class fst_context_options(Structure):  # noqa: N801 - the C name
    """Opaque ``fst_context_options``."""


class fst_context(Structure):  # noqa: N801
    """Opaque ``fst_context``."""


class fst_graph(Structure):  # noqa: N801
    """Opaque ``fst_graph``."""


class fst_fuse_options(Structure):  # noqa: N801
    """Opaque ``fst_fuse_options``."""


class fst_fusion(Structure):  # noqa: N801
    """Opaque ``fst_fusion``."""


class fst_kernel(Structure):  # noqa: N801
    """Opaque ``fst_kernel``."""


class fst_opaque_call(Structure):  # noqa: N801
    """Opaque ``fst_opaque_call``: one call of an opaque operation, valid during its callback."""


#: C enums are int-sized.
c_enum = c_int
#: ``fst_value`` is a uint64_t.
fst_value = c_uint64
#: ``void (*)(void* user_data, fst_log_level level, const char* message)``.
fst_log_callback = CFUNCTYPE(None, c_void_p, c_enum, c_char_p)

ContextOptionsP = POINTER(fst_context_options)
ContextP = POINTER(fst_context)
GraphP = POINTER(fst_graph)
FuseOptionsP = POINTER(fst_fuse_options)
FusionP = POINTER(fst_fusion)
KernelP = POINTER(fst_kernel)
OpaqueCallP = POINTER(fst_opaque_call)
#: ``fst_status (*)(const fst_opaque_call* call, void* user_data)``.
fst_opaque_callback = CFUNCTYPE(c_enum, OpaqueCallP, c_void_p)

# ---------------------------------------------------------------------------------------
# Functions: name -> (restype, [argtypes]), in header order.

FUNCTIONS: dict[str, tuple[Any, list[Any]]] = {
    # Version
    "fst_version_number": (c_uint, []),
    "fst_version_string": (c_char_p, []),
    # Status and errors
    "fst_status_string": (c_char_p, [c_enum]),
    "fst_last_error_message": (c_char_p, []),
    "fst_last_error_status": (c_enum, []),
    # Data types
    "fst_dtype_size": (c_size_t, [c_enum]),
    "fst_dtype_name": (c_char_p, [c_enum]),
    # Context
    "fst_context_options_create": (c_enum, [POINTER(ContextOptionsP)]),
    "fst_context_options_destroy": (None, [ContextOptionsP]),
    "fst_context_options_set_backend": (c_enum, [ContextOptionsP, c_enum]),
    "fst_context_options_set_device": (c_enum, [ContextOptionsP, c_int]),
    "fst_context_options_set_log_level": (c_enum, [ContextOptionsP, c_enum]),
    "fst_context_options_set_log_callback": (
        c_enum,
        [ContextOptionsP, fst_log_callback, c_void_p],
    ),
    "fst_context_options_set_cache_dir": (c_enum, [ContextOptionsP, c_char_p]),
    "fst_context_create": (c_enum, [ContextOptionsP, POINTER(ContextP)]),
    "fst_context_destroy": (None, [ContextP]),
    "fst_context_backend": (c_enum, [ContextP, POINTER(c_enum)]),
    "fst_context_active_backend": (c_enum, [ContextP, POINTER(c_enum)]),
    "fst_context_device_arch": (c_enum, [ContextP, POINTER(c_int)]),
    "fst_context_log_level": (c_enum, [ContextP, POINTER(c_enum)]),
    "fst_context_cache_dir": (c_enum, [ContextP, POINTER(c_char_p)]),
    "fst_context_compile_stat": (c_enum, [ContextP, c_enum, POINTER(c_uint64)]),
    "fst_context_log": (c_enum, [ContextP, c_enum, c_char_p]),
    # Graph
    "fst_graph_create": (c_enum, [ContextP, POINTER(GraphP)]),
    "fst_graph_destroy": (None, [GraphP]),
    "fst_graph_status": (c_enum, [GraphP]),
    "fst_graph_error_message": (c_char_p, [GraphP]),
    "fst_graph_verify": (c_enum, [GraphP]),
    # Graph builders
    "fst_input": (fst_value, [GraphP, c_char_p, c_enum, c_size_t, POINTER(c_int64)]),
    "fst_constant_f64": (fst_value, [GraphP, c_enum, c_double]),
    "fst_constant_i64": (fst_value, [GraphP, c_enum, c_int64]),
    "fst_constant_tensor": (
        fst_value,
        [GraphP, c_enum, c_size_t, POINTER(c_int64), c_void_p, c_size_t],
    ),
    "fst_unary": (fst_value, [GraphP, c_enum, fst_value]),
    "fst_binary": (fst_value, [GraphP, c_enum, fst_value, fst_value]),
    "fst_select": (fst_value, [GraphP, fst_value, fst_value, fst_value]),
    "fst_cast": (fst_value, [GraphP, fst_value, c_enum]),
    "fst_broadcast": (fst_value, [GraphP, fst_value, c_size_t, POINTER(c_int64)]),
    "fst_reduce": (fst_value, [GraphP, c_enum, fst_value, c_size_t, POINTER(c_int64), c_int]),
    "fst_reshape": (fst_value, [GraphP, fst_value, c_size_t, POINTER(c_int64)]),
    "fst_permute": (fst_value, [GraphP, fst_value, c_size_t, POINTER(c_int64)]),
    "fst_iota": (fst_value, [GraphP, c_enum, c_size_t, POINTER(c_int64), c_int64]),
    "fst_opaque": (
        fst_value,
        [GraphP, c_char_p, c_size_t, POINTER(fst_value), c_enum, c_size_t, POINTER(c_int64)],
    ),
    "fst_slice": (
        fst_value,
        [GraphP, fst_value, c_size_t, POINTER(c_int64), POINTER(c_int64), POINTER(c_int64)],
    ),
    "fst_concat": (fst_value, [GraphP, c_size_t, POINTER(fst_value), c_int64]),
    "fst_pad": (
        fst_value,
        [GraphP, fst_value, c_size_t, POINTER(c_int64), POINTER(c_int64), c_double],
    ),
    "fst_take": (fst_value, [GraphP, fst_value, fst_value, c_int64]),
    "fst_split": (
        c_enum,
        [GraphP, fst_value, c_int64, c_size_t, POINTER(c_int64), POINTER(fst_value)],
    ),
    "fst_output": (c_enum, [GraphP, c_char_p, fst_value]),
    # Graph queries
    "fst_value_dtype": (c_enum, [GraphP, fst_value, POINTER(c_enum)]),
    "fst_value_rank": (c_enum, [GraphP, fst_value, POINTER(c_size_t)]),
    "fst_value_dims": (c_enum, [GraphP, fst_value, c_size_t, POINTER(c_int64)]),
    "fst_graph_input_count": (c_enum, [GraphP, POINTER(c_size_t)]),
    "fst_graph_input": (c_enum, [GraphP, c_size_t, POINTER(fst_value), POINTER(c_char_p)]),
    "fst_graph_output_count": (c_enum, [GraphP, POINTER(c_size_t)]),
    "fst_graph_output": (c_enum, [GraphP, c_size_t, POINTER(fst_value), POINTER(c_char_p)]),
    "fst_graph_value_count": (c_enum, [GraphP, POINTER(c_size_t)]),
    # Text format
    "fst_graph_print": (c_enum, [GraphP, POINTER(c_char_p)]),
    "fst_graph_parse": (c_enum, [ContextP, c_char_p, c_size_t, POINTER(GraphP)]),
    "fst_string_free": (None, [c_char_p]),
    # Reference evaluator
    "fst_graph_evaluate_reference": (
        c_enum,
        [GraphP, POINTER(c_void_p), c_size_t, POINTER(c_void_p), c_size_t],
    ),
    # Fusion
    "fst_fuse_options_create": (c_enum, [POINTER(FuseOptionsP)]),
    "fst_fuse_options_destroy": (None, [FuseOptionsP]),
    "fst_fuse_options_set_policy": (c_enum, [FuseOptionsP, c_enum]),
    "fst_fuse_options_set_target_arch": (c_enum, [FuseOptionsP, c_int]),
    "fst_fuse_options_set_shared_memory_budget": (c_enum, [FuseOptionsP, c_size_t]),
    "fst_fuse_options_set_register_cap": (c_enum, [FuseOptionsP, c_int]),
    "fst_fuse_options_set_device_model": (c_enum, [FuseOptionsP, c_char_p]),
    "fst_fuse": (c_enum, [GraphP, FuseOptionsP, POINTER(FusionP)]),
    "fst_fusion_destroy": (None, [FusionP]),
    "fst_fusion_kernel_count": (c_enum, [FusionP, POINTER(c_size_t)]),
    "fst_fusion_kernel": (c_enum, [FusionP, c_size_t, POINTER(KernelP)]),
    "fst_fusion_workspace_size": (c_enum, [FusionP, POINTER(c_size_t)]),
    "fst_fusion_compile_stat": (c_enum, [FusionP, c_enum, POINTER(c_uint64)]),
    "fst_fusion_constant_count": (c_enum, [FusionP, POINTER(c_size_t)]),
    "fst_fusion_constant": (
        c_enum,
        [FusionP, c_size_t, POINTER(c_void_p), POINTER(c_size_t), POINTER(fst_value)],
    ),
    "fst_fusion_planned_bytes": (c_enum, [FusionP, POINTER(c_uint64), POINTER(c_uint64)]),
    "fst_fusion_dump": (c_enum, [FusionP, POINTER(c_char_p)]),
    "fst_fusion_run": (
        c_enum,
        [FusionP, POINTER(c_void_p), c_size_t, POINTER(c_void_p), c_size_t, c_void_p, c_void_p],
    ),
    "fst_kernel_name": (c_enum, [KernelP, POINTER(c_char_p)]),
    "fst_kernel_source": (c_enum, [KernelP, POINTER(c_char_p)]),
    "fst_kernel_ptx": (c_enum, [KernelP, POINTER(c_char_p)]),
    "fst_kernel_cubin": (c_enum, [KernelP, POINTER(c_void_p), POINTER(c_size_t)]),
    "fst_kernel_launch_config": (
        c_enum,
        [KernelP, POINTER(c_uint32), POINTER(c_uint32), POINTER(c_size_t)],
    ),
    "fst_kernel_grid_for_occupancy": (
        c_enum,
        [KernelP, c_uint32, c_uint32, POINTER(c_uint32)],
    ),
    "fst_kernel_param_count": (c_enum, [KernelP, POINTER(c_size_t)]),
    "fst_kernel_param": (
        c_enum,
        [KernelP, c_size_t, POINTER(c_enum), POINTER(c_size_t), POINTER(fst_value)],
    ),
    "fst_kernel_estimated_bytes": (c_enum, [KernelP, POINTER(c_uint64), POINTER(c_uint64)]),
    "fst_kernel_launch_kind": (c_enum, [KernelP, POINTER(c_enum)]),
    "fst_kernel_function": (c_enum, [KernelP, POINTER(c_void_p)]),
    "fst_kernel_launch": (c_enum, [KernelP, POINTER(c_void_p), c_size_t, c_void_p]),
    "fst_kernel_zeroed_workspace": (c_enum, [KernelP, POINTER(c_size_t), POINTER(c_size_t)]),
    "fst_kernel_cluster_blocks": (c_enum, [KernelP, POINTER(c_uint32)]),
    # Steps and opaque operations
    "fst_fusion_step_count": (c_enum, [FusionP, POINTER(c_size_t)]),
    "fst_fusion_step": (c_enum, [FusionP, c_size_t, POINTER(c_enum), POINTER(c_size_t)]),
    "fst_fusion_opaque_count": (c_enum, [FusionP, POINTER(c_size_t)]),
    "fst_fusion_opaque": (
        c_enum,
        [FusionP, c_size_t, POINTER(c_char_p), POINTER(c_size_t), POINTER(fst_value)],
    ),
    "fst_fusion_opaque_operand": (
        c_enum,
        [
            FusionP,
            c_size_t,
            c_size_t,
            POINTER(c_enum),
            POINTER(c_size_t),
            POINTER(c_enum),
            POINTER(c_size_t),
            POINTER(POINTER(c_int64)),
        ],
    ),
    "fst_fusion_opaque_result": (
        c_enum,
        [
            FusionP,
            c_size_t,
            POINTER(c_enum),
            POINTER(c_size_t),
            POINTER(c_enum),
            POINTER(c_size_t),
            POINTER(POINTER(c_int64)),
        ],
    ),
    "fst_opaque_call_name": (c_enum, [OpaqueCallP, POINTER(c_char_p)]),
    "fst_opaque_call_value": (c_enum, [OpaqueCallP, POINTER(fst_value)]),
    "fst_opaque_call_operand_count": (c_enum, [OpaqueCallP, POINTER(c_size_t)]),
    "fst_opaque_call_operand": (
        c_enum,
        [
            OpaqueCallP,
            c_size_t,
            POINTER(c_void_p),
            POINTER(c_enum),
            POINTER(c_size_t),
            POINTER(POINTER(c_int64)),
        ],
    ),
    "fst_opaque_call_result": (
        c_enum,
        [
            OpaqueCallP,
            POINTER(c_void_p),
            POINTER(c_enum),
            POINTER(c_size_t),
            POINTER(POINTER(c_int64)),
        ],
    ),
    "fst_opaque_call_stream": (c_enum, [OpaqueCallP, POINTER(c_void_p)]),
    "fst_opaque_call_fail": (c_enum, [OpaqueCallP, c_char_p]),
    "fst_fusion_run_with_opaque": (
        c_enum,
        [
            FusionP,
            POINTER(c_void_p),
            c_size_t,
            POINTER(c_void_p),
            c_size_t,
            c_void_p,
            c_void_p,
            fst_opaque_callback,
            c_void_p,
        ],
    ),
    "fst_graph_evaluate_reference_with_opaque": (
        c_enum,
        [
            GraphP,
            POINTER(c_void_p),
            c_size_t,
            POINTER(c_void_p),
            c_size_t,
            fst_opaque_callback,
            c_void_p,
        ],
    ),
}

# ---------------------------------------------------------------------------------------
# Loading.

_lock = threading.Lock()
_loaded: ctypes.CDLL | None = None
_loaded_path: str | None = None


def _declare(cdll: ctypes.CDLL, where: str) -> None:
    """Sets restype and argtypes of every function; a missing symbol is an Error."""
    missing = [name for name in FUNCTIONS if not hasattr(cdll, name)]
    if missing:
        raise Error(
            Status.UNSUPPORTED,
            f"libfstitch at {where} lacks {', '.join(missing)}; "
            f"this binding needs libfstitch {EXPECTED_MAJOR}.{MINIMUM_MINOR} or newer",
        )
    for name, (restype, argtypes) in FUNCTIONS.items():
        function = getattr(cdll, name)
        function.restype = restype
        function.argtypes = argtypes


def _check_version(cdll: ctypes.CDLL, where: str) -> None:
    """Refuses a library of another major version or an older minor version."""
    version_number = getattr(cdll, "fst_version_number", None)
    if version_number is None:
        raise Error(Status.UNSUPPORTED, f"{where} is not libfstitch: it has no fst_version_number")
    version_number.restype = c_uint
    version_number.argtypes = []
    number = int(version_number())
    major, minor, patch = number // 10000, number // 100 % 100, number % 100
    if major != EXPECTED_MAJOR or minor < MINIMUM_MINOR:
        raise Error(
            Status.UNSUPPORTED,
            f"libfstitch at {where} is version {major}.{minor}.{patch}; this binding needs "
            f"{EXPECTED_MAJOR}.{MINIMUM_MINOR} or a newer {EXPECTED_MAJOR}.x",
        )


def library() -> ctypes.CDLL:
    """The loaded, declared and version-checked libfstitch (loaded on first use).

    Raises:
        Error: no candidate location holds a loadable libfstitch (the message names each
            location tried and why it failed), or the library's version does not fit.
    """
    global _loaded, _loaded_path
    if _loaded is not None:
        return _loaded
    with _lock:
        if _loaded is None:
            cdll, where = _loader.load()
            _check_version(cdll, where)
            _declare(cdll, where)
            _loaded_path = where
            _loaded = cdll
    return _loaded


def library_path() -> str:
    """Where the loaded library came from (loads it if needed)."""
    library()
    assert _loaded_path is not None
    return _loaded_path
