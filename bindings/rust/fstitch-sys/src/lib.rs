//! Raw FFI declarations of libfstitch, one for one with `include/fstitch.h`.
//!
//! Everything here is `unsafe` to call and follows the C contract documented in the header:
//! statuses are plain integers, handles are opaque pointers, strings are NUL-terminated and
//! owned as the header says. The safe API is the `fstitch` crate.
//!
//! C enums are int-sized, and a value coming back from C may lie outside the Rust view of
//! the enum (a newer library), so every enum is a `c_int` type alias with one constant per
//! enumerator rather than a Rust `enum`.
#![no_std]
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_double, c_int, c_uint, c_void};
use core::marker::{PhantomData, PhantomPinned};

// --------------------------------------------------------------------------------------
// Version

/// Major version of the library this crate was written against (source compatibility).
pub const FST_VERSION_MAJOR: c_uint = 0;
/// Minor version.
pub const FST_VERSION_MINOR: c_uint = 3;
/// Patch version.
pub const FST_VERSION_PATCH: c_uint = 0;
/// The version as one number: major * 10000 + minor * 100 + patch.
pub const FST_VERSION_NUMBER: c_uint =
    FST_VERSION_MAJOR * 10000 + FST_VERSION_MINOR * 100 + FST_VERSION_PATCH;
/// ABI major version; the library's SONAME is `libfstitch.so.<FST_ABI_VERSION>`.
pub const FST_ABI_VERSION: c_uint = 1;

// --------------------------------------------------------------------------------------
// Status and errors

/// Result of every fallible call (`enum fst_status`).
pub type fst_status = c_int;
/// Success.
pub const FST_OK: fst_status = 0;
/// A NULL handle or pointer, an unknown enum value, a bad name...
pub const FST_ERROR_INVALID_ARGUMENT: fst_status = 1;
/// Shapes do not fit: ranks, dims, axes, broadcasting, element counts.
pub const FST_ERROR_SHAPE: fst_status = 2;
/// An operand's dtype is not accepted by the operation.
pub const FST_ERROR_DTYPE: fst_status = 3;
/// Valid request that this version does not support.
pub const FST_ERROR_UNSUPPORTED: fst_status = 4;
/// A host or device allocation failed.
pub const FST_ERROR_OUT_OF_MEMORY: fst_status = 5;
/// The driver works but there is no usable GPU.
pub const FST_ERROR_NO_DEVICE: fst_status = 6;
/// The CUDA driver library could not be loaded or initialized.
pub const FST_ERROR_NO_DRIVER: fst_status = 7;
/// No NVRTC or host compiler could be found.
pub const FST_ERROR_NO_COMPILER: fst_status = 8;
/// A generated kernel failed to compile; the message has the log.
pub const FST_ERROR_COMPILE: fst_status = 9;
/// A kernel launch or a driver call failed.
pub const FST_ERROR_LAUNCH: fst_status = 10;
/// Graph text is malformed; the message has line and column.
pub const FST_ERROR_PARSE: fst_status = 11;
/// A bug in fstitch.
pub const FST_ERROR_INTERNAL: fst_status = 12;

// --------------------------------------------------------------------------------------
// Data types

/// Element types (`enum fst_dtype`).
pub type fst_dtype = c_int;
/// IEEE binary32.
pub const FST_F32: fst_dtype = 1;
/// IEEE binary16, stored as `u16` bits.
pub const FST_F16: fst_dtype = 2;
/// bfloat16, stored as `u16` bits.
pub const FST_BF16: fst_dtype = 3;
/// IEEE binary64.
pub const FST_F64: fst_dtype = 4;
/// `i8`.
pub const FST_I8: fst_dtype = 5;
/// `i32`.
pub const FST_I32: fst_dtype = 6;
/// `i64`.
pub const FST_I64: fst_dtype = 7;
/// `u8`.
pub const FST_U8: fst_dtype = 8;
/// One byte, 0 or 1 (any nonzero byte reads as true).
pub const FST_BOOL: fst_dtype = 9;

