"""Turning C statuses into exceptions."""

from __future__ import annotations

from . import _lib
from .errors import Error, Status, located


def decode(text: bytes | None) -> str:
    """A C string from the library as str (the library writes ASCII/UTF-8)."""
    return "" if text is None else text.decode("utf-8", errors="replace")


def last_error(status: int) -> Error:
    """The Error for a failed call that returned `status` on this thread."""
    return located(Error(status, decode(_lib.library().fst_last_error_message())))


def check(status: int) -> None:
    """Raises the calling thread's last error when `status` is not FST_OK."""
    if status != Status.OK:
        raise last_error(status)
