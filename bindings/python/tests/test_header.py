"""The ctypes declarations of fstitch._lib against include/fstitch.h, parsed here.

Every FST_API declaration must appear in _lib.FUNCTIONS with the ctypes types its C types
map to (the mapping is written out below, independently of _lib), every enum constant
and integer macro with its value, and nothing may be declared that the header lacks.
"""

from __future__ import annotations

import ctypes
import re

import pytest
from helpers import HEADER

import fstitch
from fstitch import _lib, enums, ops
from fstitch.dtypes import DType

# -- parsing the header -----------------------------------------------------------------


def _source() -> str:
    text = HEADER.read_text()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_functions() -> dict[str, tuple[str, list[str]]]:
    """name -> (return type, [parameter declarations]) of every FST_API function."""
    functions = {}
    for match in re.finditer(
        r"^FST_API\s+([^;(]*?)\s*\(([^;]*?)\)\s*;", _source(), flags=re.M | re.S
    ):
        head, params = match.group(1), " ".join(match.group(2).split())
        name = re.findall(r"\w+", head)[-1]
        return_type = head[: head.rfind(name)].strip()
        parameters = [] if params in ("", "void") else [p.strip() for p in params.split(",")]
        functions[name] = (return_type, parameters)
    return functions


def header_enums() -> dict[str, dict[str, int]]:
    enums_found = {}
    for match in re.finditer(
        r"typedef\s+enum\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", _source(), flags=re.S
    ):
        assert match.group(1) == match.group(3)
        members = {
            name: int(value) for name, value in re.findall(r"(\w+)\s*=\s*(-?\d+)", match.group(2))
        }
        enums_found[match.group(1)] = members
    return enums_found


def header_macros() -> dict[str, int]:
    source = _source()
    macros = {
        name: int(value)
        for name, value in re.findall(r"#define\s+(FST_\w+)\s+(\d+)\s*$", source, flags=re.M)
    }
    for name, value in re.findall(r"#define\s+(FST_\w+)\s+UINT64_C\((\d+)\)", source):
        macros[name] = int(value)
    return macros


# -- C types to ctypes, independently of _lib ---------------------------------------------

_SCALARS = {
    "unsigned": ctypes.c_uint,
    "int": ctypes.c_int,
    "double": ctypes.c_double,
    "size_t": ctypes.c_size_t,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "uint32_t": ctypes.c_uint32,
    "fst_value": ctypes.c_uint64,
}
_HANDLES = {
    "fst_context_options",
    "fst_context",
    "fst_graph",
    "fst_fuse_options",
    "fst_fusion",
    "fst_kernel",
    "fst_opaque_call",
}
# Function-pointer typedefs, by the name of their ctypes prototype in _lib.
_CALLBACKS = {"fst_log_callback", "fst_opaque_callback"}


def _split(declaration: str, has_name: bool) -> tuple[str, int]:
    """(base type, pointer depth) of a parameter or return type, without const and name."""
    depth = declaration.count("*") + len(re.findall(r"\[\d*\]", declaration))
    declaration = re.sub(r"\[\d*\]", "", declaration)
    words = [w for w in re.findall(r"\w+", declaration) if w != "const"]
    if has_name:
        words = words[:-1]
    assert len(words) == 1, f"cannot read the type of {declaration!r}"
    return words[0], depth


def expected_ctype(declaration: str, has_name: bool = True):
    base, depth = _split(declaration, has_name)
    if base in header_enums():
        inner = ctypes.c_int
    elif base in _SCALARS:
        inner = _SCALARS[base]
    elif base in _CALLBACKS:
        assert depth == 0
        return base
    elif base in _HANDLES:
        assert depth >= 1, f"{declaration}: handles travel by pointer"
        inner, depth = ("handle", base), depth - 1
    elif base == "char":
        assert depth >= 1
        inner, depth = ctypes.c_char_p, depth - 1
    elif base == "void":
        if depth == 0:
            return None
        inner, depth = ctypes.c_void_p, depth - 1
    else:
        raise AssertionError(f"no ctypes mapping for C type {base!r} in {declaration!r}")
    return (inner, depth)


def _matches(actual, expected) -> bool:
    if expected is None or expected in _CALLBACKS:
        return actual is (None if expected is None else getattr(_lib, expected))
    inner, depth = expected
    for _ in range(depth):
        if not (isinstance(actual, type) and issubclass(actual, ctypes._Pointer)):
            return False
        actual = actual._type_
    if isinstance(inner, tuple):  # an opaque handle: a pointer to the struct of that name
        return (
            isinstance(actual, type)
            and issubclass(actual, ctypes._Pointer)
            and actual._type_.__name__ == inner[1]
        )
    return actual is inner


# -- the checks -------------------------------------------------------------------------------


