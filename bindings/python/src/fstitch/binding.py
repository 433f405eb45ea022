"""Binding run and evaluate arguments to a graph's inputs and outputs, by name or position."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._show import shown
from .errors import Error, Status
from .specs import TensorSpec


def _names(specs: Sequence[TensorSpec]) -> str:
    return ", ".join(shown(spec.name) for spec in specs) or "none"


def _by_name(specs: Sequence[TensorSpec], given: Mapping[str, Any], kind: str) -> list[Any]:
    known = {spec.name for spec in specs}
    for name in given:
        if name not in known:
            raise Error(
                Status.INVALID_ARGUMENT,
                f"unknown {kind} {shown(name)}; the graph's {kind}s are {_names(specs)}",
            )
    missing = [spec.name for spec in specs if spec.name not in given]
    if missing:
        raise Error(
            Status.INVALID_ARGUMENT, f"missing {kind}(s) {', '.join(shown(n) for n in missing)}"
        )
    return [given[spec.name] for spec in specs]


def _by_position(specs: Sequence[TensorSpec], given: Sequence[Any], kind: str) -> list[Any]:
    if len(given) != len(specs):
        raise Error(
            Status.INVALID_ARGUMENT,
            f"{len(given)} {kind}(s) given; the graph has {len(specs)} ({_names(specs)})",
        )
    return list(given)


def bind_inputs(
    specs: Sequence[TensorSpec], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], bool]:
    """The input objects in graph order, and whether they were given by name.

    Accepted: f(x=a, w=b), f({"x": a, "w": b}), f([a, b]), f((a, b)) and f(a, b).
    """
    if args and kwargs:
        raise Error(Status.INVALID_ARGUMENT, "pass inputs either by position or by name, not both")
    if len(args) == 1 and isinstance(args[0], Mapping):
        return _by_name(specs, args[0], "input"), True
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return _by_position(specs, args[0], "input"), False
    if args:
        return _by_position(specs, args, "input"), False
    return _by_name(specs, kwargs, "input"), True


def bind_outputs(specs: Sequence[TensorSpec], outputs: Any) -> list[Any] | None:
    """The caller's output objects in graph order, or None to allocate them."""
    if outputs is None:
        return None
    if isinstance(outputs, Mapping):
        return _by_name(specs, outputs, "output")
    if isinstance(outputs, (list, tuple)):
        return _by_position(specs, outputs, "output")
    raise Error(
        Status.INVALID_ARGUMENT,
        f"outputs is {type(outputs).__name__}; expected a list or a dict by name",
    )


def pack(results: list[Any], specs: Sequence[TensorSpec], named: bool) -> Any:
    if named:
        return {spec.name: result for spec, result in zip(specs, results)}
    return results
