//! Error paths: builder errors surface with the C status and message, buffers are checked
//! before any C call, bad options are refused, statuses match the library's names.

mod common;

use std::ffi::CStr;

use common::host_context;
use fstitch::{Backend, Context, DType, Error, FuseOptions, Graph, LogLevel, Status};

/// The calling thread's last error message in the library.
fn last_c_message() -> String {
    unsafe { CStr::from_ptr(fstitch::sys::fst_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_shape_mismatch_is_reported_at_output_with_the_c_message() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let a = graph.input("a", DType::F32, &[2, 3]);
    let b = graph.input("b", DType::F32, &[4]);
    let sum = a + b;
    assert!(!sum.is_valid());
    let c_message = last_c_message();
    assert!(c_message.contains("fst_binary"), "{c_message}");
    // Later builders do nothing; the first error is kept.
    let later = (sum * 2.0).exp();
    assert!(!later.is_valid());
    let error = graph.output("y", later).unwrap_err();
    assert_eq!(error.status(), Status::Shape);
    assert_eq!(error.message(), c_message);
    assert_eq!(graph.status().unwrap_err(), error);
    assert_eq!(graph.verify().unwrap_err(), error);
    assert_eq!(graph.to_text().unwrap_err(), error);
    assert_eq!(graph.fuse(&FuseOptions::new()).unwrap_err(), error);
    assert_eq!(
        sum.dims().unwrap_err(),
        error,
        "queries of an invalid value"
    );
    let xs = [0.0f32; 6];
    let bs = [0.0f32; 4];
    let mut ys = [0.0f32; 6];
    assert_eq!(
        graph
            .evaluate_reference(&[(&xs).into(), (&bs).into()], &mut [(&mut ys).into()])
            .unwrap_err(),
        error
    );
    assert_eq!(error.to_string(), format!("FST_ERROR_SHAPE: {c_message}"));
}

#[test]
fn dtype_and_foreign_value_errors() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let a = graph.input("a", DType::F32, &[3]);
    let b = graph.input("b", DType::I32, &[3]);
    let error = graph.output("y", a + b).unwrap_err();
    assert_eq!(error.status(), Status::Dtype);
    assert!(error.message().contains("fst_binary"), "{error}");

    let other = Graph::new(&context).unwrap();
    let x = other.input("x", DType::F32, &[3]);
    let y = graph.unary(fstitch::UnaryOp::Exp, x);
    assert!(!y.is_valid());
    // `graph` was already in error; a fresh one shows the foreign-value error itself.
    let fresh = Graph::new(&context).unwrap();
    let error = fresh
        .output("y", fresh.unary(fstitch::UnaryOp::Exp, x))
        .unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    let mean_of_int = fresh.input("i", DType::I32, &[3]).mean(&[0], false);
    assert!(!mean_of_int.is_valid());
}

#[test]
fn a_nul_byte_in_a_name_is_the_first_error_of_the_graph() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let bad = graph.input("x\0y", DType::F32, &[3]);
    assert!(!bad.is_valid());
    let after = graph.input("z", DType::F32, &[3]);
    assert!(
        !after.is_valid(),
        "builders after the first error do nothing"
    );
    let error = graph.output("y", after).unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert!(error.message().contains("NUL"), "{error}");
    assert_eq!(graph.fuse(&FuseOptions::new()).unwrap_err(), error);

    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[3]);
    let error = graph.output("bad\0name", x).unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert_eq!(graph.status().unwrap_err(), error);
}

#[test]
fn shape_errors_from_layout_builders() {
    let context = host_context();
    let builders: [fn(&Graph) -> fstitch::Value<'_>; 5] = [
        |g: &Graph| {
            let x = g.input("x", DType::F32, &[2, 3]);
            x.reshape(&[4, 2])
        },
        |g: &Graph| {
            let x = g.input("x", DType::F32, &[2, 3]);
            x.permute(&[0, 0])
        },
        |g: &Graph| {
            let x = g.input("x", DType::F32, &[2, 3]);
            x.sum(&[2], false)
        },
        |g: &Graph| g.input("x", DType::F32, &[2, -1]),
        |g: &Graph| g.input("x", DType::F32, &[1; 9]),
    ];
    for build in builders {
        let graph = Graph::new(&context).unwrap();
        let value = build(&graph);
        let error = graph.output("y", value).unwrap_err();
        assert_eq!(error.status(), Status::Shape, "{error}");
        assert!(!error.message().is_empty());
    }
}

