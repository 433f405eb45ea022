//! Values of a graph, their queries, and the operators and methods that build on them.

use std::ops::{Add, Div, Mul, Neg, Sub};

use fstitch_sys as sys;

use crate::buffer::TensorSpec;
use crate::enums::{BinaryOp, DType, ReduceOp, UnaryOp};
use crate::error::{Error, Result, Status};
use crate::graph::Graph;

/// A value of a graph: a `Copy` handle that borrows its graph, so it cannot outlive it.
///
/// Arithmetic operators (`+ - * /`, unary `-`) and the methods below add operations to the
/// value's graph with numpy broadcasting; an `f64` operand becomes a scalar constant of the
/// other operand's dtype. A builder that fails yields an invalid value and puts the graph in
/// its error state (see [`Graph`]); using a value with another graph is detected.
#[derive(Clone, Copy)]
pub struct Value<'g> {
    graph: &'g Graph,
    raw: sys::fst_value,
}

impl std::fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Value({:#x})", self.raw)
    }
}

impl PartialEq for Value<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.graph, other.graph) && self.raw == other.raw
    }
}

impl Eq for Value<'_> {}

impl<'g> Value<'g> {
    pub(crate) fn new(graph: &'g Graph, raw: sys::fst_value) -> Value<'g> {
        Value { graph, raw }
    }

    /// The C value (`fst_value`); `0` (`FST_VALUE_INVALID`) for the result of a failed
    /// builder.
    pub fn raw(&self) -> sys::fst_value {
        self.raw
    }

    /// Whether the value came from a builder that succeeded.
    pub fn is_valid(&self) -> bool {
        self.raw != sys::FST_VALUE_INVALID
    }

    /// The graph the value belongs to.
    pub fn graph(&self) -> &'g Graph {
        self.graph
    }

    /// The graph's first error when this value is invalid because of it.
    fn check_valid(&self) -> Result<()> {
        if self.is_valid() {
            return Ok(());
        }
        self.graph.status()?;
        Err(Error::new(
            Status::InvalidArgument,
            "the value is FST_VALUE_INVALID",
        ))
    }

    /// The element type.
    pub fn dtype(&self) -> Result<DType> {
        self.check_valid()?;
        self.graph.value_dtype(self.raw)
    }

    /// The dims, row-major; empty for a scalar.
    pub fn dims(&self) -> Result<Vec<i64>> {
        self.check_valid()?;
        self.graph.value_dims(self.raw)
    }

    /// The rank.
    pub fn rank(&self) -> Result<usize> {
        Ok(self.dims()?.len())
    }

    /// The number of elements (1 for a scalar).
    pub fn element_count(&self) -> Result<usize> {
        Ok(self.dims()?.iter().map(|&dim| dim as usize).product())
    }

    pub(crate) fn spec(&self, name: String) -> Result<TensorSpec> {
        Ok(TensorSpec {
            name,
            dtype: self.dtype()?,
            dims: self.dims()?,
        })
    }

