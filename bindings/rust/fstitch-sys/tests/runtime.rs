//! Calls into the linked library: the crate's constants agree with the library it runs
//! against, and the symbols resolve.

use fstitch_sys::*;
use std::ffi::CStr;

fn text(pointer: *const std::ffi::c_char) -> String {
    assert!(!pointer.is_null());
    unsafe { CStr::from_ptr(pointer) }
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_library_has_the_version_of_these_declarations() {
    assert_eq!(unsafe { fst_version_number() }, FST_VERSION_NUMBER);
    let expected = format!("{FST_VERSION_MAJOR}.{FST_VERSION_MINOR}.{FST_VERSION_PATCH}");
    assert_eq!(text(unsafe { fst_version_string() }), expected);
}

#[test]
fn status_names_match_the_constants() {
    let cases = [
        (FST_OK, "FST_OK"),
        (FST_ERROR_SHAPE, "FST_ERROR_SHAPE"),
        (FST_ERROR_PARSE, "FST_ERROR_PARSE"),
        (FST_ERROR_INTERNAL, "FST_ERROR_INTERNAL"),
        (99, "FST_STATUS_UNKNOWN"),
    ];
    for (status, name) in cases {
        assert_eq!(text(unsafe { fst_status_string(status) }), name);
    }
}

#[test]
fn dtype_sizes_and_names() {
    let cases = [
        (FST_F32, 4, "f32"),
        (FST_F16, 2, "f16"),
        (FST_BF16, 2, "bf16"),
        (FST_F64, 8, "f64"),
        (FST_I8, 1, "i8"),
        (FST_I32, 4, "i32"),
        (FST_I64, 8, "i64"),
        (FST_U8, 1, "u8"),
        (FST_BOOL, 1, "bool"),
    ];
    for (dtype, size, name) in cases {
        assert_eq!(unsafe { fst_dtype_size(dtype) }, size);
        assert_eq!(text(unsafe { fst_dtype_name(dtype) }), name);
    }
    assert_eq!(unsafe { fst_dtype_size(0) }, 0);
}

#[test]
fn a_failed_call_sets_the_thread_error() {
    let status = unsafe { fst_context_options_create(std::ptr::null_mut()) };
    assert_eq!(status, FST_ERROR_INVALID_ARGUMENT);
    assert_eq!(
        unsafe { fst_last_error_status() },
        FST_ERROR_INVALID_ARGUMENT
    );
    assert!(text(unsafe { fst_last_error_message() }).contains("out_options"));
    assert_eq!(FST_VALUE_INVALID, 0);
}
