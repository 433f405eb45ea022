"""Checking and converting user arguments before they reach the C API."""

from __future__ import annotations

import operator
from typing import Any

from ._show import shown
from .errors import Error, Status

# Ranges of the C types ints travel as (ctypes would silently wrap values outside them).
INT64_RANGE = (-(2**63), 2**63 - 1)
C_INT_RANGE = (-(2**31), 2**31 - 1)
UINT32_RANGE = (0, 2**32 - 1)
SIZE_RANGE = (0, 2**64 - 1)


def as_int(value: Any, what: str, bounds: tuple[int, int] = INT64_RANGE) -> int:
    """`value` as an int within `bounds` (ints and numpy integers; not bools or floats)."""
    if isinstance(value, bool):
        raise Error(Status.INVALID_ARGUMENT, f"{what} {shown(value)} is a bool; expected an int")
    try:
        integer = operator.index(value)
    except TypeError:
        raise Error(Status.INVALID_ARGUMENT, f"{what} {shown(value)} is not an int") from None
    if not bounds[0] <= integer <= bounds[1]:
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{what} {integer} is outside {bounds[0]} .. {bounds[1]}",
        )
    return integer


def as_address(value: int, what: str) -> int:
    """An int that is a pointer value (0 .. 2**64 - 1)."""
    return as_int(value, what, SIZE_RANGE)


def as_ints(values: Any, what: str) -> tuple[int, ...]:
    """A tuple of ints from an int or a sequence of ints."""
    if isinstance(values, (str, bytes)):
        raise Error(Status.INVALID_ARGUMENT, f"{what} {shown(values)} is not a sequence of ints")
    if hasattr(values, "__index__") or isinstance(values, bool):
        return (as_int(values, what),)
    try:
        items = list(values)
    except TypeError:
        raise Error(
            Status.INVALID_ARGUMENT, f"{what} {shown(values)} is neither an int nor a sequence of ints"
        ) from None
    return tuple(as_int(item, f"{what}[{index}]") for index, item in enumerate(items))


def shape_args(args: tuple[Any, ...], what: str) -> tuple[int, ...]:
    """Dims given as f(2, 3) or f((2, 3)) or f([2, 3])."""
    if len(args) == 1:
        return as_ints(args[0], what)
    return tuple(as_int(item, f"{what}[{index}]") for index, item in enumerate(args))


def as_name(value: Any, what: str) -> bytes:
    """A non-empty str name, encoded for the C API."""
    if not isinstance(value, str):
        raise Error(Status.INVALID_ARGUMENT, f"{what} {shown(value)} is not a str")
    if "\0" in value:
        raise Error(Status.INVALID_ARGUMENT, f"{what} {shown(value)} contains a NUL character")
    return value.encode("utf-8")