/// Largest tensor rank accepted anywhere in the API.
pub const FST_MAX_RANK: usize = 8;

// --------------------------------------------------------------------------------------
// Context

/// Where fused kernels run (`enum fst_backend`).
pub type fst_backend = c_int;
/// CUDA when a driver and a device exist, else host.
pub const FST_BACKEND_AUTO: fst_backend = 0;
/// The CUDA driver API on a GPU.
pub const FST_BACKEND_CUDA: fst_backend = 1;
/// The generated CUDA C compiled for and run on the CPU.
pub const FST_BACKEND_HOST: fst_backend = 2;

/// Severity of a log message (`enum fst_log_level`).
pub type fst_log_level = c_int;
/// Nothing.
pub const FST_LOG_OFF: fst_log_level = 0;
/// Failures.
pub const FST_LOG_ERROR: fst_log_level = 1;
/// Surprises that do not fail the call.
pub const FST_LOG_WARN: fst_log_level = 2;
/// One line per major step.
pub const FST_LOG_INFO: fst_log_level = 3;
/// Details of planning and compilation.
pub const FST_LOG_DEBUG: fst_log_level = 4;
/// Everything.
pub const FST_LOG_TRACE: fst_log_level = 5;

/// A counter of kernel compilation (`enum fst_compile_stat`): per context
/// (`fst_context_compile_stat`) and per fusion (`fst_fusion_compile_stat`). A module is one
/// kernel compiled by NVRTC, or all the kernels of a fusion compiled for the host backend.
pub type fst_compile_stat = c_int;
/// Modules compiled.
pub const FST_COMPILE_STAT_COMPILED: fst_compile_stat = 0;
/// NVRTC modules found in the context's memory.
pub const FST_COMPILE_STAT_MEMORY_HITS: fst_compile_stat = 1;
/// Modules loaded from the disk cache.
pub const FST_COMPILE_STAT_DISK_HITS: fst_compile_stat = 2;
/// Modules written to the disk cache.
pub const FST_COMPILE_STAT_DISK_WRITES: fst_compile_stat = 3;
/// Corrupt or unloadable disk entries removed.
pub const FST_COMPILE_STAT_DISK_DISCARDS: fst_compile_stat = 4;
/// Wall time of the compiles, summed over those that ran in parallel.
pub const FST_COMPILE_STAT_COMPILE_NANOSECONDS: fst_compile_stat = 5;

/// Receives log messages; `message` is valid only during the call. Called from any thread
/// that calls into fstitch, possibly from several at once.
pub type fst_log_callback = Option<
    unsafe extern "C" fn(user_data: *mut c_void, level: fst_log_level, message: *const c_char),
>;

/// Declares an opaque C handle type: unsized in spirit, not constructible, not Send, Sync
/// or Unpin.
macro_rules! opaque_handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[repr(C)]
        pub struct $name {
            _data: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    };
}

opaque_handle!(
    /// Options for `fst_context_create`. Not thread-safe.
    fst_context_options
);
opaque_handle!(
    /// A context. Immutable and thread-safe.
    fst_context
);

// --------------------------------------------------------------------------------------
// Graph

opaque_handle!(
    /// A graph. Needs external synchronization for building; read-only calls may run
    /// concurrently.
    fst_graph
);

/// A value in a graph; identifies both the graph and the value.
pub type fst_value = u64;
/// Returned by a builder that failed.
pub const FST_VALUE_INVALID: fst_value = 0;

