//! Typed host buffers for the reference evaluator and host-backend runs, and the checks
//! made against the graph's inputs and outputs before any C call.

use std::ffi::c_void;
use std::marker::PhantomData;

use crate::element::Element;
use crate::enums::DType;
use crate::error::{Error, Result, Status};

/// The name, dtype and dims of a graph input or output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    /// The input or output name.
    pub name: String,
    /// The element type.
    pub dtype: DType,
    /// The dims, row-major; empty for a scalar.
    pub dims: Vec<i64>,
}

impl TensorSpec {
    /// The number of elements (1 for a scalar).
    pub fn element_count(&self) -> usize {
        self.dims.iter().map(|&dim| dim.max(0) as usize).product()
    }

    /// The number of bytes of a dense buffer.
    pub fn byte_size(&self) -> usize {
        self.element_count() * self.dtype.size()
    }
}

/// A borrowed, read-only host buffer of one graph input: a typed slice with its dtype
/// erased. Make one with `From`: `(&data[..]).into()`, `(&vec).into()` or `(&array).into()`.
#[derive(Clone, Copy, Debug)]
pub struct HostSlice<'a> {
    pointer: *const c_void,
    len: usize,
    dtype: DType,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> HostSlice<'a> {
    /// Borrows `data`.
    pub fn new<T: Element>(data: &'a [T]) -> HostSlice<'a> {
        HostSlice {
            pointer: data.as_ptr().cast(),
            len: data.len(),
            dtype: T::DTYPE,
            _borrow: PhantomData,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub(crate) fn as_ptr(&self) -> *const c_void {
        self.pointer
    }
}

impl<'a, T: Element> From<&'a [T]> for HostSlice<'a> {
    fn from(data: &'a [T]) -> Self {
        HostSlice::new(data)
    }
}

impl<'a, T: Element> From<&'a Vec<T>> for HostSlice<'a> {
    fn from(data: &'a Vec<T>) -> Self {
        HostSlice::new(data.as_slice())
    }
}

impl<'a, T: Element, const N: usize> From<&'a [T; N]> for HostSlice<'a> {
    fn from(data: &'a [T; N]) -> Self {
        HostSlice::new(data.as_slice())
    }
}

/// A borrowed, writable host buffer of one graph output: a typed mutable slice with its
/// dtype erased. Make one with `From`: `(&mut data[..]).into()` or `(&mut vec).into()`.
#[derive(Debug)]
pub struct HostSliceMut<'a> {
    pointer: *mut c_void,
    len: usize,
    dtype: DType,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> HostSliceMut<'a> {
    /// Borrows `data` exclusively.
    pub fn new<T: Element>(data: &'a mut [T]) -> HostSliceMut<'a> {
        HostSliceMut {
            pointer: data.as_mut_ptr().cast(),
            len: data.len(),
            dtype: T::DTYPE,
            _borrow: PhantomData,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slice has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut c_void {
        self.pointer
    }

    /// Makes every byte of a `bool` buffer 0 or 1 after the library wrote it: fstitch
    /// reads any nonzero byte as true, Rust allows only 0 and 1.
    pub(crate) fn normalize_after_write(&mut self) {
        if self.dtype != DType::Bool {
            return;
        }
        let bytes = self.pointer.cast::<u8>();
        for i in 0..self.len {
            // SAFETY: the buffer is an exclusively borrowed [bool] of len bytes; it is
            // accessed as bytes so that no invalid bool is ever read.
            unsafe {
                let byte = bytes.add(i);
                *byte = u8::from(*byte != 0);
            }
        }
    }
}

impl<'a, T: Element> From<&'a mut [T]> for HostSliceMut<'a> {
    fn from(data: &'a mut [T]) -> Self {
        HostSliceMut::new(data)
    }
}

impl<'a, T: Element> From<&'a mut Vec<T>> for HostSliceMut<'a> {
    fn from(data: &'a mut Vec<T>) -> Self {
        HostSliceMut::new(data.as_mut_slice())
    }
}

impl<'a, T: Element, const N: usize> From<&'a mut [T; N]> for HostSliceMut<'a> {
    fn from(data: &'a mut [T; N]) -> Self {
        HostSliceMut::new(data.as_mut_slice())
    }
}

/// Checks a run's host buffers against the graph's inputs and outputs (as [`check_buffers`])
/// and returns the pointers to pass to the library.
pub(crate) fn checked_host_pointers(
    function: &str,
    input_specs: &[TensorSpec],
    output_specs: &[TensorSpec],
    inputs: &[HostSlice<'_>],
    outputs: &mut [HostSliceMut<'_>],
) -> Result<(Vec<*const c_void>, Vec<*mut c_void>)> {
    check_buffers(
        function,
        "input",
        input_specs,
        inputs.iter().map(|b| (b.dtype(), b.len())),
    )?;
    check_buffers(
        function,
        "output",
        output_specs,
        outputs.iter().map(|b| (b.dtype(), b.len())),
    )?;
    let input_pointers = inputs.iter().map(HostSlice::as_ptr).collect();
    let output_pointers = outputs.iter_mut().map(HostSliceMut::as_mut_ptr).collect();
    Ok((input_pointers, output_pointers))
}

/// Checks buffers against the specs they are meant for: their number
/// ([`Status::InvalidArgument`]), each one's dtype ([`Status::Dtype`]) and element count
/// ([`Status::Shape`]). `function` and `role` ("input", "output") name them in the error.
pub(crate) fn check_buffers(
    function: &str,
    role: &str,
    specs: &[TensorSpec],
    buffers: impl ExactSizeIterator<Item = (DType, usize)>,
) -> Result<()> {
    if buffers.len() != specs.len() {
        return Err(Error::new(
            Status::InvalidArgument,
            format!(
                "{function}: {} {role} buffers given, the graph has {} {role}s",
                buffers.len(),
                specs.len()
            ),
        ));
    }
    for (index, (spec, (dtype, len))) in specs.iter().zip(buffers).enumerate() {
        if dtype != spec.dtype {
            return Err(Error::new(
                Status::Dtype,
                format!(
                    "{function}: {role} {index} ({:?}) is {}, the buffer holds {dtype}",
                    spec.name, spec.dtype
                ),
            ));
        }
        if len != spec.element_count() {
            return Err(Error::new(
                Status::Shape,
                format!(
                    "{function}: {role} {index} ({:?}) has dims {:?}, {} elements; the buffer holds {len}",
                    spec.name,
                    spec.dims,
                    spec.element_count()
                ),
            ));
        }
    }
    Ok(())
}
