//! Safe Rust API of fstitch: build graphs of memory-intensive deep-learning operators,
//! fuse them into CUDA kernels (FusionStitching), inspect the kernels, and run them, on a
//! GPU or, through the host backend, on the CPU.
//!
//! ```no_run
//! use fstitch::{Backend, Context, DType, FuseOptions, Graph};
//!
//! # fn main() -> fstitch::Result<()> {
//! let context = Context::builder().backend(Backend::Host).build()?;
//! let graph = Graph::new(&context)?;
//! let x = graph.input("x", DType::F32, &[2, 4]);
//! let w = graph.input("w", DType::F32, &[4]);
//! graph.output("y", (x * w + 1.0).relu().sum(&[-1], true))?;
//! let fusion = graph.fuse(&FuseOptions::new())?;
//! for kernel in fusion.kernels()? {
//!     println!("{}: {:?}", kernel.name()?, kernel.launch_config()?);
//! }
//! let (xs, ws) = ([1.0f32; 8], [0.5f32; 4]);
//! let mut y = [0.0f32; 2];
//! fusion.run(&[(&xs).into(), (&ws).into()], &mut [(&mut y).into()])?;
//! assert_eq!(y, [6.0, 6.0]);
//! # Ok(())
//! # }
//! ```
//!
//! Handles own their C objects and release them on drop; a [`Fusion`] may outlive the
//! [`Graph`] and the [`Context`] it came from. Every fallible call returns
//! [`Result`], whose [`Error`] carries the [`Status`] and fstitch's message. Graph
//! builders record their first error on the graph, reported by [`Graph::output`] and by
//! every call that consumes the graph (see [`Graph`]).
//!
//! Plans with opaque operations (the caller's matmuls, say) list their order in
//! [`Fusion::steps`] and run through a closure: [`Fusion::run_with_opaque`] and
//! [`Graph::evaluate_reference_with_opaque`] call it with an [`OpaqueCall`] for each
//! opaque step; an `Err` or a panic in it stops the run with an [`Error`] naming the
//! operation (a panic never unwinds into C).
//!
//! Thread safety follows fstitch.h: [`Context`], [`Fusion`] and [`Kernel`] are
//! `Send + Sync`; a [`Graph`] is `Send` but not `Sync`.
//!
//! The library is found at build time through `$FSTITCH_LIB_DIR` or pkg-config (see
//! fstitch-sys); programs outside this workspace find `libfstitch.so.1` at run time the
//! usual way (an installed library, `LD_LIBRARY_PATH`, or an rpath of their own).
#![deny(missing_docs)]

mod buffer;
mod compile_stats;
mod context;
mod element;
mod enums;
mod error;
mod fusion;
mod graph;
mod kernel;
mod opaque;
mod util;
mod value;

use std::ffi::CStr;

pub use fstitch_sys as sys;

pub use buffer::{HostSlice, HostSliceMut, TensorSpec};
pub use compile_stats::CompileStats;
pub use context::{Context, ContextBuilder};
pub use element::{Bf16, Element, F16};
pub use enums::{
    Backend, BinaryOp, DType, FusionPolicy, LaunchKind, LogLevel, ParamKind, ReduceOp, UnaryOp,
};
pub use error::{Error, Result, Status};
pub use fusion::{FuseOptions, Fusion, PlannedBytes};
pub use graph::Graph;
pub use kernel::{EstimatedBytes, Kernel, KernelParam, LaunchConfig};
pub use opaque::{OpaqueCall, OpaqueOp, OpaqueOperand, OpaqueResult, OpaqueTensor, Step};
pub use value::Value;

/// Compile-time guarantees, checked by doctests that must fail to compile.
///
/// A value cannot outlive its graph:
///
/// ```compile_fail,E0597
/// let context = fstitch::Context::new().unwrap();
/// let value = {
///     let graph = fstitch::Graph::new(&context).unwrap();
///     graph.input("x", fstitch::DType::F32, &[1])
/// };
/// println!("{:?}", value);
/// ```
///
/// A kernel cannot outlive its fusion:
///
/// ```compile_fail,E0505
/// # let context = fstitch::Context::new().unwrap();
/// # let graph = fstitch::Graph::new(&context).unwrap();
/// let fusion = graph.fuse(&fstitch::FuseOptions::new()).unwrap();
/// let kernel = fusion.kernel(0).unwrap();
/// drop(fusion);
/// println!("{:?}", kernel.name());
/// ```
///
/// A graph cannot be shared between threads while it may be built:
///
/// ```compile_fail,E0277
/// fn shared<T: Sync>() {}
/// shared::<fstitch::Graph>();
/// ```
///
/// Host buffers cannot alias an output that is also read:
///
/// ```compile_fail,E0502
/// fn in_place(fusion: &fstitch::Fusion) {
///     let mut data = vec![0.0f32; 4];
///     fusion.run(&[(&data).into()], &mut [(&mut data).into()]).unwrap();
/// }
/// ```
#[cfg(doctest)]
pub struct CompileFailTests;

/// Largest tensor rank accepted anywhere in the API.
pub const MAX_RANK: usize = sys::FST_MAX_RANK;

/// The version of the loaded library as major * 10000 + minor * 100 + patch.
pub fn version_number() -> u32 {
    // SAFETY: no arguments; never fails.
    unsafe { sys::fst_version_number() }
}

/// The version of the loaded library as text, e.g. `"0.3.0"`.
pub fn version_string() -> &'static str {
    // SAFETY: a static NUL-terminated string owned by the library.
    unsafe { CStr::from_ptr(sys::fst_version_string()) }
        .to_str()
        .unwrap_or("?")
}
