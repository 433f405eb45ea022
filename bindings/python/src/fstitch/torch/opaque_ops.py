"""ATen operations that torch runs inside an fstitch plan, through the opaque callback.

Each opaque fstitch value keeps an OpaqueRecord: the ATen overload, its arguments with the
tensor operands left as slots, and which result of the operation it is. During a run the
callback rebuilds the arguments from fstitch's buffers (numpy views on the host backend,
tensors over the device buffers on the CUDA backend; no copy), runs the operation with torch
and writes the result into fstitch's buffer. On the CUDA backend the callback runs on the
stream of the run, torch's current stream, so torch queues the operation behind the kernels
before it and the kernels after it wait for it. An operation with several
results (one opaque value per result) runs once per run: the first of its values to be
needed computes all of them into the run's memo.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree

from .tensors import from_device, from_numpy


def as_tensor(buffer: Any, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A tensor over one of an opaque call's buffers: numpy on the host, device memory on CUDA."""
    if device.type == "cpu":
        return from_numpy(buffer, dtype)
    return from_device(buffer, dtype, device)


@dataclass(frozen=True)
class OperandSlot:
    """Where an operand goes among the leaves of the arguments, its dtype, and the views
    (ATen overload, further arguments, keyword arguments) torch applies to it first."""

    slot: int
    dtype: torch.dtype
    views: list[tuple[Any, tuple[Any, ...], dict[str, Any]]]

    def tensor(self, operand: Any, device: torch.device) -> torch.Tensor:
        tensor = as_tensor(operand, self.dtype, device)
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

    def compute(self, operands: list[Any], memo: dict[str, Any], device: torch.device) -> torch.Tensor:
        """The result of the operation on `operands` (fstitch's buffers on `device`)."""
        if self.output_index is not None and self.node_name in memo:
            return memo[self.node_name][self.output_index]
        leaves = list(self.fixed)
        with warnings.catch_warnings():
            # Operands are read-only views of fstitch's buffers; torch is only reading them.
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            for slot, operand in zip(self.operand_slots, operands):
                leaves[slot.slot] = slot.tensor(operand, device)
        args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        result = self.target(*args, **kwargs)
        if self.output_index is None:
            return result
        memo[self.node_name] = result
        return result[self.output_index]


def run_opaque(records: dict[int, OpaqueRecord], memo: dict[str, Any], call: Any, device: torch.device) -> None:
    """The body of the opaque callback of one run on `device`: fills `call.result` with torch."""
    record = records[call.handle]
    result = record.compute(call.operands, memo, device)
    as_tensor(call.result, record.dtype, device).copy_(result)
