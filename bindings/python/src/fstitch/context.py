"""fstitch.Context: backend, device, logging and kernel cache configuration."""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, Any, Callable

from . import _lib, compile_stats
from ._show import shown
from ._args import C_INT_RANGE, as_int
from ._call import check, decode
from ._handle import OwnedHandle
from .compile_stats import CompileStats
from .enums import Backend, LogLevel, c_value, from_c, parse
from .errors import Error, Status, api

if TYPE_CHECKING:
    from .graph import Graph

#: Receives (level, message) for each log message of a context.
LogCallback = Callable[[LogLevel, str], None]


def _options(
    backend: Backend | None, device: int, log_level: Any, cache_dir: Any, thunk: Any
) -> Any:
    """New fst_context_options holding the arguments; the caller destroys them."""
    lib = _lib.library()
    options = _lib.ContextOptionsP()
    check(lib.fst_context_options_create(ctypes.byref(options)))
    try:
        if backend is not None:
            check(lib.fst_context_options_set_backend(options, c_value(backend)))
        check(lib.fst_context_options_set_device(options, device))
        if log_level is not None:
            level = parse(LogLevel, log_level, "log_level")
            check(lib.fst_context_options_set_log_level(options, c_value(level)))
        if cache_dir is not None:
            if not isinstance(cache_dir, (str, os.PathLike)):
                raise Error(Status.INVALID_ARGUMENT, f"cache_dir {shown(cache_dir)} is not a path")
            check(lib.fst_context_options_set_cache_dir(options, os.fsencode(cache_dir)))
        if thunk is not None:
            check(lib.fst_context_options_set_log_callback(options, thunk, None))
    except BaseException:
        lib.fst_context_options_destroy(options)
        raise
    return options


def _log_thunk(log: LogCallback) -> Any:
    """A C log callback calling `log`; exceptions it raises are swallowed (C cannot take them)."""

    def forward(_user_data: Any, level: int, message: bytes) -> None:
        try:
            log(LogLevel(level), decode(message))
        except Exception:  # noqa: BLE001 - an exception must not unwind into C
            pass

    return _lib.fst_log_callback(forward)


class Context(OwnedHandle):
    """Process-level configuration: backend, device, logging, kernel cache.

    Args:
        backend: "auto" (CUDA when a driver and an sm_80+ device work, else host), "cuda"
            or "host", or a :class:`Backend`; None for the library's default ("auto", or
            what $FSTITCH_BACKEND says).
        device: CUDA device ordinal (ignored by the host backend).
        log_level: "off", "error", "warn", "info", "debug", "trace" (or a :class:`LogLevel`);
            None keeps the default (warn, or $FSTITCH_LOG).
        cache_dir: directory of the on-disk kernel cache, "off" to disable it, None for the
            default ($FSTITCH_CACHE_DIR or $XDG_CACHE_HOME/fstitch).
        log: a callable receiving (LogLevel, message) instead of stderr. It may be called
            from any thread that calls into fstitch.

    Raises:
        Error: bad arguments (INVALID_ARGUMENT); for backend "cuda", NO_DRIVER or NO_DEVICE.

    Immutable and thread-safe. Graphs and fusions keep what they need of it alive, so
    closing a context before them is safe.
    """

    _destroy = "fst_context_destroy"

    @api("Context")
    def __init__(
        self,
        backend: Any = None,
        device: int = 0,
        log_level: Any = None,
        cache_dir: Any = None,
        log: LogCallback | None = None,
    ) -> None:
        super().__init__(None, "context")
        requested = None if backend is None else parse(Backend, backend, "backend")
        device = as_int(device, "device", C_INT_RANGE)
        if log is not None and not callable(log):
            raise Error(Status.INVALID_ARGUMENT, "log is not callable")
        # Kept for the life of this object: the C context (and graphs and fusions holding
        # it, which hold this object) calls it.
        self._log_thunk = _log_thunk(log) if log is not None else None
        self._device = device
        lib = _lib.library()
        options = _options(requested, device, log_level, cache_dir, self._log_thunk)
        try:
            pointer = _lib.ContextP()
            check(lib.fst_context_create(options, ctypes.byref(pointer)))
        finally:
            lib.fst_context_options_destroy(options)
        self._pointer = pointer
        # Settled at creation; kept so that graphs and fusions, which keep the C context
        # alive, can run after this object is closed.
        self._active = self.active_backend

    @property
    def device(self) -> int:
        """The CUDA device ordinal the context was created for."""
        return self._device

    @property
    def backend(self) -> Backend:
        """The backend requested at creation (may be AUTO)."""
        value = ctypes.c_int()
        check(self._call("fst_context_backend", ctypes.byref(value)))
        return from_c(Backend, value.value)

    @property
    def active_backend(self) -> Backend:
        """The backend runs use: CUDA or HOST, never AUTO."""
        value = ctypes.c_int()
        check(self._call("fst_context_active_backend", ctypes.byref(value)))
        return from_c(Backend, value.value)

    @property
    def device_arch(self) -> int | None:
        """The device's compute capability as 10 * major + minor (90 for H100), None on host."""
        value = ctypes.c_int()
        status = self._call("fst_context_device_arch", ctypes.byref(value))
        if status == Status.NO_DEVICE:
            return None
        check(status)
        return value.value

    @property
    def log_level(self) -> LogLevel:
        """The log level in force."""
        value = ctypes.c_int()
        check(self._call("fst_context_log_level", ctypes.byref(value)))
        return from_c(LogLevel, value.value)

    @property
    def cache_dir(self) -> str:
        """The disk cache directory in force, or "off"."""
        value = ctypes.c_char_p()
        check(self._call("fst_context_cache_dir", ctypes.byref(value)))
        return decode(value.value)

    @api("Context.compile_stats")
    def compile_stats(self) -> CompileStats:
        """What the compiles of every fusion of this context did so far."""
        return compile_stats.read(self._call, "fst_context_compile_stat")

    @api("Context.log")
    def log(self, level: Any, message: str) -> None:
        """Emits `message` at `level` through the context's logger."""
        parsed = parse(LogLevel, level, "level")
        check(self._call("fst_context_log", c_value(parsed), str(message).encode("utf-8")))

    def graph(self) -> Graph:
        """A new empty graph of this context."""
        from .graph import Graph

        return Graph(self)

    def parse(self, text: str) -> Graph:
        """A graph parsed from its text format (see Graph.parse)."""
        from .graph import Graph

        return Graph.parse(self, text)

    def __repr__(self) -> str:
        if self.closed:
            return "<fstitch.Context closed>"
        return f"<fstitch.Context backend={self.active_backend.value} device={self._device}>"
