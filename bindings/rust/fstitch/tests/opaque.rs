//! Steps and opaque operations: a block with two matmuls left to a closure, its steps
//! checked against every dependency, fused runs on the host backend compared with the
//! reference evaluator through the same closure, and every way a closure can fail.

mod common;

use std::collections::HashSet;

use common::{host_context, max_abs_diff, to_f64, uniform};
use fstitch::{
    DType, Error, FuseOptions, FusionPolicy, Graph, OpaqueCall, ParamKind, Status, Step,
};

const ROWS: usize = 4;
const MODEL: usize = 8;
const HIDDEN: usize = 6;

/// x f32[4,8], w1 f32[8,6], w2 f32[6,8]:
///   h = matmul(x * 0.5, w1); t = tanh(h); o = matmul(t, w2); y = o + x; outputs y and h.
/// Returns the raw values of h and o.
fn build_block(graph: &Graph) -> (u64, u64) {
    let (rows, model, hidden) = (ROWS as i64, MODEL as i64, HIDDEN as i64);
    let x = graph.input("x", DType::F32, &[rows, model]);
    let w1 = graph.input("w1", DType::F32, &[model, hidden]);
    let w2 = graph.input("w2", DType::F32, &[hidden, model]);
    let h = graph.opaque("matmul", &[x * 0.5, w1], DType::F32, &[rows, hidden]);
    let o = graph.opaque("matmul", &[h.tanh(), w2], DType::F32, &[rows, model]);
    graph.output("y", o + x).unwrap();
    graph.output("h", h).unwrap();
    (h.raw(), o.raw())
}

struct Data {
    x: Vec<f32>,
    w1: Vec<f32>,
    w2: Vec<f32>,
}

fn data() -> Data {
    Data {
        x: uniform(ROWS * MODEL, -1.0, 1.0, 1),
        w1: uniform(MODEL * HIDDEN, -1.0, 1.0, 2),
        w2: uniform(HIDDEN * MODEL, -1.0, 1.0, 3),
    }
}

/// y and h in f64.
fn expected(data: &Data) -> (Vec<f64>, Vec<f64>) {
    let matmul = |a: &[f64], b: &[f64], m: usize, k: usize, n: usize| -> Vec<f64> {
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                out[i * n + j] = (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum();
            }
        }
        out
    };
    let x = to_f64(&data.x);
    let half: Vec<f64> = x.iter().map(|v| v * 0.5).collect();
    let h = matmul(&half, &to_f64(&data.w1), ROWS, MODEL, HIDDEN);
    let t: Vec<f64> = h.iter().map(|v| v.tanh()).collect();
    let o = matmul(&t, &to_f64(&data.w2), ROWS, HIDDEN, MODEL);
    let y = o.iter().zip(&x).map(|(a, b)| a + b).collect();
    (y, h)
}

/// Runs "matmul" on f32 operands of rank 2; records the values it ran for.
fn matmul(call: &OpaqueCall<'_>, seen: &mut Vec<u64>) -> fstitch::Result<()> {
    assert_eq!(call.name()?, "matmul");
    assert_eq!(call.operand_count()?, 2);
    assert!(call.is_host());
    assert!(call.stream()?.is_null());
    seen.push(call.value()?);
    let (a_dims, b_dims) = (call.operand(0)?.dims, call.operand(1)?.dims);
    let (m, k, n) = (a_dims[0] as usize, a_dims[1] as usize, b_dims[1] as usize);
    if b_dims[0] as usize != k || call.result()?.dims != [m as i64, n as i64] {
        return Err(Error::new(Status::Shape, "matmul shapes do not agree"));
    }
    let a = call.operand_slice::<f32>(0)?;
    let b = call.operand_slice::<f32>(1)?;
    let out = call.result_slice::<f32>()?;
    for i in 0..m {
        for j in 0..n {
            let sum: f64 = (0..k)
                .map(|kk| a[i * k + kk] as f64 * b[kk * n + j] as f64)
                .sum();
            out[i * n + j] = sum as f32;
        }
    }
    Ok(())
}

