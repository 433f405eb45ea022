"""Base class of the Python objects that own a C handle."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from . import _lib
from .errors import Error, Status


class OwnedHandle:
    """Owns one C handle, released exactly once by close(), the context manager or the GC.

    Every call into the library holds the handle in use (:meth:`_in_use`): close() on
    another thread meanwhile marks the object closed at once (later calls raise
    :class:`Error`), and the handle is destroyed when the last call in flight returns.

    Subclasses set ``_destroy`` to the name of the C function that releases the handle.
    """

    _destroy: str = ""

    def __init__(self, pointer: Any, what: str) -> None:
        self._what = what
        self._pointer: Any | None = pointer
        self._lock = threading.Lock()
        self._users = 0  # calls in flight
        self._doomed: Any | None = None  # closed while in use: destroyed by the last user

    def _closed_error(self) -> Error:
        return Error(Status.INVALID_ARGUMENT, f"{self._what} is closed")

    @property
    def _handle(self) -> Any:
        """The C handle; raises Error when the object is closed.

        Only for checks: a call into the library takes the handle from :meth:`_in_use`.
        """
        pointer = self._pointer
        if pointer is None:
            raise self._closed_error()
        return pointer

    @contextlib.contextmanager
    def _in_use(self) -> Iterator[Any]:
        """The C handle, kept alive until the block ends; raises Error when closed."""
        with self._lock:
            pointer = self._pointer
            if pointer is None:
                raise self._closed_error()
            self._users += 1
        try:
            yield pointer
        finally:
            with self._lock:
                self._users -= 1
                doomed = self._doomed if self._users == 0 else None
                if doomed is not None:
                    self._doomed = None
            if doomed is not None:
                self._release(doomed)

    def _call(self, function: str, *args: Any) -> Any:
        """Calls the library's `function` with this handle first, holding it in use."""
        with self._in_use() as pointer:
            return getattr(_lib.library(), function)(pointer, *args)

    @property
    def closed(self) -> bool:
        """True once close() has run (calls still in flight may be finishing)."""
        return self._pointer is None

    def close(self) -> None:
        """Releases the C handle once no call uses it any more. Safe to call more than once
        and from any thread; later calls raise :class:`Error`."""
        with self._lock:
            pointer, self._pointer = self._pointer, None
            if pointer is not None and self._users > 0:
                self._doomed, pointer = pointer, None
        if pointer is not None:
            self._release(pointer)

    def _release(self, pointer: Any) -> None:
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