    /// A scalar constant of this value's dtype; with an invalid value, the invalid value
    /// itself, so that the operation using it does nothing as after any failed builder.
    fn scalar(&self, value: f64) -> Value<'g> {
        match self.graph.value_dtype(self.raw) {
            Ok(dtype) => self.graph.constant_f64(dtype, value),
            Err(_) => Value::new(self.graph, sys::FST_VALUE_INVALID),
        }
    }

    fn binary(self, op: BinaryOp, other: Value<'_>) -> Value<'g> {
        self.graph.binary(op, self, other)
    }

    fn reduce(self, op: ReduceOp, axes: &[i64], keepdims: bool) -> Value<'g> {
        self.graph.reduce(op, self, axes, keepdims)
    }

    /// `self ^ exponent`, elementwise (floating point only).
    pub fn pow(self, exponent: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Pow, exponent)
    }

    /// The larger of `self` and `other`, elementwise.
    pub fn maximum(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Max, other)
    }

    /// The smaller of `self` and `other`, elementwise.
    pub fn minimum(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Min, other)
    }

    /// `self == other` elementwise, as bool.
    pub fn equal(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Eq, other)
    }

    /// `self != other` elementwise, as bool.
    pub fn not_equal(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Ne, other)
    }

    /// `self < other` elementwise, as bool.
    pub fn less(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Lt, other)
    }

    /// `self <= other` elementwise, as bool.
    pub fn less_equal(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Le, other)
    }

    /// `self > other` elementwise, as bool.
    pub fn greater(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Gt, other)
    }

    /// `self >= other` elementwise, as bool.
    pub fn greater_equal(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::Ge, other)
    }

    /// `self != 0 && other != 0` elementwise, as bool.
    pub fn logical_and(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::LogicalAnd, other)
    }

    /// `self != 0 || other != 0` elementwise, as bool.
    pub fn logical_or(self, other: Value<'_>) -> Value<'g> {
        self.binary(BinaryOp::LogicalOr, other)
    }

    /// `self ? a : b` elementwise; `self` is the bool condition.
    pub fn select(self, a: Value<'_>, b: Value<'_>) -> Value<'g> {
        self.graph.select(self, a, b)
    }

    /// The sum over `axes`.
    pub fn sum(self, axes: &[i64], keepdims: bool) -> Value<'g> {
        self.reduce(ReduceOp::Sum, axes, keepdims)
    }

    /// The mean over `axes` (floating point only).
    pub fn mean(self, axes: &[i64], keepdims: bool) -> Value<'g> {
        self.reduce(ReduceOp::Mean, axes, keepdims)
    }

    /// The maximum over `axes`.
    pub fn max(self, axes: &[i64], keepdims: bool) -> Value<'g> {
        self.reduce(ReduceOp::Max, axes, keepdims)
    }

    /// The minimum over `axes`.
    pub fn min(self, axes: &[i64], keepdims: bool) -> Value<'g> {
        self.reduce(ReduceOp::Min, axes, keepdims)
    }

    /// The product over `axes`.
    pub fn prod(self, axes: &[i64], keepdims: bool) -> Value<'g> {
        self.reduce(ReduceOp::Prod, axes, keepdims)
    }

    /// The same elements with new dims; one dim may be -1.
    pub fn reshape(self, dims: &[i64]) -> Value<'g> {
        self.graph.reshape(self, dims)
    }

    /// Permuted axes: result dim i is this value's dim `perm[i]`.
    pub fn permute(self, perm: &[i64]) -> Value<'g> {
        self.graph.permute(self, perm)
    }

    /// Broadcast to `dims` by numpy rules.
    pub fn broadcast_to(self, dims: &[i64]) -> Value<'g> {
        self.graph.broadcast(self, dims)
    }

    /// Converted to `dtype`.
    pub fn cast(self, dtype: DType) -> Value<'g> {
        self.graph.cast(self, dtype)
    }

    /// A strided slice (see [`Graph::slice`]).
    pub fn slice(self, starts: &[i64], stops: &[i64], steps: &[i64]) -> Value<'g> {
        self.graph.slice(self, starts, stops, steps)
    }

    /// Padded with `value` (see [`Graph::pad`]).
    pub fn pad(self, low: &[i64], high: &[i64], value: f64) -> Value<'g> {
        self.graph.pad(self, low, high, value)
    }

    /// Gathered along `axis` at `indices` (see [`Graph::take`]).
    pub fn take(self, indices: Value<'g>, axis: i64) -> Value<'g> {
        self.graph.take(self, indices, axis)
    }

    /// Split along `axis` into sections of `sizes` (see [`Graph::split`]).
    pub fn split(self, axis: i64, sizes: &[i64]) -> Vec<Value<'g>> {
        self.graph.split(self, axis, sizes)
    }
}

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $method:ident => $op:ident,)*) => {
        impl<'g> Value<'g> {
            $(
                $(#[$doc])*
                pub fn $method(self) -> Value<'g> {
                    self.graph.unary(UnaryOp::$op, self)
                }
            )*
        }
    };
}

unary_methods! {
    /// |x|.
    abs => Abs,
    /// e^x.
    exp => Exp,
    /// The natural logarithm.
    log => Log,
    /// The square root.
    sqrt => Sqrt,
    /// 1 / sqrt(x).
    rsqrt => Rsqrt,
    /// 1 / x.
    reciprocal => Reciprocal,
    /// The hyperbolic tangent.
    tanh => Tanh,
    /// 1 / (1 + e^-x).
    sigmoid => Sigmoid,
    /// max(x, 0).
    relu => Relu,
    /// x * 0.5 * (1 + erf(x / sqrt 2)).
    gelu => Gelu,
    /// The tanh approximation of gelu.
    gelu_tanh => GeluTanh,
    /// x * sigmoid(x).
    silu => Silu,
    /// The error function.
    erf => Erf,
    /// The sine.
    sin => Sin,
    /// The cosine.
    cos => Cos,
    /// Rounded toward -inf.
    floor => Floor,
    /// Rounded toward +inf.
    ceil => Ceil,
    /// Rounded half to even.
    round => Round,
    /// -1, 0 or 1.
    sign => Sign,
    /// x == 0, as bool.
    logical_not => LogicalNot,
}

impl<'g> Neg for Value<'g> {
    type Output = Value<'g>;

    fn neg(self) -> Value<'g> {
        self.graph.unary(UnaryOp::Neg, self)
    }
}

macro_rules! arithmetic {
    ($($trait:ident $method:ident => $op:ident,)*) => {
        $(
            impl<'g> $trait<Value<'g>> for Value<'g> {
                type Output = Value<'g>;

                fn $method(self, other: Value<'g>) -> Value<'g> {
                    self.binary(BinaryOp::$op, other)
                }
            }

            impl<'g> $trait<f64> for Value<'g> {
                type Output = Value<'g>;

                fn $method(self, other: f64) -> Value<'g> {
                    let other = self.scalar(other);
                    self.binary(BinaryOp::$op, other)
                }
            }

            impl<'g> $trait<Value<'g>> for f64 {
                type Output = Value<'g>;

                fn $method(self, other: Value<'g>) -> Value<'g> {
                    other.scalar(self).binary(BinaryOp::$op, other)
                }
            }
        )*
    };
}

arithmetic! {
    Add add => Add,
    Sub sub => Sub,
    Mul mul => Mul,
    Div div => Div,
}