const POLICIES: [FusionPolicy; 3] = [FusionPolicy::Stitch, FusionPolicy::Loop, FusionPolicy::None];

#[test]
fn steps_follow_every_dependency() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let (h, o) = build_block(&graph);
    for policy in POLICIES {
        let fusion = graph.fuse(&FuseOptions::new().policy(policy)).unwrap();
        let steps = fusion.steps().unwrap();
        let kernels = fusion.kernel_count().unwrap();
        let ops = fusion.opaque_ops().unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(fusion.opaque_count().unwrap(), 2);
        assert_eq!(steps.len(), kernels + 2);
        assert_eq!(fusion.step_count().unwrap(), steps.len());
        // Every buffer a step reads was written before at the same location; inputs exist
        // from the start. Kernel parameters do not say which they write: one at a location
        // nothing wrote yet must be written by the kernel, so all count as written after.
        let mut written: HashSet<(ParamKind, usize)> =
            (0..3).map(|i| (ParamKind::Input, i)).collect();
        let (mut kernels_seen, mut opaque_seen) = (Vec::new(), Vec::new());
        for step in &steps {
            match step {
                Step::Kernel(kernel) => {
                    kernels_seen.push(kernel.name().unwrap().to_owned());
                    for param in kernel.params().unwrap() {
                        written.insert((param.kind, param.index));
                    }
                }
                Step::Opaque(op) => {
                    opaque_seen.push(op.index);
                    assert_eq!(*op, fusion.opaque_op(op.index).unwrap());
                    assert_eq!(op.name, "matmul");
                    for operand in &op.operands {
                        assert_eq!(operand.dtype, DType::F32);
                        assert!(
                            written.contains(&(operand.kind, operand.index)),
                            "{policy:?}: {op:?} reads {operand:?} before it is written"
                        );
                    }
                    assert!(matches!(
                        op.result.kind,
                        ParamKind::Output | ParamKind::Workspace
                    ));
                    written.insert((op.result.kind, op.result.index));
                }
            }
        }
        opaque_seen.sort_unstable();
        assert_eq!(opaque_seen, [0, 1]);
        let mut unique = kernels_seen.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), kernels, "every kernel runs once");
        assert!(
            written.contains(&(ParamKind::Output, 0)) && written.contains(&(ParamKind::Output, 1))
        );
        let (first, second) = (&ops[0], &ops[1]);
        assert_eq!((first.value, second.value), (h, o));
        assert_eq!(first.operands[1].dims, [MODEL as i64, HIDDEN as i64]);
        assert_eq!(first.result.dims, [ROWS as i64, HIDDEN as i64]);
        assert_eq!(second.result.dims, [ROWS as i64, MODEL as i64]);
        assert_eq!(
            (second.operands[1].kind, second.operands[1].index),
            (ParamKind::Input, 2)
        );
        // h is an output: the first matmul writes there directly.
        assert_eq!(
            (first.result.kind, first.result.index),
            (ParamKind::Output, 1)
        );
    }
}

