"""The exception every failing fstitch call raises, and the status codes it carries."""

from __future__ import annotations

import contextlib
import enum
import functools
from collections.abc import Iterator
from typing import Any, Callable, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


class Status(enum.IntEnum):
    """Mirror of the C ``fst_status`` enum (same values)."""

    OK = 0
    INVALID_ARGUMENT = 1
    SHAPE = 2
    DTYPE = 3
    UNSUPPORTED = 4
    OUT_OF_MEMORY = 5
    NO_DEVICE = 6
    NO_DRIVER = 7
    NO_COMPILER = 8
    COMPILE = 9
    LAUNCH = 10
    PARSE = 11
    INTERNAL = 12

    def __str__(self) -> str:
        return self.c_name

    @property
    def c_name(self) -> str:
        """The C enumerator's name, as fst_status_string() spells it: "FST_ERROR_SHAPE"."""
        return "FST_OK" if self is Status.OK else f"FST_ERROR_{self.name}"


class Error(Exception):
    """A failed fstitch call.

    Attributes:
        status: what kind of failure (a :class:`Status`).
        message: the library's description: the function, the argument and the value at
            fault (fst_last_error_message() for failures inside the library).

    ``str(error)`` is ``"FST_ERROR_SHAPE: fst_binary: ..."``.
    """

    def __init__(self, status: Status | int, message: str) -> None:
        try:
            self.status = Status(int(status))
        except ValueError:
            self.status = Status.INTERNAL
            message = f"unknown status {int(status)}: {message}"
        self.message = message
        # True once the message names where the error arose (the library's messages do).
        self.located = False
        super().__init__(f"{self.status.c_name}: {message}")

    def __reduce__(self):  # keeps the two-argument constructor picklable
        return (type(self), (self.status, self.message))


def located(error: Error) -> Error:
    """Marks `error` as naming its place already (a message of the library)."""
    error.located = True
    return error


@contextlib.contextmanager
def raised_in(name: str) -> Iterator[None]:
    """Prefixes the message of an Error raised by Python-side checks with `name`."""
    try:
        yield
    except Error as error:
        if error.located:
            raise
        raise located(Error(error.status, f"{name}: {error.message}")) from None


def api(name: str) -> Callable[[_F], _F]:
    """Decorator: Python-side errors of the function name it (see raised_in)."""

    def decorate(function: _F) -> _F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with raised_in(name):
                return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
