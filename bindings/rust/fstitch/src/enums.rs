//! Rust views of the C enums. Values going to C are converted with `to_raw`; values coming
//! from C go through `from_raw`, which refuses values this binding does not know.

use fstitch_sys as sys;

use crate::error::{Error, Result, Status};

/// Declares a Rust enum mirroring a C enum, with `ALL`, `to_raw` and `from_raw`.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        $name:ident : $raw:ty {
            $($(#[$variant_meta:meta])* $variant:ident = $value:path,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$variant_meta])* $variant,)*
        }

        impl $name {
            /// Every value, in the header's order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The C value.
            pub fn to_raw(self) -> $raw {
                match self {
                    $($name::$variant => $value,)*
                }
            }

            /// The Rust value of a C value; `None` for a value this binding does not know.
            pub fn from_raw(raw: $raw) -> Option<$name> {
                match raw {
                    $($value => Some($name::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

/// Converts a value returned by `function` into its Rust enum; an unknown value is an
/// [`Status::Internal`] error (a library newer than this binding).
pub(crate) fn from_c<T>(raw: i32, convert: fn(i32) -> Option<T>, function: &str) -> Result<T> {
    convert(raw).ok_or_else(|| {
        Error::new(
            Status::Internal,
            format!("{function} returned {raw}, a value this binding of fstitch does not know"),
        )
    })
}

c_enum! {
    /// Element types. `F16` and `BF16` are stored as 16-bit patterns ([`crate::F16`],
    /// [`crate::Bf16`]) and computed in f32.
    DType: sys::fst_dtype {
        /// IEEE binary32 (`f32`).
        F32 = sys::FST_F32,
        /// IEEE binary16 ([`crate::F16`]).
        F16 = sys::FST_F16,
        /// bfloat16 ([`crate::Bf16`]).
        BF16 = sys::FST_BF16,
        /// IEEE binary64 (`f64`).
        F64 = sys::FST_F64,
        /// `i8`.
        I8 = sys::FST_I8,
        /// `i32`.
        I32 = sys::FST_I32,
        /// `i64`.
        I64 = sys::FST_I64,
        /// `u8`.
        U8 = sys::FST_U8,
        /// One byte, 0 or 1 (`bool`).
        Bool = sys::FST_BOOL,
    }
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::F64 | DType::I64 => 8,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// The name used by the text format: `"f32"`, `"bf16"`, ...
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F64 => "f64",
            DType::I8 => "i8",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::Bool => "bool",
        }
    }

    /// Whether the type is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16 | DType::F64)
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

c_enum! {
    /// Where fused kernels run.
    Backend: sys::fst_backend {
        /// CUDA when a driver and a device exist, else host; resolved when a context is made.
        Auto = sys::FST_BACKEND_AUTO,
        /// The CUDA driver API on a GPU.
        Cuda = sys::FST_BACKEND_CUDA,
        /// The generated CUDA C compiled for and run on the CPU.
        Host = sys::FST_BACKEND_HOST,
    }
}

c_enum! {
    /// Severity of a log message; a context logs messages at or below its level.
    LogLevel: sys::fst_log_level {
        /// Nothing.
        Off = sys::FST_LOG_OFF,
        /// Failures.
        Error = sys::FST_LOG_ERROR,
        /// Surprises that do not fail the call.
        Warn = sys::FST_LOG_WARN,
        /// One line per major step (context, fusion, compile).
        Info = sys::FST_LOG_INFO,
        /// Details of planning and compilation.
        Debug = sys::FST_LOG_DEBUG,
        /// Everything.
        Trace = sys::FST_LOG_TRACE,
    }
}

c_enum! {
    /// Unary elementwise operations; see `fst_unary_op` in fstitch.h for the dtypes each accepts.
    UnaryOp: sys::fst_unary_op {
        /// -x.
        Neg = sys::FST_UNARY_NEG,
        /// |x|.
        Abs = sys::FST_UNARY_ABS,
        /// e^x.
        Exp = sys::FST_UNARY_EXP,
        /// Natural logarithm.
        Log = sys::FST_UNARY_LOG,
        /// Square root.
        Sqrt = sys::FST_UNARY_SQRT,
        /// 1 / sqrt(x).
        Rsqrt = sys::FST_UNARY_RSQRT,
        /// 1 / x.
        Reciprocal = sys::FST_UNARY_RECIPROCAL,
        /// Hyperbolic tangent.
        Tanh = sys::FST_UNARY_TANH,
        /// 1 / (1 + e^-x).
        Sigmoid = sys::FST_UNARY_SIGMOID,
        /// max(x, 0).
        Relu = sys::FST_UNARY_RELU,
        /// x * 0.5 * (1 + erf(x / sqrt 2)).
        Gelu = sys::FST_UNARY_GELU,
        /// The tanh approximation of gelu.
        GeluTanh = sys::FST_UNARY_GELU_TANH,
        /// x * sigmoid(x).
        Silu = sys::FST_UNARY_SILU,
        /// Error function.
        Erf = sys::FST_UNARY_ERF,
        /// Sine.
        Sin = sys::FST_UNARY_SIN,
        /// Cosine.
        Cos = sys::FST_UNARY_COS,
        /// Round toward -inf.
        Floor = sys::FST_UNARY_FLOOR,
        /// Round toward +inf.
        Ceil = sys::FST_UNARY_CEIL,
        /// Round half to even.
        Round = sys::FST_UNARY_ROUND,
        /// -1, 0 or 1.
        Sign = sys::FST_UNARY_SIGN,
        /// x == 0, as bool.
        LogicalNot = sys::FST_UNARY_LOGICAL_NOT,
    }
}

c_enum! {
    /// Binary elementwise operations; operands must have the same dtype.
    BinaryOp: sys::fst_binary_op {
        /// a + b.
        Add = sys::FST_BINARY_ADD,
        /// a - b.
        Sub = sys::FST_BINARY_SUB,
        /// a * b.
        Mul = sys::FST_BINARY_MUL,
        /// a / b (integers truncate toward zero; x / 0 is 0).
        Div = sys::FST_BINARY_DIV,
        /// a ^ b.
        Pow = sys::FST_BINARY_POW,
        /// Larger of a and b.
        Max = sys::FST_BINARY_MAX,
        /// Smaller of a and b.
        Min = sys::FST_BINARY_MIN,
        /// a == b, as bool.
        Eq = sys::FST_BINARY_EQ,
        /// a != b, as bool.
        Ne = sys::FST_BINARY_NE,
        /// a < b, as bool.
        Lt = sys::FST_BINARY_LT,
        /// a <= b, as bool.
        Le = sys::FST_BINARY_LE,
        /// a > b, as bool.
        Gt = sys::FST_BINARY_GT,
        /// a >= b, as bool.
        Ge = sys::FST_BINARY_GE,
        /// a != 0 && b != 0, as bool.
        LogicalAnd = sys::FST_BINARY_LOGICAL_AND,
        /// a != 0 || b != 0, as bool.
        LogicalOr = sys::FST_BINARY_LOGICAL_OR,
    }
}

c_enum! {
    /// Reductions over a set of axes.
    ReduceOp: sys::fst_reduce_op {
        /// Sum.
        Sum = sys::FST_REDUCE_SUM,
        /// Arithmetic mean.
        Mean = sys::FST_REDUCE_MEAN,
        /// Maximum.
        Max = sys::FST_REDUCE_MAX,
        /// Minimum.
        Min = sys::FST_REDUCE_MIN,
        /// Product.
        Prod = sys::FST_REDUCE_PROD,
    }
}

c_enum! {
    /// How aggressively to fuse.
    FusionPolicy: sys::fst_fusion_policy {
        /// FusionStitching: reductions and their consumers share kernels (the default).
        Stitch = sys::FST_POLICY_STITCH,
        /// XLA-style loop/input fusion: each reduction ends a kernel.
        Loop = sys::FST_POLICY_LOOP,
        /// One kernel per operation.
        None = sys::FST_POLICY_NONE,
    }
}

c_enum! {
    /// What a kernel parameter points to.
    ParamKind: sys::fst_param_kind {
        /// A graph input; the index is its input index.
        Input = sys::FST_PARAM_INPUT,
        /// A graph output; the index is its output index.
        Output = sys::FST_PARAM_OUTPUT,
        /// An intermediate in the workspace; the index is its byte offset.
        Workspace = sys::FST_PARAM_WORKSPACE,
        /// A tensor constant the fusion owns; the index is its index in
        /// [`Fusion::constants`](crate::Fusion::constants).
        Constant = sys::FST_PARAM_CONSTANT,
    }
}

c_enum! {
    /// How a kernel must be launched.
    LaunchKind: sys::fst_launch_kind {
        /// `cuLaunchKernel`.
        Regular = sys::FST_LAUNCH_REGULAR,
        /// `cuLaunchCooperativeKernel`: every block must be resident at once.
        Cooperative = sys::FST_LAUNCH_COOPERATIVE,
        /// `cuLaunchKernelEx` with clusters of [`Kernel::cluster_blocks`](crate::Kernel::cluster_blocks)
        /// blocks along x: the blocks of a cluster wait for each other.
        Cluster = sys::FST_LAUNCH_CLUSTER,
    }
}
