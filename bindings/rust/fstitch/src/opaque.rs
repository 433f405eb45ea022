//! Steps of a fusion and opaque operations: the order a plan runs its kernels and the
//! caller's operations in, where those operations read and write, and runs that call a
//! Rust closure for each of them.
//!
//! The closure runs inside an `extern "C"` callback. Nothing unwinds across it: a panic is
//! caught there and, like an `Err`, handed to the library as the failure's text; the run
//! then stops and returns an [`Error`] naming the operation.

use std::cell::Cell;
use std::ffi::{c_char, c_void, CString};
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use fstitch_sys as sys;

use crate::buffer::{checked_host_pointers, HostSlice, HostSliceMut};
use crate::element::Element;
use crate::enums::{from_c, Backend, DType, ParamKind};
use crate::error::{check, Error, Result, Status};
use crate::fusion::Fusion;
use crate::graph::Graph;
use crate::kernel::Kernel;
use crate::util::borrow_c_str;

/// One step of a fusion, in the order [`Fusion::steps`] gives them.
#[derive(Clone, Debug)]
pub enum Step<'f> {
    /// Launch this kernel.
    Kernel(Kernel<'f>),
    /// Run this opaque operation.
    Opaque(OpaqueOp<'f>),
}

/// Where an operand or the result of an opaque operation lives when its step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpaqueTensor<'f> {
    /// A graph input, a graph output, the workspace or a tensor constant the fusion owns.
    pub kind: ParamKind,
    /// The input or output index, the byte offset in the workspace, or the constant index.
    pub index: usize,
    /// The element type.
    pub dtype: DType,
    /// The dims of the dense row-major buffer; empty for a scalar.
    pub dims: &'f [i64],
}

/// An opaque operation of a fusion as the plan places it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpaqueOp<'f> {
    /// Its opaque index ([`Fusion::opaque_op`]); opaque operations are in graph order.
    pub index: usize,
    /// The name given to [`Graph::opaque`].
    pub name: &'f str,
    /// Its graph value, comparable with [`crate::Value::raw`] of the graph the fusion was
    /// made from.
    pub value: sys::fst_value,
    /// Where each operand is read from.
    pub operands: Vec<OpaqueTensor<'f>>,
    /// Where the result must be written.
    pub result: OpaqueTensor<'f>,
}

/// `rank` dims at `dims` (NULL for rank 0) as a slice.
///
/// # Safety
/// `dims` is NULL or points to `rank` values that live as long as `'a`.
unsafe fn dims_slice<'a>(dims: *const i64, rank: usize) -> &'a [i64] {
    if dims.is_null() || rank == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(dims, rank)
    }
}

fn dtype_of(raw: sys::fst_dtype, function: &str) -> Result<DType> {
    from_c(raw, DType::from_raw, function)
}

