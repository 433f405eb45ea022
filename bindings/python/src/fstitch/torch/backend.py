"""The Dynamo backend: aot_autograd with torch's core ATen decompositions, so the forward
and the backward graph of a training step both come through, each compiled into a
CompiledGraph."""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch._dynamo.backends.common import aot_autograd

from .compiled import CompiledGraph
from .lowering import Lowered
from .options import Options, logger


def decompositions() -> dict[Any, Any]:
    """torch's core ATen decompositions, less scaled-dot-product attention's.

    Decomposed, the attention forward becomes math while aot_autograd keeps the fused
    backward (`_scaled_dot_product_flash_attention_for_cpu_backward`), which then reads
    statistics the math forward never produced: torch's own decomposed graph gives
    gradients some 30 times too large. Kept whole, both stay the fused pair, run by torch
    as opaque steps."""
    return {
        op: fn
        for op, fn in torch._decomp.core_aten_decompositions().items()
        if "scaled_dot_product" not in str(op)
    }


def make_backend(
    options: Options, on_lowered: Callable[[str, Lowered], None] | None = None
) -> Callable[..., Any]:
    """A backend with fixed options (explain passes `on_lowered` to see each plan)."""

    def compiler(role: str) -> Callable[..., Any]:
        def compile_graph(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> CompiledGraph:
            return CompiledGraph(gm, options, role, on_lowered)

        return compile_graph

    def compile_dynamo_graph(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        lowering = aot_autograd(
            fw_compiler=compiler("forward"),
            bw_compiler=compiler("backward"),
            inference_compiler=compiler("inference"),
            decompositions=decompositions(),
        )
        try:
            return lowering(gm, example_inputs)
        except Exception as error:
            if type(error).__name__ == "TensorifyScalarRestartAnalysis":
                raise  # Dynamo's own control flow, not a failure
            logger.warning("the graph runs with torch: aot_autograd failed: %s", error)
            return gm.forward

    return compile_dynamo_graph


def backend(gm: torch.fx.GraphModule, example_inputs: list[Any], options: dict[str, Any] | None = None, **more: Any) -> Any:
    """The "fstitch" torch.compile backend.

    Options (``torch.compile(model, backend="fstitch", options={...})`` or keyword
    arguments): ``policy`` ("stitch", "loop" or "none"), ``target`` (80 or 90),
    ``log_level`` (of the library's messages, sent to the logger "fstitch.torch") and
    ``eager_rounding`` (round f16 and bf16 results after every operation, as eager does;
    otherwise they stay f32 until they leave fstitch).
    """
    parsed = Options.parse({**(options or {}), **more})
    return make_backend(parsed)(gm, example_inputs)
