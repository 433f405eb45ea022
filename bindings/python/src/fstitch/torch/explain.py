"""fstitch.torch.explain: what the backend makes of a model's graphs, as data and as text."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

import torch

from ..compile_stats import CompileStats
from .backend import make_backend
from .lowering import Lowered
from .options import Options, logger


@dataclass
class GraphReport:
    """One ATen graph at one input signature.

    Attributes:
        role: "forward", "backward" or "inference".
        aten_ops: how many times each ATen operation occurs.
        kernels: the names of the fused kernels.
        opaque_ops: the ATen operations torch runs between them, in graph order.
        ideal_kernels: memory-intensive regions connected without an opaque operation in
            between (views free): what a perfect partition would launch.
        planned_bytes: global-memory bytes the plan moves.
        lower_bound_bytes: the least any plan must move (each fused-region input and
            opaque result read once, each output written once).
        plan: the plan in words, with the reason for every boundary between kernels.
        plan_seconds: the time to lower and fuse the graph.
        first_run_seconds: the time of its first run, which compiles the kernels (or loads
            them from the disk cache) and runs them; None if it did not run.
        compile_stats: what that first run did for the kernels' modules (compiled, with
            their time, or found in memory or on disk); None if it did not run.
    """

    role: str
    aten_ops: dict[str, int]
    kernels: list[str]
    opaque_ops: list[str]
    ideal_kernels: int
    planned_bytes: int
    lower_bound_bytes: int
    plan: str
    plan_seconds: float = 0.0
    first_run_seconds: float | None = None
    compile_stats: CompileStats | None = None

    def __str__(self) -> str:
        ops = ", ".join(f"{name} x{count}" for name, count in sorted(self.aten_ops.items()))
        first_run = "-" if self.first_run_seconds is None else f"{self.first_run_seconds:.2f} s"
        return "\n".join(
            [
                f"{self.role} graph: {sum(self.aten_ops.values())} ATen ops, {len(self.kernels)} fused "
                f"kernel(s) (ideal {self.ideal_kernels}), {len(self.opaque_ops)} opaque op(s)",
                f"  planned bytes {self.planned_bytes} (lower bound {self.lower_bound_bytes})",
                f"  planned in {self.plan_seconds:.2f} s, first run (compile and run) {first_run}",
                f"  kernel modules: {self.compile_stats if self.compile_stats is not None else '-'}",
                f"  ATen ops: {ops}",
                f"  opaque: {', '.join(self.opaque_ops) or '-'}",
                f"  kernels: {', '.join(self.kernels) or '-'}",
            ]
        )


@dataclass
class Explanation:
    """Reports of every graph a call of the model went through, and the fallback reasons."""

    graphs: list[GraphReport] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        parts = [str(report) for report in self.graphs]
        parts += [f"fallback: {reason}" for reason in self.fallbacks]
        return "\n".join(parts) if parts else "no graph was compiled"


def _report(role: str, lowered: Lowered) -> GraphReport:
    fusion = lowered.fusion
    return GraphReport(
        role=role,
        aten_ops=dict(lowered.aten_ops),
        kernels=[kernel.name for kernel in fusion.kernels] if fusion is not None else [],
        opaque_ops=list(lowered.opaque_ops),
        ideal_kernels=lowered.ideal_kernels,
        planned_bytes=fusion.planned_bytes if fusion is not None else 0,
        lower_bound_bytes=fusion.lower_bound_bytes if fusion is not None else 0,
        plan=fusion.plan if fusion is not None else "",
        plan_seconds=lowered.plan_seconds,
        first_run_seconds=lowered.first_run_seconds,
        compile_stats=lowered.compile_stats,
    )


class _Reasons(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def explain(model: Any, *inputs: Any, backward: bool = False, **options: Any) -> Explanation:
    """Compiles `model` with the fstitch backend (`options` as for torch.compile), calls it
    once on `inputs` and reports each graph that ran: print() the result for a summary.

    With `backward`, the call is a training step's: the outputs' floating-point elements
    are summed and back-propagated (into the parameters' and inputs' .grad, as
    loss.backward() would), so the backward graph is reported after the forward graph."""
    explanation = Explanation()
    lowerings: list[tuple[str, Lowered]] = []
    compiled = torch.compile(
        model,
        backend=make_backend(Options.parse(options), on_lowered=lambda role, lowered: lowerings.append((role, lowered))),
    )
    reasons = _Reasons()
    logger.addHandler(reasons)
    try:
        with torch.enable_grad() if backward else contextlib.nullcontext():
            outputs = compiled(*inputs)
            if backward:
                _backward(outputs)
    finally:
        logger.removeHandler(reasons)
    explanation.graphs = [_report(role, lowered) for role, lowered in lowerings]
    explanation.fallbacks = reasons.messages
    return explanation


def _backward(outputs: Any) -> None:
    leaves = [
        t
        for t in torch.utils._pytree.tree_leaves(outputs)
        if isinstance(t, torch.Tensor) and t.requires_grad and t.dtype.is_floating_point
    ]
    if not leaves:
        raise ValueError("explain(backward=True): no output of the model requires a gradient")
    torch.stack([t.float().sum() for t in leaves]).sum().backward()