impl Fusion {
    /// The number of steps: every kernel and every opaque operation once.
    pub fn step_count(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: a live fusion and a valid out pointer.
        check(unsafe { sys::fst_fusion_step_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// The steps in the order a run takes them. The order respects every dependency: an
    /// opaque operation comes after whatever produces its operands and before every kernel
    /// that reads its result. A framework that runs plans itself follows it.
    pub fn steps(&self) -> Result<Vec<Step<'_>>> {
        (0..self.step_count()?)
            .map(|position| {
                let (mut kind, mut index) = (0, 0);
                // SAFETY: a live fusion and valid out pointers.
                check(unsafe {
                    sys::fst_fusion_step(self.as_raw(), position, &mut kind, &mut index)
                })?;
                match kind {
                    sys::FST_STEP_KERNEL => Ok(Step::Kernel(self.kernel(index)?)),
                    sys::FST_STEP_OPAQUE => Ok(Step::Opaque(self.opaque_op(index)?)),
                    other => Err(Error::new(
                        Status::Internal,
                        format!("fst_fusion_step returned the unknown step kind {other}"),
                    )),
                }
            })
            .collect()
    }

    /// The number of opaque operations.
    pub fn opaque_count(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: a live fusion and a valid out pointer.
        check(unsafe { sys::fst_fusion_opaque_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// The `index`-th opaque operation (in graph order), with where its operands and result
    /// live. [`Status::InvalidArgument`] for an index out of range.
    pub fn opaque_op(&self, index: usize) -> Result<OpaqueOp<'_>> {
        let mut name: *const c_char = ptr::null();
        let mut count = 0;
        let mut value = sys::FST_VALUE_INVALID;
        // SAFETY: a live fusion and valid out pointers; the name and the dims are owned by
        // the fusion, immutable while it lives.
        unsafe {
            check(sys::fst_fusion_opaque(
                self.as_raw(),
                index,
                &mut name,
                &mut count,
                &mut value,
            ))?;
            let operands = (0..count)
                .map(|operand| {
                    self.opaque_tensor("fst_fusion_opaque_operand", |k, l, d, r, dims| {
                        sys::fst_fusion_opaque_operand(
                            self.as_raw(),
                            index,
                            operand,
                            k,
                            l,
                            d,
                            r,
                            dims,
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let result = self.opaque_tensor("fst_fusion_opaque_result", |k, l, d, r, dims| {
                sys::fst_fusion_opaque_result(self.as_raw(), index, k, l, d, r, dims)
            })?;
            Ok(OpaqueOp {
                index,
                name: borrow_c_str(name, "fst_fusion_opaque")?,
                value,
                operands,
                result,
            })
        }
    }

    /// Reads one location through `query` (fst_fusion_opaque_operand or _result).
    ///
    /// # Safety
    /// `query` calls the C function on this live fusion with the out pointers it gets.
    unsafe fn opaque_tensor(
        &self,
        function: &str,
        query: impl FnOnce(
            *mut sys::fst_param_kind,
            *mut usize,
            *mut sys::fst_dtype,
            *mut usize,
            *mut *const i64,
        ) -> sys::fst_status,
    ) -> Result<OpaqueTensor<'_>> {
        let (mut kind, mut location, mut dtype, mut rank) = (0, 0, 0, 0);
        let mut dims: *const i64 = ptr::null();
        check(query(
            &mut kind,
            &mut location,
            &mut dtype,
            &mut rank,
            &mut dims,
        ))?;
        Ok(OpaqueTensor {
            kind: from_c(kind, ParamKind::from_raw, function)?,
            index: location,
            dtype: dtype_of(dtype, function)?,
            dims: dims_slice(dims, rank),
        })
    }

    /// Every opaque operation, in graph order.
    pub fn opaque_ops(&self) -> Result<Vec<OpaqueOp<'_>>> {
        (0..self.opaque_count()?)
            .map(|index| self.opaque_op(index))
            .collect()
    }

    /// [`Fusion::run`] for plans with opaque operations: runs the steps in order on the
    /// host backend, calling `opaque` for each opaque step with its operands and the result
    /// buffer to fill. A plan without opaque operations never calls it.
    ///
    /// An `Err` from `opaque`, or a panic in it (caught before it reaches C), stops the run:
    /// it returns an [`Error`] that names the operation and carries the `Err`'s message (or
    /// the panic's), with the `Err`'s status ([`Status::Launch`] for a panic). Buffers are
    /// checked as for [`Fusion::run`].
    pub fn run_with_opaque<F>(
        &self,
        inputs: &[HostSlice<'_>],
        outputs: &mut [HostSliceMut<'_>],
        opaque: F,
    ) -> Result<()>
    where
        F: FnMut(&OpaqueCall<'_>) -> Result<()>,
    {
        let function = "Fusion::run_with_opaque";
        let backend = self.context().active_backend();
        if backend != Backend::Host {
            return Err(Error::new(
                Status::InvalidArgument,
                format!(
                    "{function} takes host buffers, but the context runs on the {backend:?} \
                     backend; create it with Backend::Host, or use \
                     Fusion::run_raw_with_opaque with device pointers"
                ),
            ));
        }
        let (input_pointers, output_pointers) =
            checked_host_pointers(function, self.inputs(), self.outputs(), inputs, outputs)?;
        // SAFETY: host buffers of the checked dtypes and sizes for a host-backend context;
        // a NULL workspace is allocated by the library.
        let result = unsafe {
            self.run_raw_with_opaque(
                &input_pointers,
                &output_pointers,
                ptr::null_mut(),
                ptr::null_mut(),
                opaque,
            )
        };
        outputs
            .iter_mut()
            .for_each(HostSliceMut::normalize_after_write);
        result
    }

    /// [`Fusion::run_raw`] for plans with opaque operations: runs the steps in order on the
    /// context's backend, calling `opaque` on this thread for each opaque step. On the CUDA
    /// backend the call's buffers are device pointers and the work must be queued on
    /// [`OpaqueCall::stream`] (the run's `stream`) before `opaque` returns; its typed slices
    /// are refused there. Failures of `opaque` stop the run as for
    /// [`Fusion::run_with_opaque`].
    ///
    /// # Safety
    ///
    /// As for [`Fusion::run_raw`]; the workspace also holds opaque results that are no
    /// graph outputs.
    pub unsafe fn run_raw_with_opaque<F>(
        &self,
        inputs: &[*const c_void],
        outputs: &[*mut c_void],
        workspace: *mut c_void,
        stream: *mut c_void,
        mut opaque: F,
    ) -> Result<()>
    where
        F: FnMut(&OpaqueCall<'_>) -> Result<()>,
    {
        let host = self.context().active_backend() == Backend::Host;
        with_trampoline(&mut opaque, host, |callback, user_data| {
            sys::fst_fusion_run_with_opaque(
                self.as_raw(),
                inputs.as_ptr(),
                inputs.len(),
                outputs.as_ptr(),
                outputs.len(),
                workspace,
                stream,
                callback,
                user_data,
            )
        })
    }
}

impl Graph {
    /// [`Graph::evaluate_reference`] for graphs with opaque operations: each one runs
    /// through `opaque` on host buffers (operands in their storage dtypes), in graph order,
    /// so that fused runs can be checked against the reference with the same closure.
    /// Failures of `opaque` stop the evaluation as for [`Fusion::run_with_opaque`].
    ///
    /// It borrows the graph exclusively: the closure cannot build on the graph while the
    /// evaluator reads it.
    pub fn evaluate_reference_with_opaque<F>(
        &mut self,
        inputs: &[HostSlice<'_>],
        outputs: &mut [HostSliceMut<'_>],
        mut opaque: F,
    ) -> Result<()>
    where
        F: FnMut(&OpaqueCall<'_>) -> Result<()>,
    {
        self.status()?;
        let function = "Graph::evaluate_reference_with_opaque";
        let (input_pointers, output_pointers) =
            checked_host_pointers(function, &self.inputs()?, &self.outputs()?, inputs, outputs)?;
        let graph = self.as_raw();
        // SAFETY: a live graph; each pointer is a live buffer whose dtype and element count
        // match its input or output.
        let result = unsafe {
            with_trampoline(&mut opaque, true, |callback, user_data| {
                sys::fst_graph_evaluate_reference_with_opaque(
                    graph,
                    input_pointers.as_ptr(),
                    input_pointers.len(),
                    output_pointers.as_ptr(),
                    output_pointers.len(),
                    callback,
                    user_data,
                )
            })
        };
        outputs
            .iter_mut()
            .for_each(HostSliceMut::normalize_after_write);
        result
    }
}

// ---------------------------------------------------------------------------------------
// Calls

/// An operand of an opaque call: a dense row-major buffer to read.
#[derive(Clone, Copy, Debug)]
pub struct OpaqueOperand<'c> {
    /// The buffer: host memory on the host backend and in reference evaluation, device
    /// memory on the CUDA backend. Valid only while the callback runs.
    pub data: *const c_void,
    /// The element type.
    pub dtype: DType,
    /// The dims; empty for a scalar.
    pub dims: &'c [i64],
}

/// The result of an opaque call: the dense row-major buffer the operation must fill.
#[derive(Clone, Copy, Debug)]
pub struct OpaqueResult<'c> {
    /// The buffer, of the same kind as the operands'. Valid only while the callback runs.
    pub data: *mut c_void,
    /// The element type.
    pub dtype: DType,
    /// The dims; empty for a scalar.
    pub dims: &'c [i64],
}

fn element_count(dims: &[i64]) -> usize {
    dims.iter().map(|&dim| dim.max(0) as usize).product()
}

/// One call of an opaque operation, as the closure of [`Fusion::run_with_opaque`] and
/// friends receives it; valid only during that call (the closure cannot keep it).
pub struct OpaqueCall<'c> {
    raw: NonNull<sys::fst_opaque_call>,
    host: bool,
    result_taken: Cell<bool>,
    _call: PhantomData<&'c sys::fst_opaque_call>,
}

impl std::fmt::Debug for OpaqueCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpaqueCall")
            .field("name", &self.name().unwrap_or("?"))
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl<'c> OpaqueCall<'c> {
    /// The C handle, for calls through [`crate::sys`]; valid while the callback runs.
    pub fn as_raw(&self) -> *const sys::fst_opaque_call {
        self.raw.as_ptr()
    }

    /// Whether the buffers are host memory (the host backend and reference evaluation):
    /// only then do [`OpaqueCall::operand_slice`] and [`OpaqueCall::result_slice`] work.
    pub fn is_host(&self) -> bool {
        self.host
    }

    /// The operation's name, as given to [`Graph::opaque`].
    pub fn name(&self) -> Result<&str> {
        let mut name: *const c_char = ptr::null();
        // SAFETY: a live call and a valid out pointer; the name lives as long as the call.
        unsafe {
            check(sys::fst_opaque_call_name(self.as_raw(), &mut name))?;
            borrow_c_str(name, "fst_opaque_call_name")
        }
    }

    /// The operation's graph value, comparable with [`crate::Value::raw`].
    pub fn value(&self) -> Result<sys::fst_value> {
        let mut value = sys::FST_VALUE_INVALID;
        // SAFETY: a live call and a valid out pointer.
        check(unsafe { sys::fst_opaque_call_value(self.as_raw(), &mut value) })?;
        Ok(value)
    }

    /// The number of operands.
    pub fn operand_count(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: a live call and a valid out pointer.
        check(unsafe { sys::fst_opaque_call_operand_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// Operand `index`. [`Status::InvalidArgument`] for an index out of range.
    pub fn operand(&self, index: usize) -> Result<OpaqueOperand<'_>> {
        let (mut data, mut dtype, mut rank) = (ptr::null(), 0, 0);
        let mut dims: *const i64 = ptr::null();
        // SAFETY: a live call and valid out pointers; the dims live as long as the call.
        unsafe {
            check(sys::fst_opaque_call_operand(
                self.as_raw(),
                index,
                &mut data,
                &mut dtype,
                &mut rank,
                &mut dims,
            ))?;
            Ok(OpaqueOperand {
                data,
                dtype: dtype_of(dtype, "fst_opaque_call_operand")?,
                dims: dims_slice(dims, rank),
            })
        }
    }

    /// The result buffer to fill.
    pub fn result(&self) -> Result<OpaqueResult<'_>> {
        let (mut data, mut dtype, mut rank) = (ptr::null_mut(), 0, 0);
        let mut dims: *const i64 = ptr::null();
        // SAFETY: a live call and valid out pointers; the dims live as long as the call.
        unsafe {
            check(sys::fst_opaque_call_result(
                self.as_raw(),
                &mut data,
                &mut dtype,
                &mut rank,
                &mut dims,
            ))?;
            Ok(OpaqueResult {
                data,
                dtype: dtype_of(dtype, "fst_opaque_call_result")?,
                dims: dims_slice(dims, rank),
            })
        }
    }

    /// The run's `CUstream` (NULL: the default stream; always NULL on the host backend and
    /// in reference evaluation).
    pub fn stream(&self) -> Result<*mut c_void> {
        let mut stream = ptr::null_mut();
        // SAFETY: a live call and a valid out pointer.
        check(unsafe { sys::fst_opaque_call_stream(self.as_raw(), &mut stream) })?;
        Ok(stream)
    }

    /// Checks that a typed slice of `len` elements of `T` may be made at `data`.
    fn check_slice<T: Element>(
        &self,
        what: &str,
        data: *const c_void,
        dtype: DType,
        len: usize,
    ) -> Result<()> {
        if !self.host {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("{what} is device memory (the CUDA backend); use its pointer"),
            ));
        }
        if dtype != T::DTYPE {
            return Err(Error::new(
                Status::Dtype,
                format!("{what} is {dtype}, not {}", T::DTYPE),
            ));
        }
        if len > 0 && (data.is_null() || data as usize % std::mem::align_of::<T>() != 0) {
            return Err(Error::new(
                Status::Internal,
                format!(
                    "{what} is at {data:?}, which is not aligned for {}",
                    T::DTYPE
                ),
            ));
        }
        Ok(())
    }

    /// Operand `index` as a typed host slice. Errors: [`Status::InvalidArgument`] on the
    /// CUDA backend or for an index out of range, [`Status::Dtype`] when `T` is not the
    /// operand's element type (or a `bool` operand holds a byte other than 0 and 1).
    pub fn operand_slice<T: Element>(&self, index: usize) -> Result<&[T]> {
        let operand = self.operand(index)?;
        let len = element_count(operand.dims);
        let what = format!("operand {index}");
        self.check_slice::<T>(&what, operand.data, operand.dtype, len)?;
        if len == 0 {
            return Ok(&[]);
        }
        if T::DTYPE == DType::Bool {
            // SAFETY: `len` readable host bytes, checked before they are read as bool.
            let bytes = unsafe { std::slice::from_raw_parts(operand.data.cast::<u8>(), len) };
            if bytes.iter().any(|&b| b > 1) {
                return Err(Error::new(
                    Status::Dtype,
                    format!("{what} holds bool bytes other than 0 and 1"),
                ));
            }
        }
        // SAFETY: host memory of `len` elements of T (checked dtype, alignment and, for
        // bool, values), read-only and alive while the call is.
        Ok(unsafe { std::slice::from_raw_parts(operand.data.cast::<T>(), len) })
    }

    /// The result as a typed, writable host slice; it can be taken once per call (a second
    /// request is [`Status::InvalidArgument`]), and never overlaps an operand. A `bool`
    /// result starts all false. Errors as for [`OpaqueCall::operand_slice`].
    #[allow(clippy::mut_from_ref)] // one &mut per call: `result_taken` guards it
    pub fn result_slice<T: Element>(&self) -> Result<&mut [T]> {
        let result = self.result()?;
        let len = element_count(result.dims);
        self.check_slice::<T>("the result", result.data, result.dtype, len)?;
        if self.result_taken.replace(true) {
            return Err(Error::new(
                Status::InvalidArgument,
                "the result slice was already taken in this call",
            ));
        }
        if len == 0 {
            return Ok(&mut []);
        }
        let start = result.data as usize;
        let end = start + len * std::mem::size_of::<T>();
        for index in 0..self.operand_count()? {
            let operand = self.operand(index)?;
            let operand_start = operand.data as usize;
            let operand_end = operand_start + element_count(operand.dims) * operand.dtype.size();
            if operand_start < end && start < operand_end {
                return Err(Error::new(
                    Status::Internal,
                    format!("the result overlaps operand {index}"),
                ));
            }
        }
        if T::DTYPE == DType::Bool {
            // SAFETY: `len` writable host bytes; zeroed so that they are valid bools.
            unsafe { ptr::write_bytes(result.data.cast::<u8>(), 0, len) };
        }
        // SAFETY: host memory of `len` elements of T (checked dtype and alignment; bools
        // zeroed), alive while the call is, overlapping no operand, handed out once.
        Ok(unsafe { std::slice::from_raw_parts_mut(result.data.cast::<T>(), len) })
    }
}

// ---------------------------------------------------------------------------------------
// The trampoline

/// What the C callback needs: the closure and whether buffers are host memory.
struct Trampoline<'a, F> {
    opaque: &'a mut F,
    host: bool,
}

/// The status a failing closure stops the run with: its error's, if it is an error status.
fn failure_status(status: Status) -> sys::fst_status {
    match status {
        Status::Ok | Status::Unknown(_) => sys::FST_ERROR_LAUNCH,
        other => other.to_raw(),
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// The `fst_opaque_callback` for closures of type `F`: `user_data` is a `Trampoline<F>`.
unsafe extern "C" fn trampoline<F>(
    call: *const sys::fst_opaque_call,
    user_data: *mut c_void,
) -> sys::fst_status
where
    F: FnMut(&OpaqueCall<'_>) -> Result<()>,
{
    // SAFETY: with_trampoline passes a live Trampoline<F>, borrowed for the C call only;
    // the library calls back on the same thread, one call at a time.
    let state = &mut *user_data.cast::<Trampoline<'_, F>>();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        let raw = NonNull::new(call.cast_mut())
            .ok_or_else(|| Error::new(Status::Internal, "the opaque callback got a NULL call"))?;
        let call = OpaqueCall {
            raw,
            host: state.host,
            result_taken: Cell::new(false),
            _call: PhantomData,
        };
        (state.opaque)(&call)
    }));
    let (status, text) = match outcome {
        Ok(Ok(())) => return sys::FST_OK,
        Ok(Err(error)) => (failure_status(error.status()), error.message().to_owned()),
        Err(payload) => {
            let text = format!("the callback panicked: {}", panic_text(payload.as_ref()));
            // A payload whose drop panics must not unwind into C either.
            let _ = panic::catch_unwind(AssertUnwindSafe(move || drop(payload)));
            (sys::FST_ERROR_LAUNCH, text)
        }
    };
    if !call.is_null() {
        let text = CString::new(text.replace('\0', "\\0")).unwrap_or_default();
        // SAFETY: a live call and a NUL-terminated message, which the library copies.
        sys::fst_opaque_call_fail(call, text.as_ptr());
    }
    status
}

/// Calls `run` with the C callback and user data for `opaque`, then checks its status.
///
/// # Safety
/// `run` makes one C call that uses the callback and user data only until it returns.
unsafe fn with_trampoline<F>(
    opaque: &mut F,
    host: bool,
    run: impl FnOnce(sys::fst_opaque_callback, *mut c_void) -> sys::fst_status,
) -> Result<()>
where
    F: FnMut(&OpaqueCall<'_>) -> Result<()>,
{
    let mut state = Trampoline { opaque, host };
    let user_data = (&mut state as *mut Trampoline<'_, F>).cast::<c_void>();
    check(run(Some(trampoline::<F>), user_data))
}
