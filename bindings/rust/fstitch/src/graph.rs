//! Graphs: building, queries, text form and the reference evaluator.

use std::cell::RefCell;
use std::ffi::c_char;
use std::ptr::{self, NonNull};

use fstitch_sys as sys;

use crate::buffer::{checked_host_pointers, HostSlice, HostSliceMut, TensorSpec};
use crate::context::Context;
use crate::element::Element;
use crate::enums::{from_c, BinaryOp, DType, ReduceOp, UnaryOp};
use crate::error::{check, Error, Result, Status};
use crate::fusion::{FuseOptions, Fusion};
use crate::util::{c_string, copy_c_str, take_c_string};
use crate::value::Value;

/// A graph of SSA values, each with a dtype and a shape.
///
/// # Errors while building
///
/// Builders ([`Graph::input`], [`Graph::unary`], the operators on [`Value`], ...) return a
/// [`Value`], never a `Result`, so that expressions read like math. As in the C API the
/// first failing builder puts the graph in an error state and returns an invalid value;
/// every later builder does nothing. The first error is then reported, as an `Err` with
/// its status and message, by every call that needs a sound graph: [`Graph::output`],
/// [`Graph::status`], [`Graph::verify`], [`Graph::to_text`],
/// [`Graph::evaluate_reference`] and [`Graph::fuse`], and by the queries of an invalid
/// value. All of them return the same [`Error`] as [`Graph::status`], with the message of
/// the builder that failed. An error cannot be lost: a graph in error state cannot be
/// printed, evaluated or fused.
///
/// # Threads
///
/// A graph may move to another thread (`Send`) but is not `Sync`: building mutates it
/// through `&self`, and fstitch.h requires external synchronization for that.
pub struct Graph {
    raw: NonNull<sys::fst_graph>,
    context: Context,
    // The first error detected on the Rust side (a NUL byte in a name), recorded only
    // while the C graph has none, so that it is the graph's first error.
    rust_error: RefCell<Option<Error>>,
}

// SAFETY: the C graph has no thread affinity; Graph is !Sync (RefCell), so it is never
// used from two threads at once.
unsafe impl Send for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: created by fst_graph_create or fst_graph_parse, destroyed once. Values
        // borrow the graph, so none outlives it.
        unsafe { sys::fst_graph_destroy(self.raw.as_ptr()) };
    }
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("status", &self.status().err().map(|e| e.status()))
            .finish_non_exhaustive()
    }
}