#[test]
fn fused_runs_match_the_reference_through_the_same_closure() {
    let context = host_context();
    let mut graph = Graph::new(&context).unwrap();
    let (h, o) = build_block(&graph);
    let data = data();
    let inputs = [(&data.x).into(), (&data.w1).into(), (&data.w2).into()];
    let (mut want_y, mut want_h) = (vec![0.0f32; ROWS * MODEL], vec![0.0f32; ROWS * HIDDEN]);
    let mut seen = Vec::new();
    graph
        .evaluate_reference_with_opaque(
            &inputs,
            &mut [(&mut want_y).into(), (&mut want_h).into()],
            |call| matmul(call, &mut seen),
        )
        .unwrap();
    assert_eq!(seen, [h, o]);
    let (exact_y, exact_h) = expected(&data);
    assert!(max_abs_diff(&want_y, &exact_y) < 1e-5);
    assert!(max_abs_diff(&want_h, &exact_h) < 1e-5);
    for policy in POLICIES {
        let fusion = graph.fuse(&FuseOptions::new().policy(policy)).unwrap();
        let (mut y, mut h_out) = (vec![f32::NAN; ROWS * MODEL], vec![f32::NAN; ROWS * HIDDEN]);
        let mut seen = Vec::new();
        fusion
            .run_with_opaque(
                &inputs,
                &mut [(&mut y).into(), (&mut h_out).into()],
                |call| matmul(call, &mut seen),
            )
            .unwrap();
        assert_eq!(seen, [h, o], "{policy:?}");
        assert!(
            max_abs_diff(&y, &to_f64(&want_y)) < 1e-5,
            "{policy:?}: {y:?}"
        );
        assert!(max_abs_diff(&h_out, &to_f64(&want_h)) < 1e-5, "{policy:?}");
    }
}

#[test]
fn a_plan_without_opaque_operations_never_calls_the_closure() {
    let context = host_context();
    let mut graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[2, 3]);
    graph.output("e", x.exp()).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    assert!(fusion.opaque_ops().unwrap().is_empty());
    let steps = fusion.steps().unwrap();
    assert_eq!(steps.len(), fusion.kernel_count().unwrap());
    for (index, step) in steps.iter().enumerate() {
        match step {
            Step::Kernel(kernel) => {
                assert_eq!(kernel.name(), fusion.kernel(index).unwrap().name())
            }
            Step::Opaque(op) => panic!("unexpected opaque step {op:?}"),
        }
    }
    let input = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let (mut fused, mut reference) = ([0.0f32; 6], [0.0f32; 6]);
    let never = |_: &OpaqueCall<'_>| -> fstitch::Result<()> { panic!("no opaque operation") };
    fusion
        .run_with_opaque(&[(&input).into()], &mut [(&mut fused).into()], never)
        .unwrap();
    graph
        .evaluate_reference_with_opaque(&[(&input).into()], &mut [(&mut reference).into()], never)
        .unwrap();
    assert!(max_abs_diff(&fused, &to_f64(&reference)) < 1e-6);
}

