//! The aliasing contract through the Rust bindings. Safe `Fusion::run` borrows inputs
//! shared and outputs exclusively, so the borrow checker already keeps an output off every
//! other buffer; raw runs may pass one buffer as an input and an output, which the library
//! honours for an in-place elementwise update and refuses, with `Status::InvalidArgument`
//! naming both buffers, for every other overlap.

mod common;

use std::ffi::c_void;

use common::{host_context, uniform};
use fstitch::{DType, FuseOptions, FusionPolicy, Graph, Status};

const N: usize = 1003; // not a multiple of the vector width: the scalar tail runs too

fn refused(result: fstitch::Result<()>, parts: &[&str]) {
    let error = result.expect_err("the overlap must be refused");
    assert_eq!(
        error.status(),
        Status::InvalidArgument,
        "{}",
        error.message()
    );
    for part in parts {
        assert!(error.message().contains(part), "{}", error.message());
    }
}

#[test]
fn an_elementwise_update_may_write_back_into_its_input() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[N as i64]);
    let a = graph.input("a", DType::F32, &[N as i64]);
    graph.output("y", x * a + 1.0).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let mut data = uniform(N, -2.0, 2.0, 7);
    let scale = uniform(N, -1.0, 1.0, 8);
    let mut expected = vec![0f32; N];
    graph
        .evaluate_reference(
            &[(&data).into(), (&scale).into()],
            &mut [(&mut expected).into()],
        )
        .unwrap();
    let pointer = data.as_mut_ptr().cast::<c_void>();
    // SAFETY: host buffers of N f32 on a host-backend context; y takes x's buffer.
    unsafe {
        fusion
            .run_raw(
                &[pointer as *const c_void, scale.as_ptr().cast()],
                &[pointer],
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
            .unwrap();
    }
    assert_eq!(data, expected);
}

#[test]
fn an_in_place_transpose_is_refused() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[8, 4]);
    graph.output("y", graph.permute(x, &[1, 0])).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let mut data = uniform(32, -1.0, 1.0, 3);
    let before = data.clone();
    let base = data.as_mut_ptr().cast::<c_void>();
    // SAFETY: a host buffer of 32 f32 on a host-backend context.
    let result = unsafe {
        fusion.run_raw(
            &[base as *const c_void],
            &[base],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    refused(
        result,
        &[r#"outputs[0] ("y") overlaps inputs[0] ("x")"#, "permute"],
    );
    let kernels = fusion.kernels().unwrap();
    // SAFETY: the kernel's two parameters (x, then y) in one host buffer of 32 f32.
    let result = unsafe { kernels[0].launch(&[base, base], std::ptr::null_mut()) };
    refused(
        result,
        &[r#"args[1] (output 0 "y") overlaps args[0] (input 0 "x")"#],
    );
    assert_eq!(data, before);
}

#[test]
fn outputs_in_one_buffer_and_partial_overlaps_are_refused() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[32]);
    graph.output("y", x + 1.0).unwrap();
    graph.output("z", x * 2.0).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let mut data = uniform(64, -1.0, 1.0, 3);
    let before = data.clone();
    let mut other = vec![0f32; 32];
    let base = data.as_mut_ptr();
    let input = [base as *const c_void];
    let run = |outputs: &[*mut c_void]| {
        // SAFETY: host buffers of at least 32 f32 each on a host-backend context.
        unsafe { fusion.run_raw(&input, outputs, std::ptr::null_mut(), std::ptr::null_mut()) }
    };
    let other_pointer = other.as_mut_ptr().cast::<c_void>();
    refused(
        run(&[other_pointer, other_pointer]),
        &["outputs must not share memory"],
    );
    // SAFETY: 8 floats into a buffer of 64.
    let shifted = unsafe { base.add(8) }.cast::<c_void>();
    refused(
        run(&[other_pointer, shifted]),
        &[r#"outputs[1] ("z") overlaps inputs[0] ("x") in part"#],
    );
    assert_eq!(data, before);
}

#[test]
fn an_input_read_by_a_later_kernel_cannot_be_overwritten() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[64]);
    graph.output("first", x + 1.0).unwrap();
    graph.output("second", x * 3.0).unwrap();
    let fusion = graph
        .fuse(&FuseOptions::new().policy(FusionPolicy::None))
        .unwrap();
    let mut data = uniform(64, -1.0, 1.0, 5);
    let mut first = vec![0f32; 64];
    let base = data.as_mut_ptr().cast::<c_void>();
    let first_pointer = first.as_mut_ptr().cast::<c_void>();
    // SAFETY: host buffers of 64 f32 on a host-backend context.
    let result = unsafe {
        fusion.run_raw(
            &[base as *const c_void],
            &[base, first_pointer],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    refused(
        result,
        &[
            r#"reads input "x" after kernel"#,
            r#"has written output "first""#,
        ],
    );
}