/// Unary elementwise operations (`enum fst_unary_op`).
pub type fst_unary_op = c_int;
/// -x.
pub const FST_UNARY_NEG: fst_unary_op = 1;
/// |x|.
pub const FST_UNARY_ABS: fst_unary_op = 2;
/// e^x.
pub const FST_UNARY_EXP: fst_unary_op = 3;
/// Natural logarithm.
pub const FST_UNARY_LOG: fst_unary_op = 4;
/// Square root.
pub const FST_UNARY_SQRT: fst_unary_op = 5;
/// 1 / sqrt(x).
pub const FST_UNARY_RSQRT: fst_unary_op = 6;
/// 1 / x.
pub const FST_UNARY_RECIPROCAL: fst_unary_op = 7;
/// Hyperbolic tangent.
pub const FST_UNARY_TANH: fst_unary_op = 8;
/// 1 / (1 + e^-x).
pub const FST_UNARY_SIGMOID: fst_unary_op = 9;
/// max(x, 0).
pub const FST_UNARY_RELU: fst_unary_op = 10;
/// x * 0.5 * (1 + erf(x / sqrt 2)).
pub const FST_UNARY_GELU: fst_unary_op = 11;
/// The tanh approximation of gelu.
pub const FST_UNARY_GELU_TANH: fst_unary_op = 12;
/// x * sigmoid(x).
pub const FST_UNARY_SILU: fst_unary_op = 13;
/// Error function.
pub const FST_UNARY_ERF: fst_unary_op = 14;
/// Sine.
pub const FST_UNARY_SIN: fst_unary_op = 15;
/// Cosine.
pub const FST_UNARY_COS: fst_unary_op = 16;
/// Round toward -inf.
pub const FST_UNARY_FLOOR: fst_unary_op = 17;
/// Round toward +inf.
pub const FST_UNARY_CEIL: fst_unary_op = 18;
/// Round half to even.
pub const FST_UNARY_ROUND: fst_unary_op = 19;
/// -1, 0 or 1.
pub const FST_UNARY_SIGN: fst_unary_op = 20;
/// x == 0, as bool.
pub const FST_UNARY_LOGICAL_NOT: fst_unary_op = 21;

/// Binary elementwise operations (`enum fst_binary_op`).
pub type fst_binary_op = c_int;
/// a + b.
pub const FST_BINARY_ADD: fst_binary_op = 1;
/// a - b.
pub const FST_BINARY_SUB: fst_binary_op = 2;
/// a * b.
pub const FST_BINARY_MUL: fst_binary_op = 3;
/// a / b.
pub const FST_BINARY_DIV: fst_binary_op = 4;
/// a ^ b.
pub const FST_BINARY_POW: fst_binary_op = 5;
/// Larger of a and b.
pub const FST_BINARY_MAX: fst_binary_op = 6;
/// Smaller of a and b.
pub const FST_BINARY_MIN: fst_binary_op = 7;
/// a == b, as bool.
pub const FST_BINARY_EQ: fst_binary_op = 8;
/// a != b, as bool.
pub const FST_BINARY_NE: fst_binary_op = 9;
/// a < b, as bool.
pub const FST_BINARY_LT: fst_binary_op = 10;
/// a <= b, as bool.
pub const FST_BINARY_LE: fst_binary_op = 11;
/// a > b, as bool.
pub const FST_BINARY_GT: fst_binary_op = 12;
/// a >= b, as bool.
pub const FST_BINARY_GE: fst_binary_op = 13;
/// a != 0 && b != 0, as bool.
pub const FST_BINARY_LOGICAL_AND: fst_binary_op = 14;
/// a != 0 || b != 0, as bool.
pub const FST_BINARY_LOGICAL_OR: fst_binary_op = 15;

/// Reductions (`enum fst_reduce_op`).
pub type fst_reduce_op = c_int;
/// Sum.
pub const FST_REDUCE_SUM: fst_reduce_op = 1;
/// Arithmetic mean.
pub const FST_REDUCE_MEAN: fst_reduce_op = 2;
/// Maximum.
pub const FST_REDUCE_MAX: fst_reduce_op = 3;
/// Minimum.
pub const FST_REDUCE_MIN: fst_reduce_op = 4;
/// Product.
pub const FST_REDUCE_PROD: fst_reduce_op = 5;

// --------------------------------------------------------------------------------------
// Fusion

