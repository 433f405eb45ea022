//! Small conversions between Rust and C strings.

use std::ffi::{c_char, CStr, CString};

use fstitch_sys as sys;

use crate::error::{Error, Result, Status};

/// `text` as a C string; a NUL byte inside is an invalid-argument error naming `what`.
pub(crate) fn c_string(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| {
        Error::new(
            Status::InvalidArgument,
            format!("{what} {text:?} contains a NUL byte, which C strings cannot hold"),
        )
    })
}

/// Copies a library-owned C string; `what` names it in the error for a NULL pointer.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string valid for the call.
pub(crate) unsafe fn copy_c_str(text: *const c_char, what: &str) -> Result<String> {
    borrow_c_str(text, what).map(str::to_owned)
}

/// Borrows a library-owned C string as UTF-8 for the lifetime the caller picks.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string that stays valid and unchanged for `'a`.
pub(crate) unsafe fn borrow_c_str<'a>(text: *const c_char, what: &str) -> Result<&'a str> {
    if text.is_null() {
        return Err(Error::new(
            Status::Internal,
            format!("{what} came back as a NULL string"),
        ));
    }
    CStr::from_ptr(text).to_str().map_err(|_| {
        Error::new(
            Status::Internal,
            format!("{what} came back as text that is not UTF-8"),
        )
    })
}

/// Copies and frees a string allocated by the library (released with `fst_string_free`).
///
/// # Safety
/// `text` is NULL or a string returned by an fstitch call that the caller now owns.
pub(crate) unsafe fn take_c_string(text: *mut c_char, what: &str) -> Result<String> {
    if text.is_null() {
        return Err(Error::new(
            Status::Internal,
            format!("{what} came back as a NULL string"),
        ));
    }
    let copy = CStr::from_ptr(text).to_string_lossy().into_owned();
    sys::fst_string_free(text);
    Ok(copy)
}
