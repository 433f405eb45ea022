//! What kernel compilation did, for a context or a fusion (`fst_compile_stat`).

use std::time::Duration;

use fstitch_sys as sys;

use crate::error::{check, Result};

/// Modules compiled, found in the context's memory, loaded from or written to the disk
/// cache, disk entries discarded, and the time the compiles took. A module is one kernel
/// compiled by NVRTC, or all the kernels of a fusion compiled for the host backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileStats {
    /// Modules compiled.
    pub compiled: u64,
    /// NVRTC modules found in the context's memory (an earlier fusion had the kernel).
    pub memory_hits: u64,
    /// Modules loaded from the disk cache.
    pub disk_hits: u64,
    /// Modules written to the disk cache.
    pub disk_writes: u64,
    /// Corrupt or unloadable disk entries removed.
    pub disk_discards: u64,
    /// Wall time of the compiles, summed over those that ran in parallel.
    pub compile_time: Duration,
}

/// Reads every counter through `query(stat, out)`, one C call per counter.
pub(crate) fn read(
    mut query: impl FnMut(sys::fst_compile_stat, &mut u64) -> sys::fst_status,
) -> Result<CompileStats> {
    let mut counter = |stat| -> Result<u64> {
        let mut value = 0u64;
        check(query(stat, &mut value))?;
        Ok(value)
    };
    Ok(CompileStats {
        compiled: counter(sys::FST_COMPILE_STAT_COMPILED)?,
        memory_hits: counter(sys::FST_COMPILE_STAT_MEMORY_HITS)?,
        disk_hits: counter(sys::FST_COMPILE_STAT_DISK_HITS)?,
        disk_writes: counter(sys::FST_COMPILE_STAT_DISK_WRITES)?,
        disk_discards: counter(sys::FST_COMPILE_STAT_DISK_DISCARDS)?,
        compile_time: Duration::from_nanos(counter(sys::FST_COMPILE_STAT_COMPILE_NANOSECONDS)?),
    })
}
