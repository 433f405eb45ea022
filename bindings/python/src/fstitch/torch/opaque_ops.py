"""ATen operations that torch runs inside an fstitch plan, through the opaque callback.

Each opaque fstitch value keeps an OpaqueRecord: the ATen overload, its arguments with the
tensor operands left as slots, and which result of the operation it is. During a run the
callback rebuilds the arguments from fstitch's buffers (numpy views, no copy), runs the
operation with torch and writes the result into fstitch's buffer. An operation with several
results (one opaque value per result) runs once per run: the first of its values to be
needed computes all of them into the run's memo.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree

from .tensors import from_numpy


@dataclass(frozen=True)
class OperandSlot:
    """Where an operand goes among the leaves of the arguments, its dtype, and the views
    (ATen overload, further arguments, keyword arguments) torch applies to it first."""

    slot: int
    dtype: torch.dtype
    views: list[tuple[Any, tuple[Any, ...], dict[str, Any]]]

    def tensor(self, operand: Any) -> torch.Tensor:
        tensor = from_numpy(operand, self.dtype)
        for target, args, kwargs in self.views:
            tensor = target(tensor, *args, **kwargs)
        return tensor


@dataclass(frozen=True)
class OpaqueRecord:
    target: Any  # the ATen OpOverload
    node_name: str  # the FX node, unique in its graph: the memo key
    spec: Any  # pytree structure of (args, kwargs)
    fixed: list[Any]  # the leaves, None where an operand goes
    operand_slots: list[OperandSlot]
    output_index: int | None  # which result of a multi-result operation, else None
    dtype: torch.dtype

    def compute(self, operands: list[Any], memo: dict[str, Any]) -> torch.Tensor:
        """The result of the operation on `operands` (fstitch's numpy buffers)."""
        if self.output_index is not None and self.node_name in memo:
            return memo[self.node_name][self.output_index]
        leaves = list(self.fixed)
        with warnings.catch_warnings():
            # Operands are read-only views of fstitch's buffers; torch is only reading them.
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            for slot, operand in zip(self.operand_slots, operands):
                leaves[slot.slot] = slot.tensor(operand)
        args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        result = self.target(*args, **kwargs)
        if self.output_index is None:
            return result
        memo[self.node_name] = result
        return result[self.output_index]


def run_opaque(records: dict[int, OpaqueRecord], memo: dict[str, Any], call: Any) -> None:
    """The body of the opaque callback of one run: fills `call.result` with torch."""
    record = records[call.handle]
    result = record.compute(call.operands, memo)
    from_numpy(call.result, record.dtype).copy_(result)
