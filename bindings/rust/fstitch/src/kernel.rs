//! Kernels of a fusion: their source, compiled forms, launch configuration and parameters.

use std::ffi::{c_char, c_void};
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use fstitch_sys as sys;

use crate::enums::{from_c, LaunchKind, ParamKind};
use crate::error::{check, Error, Result, Status};
use crate::fusion::Fusion;
use crate::util::borrow_c_str;

/// Grid and block dimensions and dynamic shared memory of a kernel launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub dynamic_shared_bytes: usize,
}

/// What one kernel parameter points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelParam {
    /// A graph input, a graph output, a workspace buffer or a tensor constant.
    pub kind: ParamKind,
    /// The input or output index, the byte offset in the workspace, or the constant's
    /// index in [`crate::Fusion::constants`].
    pub index: usize,
    /// The graph value behind the parameter, comparable with [`crate::Value::raw`] of the
    /// graph the fusion was made from.
    pub value: sys::fst_value,
}

/// Global-memory bytes one launch is estimated to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EstimatedBytes {
    /// Bytes read.
    pub read: u64,
    /// Bytes written.
    pub written: u64,
}

/// One kernel of a [`Fusion`], borrowed from it. Immutable and thread-safe.
#[derive(Clone, Copy)]
pub struct Kernel<'f> {
    raw: NonNull<sys::fst_kernel>,
    _fusion: PhantomData<&'f Fusion>,
}

// SAFETY: fstitch.h documents fst_kernel as immutable and thread-safe.
unsafe impl Send for Kernel<'_> {}
unsafe impl Sync for Kernel<'_> {}

impl std::fmt::Debug for Kernel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name().unwrap_or("?"))
            .finish_non_exhaustive()
    }
}