/// Runs the block's fusion (or its reference) with `opaque`; returns the error.
fn block_error<F>(reference: bool, opaque: F) -> Error
where
    F: FnMut(&OpaqueCall<'_>) -> fstitch::Result<()>,
{
    let context = host_context();
    let mut graph = Graph::new(&context).unwrap();
    build_block(&graph);
    let data = data();
    let inputs = [(&data.x).into(), (&data.w1).into(), (&data.w2).into()];
    let (mut y, mut h) = (vec![0.0f32; ROWS * MODEL], vec![0.0f32; ROWS * HIDDEN]);
    let mut outputs = [(&mut y).into(), (&mut h).into()];
    let result = if reference {
        graph.evaluate_reference_with_opaque(&inputs, &mut outputs, opaque)
    } else {
        let fusion = graph.fuse(&FuseOptions::new()).unwrap();
        fusion.run_with_opaque(&inputs, &mut outputs, opaque)
    };
    result.unwrap_err()
}

#[test]
fn an_err_stops_the_run_with_its_status_and_message() {
    for reference in [false, true] {
        let mut calls = 0;
        let error = block_error(reference, |_| {
            calls += 1;
            Err(Error::new(Status::Shape, "the matmul ran out of patience"))
        });
        assert_eq!(calls, 1);
        assert_eq!(error.status(), Status::Shape);
        let message = error.message();
        let function = if reference {
            "fst_graph_evaluate_reference_with_opaque"
        } else {
            "fst_fusion_run_with_opaque"
        };
        assert!(message.starts_with(function), "{message}");
        assert!(message.contains("opaque operation \"matmul\""), "{message}");
        assert!(
            message.contains("FST_ERROR_SHAPE: the matmul ran out of patience"),
            "{message}"
        );
    }
}

#[test]
fn a_panic_is_caught_before_it_reaches_c() {
    for reference in [false, true] {
        let mut calls = 0;
        let error = block_error(reference, |_| {
            calls += 1;
            panic!("the matmul fell over");
        });
        assert_eq!(calls, 1);
        assert_eq!(error.status(), Status::Launch);
        let message = error.message();
        assert!(message.contains("opaque operation \"matmul\""), "{message}");
        assert!(
            message.contains("the callback panicked: the matmul fell over"),
            "{message}"
        );
    }
}

#[test]
fn an_err_without_an_error_status_stops_the_run_as_a_launch_failure() {
    let error = block_error(false, |_| Err(Error::new(Status::Ok, "not really ok")));
    assert_eq!(error.status(), Status::Launch);
    assert!(
        error.message().contains("not really ok"),
        "{}",
        error.message()
    );
}

#[test]
fn a_later_failure_stops_the_run_there() {
    let mut seen = Vec::new();
    let error = block_error(false, |call| {
        if !seen.is_empty() {
            return Err(Error::new(Status::Unsupported, "second"));
        }
        matmul(call, &mut seen)
    });
    assert_eq!(seen.len(), 1);
    assert_eq!(error.status(), Status::Unsupported);
}

#[test]
fn typed_slices_are_checked() {
    let error = block_error(false, |call| {
        let wrong = call.operand_slice::<i32>(0).unwrap_err();
        assert_eq!(wrong.status(), Status::Dtype);
        assert!(
            wrong.message().contains("operand 0 is f32"),
            "{}",
            wrong.message()
        );
        assert_eq!(
            call.operand_slice::<f32>(2).unwrap_err().status(),
            Status::InvalidArgument
        );
        assert_eq!(
            call.operand(5).unwrap_err().status(),
            Status::InvalidArgument
        );
        assert_eq!(
            call.result_slice::<f64>().unwrap_err().status(),
            Status::Dtype
        );
        let result = call.result_slice::<f32>()?;
        result.fill(0.0);
        let again = call.result_slice::<f32>().unwrap_err();
        assert!(
            again.message().contains("already taken"),
            "{}",
            again.message()
        );
        Err(Error::new(Status::Unsupported, "checked"))
    });
    assert!(error.message().contains("checked"), "{}", error.message());
}

#[test]
fn no_closure_for_a_plan_with_opaque_operations() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    build_block(&graph);
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let data = data();
    let inputs = [(&data.x).into(), (&data.w1).into(), (&data.w2).into()];
    let (mut y, mut h) = (vec![0.0f32; ROWS * MODEL], vec![0.0f32; ROWS * HIDDEN]);
    let error = fusion
        .run(&inputs, &mut [(&mut y).into(), (&mut h).into()])
        .unwrap_err();
    assert_eq!(error.status(), Status::Unsupported);
    assert!(
        error.message().contains("\"matmul\""),
        "{}",
        error.message()
    );
    let error = graph
        .evaluate_reference(&inputs, &mut [(&mut y).into(), (&mut h).into()])
        .unwrap_err();
    assert_eq!(error.status(), Status::Unsupported);
    // Through the raw API, a NULL callback is refused by the library.
    let pointers_in: Vec<_> = [&data.x, &data.w1, &data.w2]
        .iter()
        .map(|v| v.as_ptr().cast::<std::ffi::c_void>())
        .collect();
    let pointers_out = [
        y.as_mut_ptr().cast::<std::ffi::c_void>(),
        h.as_mut_ptr().cast::<std::ffi::c_void>(),
    ];
    // SAFETY: host buffers of the graph's sizes on a host-backend context.
    let status = unsafe {
        fstitch::sys::fst_fusion_run_with_opaque(
            fusion.as_raw(),
            pointers_in.as_ptr(),
            3,
            pointers_out.as_ptr(),
            2,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, fstitch::sys::FST_ERROR_INVALID_ARGUMENT);
}

#[test]
fn buffers_are_checked_before_the_run() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    build_block(&graph);
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let data = data();
    let mut y = vec![0.0f32; ROWS * MODEL];
    let error = fusion
        .run_with_opaque(&[(&data.x).into()], &mut [(&mut y).into()], |_| Ok(()))
        .unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert!(
        error.message().starts_with("Fusion::run_with_opaque"),
        "{}",
        error.message()
    );
}

