//! Fusion: options, the fused plan, and running it.

use std::ffi::c_void;
use std::ptr::{self, NonNull};

use fstitch_sys as sys;

use crate::buffer::{checked_host_pointers, HostSlice, HostSliceMut, TensorSpec};
use crate::compile_stats::{self, CompileStats};
use crate::context::Context;
use crate::enums::{Backend, FusionPolicy};
use crate::error::{check, Error, Result, Status};
use crate::kernel::Kernel;
use crate::util::{c_string, take_c_string};

/// Options for [`crate::Graph::fuse`]. Unset options keep the library's defaults: policy
/// stitch, the context's device architecture (else sm_90), 227 KiB of shared memory per
/// block (at most the device's limit), 64 registers per thread. Values are checked by the library when fusing, which
/// fails with the first one it rejects.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuseOptions {
    policy: Option<FusionPolicy>,
    target_arch: Option<i32>,
    shared_memory_budget: Option<usize>,
    register_cap: Option<i32>,
    device_model: Option<String>,
}

impl FuseOptions {
    /// The defaults.
    pub fn new() -> FuseOptions {
        FuseOptions::default()
    }

    /// How aggressively to fuse.
    pub fn policy(mut self, policy: FusionPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The target architecture as 10 * major + minor: 80 or 90
    /// ([`Status::Unsupported`] for others).
    pub fn target_arch(mut self, sm: i32) -> Self {
        self.target_arch = Some(sm);
        self
    }

    /// Shared memory a kernel may use per block, in bytes (1 KiB .. 227 KiB).
    pub fn shared_memory_budget(mut self, bytes: usize) -> Self {
        self.shared_memory_budget = Some(bytes);
        self
    }

    /// Registers per thread the planner may plan for (32 .. 255).
    pub fn register_cap(mut self, registers: i32) -> Self {
        self.register_cap = Some(registers);
        self
    }

    /// Plan for a named device model: "a100" (sm_80), "h100" or "h200" (sm_90); this sets
    /// the target too ([`Status::Unsupported`] for other names). Without one, a CUDA
    /// context's device is planned for as it reports itself, else the target's default.
    pub fn device_model(mut self, model: &str) -> Self {
        self.device_model = Some(model.to_owned());
        self
    }

    /// Applies the options and fuses `graph`.
    pub(crate) fn fuse(&self, graph: *const sys::fst_graph, context: &Context) -> Result<Fusion> {
        let options = OwnedFuseOptions::new()?;
        // SAFETY (each setter): live options.
        if let Some(policy) = self.policy {
            check(unsafe { sys::fst_fuse_options_set_policy(options.0, policy.to_raw()) })?;
        }
        if let Some(sm) = self.target_arch {
            check(unsafe { sys::fst_fuse_options_set_target_arch(options.0, sm) })?;
        }
        if let Some(bytes) = self.shared_memory_budget {
            check(unsafe { sys::fst_fuse_options_set_shared_memory_budget(options.0, bytes) })?;
        }
        if let Some(registers) = self.register_cap {
            check(unsafe { sys::fst_fuse_options_set_register_cap(options.0, registers) })?;
        }
        if let Some(model) = &self.device_model {
            let model = c_string(model, "device model")?;
            check(unsafe { sys::fst_fuse_options_set_device_model(options.0, model.as_ptr()) })?;
        }
        let mut raw = ptr::null_mut();
        // SAFETY: a live graph, live options and a valid out pointer.
        check(unsafe { sys::fst_fuse(graph, options.0, &mut raw) })?;
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                Status::Internal,
                "fst_fuse returned FST_OK and a NULL fusion",
            )
        })?;
        Ok(Fusion {
            raw,
            context: context.clone(),
            inputs: Vec::new(),
            outputs: Vec::new(),
        })
    }
}

/// Owned `fst_fuse_options`.
struct OwnedFuseOptions(*mut sys::fst_fuse_options);

impl OwnedFuseOptions {
    fn new() -> Result<OwnedFuseOptions> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out pointer.
        check(unsafe { sys::fst_fuse_options_create(&mut raw) })?;
        Ok(OwnedFuseOptions(raw))
    }
}

