//! Statuses and errors.

use std::ffi::CStr;
use std::fmt;

use fstitch_sys as sys;

/// The status of a call: every `fst_status` value, plus `Unknown` for a value this binding
/// does not know (a newer library).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Success (`FST_OK`); never the status of an [`Error`].
    Ok,
    /// A NULL handle or pointer, an unknown enum value, a bad name, a wrong buffer count...
    InvalidArgument,
    /// Shapes do not fit: ranks, dims, axes, broadcasting, element counts.
    Shape,
    /// An operand's dtype is not accepted by the operation.
    Dtype,
    /// A valid request that this version does not support.
    Unsupported,
    /// A host or device allocation failed.
    OutOfMemory,
    /// The driver works but there is no usable GPU.
    NoDevice,
    /// The CUDA driver library could not be loaded or initialized.
    NoDriver,
    /// No NVRTC or host compiler could be found.
    NoCompiler,
    /// A generated kernel failed to compile; the message has the log.
    Compile,
    /// A kernel launch or a driver call failed.
    Launch,
    /// Graph text is malformed; the message has line and column.
    Parse,
    /// A bug in fstitch.
    Internal,
    /// A status value this binding does not know.
    Unknown(i32),
}

impl Status {
    /// The Rust view of a C status.
    pub fn from_raw(raw: sys::fst_status) -> Status {
        match raw {
            sys::FST_OK => Status::Ok,
            sys::FST_ERROR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::FST_ERROR_SHAPE => Status::Shape,
            sys::FST_ERROR_DTYPE => Status::Dtype,
            sys::FST_ERROR_UNSUPPORTED => Status::Unsupported,
            sys::FST_ERROR_OUT_OF_MEMORY => Status::OutOfMemory,
            sys::FST_ERROR_NO_DEVICE => Status::NoDevice,
            sys::FST_ERROR_NO_DRIVER => Status::NoDriver,
            sys::FST_ERROR_NO_COMPILER => Status::NoCompiler,
            sys::FST_ERROR_COMPILE => Status::Compile,
            sys::FST_ERROR_LAUNCH => Status::Launch,
            sys::FST_ERROR_PARSE => Status::Parse,
            sys::FST_ERROR_INTERNAL => Status::Internal,
            other => Status::Unknown(other),
        }
    }

    /// The C value.
    pub fn to_raw(self) -> sys::fst_status {
        match self {
            Status::Ok => sys::FST_OK,
            Status::InvalidArgument => sys::FST_ERROR_INVALID_ARGUMENT,
            Status::Shape => sys::FST_ERROR_SHAPE,
            Status::Dtype => sys::FST_ERROR_DTYPE,
            Status::Unsupported => sys::FST_ERROR_UNSUPPORTED,
            Status::OutOfMemory => sys::FST_ERROR_OUT_OF_MEMORY,
            Status::NoDevice => sys::FST_ERROR_NO_DEVICE,
            Status::NoDriver => sys::FST_ERROR_NO_DRIVER,
            Status::NoCompiler => sys::FST_ERROR_NO_COMPILER,
            Status::Compile => sys::FST_ERROR_COMPILE,
            Status::Launch => sys::FST_ERROR_LAUNCH,
            Status::Parse => sys::FST_ERROR_PARSE,
            Status::Internal => sys::FST_ERROR_INTERNAL,
            Status::Unknown(raw) => raw,
        }
    }

    /// The C name of the status, e.g. `"FST_ERROR_SHAPE"`, as `fst_status_string()` has it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "FST_OK",
            Status::InvalidArgument => "FST_ERROR_INVALID_ARGUMENT",
            Status::Shape => "FST_ERROR_SHAPE",
            Status::Dtype => "FST_ERROR_DTYPE",
            Status::Unsupported => "FST_ERROR_UNSUPPORTED",
            Status::OutOfMemory => "FST_ERROR_OUT_OF_MEMORY",
            Status::NoDevice => "FST_ERROR_NO_DEVICE",
            Status::NoDriver => "FST_ERROR_NO_DRIVER",
            Status::NoCompiler => "FST_ERROR_NO_COMPILER",
            Status::Compile => "FST_ERROR_COMPILE",
            Status::Launch => "FST_ERROR_LAUNCH",
            Status::Parse => "FST_ERROR_PARSE",
            Status::Internal => "FST_ERROR_INTERNAL",
            Status::Unknown(_) => "FST_STATUS_UNKNOWN",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Unknown(raw) => write!(f, "{} ({raw})", self.name()),
            _ => f.write_str(self.name()),
        }
    }
}

/// A failed call: its status and a message that names the function, the argument and the
/// value at fault (fstitch's own words for failures inside the library).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// An error with the given status and message.
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }

    /// The status; never [`Status::Ok`].
    pub fn status(&self) -> Status {
        self.status
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The calling thread's last failure as fstitch reports it; to be called right after the
    /// failing call, before any other fstitch call on the thread.
    pub(crate) fn last(status: sys::fst_status) -> Error {
        // SAFETY: fst_last_error_message never returns NULL; the string stays valid until
        // the next failing call on this thread, and it is copied at once.
        let message = unsafe { CStr::from_ptr(sys::fst_last_error_message()) };
        Error::new(
            Status::from_raw(status),
            message.to_string_lossy().into_owned(),
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for Error {}

/// The result of a fallible fstitch call.
pub type Result<T> = std::result::Result<T, Error>;

/// `Ok(())` for `FST_OK`, else the thread's last error.
pub(crate) fn check(status: sys::fst_status) -> Result<()> {
    if status == sys::FST_OK {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}