/// How aggressively to fuse (`enum fst_fusion_policy`).
pub type fst_fusion_policy = c_int;
/// FusionStitching (default).
pub const FST_POLICY_STITCH: fst_fusion_policy = 0;
/// XLA-style loop/input fusion.
pub const FST_POLICY_LOOP: fst_fusion_policy = 1;
/// One kernel per operation.
pub const FST_POLICY_NONE: fst_fusion_policy = 2;

opaque_handle!(
    /// Options for `fst_fuse`. Not thread-safe.
    fst_fuse_options
);
opaque_handle!(
    /// A fused plan with its kernels. Immutable and thread-safe.
    fst_fusion
);
opaque_handle!(
    /// One kernel of a fusion, owned by it. Immutable and thread-safe.
    fst_kernel
);

/// What a kernel parameter points to (`enum fst_param_kind`).
pub type fst_param_kind = c_int;
/// A graph input; the index is its input index.
pub const FST_PARAM_INPUT: fst_param_kind = 1;
/// A graph output; the index is its output index.
pub const FST_PARAM_OUTPUT: fst_param_kind = 2;
/// An intermediate in the workspace; the index is its byte offset.
pub const FST_PARAM_WORKSPACE: fst_param_kind = 3;
/// A tensor constant in memory the fusion owns; the index is the constant's index.
pub const FST_PARAM_CONSTANT: fst_param_kind = 4;

/// How a kernel must be launched (`enum fst_launch_kind`).
pub type fst_launch_kind = c_int;
/// cuLaunchKernel.
pub const FST_LAUNCH_REGULAR: fst_launch_kind = 0;
/// cuLaunchCooperativeKernel: every block must be resident at once.
pub const FST_LAUNCH_COOPERATIVE: fst_launch_kind = 1;
/// cuLaunchKernelEx with clusters of fst_kernel_cluster_blocks() blocks along x.
pub const FST_LAUNCH_CLUSTER: fst_launch_kind = 2;

// --------------------------------------------------------------------------------------
// Steps and opaque operations

/// What a step does (`enum fst_step_kind`).
pub type fst_step_kind = c_int;
/// Launch a kernel; the index is its kernel index.
pub const FST_STEP_KERNEL: fst_step_kind = 1;
/// Run an opaque operation; the index is its opaque index.
pub const FST_STEP_OPAQUE: fst_step_kind = 2;

opaque_handle!(
    /// One call of an opaque operation, valid only while the callback that receives it
    /// runs.
    fst_opaque_call
);

/// Runs one opaque operation; called on the thread that started the run, once per opaque
/// step, in step order. Returns `FST_OK` or an error status that stops the run.
pub type fst_opaque_callback = Option<
    unsafe extern "C" fn(call: *const fst_opaque_call, user_data: *mut c_void) -> fst_status,
>;