impl Drop for OwnedFuseOptions {
    fn drop(&mut self) {
        // SAFETY: created by fst_fuse_options_create, destroyed once.
        unsafe { sys::fst_fuse_options_destroy(self.0) };
    }
}

/// Global-memory traffic of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedBytes {
    /// Bytes the plan moves.
    pub planned: u64,
    /// The lower bound: each graph input read once, each output written once.
    pub lower_bound: u64,
}

/// A fused plan with its kernels. Immutable and thread-safe (`Send + Sync`): several
/// threads may query and run it at once. It keeps its context alive and does not refer to
/// the graph it was made from, which may be dropped first.
pub struct Fusion {
    raw: NonNull<sys::fst_fusion>,
    context: Context,
    inputs: Vec<TensorSpec>,
    outputs: Vec<TensorSpec>,
}

// SAFETY: fstitch.h documents fst_fusion (and its kernels) as immutable and thread-safe.
unsafe impl Send for Fusion {}
unsafe impl Sync for Fusion {}

impl Drop for Fusion {
    fn drop(&mut self) {
        // SAFETY: created by fst_fuse, destroyed once; kernels borrow the fusion.
        unsafe { sys::fst_fusion_destroy(self.raw.as_ptr()) };
    }
}

impl std::fmt::Debug for Fusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fusion")
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

impl Fusion {
    pub(crate) fn with_specs(mut self, inputs: Vec<TensorSpec>, outputs: Vec<TensorSpec>) -> Self {
        self.inputs = inputs;
        self.outputs = outputs;
        self
    }

    /// The C handle, for calls through [`crate::sys`]; valid while the fusion lives. Do not
    /// destroy it.
    pub fn as_raw(&self) -> *const sys::fst_fusion {
        self.raw.as_ptr()
    }

    /// The context the fusion runs in.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The graph inputs, in the order runs take them.
    pub fn inputs(&self) -> &[TensorSpec] {
        &self.inputs
    }

    /// The graph outputs, in the order runs take them.
    pub fn outputs(&self) -> &[TensorSpec] {
        &self.outputs
    }