def test_the_header_parses_into_every_function():
    functions = header_functions()
    assert len(functions) == len(
        re.findall(r"^FST_API\s", _source(), flags=re.M)
    )  # every declaration was read
    assert "fst_kernel_launch" in functions and "fst_version_number" in functions


def test_every_function_is_declared_and_nothing_else():
    declared = set(_lib.FUNCTIONS)
    in_header = set(header_functions())
    assert in_header - declared == set(), "functions of the header missing from _lib"
    assert declared - in_header == set(), "functions in _lib that the header lacks"


@pytest.mark.parametrize("name", sorted(header_functions()))
def test_function_types_match_the_header(name):
    return_type, parameters = header_functions()[name]
    restype, argtypes = _lib.FUNCTIONS[name]
    assert _matches(restype, expected_ctype(return_type, has_name=False)), (
        f"{name}: return type {return_type}"
    )
    assert len(argtypes) == len(parameters), f"{name}: {len(parameters)} parameters in the header"
    for position, (actual, parameter) in enumerate(zip(argtypes, parameters)):
        assert _matches(actual, expected_ctype(parameter)), (
            f"{name} parameter {position}: {parameter!r}"
        )


def test_the_loaded_library_carries_the_declarations():
    lib = _lib.library()
    for name, (restype, argtypes) in _lib.FUNCTIONS.items():
        function = getattr(lib, name)
        assert function.restype is restype
        assert list(function.argtypes) == list(argtypes)


def test_enums_match_the_header():
    assert _lib.ENUMS == header_enums()


def test_enum_constants_are_module_attributes():
    for members in header_enums().values():
        for name, value in members.items():
            assert getattr(_lib, name) == value


def test_macros_match_the_header():
    macros = header_macros()
    for name, value in _lib.MACROS.items():
        assert macros[name] == value, name
    for name in (
        "FST_VERSION_MAJOR",
        "FST_VERSION_MINOR",
        "FST_VERSION_PATCH",
        "FST_ABI_VERSION",
        "FST_MAX_RANK",
        "FST_VALUE_INVALID",
    ):
        assert name in _lib.MACROS


def test_status_mirrors_fst_status():
    members = header_enums()["fst_status"]
    assert {status.c_name: int(status) for status in fstitch.Status} == members
    lib = _lib.library()
    for status in fstitch.Status:
        assert lib.fst_status_string(int(status)).decode() == status.c_name
        assert str(status) == status.c_name


def test_dtypes_mirror_fst_dtype():
    members = header_enums()["fst_dtype"]
    assert sorted(dtype.code for dtype in DType) == sorted(members.values())
    lib = _lib.library()
    for dtype in DType:
        assert lib.fst_dtype_name(dtype.code).decode() == dtype.value
        assert lib.fst_dtype_size(dtype.code) == dtype.itemsize


def test_python_enums_cover_the_c_enums():
    c_enums = header_enums()
    pairs = [
        (fstitch.Backend, "fst_backend"),
        (fstitch.Policy, "fst_fusion_policy"),
        (fstitch.ParamKind, "fst_param_kind"),
        (fstitch.LaunchKind, "fst_launch_kind"),
        (fstitch.StepKind, "fst_step_kind"),
        (fstitch.LogLevel, "fst_log_level"),
    ]
    for python_enum, c_name in pairs:
        assert sorted(enums.C_VALUES[python_enum].values()) == sorted(c_enums[c_name].values()), (
            c_name
        )
    assert sorted(ops.UNARY.values()) == sorted(c_enums["fst_unary_op"].values())
    assert sorted(ops.BINARY.values()) == sorted(c_enums["fst_binary_op"].values())
    assert sorted(ops.REDUCE.values()) == sorted(c_enums["fst_reduce_op"].values())


def test_every_unary_op_is_a_value_method_and_a_function():
    for op in ops.UNARY:
        assert callable(getattr(fstitch.Value, op)), op
        assert callable(getattr(fstitch, op)), op


def test_the_checker_rejects_a_wrong_declaration():
    # The comparison must be able to fail: a mistyped argument does not match.
    _, parameters = header_functions()["fst_input"]
    assert not _matches(ctypes.c_int32, expected_ctype(parameters[3]))  # size_t rank
    assert not _matches(
        ctypes.POINTER(ctypes.c_int32), expected_ctype(parameters[4])
    )  # const int64_t* dims
    assert not _matches(
        ctypes.POINTER(_lib.fst_context), expected_ctype(parameters[0])
    )  # fst_graph*
    _, parameters = header_functions()["fst_fusion_run_with_opaque"]
    assert not _matches(_lib.fst_log_callback, expected_ctype(parameters[7]))  # the callback
    assert not _matches(
        ctypes.POINTER(_lib.fst_kernel), expected_ctype("const fst_opaque_call* call")
    )
