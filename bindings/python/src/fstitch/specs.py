"""TensorSpec: the name, dtype and shape of a graph input or output."""

from __future__ import annotations

from typing import NamedTuple

from .dtypes import DType


class TensorSpec(NamedTuple):
    """A graph input or output: its name, dtype and shape."""

    name: str
    dtype: DType
    shape: tuple[int, ...]

    def describe(self) -> str:
        """ "f32[8,16]"."""
        return f"{self.dtype.value}[{','.join(str(d) for d in self.shape)}]"