    /// The number of kernels.
    pub fn kernel_count(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: a live fusion and a valid out pointer.
        check(unsafe { sys::fst_fusion_kernel_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// The `index`-th kernel in launch order.
    pub fn kernel(&self, index: usize) -> Result<Kernel<'_>> {
        let mut kernel = ptr::null();
        // SAFETY: a live fusion and a valid out pointer.
        check(unsafe { sys::fst_fusion_kernel(self.as_raw(), index, &mut kernel) })?;
        Kernel::new(kernel)
    }

    /// All kernels, in launch order.
    pub fn kernels(&self) -> Result<Vec<Kernel<'_>>> {
        (0..self.kernel_count()?)
            .map(|index| self.kernel(index))
            .collect()
    }

    /// What compiling this fusion's kernels did so far: nothing before its first run (or PTX
    /// request), then each kernel compiled or found in memory or on disk.
    pub fn compile_stats(&self) -> Result<CompileStats> {
        // SAFETY: a live fusion and a valid out pointer for each call.
        compile_stats::read(|stat, out| unsafe {
            sys::fst_fusion_compile_stat(self.as_raw(), stat, out)
        })
    }

    /// Bytes of workspace a run needs (intermediates between kernels).
    pub fn workspace_size(&self) -> Result<usize> {
        let mut bytes = 0;
        // SAFETY: a live fusion and a valid out pointer.
        check(unsafe { sys::fst_fusion_workspace_size(self.as_raw(), &mut bytes) })?;
        Ok(bytes)
    }

    /// The tensor constants the plan reads, in `ParamKind::Constant` index order: each one's
    /// data (row-major, in its dtype's storage format), owned by the fusion. A framework that
    /// launches the kernels itself uploads these (CUDA) or passes their addresses (host).
    pub fn constants(&self) -> Result<Vec<&[u8]>> {
        let mut count = 0;
        // SAFETY: a live fusion and a valid out pointer.
        check(unsafe { sys::fst_fusion_constant_count(self.as_raw(), &mut count) })?;
        (0..count)
            .map(|index| {
                let mut data: *const std::ffi::c_void = std::ptr::null();
                let mut bytes = 0;
                // SAFETY: a live fusion, an index in range and valid out pointers.
                check(unsafe {
                    sys::fst_fusion_constant(
                        self.as_raw(),
                        index,
                        &mut data,
                        &mut bytes,
                        std::ptr::null_mut(),
                    )
                })?;
                // SAFETY: the fusion owns `bytes` bytes at `data` for as long as it lives, and
                // never changes them.
                Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), bytes) })
            })
            .collect()
    }

    /// Global-memory bytes the plan moves, and their lower bound.
    pub fn planned_bytes(&self) -> Result<PlannedBytes> {
        let (mut planned, mut lower_bound) = (0, 0);
        // SAFETY: a live fusion and valid out pointers.
        check(unsafe {
            sys::fst_fusion_planned_bytes(self.as_raw(), &mut planned, &mut lower_bound)
        })?;
        Ok(PlannedBytes {
            planned,
            lower_bound,
        })
    }

    /// A human-readable description of the plan: kernels, their operations, schedules,
    /// stitch schemes, buffers, estimated bytes and the reason for each kernel boundary.
    pub fn dump(&self) -> Result<String> {
        let mut text = ptr::null_mut();
        // SAFETY: a live fusion and a valid out pointer; the string is ours to free.
        unsafe {
            check(sys::fst_fusion_dump(self.as_raw(), &mut text))?;
            take_c_string(text, "fst_fusion_dump")
        }
    }

    /// Runs every kernel on the host backend with host buffers: one per graph input and
    /// per output, in order. The context must run on the host backend
    /// ([`Backend::Host`]); with CUDA, use [`Fusion::run_raw`] with device pointers.
    ///
    /// The backend, the number of buffers ([`Status::InvalidArgument`]), their dtypes
    /// ([`Status::Dtype`]) and element counts ([`Status::Shape`]) are checked before
    /// anything is passed to the library.
    pub fn run(&self, inputs: &[HostSlice<'_>], outputs: &mut [HostSliceMut<'_>]) -> Result<()> {
        let function = "Fusion::run";
        let backend = self.context.active_backend();
        if backend != Backend::Host {
            return Err(Error::new(
                Status::InvalidArgument,
                format!(
                    "{function} takes host buffers, but the context runs on the {backend:?} \
                     backend; create it with Backend::Host, or use Fusion::run_raw with \
                     device pointers"
                ),
            ));
        }
        let (input_pointers, output_pointers) =
            checked_host_pointers(function, &self.inputs, &self.outputs, inputs, outputs)?;
        // SAFETY: host buffers of the checked dtypes and sizes for a host-backend context;
        // a NULL workspace is allocated by the library.
        let result = unsafe {
            self.run_raw(
                &input_pointers,
                &output_pointers,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        outputs
            .iter_mut()
            .for_each(HostSliceMut::normalize_after_write);
        result
    }

    /// Runs every kernel in order on the context's backend with raw pointers.
    ///
    /// On the CUDA backend the kernels are queued on `stream` (a `CUstream`; NULL for the
    /// default stream) in the calling thread's current CUDA context, or the device's
    /// primary context, without host synchronization. A NULL `workspace` is allocated for
    /// the run by the library.
    ///
    /// # Safety
    ///
    /// `inputs` and `outputs` hold one pointer per graph input and output, in order, each
    /// to a dense row-major buffer of the right dtype and size: device memory for the CUDA
    /// backend, host memory for the host backend. `workspace` is NULL or points to at
    /// least [`Fusion::workspace_size`] bytes of the same kind. `stream` is NULL or a
    /// valid `CUstream`. On the CUDA backend the buffers must stay valid until the queued
    /// work completes.
    ///
    /// The buffers may overlap only as the library's aliasing contract allows (inputs with
    /// each other; an output exactly over an input it may update in place); any other
    /// overlap is refused with [`Status::InvalidArgument`] before anything runs.
    pub unsafe fn run_raw(
        &self,
        inputs: &[*const c_void],
        outputs: &[*mut c_void],
        workspace: *mut c_void,
        stream: *mut c_void,
    ) -> Result<()> {
        check(sys::fst_fusion_run(
            self.as_raw(),
            inputs.as_ptr(),
            inputs.len(),
            outputs.as_ptr(),
            outputs.len(),
            workspace,
            stream,
        ))
    }
}