fn layer_sum_fusion(context: &Context) -> fstitch::Fusion {
    let graph = Graph::new(context).unwrap();
    let x = graph.input("x", DType::F32, &[2, 4]);
    let w = graph.input("w", DType::I32, &[4]);
    graph.output("y", x.sum(&[-1], false)).unwrap();
    graph.output("w2", w * w).unwrap();
    graph.fuse(&FuseOptions::new()).unwrap()
}

#[test]
fn run_checks_buffers_before_any_c_call() {
    let context = host_context();
    let fusion = layer_sum_fusion(&context);
    assert_eq!(fusion.inputs()[0].name, "x");
    assert_eq!(fusion.inputs()[1].dims, vec![4]);
    assert_eq!(fusion.outputs()[0].element_count(), 2);

    // A known failure of the library sets the thread's last error; a check made on the
    // Rust side leaves it as it is, which shows that no failing C call happened.
    assert!(Graph::parse(&context, "not a graph").is_err());
    let sentinel = last_c_message();
    assert!(!sentinel.is_empty());

    let x = [1.0f32; 8];
    let w = [3i32; 4];
    let (mut y, mut w2) = ([0.0f32; 2], [0i32; 4]);
    let x_short = [1.0f32; 7];
    let x_f64 = [1.0f64; 8];
    let mut y_long = [0.0f32; 3];

    let error = fusion
        .run(&[(&x).into()], &mut [(&mut y).into(), (&mut w2).into()])
        .unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert!(error.message().contains("1 input buffers"), "{error}");

    let error = fusion
        .run(&[(&x).into(), (&w).into()], &mut [(&mut y).into()])
        .unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);

    let error = fusion
        .run(
            &[(&x_short).into(), (&w).into()],
            &mut [(&mut y).into(), (&mut w2).into()],
        )
        .unwrap_err();
    assert_eq!(error.status(), Status::Shape);
    assert!(error.message().contains("\"x\""), "{error}");

    let error = fusion
        .run(
            &[(&x_f64).into(), (&w).into()],
            &mut [(&mut y).into(), (&mut w2).into()],
        )
        .unwrap_err();
    assert_eq!(error.status(), Status::Dtype);
    assert!(
        error.message().contains("f32") && error.message().contains("f64"),
        "{error}"
    );

    let error = fusion
        .run(
            &[(&x).into(), (&w).into()],
            &mut [(&mut y_long).into(), (&mut w2).into()],
        )
        .unwrap_err();
    assert_eq!(error.status(), Status::Shape);

    assert_eq!(last_c_message(), sentinel, "no C call failed");
    assert_eq!(y, [0.0; 2], "nothing was written");

    fusion
        .run(
            &[(&x).into(), (&w).into()],
            &mut [(&mut y).into(), (&mut w2).into()],
        )
        .unwrap();
    assert_eq!(y, [4.0, 4.0]);
    assert_eq!(w2, [9; 4]);
}

#[test]
fn run_raw_with_wrong_counts_is_refused_by_the_library() {
    let context = host_context();
    let fusion = layer_sum_fusion(&context);
    let x = [1.0f32; 8];
    let error = unsafe {
        fusion.run_raw(
            &[x.as_ptr().cast()],
            &[],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
    .unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert_eq!(error.message(), last_c_message());
}

#[test]
fn evaluate_reference_checks_buffers() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[3]);
    graph.output("y", x.exp()).unwrap();
    let xs = [0.0f32; 3];
    let mut wrong = [0i64; 3];
    let error = graph
        .evaluate_reference(&[(&xs).into()], &mut [(&mut wrong).into()])
        .unwrap_err();
    assert_eq!(error.status(), Status::Dtype);
    let mut short = [0.0f32; 2];
    let error = graph
        .evaluate_reference(&[(&xs).into()], &mut [(&mut short).into()])
        .unwrap_err();
    assert_eq!(error.status(), Status::Shape);
}

#[test]
fn opaque_operations_cannot_be_evaluated_or_run() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let a = graph.input("a", DType::F32, &[4, 8]);
    let b = graph.input("b", DType::F32, &[8, 2]);
    let product = graph.opaque("matmul", &[a, b], DType::F32, &[4, 2]);
    graph.output("y", product.relu()).unwrap();
    let (av, bv, mut y) = ([0.0f32; 32], [0.0f32; 16], [0.0f32; 8]);
    let error = graph
        .evaluate_reference(&[(&av).into(), (&bv).into()], &mut [(&mut y).into()])
        .unwrap_err();
    assert_eq!(error.status(), Status::Unsupported);
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let error = fusion
        .run(&[(&av).into(), (&bv).into()], &mut [(&mut y).into()])
        .unwrap_err();
    assert_eq!(error.status(), Status::Unsupported);
}