impl<'f> Kernel<'f> {
    pub(crate) fn new(raw: *const sys::fst_kernel) -> Result<Kernel<'f>> {
        let raw = NonNull::new(raw.cast_mut()).ok_or_else(|| {
            Error::new(
                Status::Internal,
                "fst_fusion_kernel returned FST_OK and a NULL kernel",
            )
        })?;
        Ok(Kernel {
            raw,
            _fusion: PhantomData,
        })
    }

    /// The C handle, owned by the fusion; valid while it lives.
    pub fn as_raw(&self) -> *const sys::fst_kernel {
        self.raw.as_ptr()
    }

    /// Reads a string the fusion owns.
    fn string(
        &self,
        query: unsafe extern "C" fn(*const sys::fst_kernel, *mut *const c_char) -> sys::fst_status,
        function: &str,
    ) -> Result<&'f str> {
        let mut text: *const c_char = ptr::null();
        // SAFETY: a live kernel and a valid out pointer; the string is owned by the fusion,
        // immutable, and lives as long as 'f.
        unsafe {
            check(query(self.as_raw(), &mut text))?;
            borrow_c_str(text, function)
        }
    }

    /// The kernel's entry-point name in its source.
    pub fn name(&self) -> Result<&'f str> {
        self.string(sys::fst_kernel_name, "fst_kernel_name")
    }

    /// The CUDA C source: fstitch's prelude and the kernel, a complete NVRTC program.
    pub fn source(&self) -> Result<&'f str> {
        self.string(sys::fst_kernel_source, "fst_kernel_source")
    }

    /// The PTX for the fusion's target. The first PTX or CUBIN request compiles all the
    /// fusion's kernels with NVRTC. Errors: [`Status::NoCompiler`] without NVRTC,
    /// [`Status::Compile`].
    pub fn ptx(&self) -> Result<&'f str> {
        self.string(sys::fst_kernel_ptx, "fst_kernel_ptx")
    }

    /// The CUBIN for the fusion's target, compiled as for [`Kernel::ptx`].
    pub fn cubin(&self) -> Result<&'f [u8]> {
        let mut data: *const c_void = ptr::null();
        let mut size = 0;
        // SAFETY: a live kernel and valid out pointers.
        check(unsafe { sys::fst_kernel_cubin(self.as_raw(), &mut data, &mut size) })?;
        if data.is_null() {
            return if size == 0 {
                Ok(&[])
            } else {
                Err(Error::new(
                    Status::Internal,
                    "fst_kernel_cubin returned a NULL image",
                ))
            };
        }
        // SAFETY: the library owns `size` bytes at `data`, immutable while the fusion lives.
        Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) })
    }

    /// The planned grid, and the block dimensions and dynamic shared memory every launch
    /// uses. The CUDA backend launches the grid [`Kernel::grid_for_occupancy`] gives at the
    /// compiled kernel's occupancy.
    pub fn launch_config(&self) -> Result<LaunchConfig> {
        let mut config = LaunchConfig {
            grid: [0; 3],
            block: [0; 3],
            dynamic_shared_bytes: 0,
        };
        // SAFETY: a live kernel; the arrays hold 3 elements each.
        check(unsafe {
            sys::fst_kernel_launch_config(
                self.as_raw(),
                config.grid.as_mut_ptr(),
                config.block.as_mut_ptr(),
                &mut config.dynamic_shared_bytes,
            )
        })?;
        Ok(config)
    }

    /// The grid fstitch's CUDA launcher uses when `blocks_per_multiprocessor` blocks are
    /// resident on each of `multiprocessors` multiprocessors (what the driver's occupancy
    /// calculator reports for the compiled kernel at [`Kernel::launch_config`]'s block and
    /// shared memory): one wave, or the kernel's work units when there are fewer, at least one
    /// block. [`Status::InvalidArgument`] for 0 blocks per multiprocessor or 0 multiprocessors.
    pub fn grid_for_occupancy(
        &self,
        blocks_per_multiprocessor: u32,
        multiprocessors: u32,
    ) -> Result<[u32; 3]> {
        let mut grid = [0u32; 3];
        // SAFETY: a live kernel; the array holds 3 elements.
        check(unsafe {
            sys::fst_kernel_grid_for_occupancy(
                self.as_raw(),
                blocks_per_multiprocessor,
                multiprocessors,
                grid.as_mut_ptr(),
            )
        })?;
        Ok(grid)
    }

    /// The number of pointer parameters.
    pub fn param_count(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: a live kernel and a valid out pointer.
        check(unsafe { sys::fst_kernel_param_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// What each parameter points to, in order.
    pub fn params(&self) -> Result<Vec<KernelParam>> {
        (0..self.param_count()?)
            .map(|index| {
                let mut kind = 0;
                let mut param_index = 0;
                let mut value = sys::FST_VALUE_INVALID;
                // SAFETY: a live kernel and valid out pointers.
                check(unsafe {
                    sys::fst_kernel_param(
                        self.as_raw(),
                        index,
                        &mut kind,
                        &mut param_index,
                        &mut value,
                    )
                })?;
                Ok(KernelParam {
                    kind: from_c(kind, ParamKind::from_raw, "fst_kernel_param")?,
                    index: param_index,
                    value,
                })
            })
            .collect()
    }

    /// Estimated global-memory bytes read and written by one launch.
    pub fn estimated_bytes(&self) -> Result<EstimatedBytes> {
        let (mut read, mut written) = (0, 0);
        // SAFETY: a live kernel and valid out pointers.
        check(unsafe { sys::fst_kernel_estimated_bytes(self.as_raw(), &mut read, &mut written) })?;
        Ok(EstimatedBytes { read, written })
    }

    /// The `(offset, bytes)` of the workspace that must be zero when the kernel starts (the
    /// counters of a reduction split across blocks); `bytes` is 0 when there is none.
    /// [`Kernel::launch`] and runs clear it themselves; whoever launches the kernel function
    /// directly must clear it first, on the launch's stream.
    pub fn zeroed_workspace(&self) -> Result<(usize, usize)> {
        let (mut offset, mut bytes) = (0, 0);
        // SAFETY: a live kernel and valid out pointers.
        check(unsafe { sys::fst_kernel_zeroed_workspace(self.as_raw(), &mut offset, &mut bytes) })?;
        Ok((offset, bytes))
    }

    /// How the kernel must be launched.
    pub fn launch_kind(&self) -> Result<LaunchKind> {
        let mut kind = sys::FST_LAUNCH_REGULAR;
        // SAFETY: a live kernel and a valid out pointer.
        check(unsafe { sys::fst_kernel_launch_kind(self.as_raw(), &mut kind) })?;
        from_c(kind, LaunchKind::from_raw, "fst_kernel_launch_kind")
    }

    /// Blocks per thread-block cluster of a [`LaunchKind::Cluster`] kernel (consecutive in
    /// `blockIdx.x`); 1 for every other kernel.
    pub fn cluster_blocks(&self) -> Result<u32> {
        let mut blocks = 0u32;
        // SAFETY: a live kernel and a valid out pointer.
        check(unsafe { sys::fst_kernel_cluster_blocks(self.as_raw(), &mut blocks) })?;
        Ok(blocks)
    }

    /// The kernel's `CUfunction` in the calling thread's current CUDA context (or the
    /// device's primary context), loading and compiling it on first use. Valid while the
    /// fusion and that CUDA context live. [`Status::Unsupported`] on the host backend.
    pub fn function(&self) -> Result<*mut c_void> {
        let mut function = ptr::null_mut();
        // SAFETY: a live kernel and a valid out pointer.
        check(unsafe { sys::fst_kernel_function(self.as_raw(), &mut function) })?;
        Ok(function)
    }

    /// Launches this kernel alone with its launch configuration and kind, for a framework
    /// that runs a plan's kernels itself.
    ///
    /// # Safety
    ///
    /// `args` holds one address per parameter, in [`Kernel::params`] order, each to a
    /// buffer of the right size: device pointers on the CUDA backend (workspace parameters
    /// at the workspace base plus their offset), host pointers on the host backend.
    /// `stream` is NULL or a valid `CUstream`; on the CUDA backend the buffers must stay
    /// valid until the queued launch completes. Overlapping arguments follow the aliasing
    /// contract of [`crate::Fusion::run_raw`].
    pub unsafe fn launch(&self, args: &[*mut c_void], stream: *mut c_void) -> Result<()> {
        check(sys::fst_kernel_launch(
            self.as_raw(),
            args.as_ptr(),
            args.len(),
            stream,
        ))
    }
}
