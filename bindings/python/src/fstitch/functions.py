"""Module-level operation functions: fstitch.exp(x), fstitch.maximum(a, b), fstitch.where(...)."""

from __future__ import annotations

from typing import Any

from .errors import Error, Status, raised_in
from .ops import UNARY
from .value import Value


def _value(x: Any, what: str) -> Value:
    if not isinstance(x, Value):
        raise Error(
            Status.INVALID_ARGUMENT, f"{what} is {type(x).__name__}; expected an fstitch Value"
        )
    return x


def _first_value(*operands: Any) -> Value:
    for operand in operands:
        if isinstance(operand, Value):
            return operand
    raise Error(
        Status.INVALID_ARGUMENT,
        "no operand is an fstitch Value; one is needed to know the graph and dtype",
    )


def unary(op: str, x: Any):
    """Applies the unary operation `op` (a key of UNARY) to the Value `x`."""
    with raised_in(op):
        value = _value(x, "x")
    return value._unary(op)


def binary(op: str, a: Any, b: Any):
    """Applies the binary operation `op` (a key of BINARY); one operand may be a Python scalar."""
    with raised_in(op):
        anchor = _first_value(a, b)
    return anchor.graph._binary(op, a, b, anchor.dtype)


def where(cond: Any, a: Any, b: Any):
    """cond ? a : b elementwise with broadcasting; `a` or `b` may be a Python scalar."""
    with raised_in("where"):
        value = _value(cond, "cond")
    return value.graph.where(cond, a, b)


def maximum(a: Any, b: Any):
    """Elementwise maximum (NaN if either is NaN)."""
    return binary("max", a, b)


def minimum(a: Any, b: Any):
    """Elementwise minimum (NaN if either is NaN)."""
    return binary("min", a, b)


def power(a: Any, b: Any):
    """Elementwise a ** b (floating point only)."""
    return binary("pow", a, b)


def logical_and(a: Any, b: Any):
    """a != 0 and b != 0, as bool."""
    return binary("logical_and", a, b)


def logical_or(a: Any, b: Any):
    """a != 0 or b != 0, as bool."""
    return binary("logical_or", a, b)


def _make_unary(op: str):
    def function(x: Any):
        return unary(op, x)

    function.__name__ = op
    function.__qualname__ = op
    function.__doc__ = f"Elementwise {op} of the Value `x` (C: FST_UNARY_{op.upper()})."
    return function


#: Module-level unary functions: fstitch.exp(x), fstitch.rsqrt(x), ...
UNARY_FUNCTIONS = {op: _make_unary(op) for op in UNARY}


def concat(values: Any, axis: int = 0):
    """The Values one after another along `axis` (numpy.concatenate)."""
    from . import movement

    return movement.concat(values, axis)