#[test]
fn concurrent_runs_each_call_their_own_closure() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    build_block(&graph);
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    std::thread::scope(|scope| {
        for seed in 10..14 {
            let fusion = &fusion;
            scope.spawn(move || {
                // Data of its own per thread: a closure mixing up runs would show.
                let data = Data {
                    x: uniform(ROWS * MODEL, -1.0, 1.0, seed),
                    w1: uniform(MODEL * HIDDEN, -1.0, 1.0, seed + 100),
                    w2: uniform(HIDDEN * MODEL, -1.0, 1.0, seed + 200),
                };
                let inputs = [(&data.x).into(), (&data.w1).into(), (&data.w2).into()];
                let (mut y, mut h) = (vec![0.0f32; ROWS * MODEL], vec![0.0f32; ROWS * HIDDEN]);
                let thread = std::thread::current().id();
                let mut seen = Vec::new();
                fusion
                    .run_with_opaque(&inputs, &mut [(&mut y).into(), (&mut h).into()], |call| {
                        assert_eq!(std::thread::current().id(), thread);
                        matmul(call, &mut seen)
                    })
                    .unwrap();
                assert_eq!(seen.len(), 2);
                let (exact_y, exact_h) = expected(&data);
                assert!(max_abs_diff(&y, &exact_y) < 1e-5);
                assert!(max_abs_diff(&h, &exact_h) < 1e-5);
            });
        }
    });
}

#[test]
fn half_and_bool_slices() {
    use fstitch::F16;
    let context = host_context();
    let mut graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F16, &[6]);
    let negated = graph.opaque("negate", &[x], DType::F16, &[6]);
    let zero = graph.constant_f64(DType::F16, 0.0);
    let flipped = graph.opaque("flip", &[negated.greater(zero)], DType::Bool, &[6]);
    graph.output("n", negated).unwrap();
    graph.output("f", flipped).unwrap();
    let run = |call: &OpaqueCall<'_>| -> fstitch::Result<()> {
        if call.name()? == "negate" {
            let operand = call.operand_slice::<F16>(0)?;
            for (out, value) in call.result_slice::<F16>()?.iter_mut().zip(operand) {
                *out = F16::from_bits(value.to_bits() ^ 0x8000);
            }
        } else {
            let operand = call.operand_slice::<bool>(0)?;
            let result = call.result_slice::<bool>()?;
            assert!(result.iter().all(|&b| !b), "a bool result starts all false");
            for (out, value) in result.iter_mut().zip(operand) {
                *out = !value;
            }
        }
        Ok(())
    };
    let data: Vec<F16> = [-1.5f32, 0.25, 2.0, -0.0, 3.0, -4.0]
        .iter()
        .map(|&v| F16::from_f32(v))
        .collect();
    let (mut want_n, mut want_f) = (vec![F16::default(); 6], vec![false; 6]);
    graph
        .evaluate_reference_with_opaque(
            &[(&data).into()],
            &mut [(&mut want_n).into(), (&mut want_f).into()],
            run,
        )
        .unwrap();
    let negated_values: Vec<f32> = want_n.iter().map(|v| v.to_f32()).collect();
    assert_eq!(negated_values, [1.5, -0.25, -2.0, 0.0, -3.0, 4.0]);
    assert_eq!(want_f, [false, true, true, true, true, false]);
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let (mut n, mut f) = (vec![F16::default(); 6], vec![true; 6]);
    fusion
        .run_with_opaque(
            &[(&data).into()],
            &mut [(&mut n).into(), (&mut f).into()],
            run,
        )
        .unwrap();
    assert_eq!((n, f), (want_n, want_f));
}
