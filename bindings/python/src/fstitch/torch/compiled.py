"""The callable the backend hands torch for one ATen graph: a cache of lowered plans by
input signature, the run of a plan (host backend for CPU tensors, CUDA backend for CUDA
tensors), and the fallback to torch."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

from .lowering import Lowered, Lowering
from .opaque_ops import run_opaque
from .options import Options, context_for, logger
from .tensors import from_numpy, to_numpy

#: Events of the backend since the process started (or reset_counters()): "graphs" (ATen
#: graphs handed over by torch), "compiles" (graphs lowered and fused for a new input
#: signature), "cache_hits" (calls that found their plan), "fallbacks" (signatures run by
#: torch, with the reason logged), and what the first runs of the plans did for their
#: kernel modules: "modules_compiled", "modules_from_disk" (the disk cache),
#: "modules_from_memory" (the context's memory; NVRTC modules only).
counters: Counter = Counter()


def reset_counters() -> None:
    counters.clear()


def signature(args: list[Any]) -> tuple[Any, ...]:
    """What a plan depends on: each tensor's shape, dtype and device, each scalar's value.
    (Strides do not matter: fstitch reads every input as a dense row-major copy.)"""
    key = []
    for arg in args:
        if isinstance(arg, torch.Tensor):
            key.append((tuple(arg.shape), arg.dtype, str(arg.device)))
        elif isinstance(arg, (int, float, bool)) or arg is None:
            key.append((type(arg).__name__, arg))
        else:
            key.append(type(arg).__name__)
    return tuple(key)


class _Fallback:
    def __init__(self, reason: str) -> None:
        self.reason = reason


def graph_device(args: list[Any]) -> torch.device:
    """The device of the tensors among `args` (the CPU when there are none); raises ValueError
    when they are on several."""
    devices = {arg.device for arg in args if isinstance(arg, torch.Tensor)}
    if len(devices) > 1:
        raise ValueError(f"the graph's inputs are on several devices ({', '.join(sorted(map(str, devices)))})")
    return devices.pop() if devices else torch.device("cpu")


def _opaque_callback(lowered: Lowered) -> Callable[[Any], None] | None:
    """The opaque= callable of one run: torch runs each opaque step (None when there are none)."""
    if not lowered.opaque:
        return None
    memo: dict[str, Any] = {}  # results of multi-result operations, computed once per run
    return lambda call: run_opaque(lowered.opaque, memo, call, lowered.device)


def _run_fused_on_host(lowered: Lowered, args: list[Any]) -> list[torch.Tensor]:
    arrays = [to_numpy(args[position]) for position in lowered.input_positions]
    fused = lowered.fusion.run(arrays, opaque=_opaque_callback(lowered))
    return [from_numpy(array, dtype) for array, dtype in zip(fused, lowered.output_dtypes)]


def _run_fused_on_cuda(lowered: Lowered, args: list[Any]) -> list[torch.Tensor]:
    """The run on torch's current stream of the graph's device: inputs read in place (dense
    ones; others are copied dense first, on that stream), outputs and workspace from torch's
    caching allocator, opaque operations run by torch on the same stream; nothing waits for
    the GPU."""
    device = lowered.device
    stream = torch.cuda.current_stream(device)
    inputs = [args[position].contiguous() for position in lowered.input_positions]
    fusion = lowered.fusion
    outputs = [
        torch.empty(tuple(spec.shape), dtype=dtype, device=device)
        for spec, dtype in zip(fusion.output_specs, lowered.output_dtypes)
    ]
    size = fusion.workspace_size
    workspace = torch.empty(size, dtype=torch.uint8, device=device) if size > 0 else None
    with torch.cuda.device(device):
        fusion.run(
            inputs, outputs=outputs, workspace=workspace, stream=stream.cuda_stream, opaque=_opaque_callback(lowered)
        )
    return outputs


def run_lowered(lowered: Lowered, args: list[Any]) -> Any:
    """Runs a lowered plan on `args`; returns the FX graph's output structure."""
    fused: list[torch.Tensor] = []
    if lowered.fusion is not None:
        if lowered.device.type == "cuda":
            fused = _run_fused_on_cuda(lowered, args)
        else:
            fused = _run_fused_on_host(lowered, args)
    results = []
    for kind, where in lowered.output_sources:
        if kind == "fused":
            results.append(fused[where])
        elif kind == "arg":
            results.append(args[where])
        elif kind == "copy":
            results.append(args[where].clone())
        elif kind == "constant":
            results.append(where.clone())
        else:
            results.append(where)
    return pytree.tree_unflatten(results, lowered.output_spec)


