"""fstitch.torch: a torch.compile backend.

``torch.compile(model, backend="fstitch")`` lowers each graph to core ATen (forward and
backward, through aot_autograd), fuses the memory-intensive operations with fstitch and
runs everything else (matmuls, convolutions, attention, embeddings...) with torch as opaque
steps of the plan. CPU tensors run on the host backend. What fstitch cannot handle (CUDA
tensors for now, dtypes it lacks, a failure anywhere) runs with torch, the reason logged
to the logger "fstitch.torch".

Importing this module registers the backend under the name "fstitch" (installed packages
also register it through the ``torch_dynamo_backends`` entry point).
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "fstitch.torch needs PyTorch: pip install 'fstitch[torch]' (or pip install torch)"
    ) from error

from .backend import backend, decompositions
from .compiled import counters, reset_counters
from .explain import Explanation, GraphReport, explain


def _register() -> None:
    from torch._dynamo.backends import registry

    # When torch found the entry point, it registers the backend itself as it loads it.
    if "fstitch" in registry._COMPILER_FNS or registry._BACKENDS.get("fstitch") is not None:
        return
    registry.register_backend(compiler_fn=backend, name="fstitch")


_register()

__all__ = [
    "Explanation",
    "GraphReport",
    "backend",
    "counters",
    "decompositions",
    "explain",
    "reset_counters",
]
