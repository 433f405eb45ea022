"""Options of the backend (torch.compile(..., options={...})) and the contexts they need."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from ..context import Context
from ..enums import LogLevel

logger = logging.getLogger("fstitch.torch")

_POLICIES = ("stitch", "loop", "none")
_LOG_LEVELS = ("off", "error", "warn", "info", "debug", "trace")
_TARGETS = (80, 90)


@dataclass(frozen=True)
class Options:
    """policy: the fusion policy; target: the architecture planned for (80, 90, or None for
    the default); log_level: the library's messages at or above it go to the logger
    "fstitch.torch"; eager_rounding: round every f16 and bf16 result inside a fused graph
    to its dtype, as eager does after each operation and at each cast (bit-level parity
    with eager). Off, such values stay f32 until they leave fstitch (an output, an operand
    of an operation torch runs): fewer conversions and no rounding between fused
    operations."""

    policy: str = "stitch"
    target: int | None = None
    log_level: str = "warn"
    eager_rounding: bool = False

    @classmethod
    def parse(cls, options: dict[str, Any]) -> Options:
        known = {"policy", "target", "log_level", "eager_rounding"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(
                f"fstitch backend: unknown option(s) {', '.join(unknown)}; "
                f"the options are {', '.join(sorted(known))}"
            )
        parsed = cls(**options)
        if parsed.policy not in _POLICIES:
            raise ValueError(f"fstitch backend: policy {parsed.policy!r} is not one of {_POLICIES}")
        if parsed.log_level not in _LOG_LEVELS:
            raise ValueError(f"fstitch backend: log_level {parsed.log_level!r} is not one of {_LOG_LEVELS}")
        if not isinstance(parsed.eager_rounding, bool):
            raise ValueError(f"fstitch backend: eager_rounding {parsed.eager_rounding!r} is not True or False")
        if parsed.target is not None and parsed.target not in _TARGETS:
            raise ValueError(f"fstitch backend: target {parsed.target!r} is not one of {_TARGETS}")
        return parsed


_PYTHON_LEVELS = {
    LogLevel.ERROR: logging.ERROR,
    LogLevel.WARN: logging.WARNING,
    LogLevel.INFO: logging.INFO,
    LogLevel.DEBUG: logging.DEBUG,
    LogLevel.TRACE: logging.DEBUG,
}


def _forward_to_logger(level: LogLevel, message: str) -> None:
    logger.log(_PYTHON_LEVELS.get(level, logging.INFO), "libfstitch: %s", message)


_contexts: dict[tuple[str, str, int], Context] = {}
_contexts_lock = threading.Lock()


def host_context(log_level: str) -> Context:
    """The process's host-backend context for `log_level` (made once; contexts are thread-safe)."""
    with _contexts_lock:
        key = ("host", log_level, 0)
        if key not in _contexts:
            _contexts[key] = Context(backend="host", log_level=log_level, log=_forward_to_logger)
        return _contexts[key]


def cuda_context(log_level: str, device: int) -> Context:
    """The process's CUDA-backend context for `log_level` on CUDA device `device` (made once;
    raises fstitch.Error when fstitch cannot open it: no driver, or a GPU older than sm_80)."""
    with _contexts_lock:
        key = ("cuda", log_level, device)
        if key not in _contexts:
            _contexts[key] = Context(backend="cuda", device=device, log_level=log_level, log=_forward_to_logger)
        return _contexts[key]


def context_for(device: Any, log_level: str) -> Context:
    """The context that runs graphs whose tensors are on `device` (a torch.device)."""
    if device.type == "cpu":
        return host_context(log_level)
    if device.type == "cuda":
        return cuda_context(log_level, device.index if device.index is not None else 0)
    raise ValueError(f"fstitch runs CPU and CUDA tensors, not tensors on {device}")
