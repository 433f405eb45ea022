"""Operation tables: the Python names of the C API's unary, binary and reduction operations."""

from __future__ import annotations

from . import _lib

#: Unary operations by method name: exp, log, ..., logical_not.
UNARY: dict[str, int] = {
    name[len("FST_UNARY_") :].lower(): value for name, value in _lib.ENUMS["fst_unary_op"].items()
}
#: Binary operations by name: add, sub, mul, div, pow, max, min, eq, ..., logical_or.
BINARY: dict[str, int] = {
    name[len("FST_BINARY_") :].lower(): value
    for name, value in _lib.ENUMS["fst_binary_op"].items()
}
#: Reductions by name: sum, mean, max, min, prod.
REDUCE: dict[str, int] = {
    name[len("FST_REDUCE_") :].lower(): value
    for name, value in _lib.ENUMS["fst_reduce_op"].items()
}
