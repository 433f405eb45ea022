"""Data movement: slices (also through Value.__getitem__), concat, pad, take and split."""

from __future__ import annotations

import ctypes
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import _lib
from ._args import as_int, as_ints
from ._show import shown
from .errors import Error, Status, raised_in

if TYPE_CHECKING:
    from .value import Value


def _int64_array(values: Sequence[int]) -> Any:
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def slice_value(x: Value, starts: Any, stops: Any, steps: Any = None) -> Value:
    """x sliced along every axis; bounds as Python's (negative from the end, clamped)."""
    with raised_in("slice"):
        x_handle = x._graph._operand(x, "x")
        start_list = as_ints(starts, "starts")
        stop_list = as_ints(stops, "stops")
        step_list = None if steps is None else as_ints(steps, "steps")
    step_array = None if step_list is None else _int64_array(step_list)
    if step_list is not None and len(step_list) != len(start_list):
        with raised_in("slice"):
            raise Error(
                Status.SHAPE,
                f"{len(step_list)} steps for {len(start_list)} starts; give one per axis",
            )
    return x._graph._build(
        "fst_slice",
        x_handle,
        len(start_list),
        _int64_array(start_list),
        _int64_array(stop_list),
        step_array,
    )


def getitem(x: Value, key: Any) -> Value:
    """numpy-style basic indexing: ints, slices with positive steps and one Ellipsis; an
    integer Value indexes (takes along) the first axis."""
    from .value import Value

    if isinstance(key, Value):
        return take(x, key, 0)
    items = list(key) if isinstance(key, tuple) else [key]
    with raised_in("getitem"):
        ellipses = sum(1 for item in items if item is Ellipsis)
        if ellipses > 1:
            raise Error(Status.INVALID_ARGUMENT, "an index may hold at most one Ellipsis (...)")
        explicit = len(items) - ellipses
        shape = x.shape
        if explicit > len(shape):
            raise Error(Status.SHAPE, f"{explicit} indices for a value of rank {len(shape)}")
        if ellipses:
            at = items.index(Ellipsis)
            items[at : at + 1] = [slice(None)] * (len(shape) - explicit)
        items += [slice(None)] * (len(shape) - len(items))
        starts, stops, steps, dropped = [], [], [], []
        for axis, (item, dim) in enumerate(zip(items, shape)):
            if isinstance(item, slice):
                step = 1 if item.step is None else as_int(item.step, f"step of axis {axis}")
                if step < 1:
                    raise Error(
                        Status.SHAPE,
                        f"step {step} of axis {axis}: only positive steps are supported",
                    )
                starts.append(
                    0 if item.start is None else as_int(item.start, f"start of axis {axis}")
                )
                stops.append(
                    dim if item.stop is None else as_int(item.stop, f"stop of axis {axis}")
                )
                steps.append(step)
                continue
            if isinstance(item, Value) or item is None or isinstance(item, bool):
                raise Error(
                    Status.INVALID_ARGUMENT,
                    f"index {shown(item)} of axis {axis} is not supported (ints, slices and ...; "
                    f"gather with Value.take)",
                )
            try:
                index = operator.index(item)
            except TypeError:
                raise Error(
                    Status.INVALID_ARGUMENT,
                    f"index {shown(item)} of axis {axis} is not an int or a slice",
                ) from None
            if not -dim <= index < dim:
                raise Error(
                    Status.SHAPE, f"index {index} is out of range for axis {axis} of size {dim}"
                )
            index += dim if index < 0 else 0
            starts.append(index)
            stops.append(index + 1)
            steps.append(1)
            dropped.append(axis)
    result = slice_value(x, starts, stops, steps)
    if dropped:
        kept = tuple(d for axis, d in enumerate(result.shape) if axis not in dropped)
        result = result.reshape(kept)
    return result


def concat(values: Sequence[Value], axis: int = 0) -> Value:
    """The values one after another along `axis`; one dtype, other dims equal."""
    with raised_in("concat"):
        items = list(values)
        if not items:
            raise Error(Status.INVALID_ARGUMENT, "concat needs at least one value")
        from .value import Value

        if not isinstance(items[0], Value):
            raise Error(
                Status.INVALID_ARGUMENT,
                f"values[0] is {type(items[0]).__name__}; expected an fstitch Value",
            )
        graph = items[0]._graph
        handles = [graph._operand(value, f"values[{i}]") for i, value in enumerate(items)]
        axis_value = as_int(axis, "axis")
    array = (_lib.fst_value * len(handles))(*handles)
    return graph._build("fst_concat", len(handles), array, axis_value)


def pad(x: Value, low: Any, high: Any, value: float = 0.0) -> Value:
    """x with `low[i]` elements before and `high[i]` after axis i, set to `value`."""
    with raised_in("pad"):
        x_handle = x._graph._operand(x, "x")
        low_list = as_ints(low, "low")
        high_list = as_ints(high, "high")
        if len(low_list) != len(high_list):
            raise Error(Status.SHAPE, f"{len(low_list)} low pads but {len(high_list)} high pads")
        if isinstance(value, bool):
            value = 1.0 if value else 0.0
        try:
            fill = float(value)
        except (TypeError, ValueError):
            raise Error(
                Status.INVALID_ARGUMENT, f"pad value {shown(value)} is not a number"
            ) from None
    return x._graph._build(
        "fst_pad", x_handle, len(low_list), _int64_array(low_list), _int64_array(high_list), fill
    )


def take(x: Value, indices: Value, axis: int = 0) -> Value:
    """x gathered along `axis` at the i32/i64 `indices`; out-of-range indices give 0."""
    with raised_in("take"):
        x_handle = x._graph._operand(x, "x")
        index_handle = x._graph._operand(indices, "indices")
        axis_value = as_int(axis, "axis")
    return x._graph._build("fst_take", x_handle, index_handle, axis_value)


def split(x: Value, sections: Any, axis: int = -1) -> list[Value]:
    """Consecutive slices of x along `axis`: `sections` equal parts (an int) or the given sizes."""
    from .value import Value

    with raised_in("split"):
        x_handle = x._graph._operand(x, "x")
        axis_value = as_int(axis, "axis")
        if hasattr(sections, "__index__") and not isinstance(sections, bool):
            count = as_int(sections, "sections")
            rank = x.ndim
            if count < 1:
                raise Error(Status.INVALID_ARGUMENT, f"sections {count} is not at least 1")
            if not -rank <= axis_value < rank:
                raise Error(Status.SHAPE, f"axis {axis_value} is out of range for rank {rank}")
            dim = x.shape[axis_value]
            if dim % count != 0:
                raise Error(
                    Status.SHAPE,
                    f"axis {axis_value} of size {dim} does not split into {count} equal parts",
                )
            sizes = (dim // count,) * count
        else:
            sizes = as_ints(sections, "sections")
            if not sizes:
                raise Error(Status.INVALID_ARGUMENT, "split needs at least one section")
    out = (_lib.fst_value * len(sizes))()
    graph = x._graph
    with graph._build_lock:
        status = graph._call(
            "fst_split", x_handle, axis_value, len(sizes), _int64_array(sizes), out
        )
        if status != Status.OK:
            graph._raise_builder_error()
    return [Value(graph, out[i]) for i in range(len(sizes))]
