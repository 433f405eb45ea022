"""Base class of the Python objects that own a C handle."""

from __future__ import annotations

import threading
from typing import Any

from . import _lib
from .errors import Error, Status


class OwnedHandle:
    """Owns one C handle, released exactly once by close(), the context manager or the GC.

    Subclasses set ``_destroy`` to the name of the C function that releases the handle.
    """

    _destroy: str = ""

    def __init__(self, pointer: Any, what: str) -> None:
        self._what = what
        self._pointer: Any | None = pointer
        self._close_lock = threading.Lock()

    @property
    def _handle(self) -> Any:
        """The C handle; raises Error when the object is closed."""
        pointer = self._pointer
        if pointer is None:
            raise Error(Status.INVALID_ARGUMENT, f"{self._what} is closed")
        return pointer

    @property
    def closed(self) -> bool:
        """True once close() has run."""
        return self._pointer is None

    def close(self) -> None:
        """Releases the C handle. Safe to call more than once."""
        with self._close_lock:
            pointer, self._pointer = self._pointer, None
        if pointer is not None:
            getattr(_lib.library(), self._destroy)(pointer)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing can be reported from a finalizer
            pass
