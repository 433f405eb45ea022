"""The small enums of the C API as Python enums, and their parsing from user arguments.

Backend, Policy, ParamKind, LaunchKind and StepKind are string enums
(``Backend.HOST == "host"``); LogLevel is ordered, so it is an IntEnum with the C values.
"""

from __future__ import annotations

import enum
from typing import Any, TypeVar

from . import _lib
from ._show import shown
from .errors import Error, Status

_E = TypeVar("_E", bound=enum.Enum)


class Backend(str, enum.Enum):
    """Where fused kernels run."""

    AUTO = "auto"
    CUDA = "cuda"
    HOST = "host"

    def __str__(self) -> str:
        return self.value


class Policy(str, enum.Enum):
    """How aggressively fst_fuse fuses."""

    STITCH = "stitch"
    LOOP = "loop"
    NONE = "none"

    def __str__(self) -> str:
        return self.value


class ParamKind(str, enum.Enum):
    """What a kernel parameter points to."""

    INPUT = "input"
    OUTPUT = "output"
    WORKSPACE = "workspace"
    CONSTANT = "constant"

    def __str__(self) -> str:
        return self.value


class LaunchKind(str, enum.Enum):
    """How a kernel must be launched."""

    REGULAR = "regular"
    COOPERATIVE = "cooperative"
    CLUSTER = "cluster"

    def __str__(self) -> str:
        return self.value


class StepKind(str, enum.Enum):
    """What one step of a fusion does: launch a kernel or run an opaque operation."""

    KERNEL = "kernel"
    OPAQUE = "opaque"

    def __str__(self) -> str:
        return self.value


class LogLevel(enum.IntEnum):
    """Severity of log messages (the C ``fst_log_level`` values)."""

    OFF = 0
    ERROR = 1
    WARN = 2
    INFO = 3
    DEBUG = 4
    TRACE = 5


# C values of the string enums, taken from the declarations of the header.
C_VALUES: dict[type[enum.Enum], dict[Any, int]] = {
    Backend: {
        member: _lib.ENUMS["fst_backend"][f"FST_BACKEND_{member.name}"] for member in Backend
    },
    Policy: {
        member: _lib.ENUMS["fst_fusion_policy"][f"FST_POLICY_{member.name}"] for member in Policy
    },
    ParamKind: {
        member: _lib.ENUMS["fst_param_kind"][f"FST_PARAM_{member.name}"] for member in ParamKind
    },
    LaunchKind: {
        member: _lib.ENUMS["fst_launch_kind"][f"FST_LAUNCH_{member.name}"] for member in LaunchKind
    },
    StepKind: {
        member: _lib.ENUMS["fst_step_kind"][f"FST_STEP_{member.name}"] for member in StepKind
    },
    LogLevel: {
        member: _lib.ENUMS["fst_log_level"][f"FST_LOG_{member.name}"] for member in LogLevel
    },
}


def c_value(member: enum.Enum) -> int:
    """The C enum value of `member`."""
    return C_VALUES[type(member)][member]


def from_c(kind: type[_E], value: int) -> _E:
    """The member of `kind` whose C value is `value`."""
    for member, member_value in C_VALUES[kind].items():
        if member_value == value:
            return member
    raise Error(Status.INTERNAL, f"the library returned {value}, which is no {kind.__name__}")


def parse(kind: type[_E], spec: Any, what: str) -> _E:
    """The member of `kind` that `spec` names: a member, its value or its name (any case).

    Raises:
        Error: INVALID_ARGUMENT naming `what` and the accepted names.
    """
    if isinstance(spec, kind):
        return spec
    if isinstance(spec, str):
        for member in kind:
            if spec.lower() in (str(member.value).lower(), member.name.lower()):
                return member
    elif kind is LogLevel and isinstance(spec, int) and not isinstance(spec, bool):
        for member in kind:
            if member.value == spec:
                return member
    names = ", ".join(
        repr(member.name.lower() if kind is LogLevel else member.value) for member in kind
    )
    raise Error(Status.INVALID_ARGUMENT, f"{what} {shown(spec)} is not valid; expected one of {names}")