class CompiledGraph:
    """Runs `gm` (an ATen graph from aot_autograd) through fstitch, one plan per signature.

    `on_lowered`, when given, receives (role, Lowered) after each new lowering (explain).
    """

    _boxed_call = True  # aot_autograd passes the arguments as one list

    def __init__(
        self,
        gm: torch.fx.GraphModule,
        options: Options,
        role: str,
        on_lowered: Callable[[str, Lowered], None] | None = None,
    ) -> None:
        self.gm = gm
        self.options = options
        self.role = role
        self.on_lowered = on_lowered
        self.plans: dict[tuple[Any, ...], Lowered | _Fallback] = {}
        counters["graphs"] += 1

    def __call__(self, *given: Any) -> Any:
        # Boxed (one list) as aot_autograd calls forward graphs; unpacked through the
        # wrapper it puts around backward compilers. Graph arguments are never lists.
        args = list(given[0]) if len(given) == 1 and isinstance(given[0], list) else list(given)
        key = signature(args)
        plan = self.plans.get(key)
        if plan is None:
            plan = self._lower(args, key)
        else:
            counters["cache_hits"] += 1
        if isinstance(plan, _Fallback):
            return self.gm(*args)
        start = time.perf_counter()
        try:
            results = run_lowered(plan, args)
        except Exception as error:  # noqa: BLE001 - the model must not fail: torch runs it
            self._fall_back(key, f"the fused run failed: {error}")
            return self.gm(*args)
        if plan.first_run_seconds is None:
            plan.first_run_seconds = time.perf_counter() - start
            if plan.fusion is not None:
                plan.compile_stats = plan.fusion.compile_stats()
                counters["modules_compiled"] += plan.compile_stats.compiled
                counters["modules_from_disk"] += plan.compile_stats.disk_hits
                counters["modules_from_memory"] += plan.compile_stats.memory_hits
            logger.info(
                "%s graph: first run in %.2f s; its kernels: %s",
                self.role,
                plan.first_run_seconds,
                plan.compile_stats if plan.compile_stats is not None else "none (nothing fused)",
            )
        return results

    def _lower(self, args: list[Any], key: tuple[Any, ...]) -> Lowered | _Fallback:
        start = time.perf_counter()
        try:
            device = graph_device(args)
            context = context_for(device, self.options.log_level)
            lowered = Lowering(
                self.gm, args, context, eager_rounding=self.options.eager_rounding, device=device
            ).lower(self.options.policy, self.options.target)
        except Exception as error:  # noqa: BLE001 - whatever fails here, torch runs the graph
            return self._fall_back(key, str(error) or type(error).__name__)
        counters["compiles"] += 1
        lowered.plan_seconds = time.perf_counter() - start
        self.plans[key] = lowered
        kernels = len(lowered.fusion.kernels) if lowered.fusion is not None else 0
        logger.info(
            "%s graph: %d ATen ops -> %d kernel(s) and %d opaque op(s), planned in %.2f s",
            self.role,
            sum(lowered.aten_ops.values()),
            kernels,
            len(lowered.opaque_ops),
            lowered.plan_seconds,
        )
        if self.on_lowered is not None:
            self.on_lowered(self.role, lowered)
        return lowered

    def _fall_back(self, key: tuple[Any, ...], reason: str) -> _Fallback:
        counters["fallbacks"] += 1
        logger.warning("%s graph runs with torch: %s", self.role, reason)
        fallback = _Fallback(reason)
        self.plans[key] = fallback
        return fallback