impl Graph {
    /// An empty graph in `context` (the graph keeps the context alive).
    pub fn new(context: &Context) -> Result<Graph> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live context and a valid out pointer.
        check(unsafe { sys::fst_graph_create(context.as_raw(), &mut raw) })?;
        Graph::from_raw(raw, context, "fst_graph_create")
    }

    /// Parses graph text (the form [`Graph::to_text`] prints) into a new graph.
    /// Errors: [`Status::Parse`] with line and column, or the shape or dtype error of an
    /// operation that does not type-check.
    pub fn parse(context: &Context, text: &str) -> Result<Graph> {
        let mut raw = ptr::null_mut();
        // SAFETY: text is valid for text.len() bytes, which are passed explicitly.
        check(unsafe {
            sys::fst_graph_parse(
                context.as_raw(),
                text.as_ptr().cast::<c_char>(),
                text.len(),
                &mut raw,
            )
        })?;
        Graph::from_raw(raw, context, "fst_graph_parse")
    }

    fn from_raw(raw: *mut sys::fst_graph, context: &Context, function: &str) -> Result<Graph> {
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                Status::Internal,
                format!("{function} returned FST_OK and a NULL graph"),
            )
        })?;
        Ok(Graph {
            raw,
            context: context.clone(),
            rust_error: RefCell::new(None),
        })
    }

    /// The context the graph was made in.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The C handle, for calls through [`crate::sys`]; valid while the graph lives. Do not
    /// destroy it.
    pub fn as_raw(&self) -> *mut sys::fst_graph {
        self.raw.as_ptr()
    }

    // -----------------------------------------------------------------------------------
    // Error state

    /// `Ok(())`, or the graph's first builder error.
    pub fn status(&self) -> Result<()> {
        if let Some(error) = self.rust_error.borrow().as_ref() {
            return Err(error.clone());
        }
        // SAFETY: a live graph.
        let status = unsafe { sys::fst_graph_status(self.as_raw()) };
        if status == sys::FST_OK {
            return Ok(());
        }
        // SAFETY: a live graph; the message is owned by it and copied at once.
        let message = unsafe { copy_c_str(sys::fst_graph_error_message(self.as_raw()), "") }
            .unwrap_or_default();
        Err(Error::new(Status::from_raw(status), message))
    }

    /// Records an error detected on the Rust side and returns the invalid value.
    fn fail(&self, error: Error) -> Value<'_> {
        // SAFETY: a live graph.
        let c_ok = unsafe { sys::fst_graph_status(self.as_raw()) } == sys::FST_OK;
        let mut slot = self.rust_error.borrow_mut();
        if c_ok && slot.is_none() {
            *slot = Some(error);
        }
        Value::new(self, sys::FST_VALUE_INVALID)
    }

    /// Runs a C builder unless a Rust-side error already stopped the graph.
    fn build(&self, builder: impl FnOnce(*mut sys::fst_graph) -> sys::fst_value) -> Value<'_> {
        if self.rust_error.borrow().is_some() {
            return Value::new(self, sys::FST_VALUE_INVALID);
        }
        Value::new(self, builder(self.as_raw()))
    }

    /// The Rust-side error, if any, as the result of a call that consumes the graph.
    fn check_rust_error(&self) -> Result<()> {
        match self.rust_error.borrow().as_ref() {
            Some(error) => Err(error.clone()),
            None => Ok(()),
        }
    }

    // -----------------------------------------------------------------------------------
    // Builders

    /// Declares an input with a unique, non-empty `name`, a dtype and dims (empty for a
    /// scalar; at most [`crate::MAX_RANK`], each at least 1).
    pub fn input(&self, name: &str, dtype: DType, dims: &[i64]) -> Value<'_> {
        let name = match c_string(name, "fst_input: name") {
            Ok(name) => name,
            Err(error) => return self.fail(error),
        };
        self.build(|g| unsafe {
            // SAFETY: a live graph, a NUL-terminated name and dims.len() dims.
            sys::fst_input(g, name.as_ptr(), dtype.to_raw(), dims.len(), dims.as_ptr())
        })
    }

    /// A scalar constant given as an f64, converted to `dtype` as by a cast.
    pub fn constant_f64(&self, dtype: DType, value: f64) -> Value<'_> {
        // SAFETY: a live graph.
        self.build(|g| unsafe { sys::fst_constant_f64(g, dtype.to_raw(), value) })
    }

    /// A scalar constant given as an i64, converted to `dtype` as by a cast.
    pub fn constant_i64(&self, dtype: DType, value: i64) -> Value<'_> {
        // SAFETY: a live graph.
        self.build(|g| unsafe { sys::fst_constant_i64(g, dtype.to_raw(), value) })
    }

    /// A constant tensor of `T`'s dtype and `dims` from `data` (row-major; copied now): the
    /// rotary tables, position ids or masks a model carries, planned like any other value.
    /// `data.len()` must be the element count of `dims` ([`Status::InvalidArgument`]
    /// otherwise).
    pub fn constant_tensor<T: Element>(&self, data: &[T], dims: &[i64]) -> Value<'_> {
        // SAFETY: T is laid out as fstitch stores T::DTYPE (Element is sealed), so the slice's
        // bytes are the elements in their storage format; a Rust bool is 0 or 1.
        let bytes = unsafe {
            std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data))
        };
        self.constant_tensor_bytes(T::DTYPE, dims, bytes)
    }

    /// A constant tensor from raw bytes in the storage format of `dtype` (f16/bf16 bit
    /// patterns, bool one byte 0 or 1), copied now; `bytes.len()` must be the tensor's size.
    pub fn constant_tensor_bytes(&self, dtype: DType, dims: &[i64], bytes: &[u8]) -> Value<'_> {
        // SAFETY: a live graph, dims.len() dims and bytes.len() readable bytes (the library
        // checks the length before reading; a dangling pointer of an empty slice is never read).
        self.build(|g| unsafe {
            sys::fst_constant_tensor(
                g,
                dtype.to_raw(),
                dims.len(),
                dims.as_ptr(),
                bytes.as_ptr().cast(),
                bytes.len(),
            )
        })
    }

    /// A unary elementwise operation.
    pub fn unary(&self, op: UnaryOp, x: Value<'_>) -> Value<'_> {
        // SAFETY: a live graph; a foreign value is detected by the library.
        self.build(|g| unsafe { sys::fst_unary(g, op.to_raw(), x.raw()) })
    }

    /// A binary elementwise operation with numpy broadcasting; operands of the same dtype.
    pub fn binary(&self, op: BinaryOp, a: Value<'_>, b: Value<'_>) -> Value<'_> {
        // SAFETY: a live graph; foreign values are detected by the library.
        self.build(|g| unsafe { sys::fst_binary(g, op.to_raw(), a.raw(), b.raw()) })
    }

    /// `cond ? a : b` elementwise (`cond` bool), with numpy broadcasting of all three.
    pub fn select(&self, cond: Value<'_>, a: Value<'_>, b: Value<'_>) -> Value<'_> {
        // SAFETY: a live graph; foreign values are detected by the library.
        self.build(|g| unsafe { sys::fst_select(g, cond.raw(), a.raw(), b.raw()) })
    }

    /// Converts `x` to `dtype` (float to integer truncates and saturates; to f16/bf16
    /// rounds to nearest even).
    pub fn cast(&self, x: Value<'_>, dtype: DType) -> Value<'_> {
        // SAFETY: a live graph.
        self.build(|g| unsafe { sys::fst_cast(g, x.raw(), dtype.to_raw()) })
    }

    /// Broadcasts `x` to `dims` by numpy rules.
    pub fn broadcast(&self, x: Value<'_>, dims: &[i64]) -> Value<'_> {
        // SAFETY: a live graph and dims.len() dims.
        self.build(|g| unsafe { sys::fst_broadcast(g, x.raw(), dims.len(), dims.as_ptr()) })
    }

    /// Reduces `x` over distinct `axes` (negative counts from the end); `keepdims` keeps
    /// them as dims of 1.
    pub fn reduce(&self, op: ReduceOp, x: Value<'_>, axes: &[i64], keepdims: bool) -> Value<'_> {
        // SAFETY: a live graph and axes.len() axes.
        self.build(|g| unsafe {
            sys::fst_reduce(
                g,
                op.to_raw(),
                x.raw(),
                axes.len(),
                axes.as_ptr(),
                i32::from(keepdims),
            )
        })
    }

    /// Reinterprets the row-major elements of `x` with new dims; one dim may be -1.
    pub fn reshape(&self, x: Value<'_>, dims: &[i64]) -> Value<'_> {
        // SAFETY: a live graph and dims.len() dims.
        self.build(|g| unsafe { sys::fst_reshape(g, x.raw(), dims.len(), dims.as_ptr()) })
    }

    /// Permutes axes: result dim i is x's dim `perm[i]`.
    pub fn permute(&self, x: Value<'_>, perm: &[i64]) -> Value<'_> {
        // SAFETY: a live graph and perm.len() entries.
        self.build(|g| unsafe { sys::fst_permute(g, x.raw(), perm.len(), perm.as_ptr()) })
    }

    /// A tensor of `dims` whose elements are their index along `axis`.
    pub fn iota(&self, dtype: DType, dims: &[i64], axis: i64) -> Value<'_> {
        // SAFETY: a live graph and dims.len() dims.
        self.build(|g| unsafe { sys::fst_iota(g, dtype.to_raw(), dims.len(), dims.as_ptr(), axis) })
    }

    /// A strided slice: along axis i the elements `starts[i]`, `starts[i] + steps[i]`, ...
    /// below `stops[i]`. Bounds are Python's (negative counts from the end, then clamped to
    /// the dim); `steps` is empty for all 1, else each is at least 1. An empty slice is a
    /// shape error.
    pub fn slice(&self, x: Value<'_>, starts: &[i64], stops: &[i64], steps: &[i64]) -> Value<'_> {
        if stops.len() != starts.len() || (!steps.is_empty() && steps.len() != starts.len()) {
            return self.fail(Error::new(
                Status::Shape,
                format!(
                    "fst_slice: {} starts, {} stops and {} steps; give one of each per axis",
                    starts.len(),
                    stops.len(),
                    steps.len()
                ),
            ));
        }
        let steps_ptr = if steps.is_empty() {
            std::ptr::null()
        } else {
            steps.as_ptr()
        };
        // SAFETY: a live graph and starts.len() entries in each array (steps may be NULL).
        self.build(|g| unsafe {
            sys::fst_slice(
                g,
                x.raw(),
                starts.len(),
                starts.as_ptr(),
                stops.as_ptr(),
                steps_ptr,
            )
        })
    }

    /// The values one after another along `axis` (negative counts from the end): one dtype,
    /// dims equal except along `axis`.
    pub fn concat(&self, values: &[Value<'_>], axis: i64) -> Value<'_> {
        let raw: Vec<sys::fst_value> = values.iter().map(|value| value.raw()).collect();
        // SAFETY: a live graph and raw.len() values.
        self.build(|g| unsafe { sys::fst_concat(g, raw.len(), raw.as_ptr(), axis) })
    }

    /// `low[i]` elements of `value` (converted to x's dtype as by a cast) before axis i and
    /// `high[i]` after; pads are at least 0.
    pub fn pad(&self, x: Value<'_>, low: &[i64], high: &[i64], value: f64) -> Value<'_> {
        if low.len() != high.len() {
            return self.fail(Error::new(
                Status::Shape,
                format!(
                    "fst_pad: {} low pads but {} high pads",
                    low.len(),
                    high.len()
                ),
            ));
        }
        // SAFETY: a live graph and low.len() entries in each array.
        self.build(|g| unsafe {
            sys::fst_pad(g, x.raw(), low.len(), low.as_ptr(), high.as_ptr(), value)
        })
    }

    /// Gathers x along `axis` at the i32/i64 `indices`: the result has x's dims before
    /// `axis`, the index dims, then x's dims after `axis`. An index i with -n <= i < n picks
    /// element i (from the end when negative); any other index gives 0 (false for bool).
    pub fn take(&self, x: Value<'_>, indices: Value<'_>, axis: i64) -> Value<'_> {
        // SAFETY: a live graph.
        self.build(|g| unsafe { sys::fst_take(g, x.raw(), indices.raw(), axis) })
    }

    /// Consecutive slices of x along `axis` with the given section sizes (each at least 1,
    /// adding up to the dim). On failure every returned value is invalid and the graph holds
    /// the error, as for any builder.
    pub fn split(&self, x: Value<'_>, axis: i64, sizes: &[i64]) -> Vec<Value<'_>> {
        let mut raw = vec![sys::FST_VALUE_INVALID; sizes.len()];
        if self.rust_error.borrow().is_none() {
            // SAFETY: a live graph, sizes.len() sizes and as many output slots.
            unsafe {
                sys::fst_split(
                    self.as_raw(),
                    x.raw(),
                    axis,
                    sizes.len(),
                    sizes.as_ptr(),
                    raw.as_mut_ptr(),
                );
            }
        }
        raw.into_iter()
            .map(|value| Value::new(self, value))
            .collect()
    }

    /// An operation fstitch does not fuse (a matmul, say), with its declared output dtype
    /// and dims; the planner partitions the graph around it. Graphs with one cannot be
    /// evaluated or run by fstitch ([`Status::Unsupported`]).
    pub fn opaque(
        &self,
        name: &str,
        inputs: &[Value<'_>],
        dtype: DType,
        dims: &[i64],
    ) -> Value<'_> {
        let name = match c_string(name, "fst_opaque: name") {
            Ok(name) => name,
            Err(error) => return self.fail(error),
        };
        let inputs: Vec<sys::fst_value> = inputs.iter().map(|value| value.raw()).collect();
        // SAFETY: a live graph, a NUL-terminated name, inputs.len() values, dims.len() dims.
        self.build(|g| unsafe {
            sys::fst_opaque(
                g,
                name.as_ptr(),
                inputs.len(),
                inputs.as_ptr(),
                dtype.to_raw(),
                dims.len(),
                dims.as_ptr(),
            )
        })
    }

    /// Names `value` as an output. Returns the graph's first error if any builder failed
    /// before, or this call's own error (a duplicate name, a foreign value...).
    pub fn output(&self, name: &str, value: Value<'_>) -> Result<()> {
        self.check_rust_error()?;
        let c_name = match c_string(name, "fst_output: name") {
            Ok(c_name) => c_name,
            Err(error) => {
                self.fail(error);
                return self.status();
            }
        };
        // SAFETY: a live graph and a NUL-terminated name.
        let status = unsafe { sys::fst_output(self.as_raw(), c_name.as_ptr(), value.raw()) };
        if status == sys::FST_OK {
            Ok(())
        } else {
            self.status()
        }
    }

    // -----------------------------------------------------------------------------------
    // Queries

    /// Checks the graph's invariants: no builder error, at least one output, inferred
    /// dtypes and shapes, unique names.
    pub fn verify(&self) -> Result<()> {
        self.status()?;
        // SAFETY: a live graph.
        check(unsafe { sys::fst_graph_verify(self.as_raw()) })
    }

    /// The number of values (operations) in the graph.
    pub fn value_count(&self) -> Result<usize> {
        let mut count = 0;
        // SAFETY: a live graph and a valid out pointer.
        check(unsafe { sys::fst_graph_value_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// The inputs in declaration order, with their names, dtypes and dims.
    pub fn inputs(&self) -> Result<Vec<TensorSpec>> {
        let mut count = 0;
        // SAFETY: a live graph and a valid out pointer.
        check(unsafe { sys::fst_graph_input_count(self.as_raw(), &mut count) })?;
        (0..count)
            .map(|index| {
                let (value, name) = self.port(index, sys::fst_graph_input, "fst_graph_input")?;
                value.spec(name)
            })
            .collect()
    }

    /// The outputs in declaration order, with their names, dtypes and dims.
    pub fn outputs(&self) -> Result<Vec<TensorSpec>> {
        let mut count = 0;
        // SAFETY: a live graph and a valid out pointer.
        check(unsafe { sys::fst_graph_output_count(self.as_raw(), &mut count) })?;
        (0..count)
            .map(|index| {
                let (value, name) = self.port(index, sys::fst_graph_output, "fst_graph_output")?;
                value.spec(name)
            })
            .collect()
    }

    /// The value of the `index`-th input.
    pub fn input_value(&self, index: usize) -> Result<Value<'_>> {
        Ok(self.port(index, sys::fst_graph_input, "fst_graph_input")?.0)
    }

    /// The value of the `index`-th output.
    pub fn output_value(&self, index: usize) -> Result<Value<'_>> {
        Ok(self
            .port(index, sys::fst_graph_output, "fst_graph_output")?
            .0)
    }

    fn port(
        &self,
        index: usize,
        query: unsafe extern "C" fn(
            *const sys::fst_graph,
            usize,
            *mut sys::fst_value,
            *mut *const c_char,
        ) -> sys::fst_status,
        function: &str,
    ) -> Result<(Value<'_>, String)> {
        let mut value = sys::FST_VALUE_INVALID;
        let mut name: *const c_char = ptr::null();
        // SAFETY: a live graph and valid out pointers; the name is owned by the graph and
        // copied at once.
        unsafe {
            check(query(self.as_raw(), index, &mut value, &mut name))?;
            Ok((Value::new(self, value), copy_c_str(name, function)?))
        }
    }

    // -----------------------------------------------------------------------------------
    // Text, reference evaluation, fusion

    /// The graph as text; [`Graph::parse`] reads it back and prints it identically.
    pub fn to_text(&self) -> Result<String> {
        self.status()?;
        let mut text = ptr::null_mut();
        // SAFETY: a live graph and a valid out pointer; the string is ours to free.
        unsafe {
            check(sys::fst_graph_print(self.as_raw(), &mut text))?;
            take_c_string(text, "fst_graph_print")
        }
    }

    /// Runs the graph on the host with the reference evaluator (float64 arithmetic,
    /// rounded to each value's dtype): one buffer per input and per output, in declaration
    /// order. The buffers' number, dtypes and lengths are checked first.
    pub fn evaluate_reference(
        &self,
        inputs: &[HostSlice<'_>],
        outputs: &mut [HostSliceMut<'_>],
    ) -> Result<()> {
        self.status()?;
        let function = "Graph::evaluate_reference";
        let (input_pointers, output_pointers) =
            checked_host_pointers(function, &self.inputs()?, &self.outputs()?, inputs, outputs)?;
        // SAFETY: a live graph; each pointer is a live buffer whose dtype and element count
        // match its input or output.
        let status = unsafe {
            sys::fst_graph_evaluate_reference(
                self.as_raw(),
                input_pointers.as_ptr(),
                input_pointers.len(),
                output_pointers.as_ptr(),
                output_pointers.len(),
            )
        };
        let result = check(status);
        outputs
            .iter_mut()
            .for_each(HostSliceMut::normalize_after_write);
        result
    }

    /// Plans the graph into fused kernels and generates their CUDA C. The fusion keeps the
    /// context alive and does not refer to the graph afterwards.
    pub fn fuse(&self, options: &FuseOptions) -> Result<Fusion> {
        self.status()?;
        let fusion = options.fuse(self.as_raw(), &self.context)?;
        let inputs = self.inputs()?;
        let outputs = self.outputs()?;
        Ok(fusion.with_specs(inputs, outputs))
    }

    /// The dtype of a raw value of this graph.
    pub(crate) fn value_dtype(&self, value: sys::fst_value) -> Result<DType> {
        let mut dtype = sys::FST_F32;
        // SAFETY: a live graph and a valid out pointer.
        check(unsafe { sys::fst_value_dtype(self.as_raw(), value, &mut dtype) })?;
        from_c(dtype, DType::from_raw, "fst_value_dtype")
    }

    /// The dims of a raw value of this graph.
    pub(crate) fn value_dims(&self, value: sys::fst_value) -> Result<Vec<i64>> {
        let mut rank = 0;
        // SAFETY: a live graph and a valid out pointer.
        check(unsafe { sys::fst_value_rank(self.as_raw(), value, &mut rank) })?;
        let mut dims = vec![0i64; rank];
        // SAFETY: dims holds rank elements.
        check(unsafe { sys::fst_value_dims(self.as_raw(), value, rank, dims.as_mut_ptr()) })?;
        Ok(dims)
    }
}
