"""What kernel compilation did, for a context or a fusion (fst_compile_stat)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, fields
from typing import Any, Callable

from . import _lib
from ._call import check


@dataclass(frozen=True)
class CompileStats:
    """Modules compiled, found in the context's memory, loaded from or written to the disk
    cache, disk entries discarded, and the time the compiles took. A module is one kernel
    compiled by NVRTC, or all the kernels of a fusion compiled for the host backend."""

    compiled: int
    memory_hits: int
    disk_hits: int
    disk_writes: int
    disk_discards: int
    compile_seconds: float

    def __sub__(self, earlier: CompileStats) -> CompileStats:
        """What happened between `earlier` and these counts."""
        return CompileStats(*(getattr(self, f.name) - getattr(earlier, f.name) for f in fields(self)))

    def __str__(self) -> str:
        parts = [f"{self.compiled} compiled in {self.compile_seconds:.2f} s"]
        if self.memory_hits:
            parts.append(f"{self.memory_hits} from memory")
        if self.disk_hits:
            parts.append(f"{self.disk_hits} from the disk cache")
        if self.disk_discards:
            parts.append(f"{self.disk_discards} corrupt disk entries discarded")
        return ", ".join(parts)


def read(call: Callable[..., Any], function: str) -> CompileStats:
    """The counters through `call(function, stat, out)` (a handle's _call)."""

    def counter(name: str) -> int:
        value = ctypes.c_uint64()
        check(call(function, _lib.ENUMS["fst_compile_stat"][name], ctypes.byref(value)))
        return value.value

    return CompileStats(
        compiled=counter("FST_COMPILE_STAT_COMPILED"),
        memory_hits=counter("FST_COMPILE_STAT_MEMORY_HITS"),
        disk_hits=counter("FST_COMPILE_STAT_DISK_HITS"),
        disk_writes=counter("FST_COMPILE_STAT_DISK_WRITES"),
        disk_discards=counter("FST_COMPILE_STAT_DISK_DISCARDS"),
        compile_seconds=counter("FST_COMPILE_STAT_COMPILE_NANOSECONDS") / 1e9,
    )