#[test]
fn bad_context_options_are_refused() {
    let error = Context::builder().device(-1).build().unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert!(error.message().contains("device"), "{error}");
    let error = Context::builder().cache_dir("").build().unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    let error = Context::builder().cache_dir("a\0b").build().unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);

    // Without a usable GPU, asking for CUDA fails with the reason; with one it works.
    match Context::builder()
        .backend(Backend::Cuda)
        .log_level(LogLevel::Off)
        .build()
    {
        Ok(context) => {
            assert_eq!(context.active_backend(), Backend::Cuda);
            assert!(context.device_arch().unwrap() >= 80);
        }
        Err(error) => {
            assert!(
                matches!(error.status(), Status::NoDriver | Status::NoDevice),
                "{error}"
            );
            assert!(!error.message().is_empty());
        }
    }
}

#[test]
fn bad_fuse_options_are_refused() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[4]);
    graph.output("y", x.exp()).unwrap();
    let cases = [
        (FuseOptions::new().target_arch(75), Status::Unsupported),
        (FuseOptions::new().target_arch(-1), Status::Unsupported),
        (FuseOptions::new().register_cap(8), Status::InvalidArgument),
        (
            FuseOptions::new().register_cap(256),
            Status::InvalidArgument,
        ),
        (
            FuseOptions::new().shared_memory_budget(0),
            Status::InvalidArgument,
        ),
        (
            FuseOptions::new().shared_memory_budget(1 << 30),
            Status::InvalidArgument,
        ),
        (FuseOptions::new().device_model("h300"), Status::Unsupported),
    ];
    for (options, status) in cases {
        let error = graph.fuse(&options).unwrap_err();
        assert_eq!(error.status(), status, "{options:?}: {error}");
        assert_eq!(error.message(), last_c_message());
    }
    graph
        .fuse(
            &FuseOptions::new()
                .target_arch(80)
                .register_cap(128)
                .shared_memory_budget(96 * 1024),
        )
        .unwrap();
    let h200 = graph
        .fuse(&FuseOptions::new().device_model("h200"))
        .unwrap();
    assert!(h200.dump().unwrap().contains("target sm_90 (H200 SXM)"));
}

#[test]
fn a_fusion_with_host_buffers_needs_the_host_backend() {
    // Only checkable where a GPU makes the active backend CUDA.
    let Ok(context) = Context::builder()
        .backend(Backend::Cuda)
        .log_level(LogLevel::Off)
        .build()
    else {
        return;
    };
    let fusion = layer_sum_fusion(&context);
    let (x, w, mut y, mut w2) = ([1.0f32; 8], [3i32; 4], [0.0f32; 2], [0i32; 4]);
    let error = fusion
        .run(
            &[(&x).into(), (&w).into()],
            &mut [(&mut y).into(), (&mut w2).into()],
        )
        .unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert!(error.message().contains("run_raw"), "{error}");
}

#[test]
fn statuses_have_the_library_names_and_values() {
    let statuses = [
        Status::Ok,
        Status::InvalidArgument,
        Status::Shape,
        Status::Dtype,
        Status::Unsupported,
        Status::OutOfMemory,
        Status::NoDevice,
        Status::NoDriver,
        Status::NoCompiler,
        Status::Compile,
        Status::Launch,
        Status::Parse,
        Status::Internal,
        Status::Unknown(77),
    ];
    for status in statuses {
        let raw = status.to_raw();
        assert_eq!(Status::from_raw(raw), status);
        let c_name = unsafe { CStr::from_ptr(fstitch::sys::fst_status_string(raw)) };
        assert_eq!(status.name(), c_name.to_str().unwrap());
    }
    assert_eq!(Status::Shape.to_raw(), 2);
    assert_eq!(Status::Unknown(77).to_string(), "FST_STATUS_UNKNOWN (77)");
    let error = Error::new(Status::Parse, "line 1:2: oops");
    assert_eq!(error.to_string(), "FST_ERROR_PARSE: line 1:2: oops");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
    assert!(boxed.to_string().contains("oops"));
}

#[test]
fn dtypes_match_the_library() {
    for &dtype in DType::ALL {
        let raw = dtype.to_raw();
        assert_eq!(DType::from_raw(raw), Some(dtype));
        assert_eq!(dtype.size(), unsafe { fstitch::sys::fst_dtype_size(raw) });
        let name = unsafe { CStr::from_ptr(fstitch::sys::fst_dtype_name(raw)) };
        assert_eq!(dtype.name(), name.to_str().unwrap());
    }
    assert_eq!(DType::from_raw(0), None);
    assert_eq!(DType::from_raw(10), None);
}