extern "C" {
    // Version
    pub fn fst_version_number() -> c_uint;
    pub fn fst_version_string() -> *const c_char;

    // Status and errors
    pub fn fst_status_string(status: fst_status) -> *const c_char;
    pub fn fst_last_error_message() -> *const c_char;
    pub fn fst_last_error_status() -> fst_status;

    // Data types
    pub fn fst_dtype_size(dtype: fst_dtype) -> usize;
    pub fn fst_dtype_name(dtype: fst_dtype) -> *const c_char;

    // Context
    pub fn fst_context_options_create(out_options: *mut *mut fst_context_options) -> fst_status;
    pub fn fst_context_options_destroy(options: *mut fst_context_options);
    pub fn fst_context_options_set_backend(
        options: *mut fst_context_options,
        backend: fst_backend,
    ) -> fst_status;
    pub fn fst_context_options_set_device(
        options: *mut fst_context_options,
        device_ordinal: c_int,
    ) -> fst_status;
    pub fn fst_context_options_set_log_level(
        options: *mut fst_context_options,
        level: fst_log_level,
    ) -> fst_status;
    pub fn fst_context_options_set_log_callback(
        options: *mut fst_context_options,
        callback: fst_log_callback,
        user_data: *mut c_void,
    ) -> fst_status;
    pub fn fst_context_options_set_cache_dir(
        options: *mut fst_context_options,
        path: *const c_char,
    ) -> fst_status;
    pub fn fst_context_create(
        options: *const fst_context_options,
        out_context: *mut *mut fst_context,
    ) -> fst_status;
    pub fn fst_context_destroy(context: *mut fst_context);
    pub fn fst_context_backend(
        context: *const fst_context,
        out_backend: *mut fst_backend,
    ) -> fst_status;
    pub fn fst_context_active_backend(
        context: *const fst_context,
        out_backend: *mut fst_backend,
    ) -> fst_status;
    pub fn fst_context_device_arch(context: *const fst_context, out_sm: *mut c_int) -> fst_status;
    pub fn fst_context_log_level(
        context: *const fst_context,
        out_level: *mut fst_log_level,
    ) -> fst_status;
    pub fn fst_context_cache_dir(
        context: *const fst_context,
        out_path: *mut *const c_char,
    ) -> fst_status;
    pub fn fst_context_compile_stat(
        context: *const fst_context,
        stat: fst_compile_stat,
        out_value: *mut u64,
    ) -> fst_status;
    pub fn fst_context_log(
        context: *const fst_context,
        level: fst_log_level,
        message: *const c_char,
    ) -> fst_status;

    // Graph
    pub fn fst_graph_create(
        context: *mut fst_context,
        out_graph: *mut *mut fst_graph,
    ) -> fst_status;
    pub fn fst_graph_destroy(graph: *mut fst_graph);
    pub fn fst_graph_status(graph: *const fst_graph) -> fst_status;
    pub fn fst_graph_error_message(graph: *const fst_graph) -> *const c_char;
    pub fn fst_graph_verify(graph: *const fst_graph) -> fst_status;

    // Graph builders
    pub fn fst_input(
        graph: *mut fst_graph,
        name: *const c_char,
        dtype: fst_dtype,
        rank: usize,
        dims: *const i64,
    ) -> fst_value;
    pub fn fst_constant_f64(graph: *mut fst_graph, dtype: fst_dtype, value: c_double) -> fst_value;
    pub fn fst_constant_i64(graph: *mut fst_graph, dtype: fst_dtype, value: i64) -> fst_value;
    pub fn fst_constant_tensor(
        graph: *mut fst_graph,
        dtype: fst_dtype,
        rank: usize,
        dims: *const i64,
        data: *const c_void,
        bytes: usize,
    ) -> fst_value;
    pub fn fst_unary(graph: *mut fst_graph, op: fst_unary_op, x: fst_value) -> fst_value;
    pub fn fst_binary(
        graph: *mut fst_graph,
        op: fst_binary_op,
        a: fst_value,
        b: fst_value,
    ) -> fst_value;
    pub fn fst_select(
        graph: *mut fst_graph,
        cond: fst_value,
        a: fst_value,
        b: fst_value,
    ) -> fst_value;
    pub fn fst_cast(graph: *mut fst_graph, x: fst_value, dtype: fst_dtype) -> fst_value;
    pub fn fst_broadcast(
        graph: *mut fst_graph,
        x: fst_value,
        rank: usize,
        dims: *const i64,
    ) -> fst_value;
    pub fn fst_reduce(
        graph: *mut fst_graph,
        op: fst_reduce_op,
        x: fst_value,
        naxes: usize,
        axes: *const i64,
        keepdims: c_int,
    ) -> fst_value;
    pub fn fst_reshape(
        graph: *mut fst_graph,
        x: fst_value,
        rank: usize,
        dims: *const i64,
    ) -> fst_value;
    pub fn fst_permute(
        graph: *mut fst_graph,
        x: fst_value,
        rank: usize,
        perm: *const i64,
    ) -> fst_value;
    pub fn fst_iota(
        graph: *mut fst_graph,
        dtype: fst_dtype,
        rank: usize,
        dims: *const i64,
        axis: i64,
    ) -> fst_value;
    pub fn fst_opaque(
        graph: *mut fst_graph,
        name: *const c_char,
        ninputs: usize,
        inputs: *const fst_value,
        dtype: fst_dtype,
        rank: usize,
        dims: *const i64,
    ) -> fst_value;
    pub fn fst_slice(
        graph: *mut fst_graph,
        x: fst_value,
        rank: usize,
        starts: *const i64,
        stops: *const i64,
        steps: *const i64,
    ) -> fst_value;
    pub fn fst_concat(
        graph: *mut fst_graph,
        n: usize,
        values: *const fst_value,
        axis: i64,
    ) -> fst_value;
    pub fn fst_pad(
        graph: *mut fst_graph,
        x: fst_value,
        rank: usize,
        low: *const i64,
        high: *const i64,
        value: f64,
    ) -> fst_value;
    pub fn fst_take(
        graph: *mut fst_graph,
        x: fst_value,
        indices: fst_value,
        axis: i64,
    ) -> fst_value;
    pub fn fst_split(
        graph: *mut fst_graph,
        x: fst_value,
        axis: i64,
        nsections: usize,
        sizes: *const i64,
        out_values: *mut fst_value,
    ) -> fst_status;
    pub fn fst_output(graph: *mut fst_graph, name: *const c_char, value: fst_value) -> fst_status;

    // Graph queries
    pub fn fst_value_dtype(
        graph: *const fst_graph,
        value: fst_value,
        out_dtype: *mut fst_dtype,
    ) -> fst_status;
    pub fn fst_value_rank(
        graph: *const fst_graph,
        value: fst_value,
        out_rank: *mut usize,
    ) -> fst_status;
    pub fn fst_value_dims(
        graph: *const fst_graph,
        value: fst_value,
        capacity: usize,
        out_dims: *mut i64,
    ) -> fst_status;
    pub fn fst_graph_input_count(graph: *const fst_graph, out_count: *mut usize) -> fst_status;
    pub fn fst_graph_input(
        graph: *const fst_graph,
        index: usize,
        out_value: *mut fst_value,
        out_name: *mut *const c_char,
    ) -> fst_status;
    pub fn fst_graph_output_count(graph: *const fst_graph, out_count: *mut usize) -> fst_status;
    pub fn fst_graph_output(
        graph: *const fst_graph,
        index: usize,
        out_value: *mut fst_value,
        out_name: *mut *const c_char,
    ) -> fst_status;
    pub fn fst_graph_value_count(graph: *const fst_graph, out_count: *mut usize) -> fst_status;

    // Text format
    pub fn fst_graph_print(graph: *const fst_graph, out_text: *mut *mut c_char) -> fst_status;
    pub fn fst_graph_parse(
        context: *mut fst_context,
        text: *const c_char,
        length: usize,
        out_graph: *mut *mut fst_graph,
    ) -> fst_status;
    pub fn fst_string_free(text: *mut c_char);

    // Reference evaluator
    pub fn fst_graph_evaluate_reference(
        graph: *const fst_graph,
        inputs: *const *const c_void,
        ninputs: usize,
        outputs: *const *mut c_void,
        noutputs: usize,
    ) -> fst_status;

    // Fusion
    pub fn fst_fuse_options_create(out_options: *mut *mut fst_fuse_options) -> fst_status;
    pub fn fst_fuse_options_destroy(options: *mut fst_fuse_options);
    pub fn fst_fuse_options_set_policy(
        options: *mut fst_fuse_options,
        policy: fst_fusion_policy,
    ) -> fst_status;
    pub fn fst_fuse_options_set_target_arch(
        options: *mut fst_fuse_options,
        sm: c_int,
    ) -> fst_status;
    pub fn fst_fuse_options_set_shared_memory_budget(
        options: *mut fst_fuse_options,
        bytes: usize,
    ) -> fst_status;
    pub fn fst_fuse_options_set_register_cap(
        options: *mut fst_fuse_options,
        registers: c_int,
    ) -> fst_status;
    pub fn fst_fuse_options_set_device_model(
        options: *mut fst_fuse_options,
        model: *const c_char,
    ) -> fst_status;
    pub fn fst_fuse(
        graph: *const fst_graph,
        options: *const fst_fuse_options,
        out_fusion: *mut *mut fst_fusion,
    ) -> fst_status;
    pub fn fst_fusion_destroy(fusion: *mut fst_fusion);
    pub fn fst_fusion_kernel_count(fusion: *const fst_fusion, out_count: *mut usize) -> fst_status;
    pub fn fst_fusion_kernel(
        fusion: *const fst_fusion,
        index: usize,
        out_kernel: *mut *const fst_kernel,
    ) -> fst_status;
    pub fn fst_fusion_workspace_size(
        fusion: *const fst_fusion,
        out_bytes: *mut usize,
    ) -> fst_status;
    pub fn fst_fusion_compile_stat(
        fusion: *const fst_fusion,
        stat: fst_compile_stat,
        out_value: *mut u64,
    ) -> fst_status;
    pub fn fst_fusion_constant_count(
        fusion: *const fst_fusion,
        out_count: *mut usize,
    ) -> fst_status;
    pub fn fst_fusion_constant(
        fusion: *const fst_fusion,
        index: usize,
        out_host_data: *mut *const c_void,
        out_bytes: *mut usize,
        out_value: *mut fst_value,
    ) -> fst_status;
    pub fn fst_fusion_planned_bytes(
        fusion: *const fst_fusion,
        out_planned_bytes: *mut u64,
        out_lower_bound_bytes: *mut u64,
    ) -> fst_status;
    pub fn fst_fusion_dump(fusion: *const fst_fusion, out_text: *mut *mut c_char) -> fst_status;
    pub fn fst_fusion_run(
        fusion: *const fst_fusion,
        inputs: *const *const c_void,
        ninputs: usize,
        outputs: *const *mut c_void,
        noutputs: usize,
        workspace: *mut c_void,
        stream: *mut c_void,
    ) -> fst_status;

    // Kernels
    pub fn fst_kernel_name(kernel: *const fst_kernel, out_name: *mut *const c_char) -> fst_status;
    pub fn fst_kernel_source(
        kernel: *const fst_kernel,
        out_source: *mut *const c_char,
    ) -> fst_status;
    pub fn fst_kernel_ptx(kernel: *const fst_kernel, out_ptx: *mut *const c_char) -> fst_status;
    pub fn fst_kernel_cubin(
        kernel: *const fst_kernel,
        out_data: *mut *const c_void,
        out_size: *mut usize,
    ) -> fst_status;
    pub fn fst_kernel_launch_config(
        kernel: *const fst_kernel,
        out_grid: *mut u32,
        out_block: *mut u32,
        out_dynamic_shared_bytes: *mut usize,
    ) -> fst_status;
    pub fn fst_kernel_grid_for_occupancy(
        kernel: *const fst_kernel,
        blocks_per_multiprocessor: u32,
        multiprocessors: u32,
        out_grid: *mut u32,
    ) -> fst_status;
    pub fn fst_kernel_param_count(kernel: *const fst_kernel, out_count: *mut usize) -> fst_status;
    pub fn fst_kernel_param(
        kernel: *const fst_kernel,
        index: usize,
        out_kind: *mut fst_param_kind,
        out_index: *mut usize,
        out_value: *mut fst_value,
    ) -> fst_status;
    pub fn fst_kernel_cluster_blocks(kernel: *const fst_kernel, out_blocks: *mut u32)
        -> fst_status;
    pub fn fst_kernel_zeroed_workspace(
        kernel: *const fst_kernel,
        out_offset: *mut usize,
        out_bytes: *mut usize,
    ) -> fst_status;
    pub fn fst_kernel_estimated_bytes(
        kernel: *const fst_kernel,
        out_read_bytes: *mut u64,
        out_written_bytes: *mut u64,
    ) -> fst_status;
    pub fn fst_kernel_launch_kind(
        kernel: *const fst_kernel,
        out_kind: *mut fst_launch_kind,
    ) -> fst_status;
    pub fn fst_kernel_function(
        kernel: *const fst_kernel,
        out_function: *mut *mut c_void,
    ) -> fst_status;
    pub fn fst_kernel_launch(
        kernel: *const fst_kernel,
        args: *const *mut c_void,
        nargs: usize,
        stream: *mut c_void,
    ) -> fst_status;

    // Steps and opaque operations
    pub fn fst_fusion_step_count(fusion: *const fst_fusion, out_count: *mut usize) -> fst_status;
    pub fn fst_fusion_step(
        fusion: *const fst_fusion,
        index: usize,
        out_kind: *mut fst_step_kind,
        out_index: *mut usize,
    ) -> fst_status;
    pub fn fst_fusion_opaque_count(fusion: *const fst_fusion, out_count: *mut usize) -> fst_status;
    pub fn fst_fusion_opaque(
        fusion: *const fst_fusion,
        index: usize,
        out_name: *mut *const c_char,
        out_operand_count: *mut usize,
        out_value: *mut fst_value,
    ) -> fst_status;
    pub fn fst_fusion_opaque_operand(
        fusion: *const fst_fusion,
        index: usize,
        operand: usize,
        out_kind: *mut fst_param_kind,
        out_location: *mut usize,
        out_dtype: *mut fst_dtype,
        out_rank: *mut usize,
        out_dims: *mut *const i64,
    ) -> fst_status;
    pub fn fst_fusion_opaque_result(
        fusion: *const fst_fusion,
        index: usize,
        out_kind: *mut fst_param_kind,
        out_location: *mut usize,
        out_dtype: *mut fst_dtype,
        out_rank: *mut usize,
        out_dims: *mut *const i64,
    ) -> fst_status;
    pub fn fst_opaque_call_name(
        call: *const fst_opaque_call,
        out_name: *mut *const c_char,
    ) -> fst_status;
    pub fn fst_opaque_call_value(
        call: *const fst_opaque_call,
        out_value: *mut fst_value,
    ) -> fst_status;
    pub fn fst_opaque_call_operand_count(
        call: *const fst_opaque_call,
        out_count: *mut usize,
    ) -> fst_status;
    pub fn fst_opaque_call_operand(
        call: *const fst_opaque_call,
        index: usize,
        out_data: *mut *const c_void,
        out_dtype: *mut fst_dtype,
        out_rank: *mut usize,
        out_dims: *mut *const i64,
    ) -> fst_status;
    pub fn fst_opaque_call_result(
        call: *const fst_opaque_call,
        out_data: *mut *mut c_void,
        out_dtype: *mut fst_dtype,
        out_rank: *mut usize,
        out_dims: *mut *const i64,
    ) -> fst_status;
    pub fn fst_opaque_call_stream(
        call: *const fst_opaque_call,
        out_stream: *mut *mut c_void,
    ) -> fst_status;
    pub fn fst_opaque_call_fail(call: *const fst_opaque_call, message: *const c_char)
        -> fst_status;
    pub fn fst_fusion_run_with_opaque(
        fusion: *const fst_fusion,
        inputs: *const *const c_void,
        ninputs: usize,
        outputs: *const *mut c_void,
        noutputs: usize,
        workspace: *mut c_void,
        stream: *mut c_void,
        callback: fst_opaque_callback,
        user_data: *mut c_void,
    ) -> fst_status;
    pub fn fst_graph_evaluate_reference_with_opaque(
        graph: *const fst_graph,
        inputs: *const *const c_void,
        ninputs: usize,
        outputs: *const *mut c_void,
        noutputs: usize,
        callback: fst_opaque_callback,
        user_data: *mut c_void,
    ) -> fst_status;
}
