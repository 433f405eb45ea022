//! Results of fused runs on the host backend against the reference evaluator and against
//! the same math written directly in Rust.

// Index loops mirror the row-major index math of the expected values.
#![allow(clippy::needless_range_loop)]

mod common;

use common::{host_context, max_abs_diff, to_f64, uniform};
use fstitch::{Bf16, DType, FuseOptions, FusionPolicy, Graph, F16};

const ROWS: usize = 16;
const COLS: usize = 96;

fn direct_layer_norm(x: &[f32], gamma: &[f32], beta: &[f32], eps: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(COLS) {
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / COLS as f64;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / COLS as f64;
        for (c, &v) in row.iter().enumerate() {
            out.push((v as f64 - mean) / (var + eps).sqrt() * gamma[c] as f64 + beta[c] as f64);
        }
    }
    out
}

fn direct_softmax(x: &[f32]) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(COLS) {
        let max = row
            .iter()
            .map(|&v| v as f64)
            .fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
        out.extend(row.iter().map(|&v| (v as f64 - max).exp() / sum));
    }
    out
}

#[test]
fn layer_norm_matches_reference_and_direct_math() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let dims = [ROWS as i64, COLS as i64];
    let x = graph.input("x", DType::F32, &dims);
    let gamma = graph.input("gamma", DType::F32, &[COLS as i64]);
    let beta = graph.input("beta", DType::F32, &[COLS as i64]);
    let eps = 1e-5;
    let mean = x.mean(&[-1], true);
    let centered = x - mean;
    let var = (centered * centered).mean(&[-1], true);
    let y = centered * (var + eps).rsqrt() * gamma + beta;
    graph.output("y", y).unwrap();
    assert_eq!(y.dims().unwrap(), dims);

    let xs = uniform(ROWS * COLS, -3.0, 4.0, 1);
    let gs = uniform(COLS, 0.5, 1.5, 2);
    let bs = uniform(COLS, -0.2, 0.2, 3);
    let expected = direct_layer_norm(&xs, &gs, &bs, eps);

    let mut reference = vec![f32::NAN; ROWS * COLS];
    graph
        .evaluate_reference(
            &[(&xs).into(), (&gs).into(), (&bs).into()],
            &mut [(&mut reference).into()],
        )
        .unwrap();
    assert!(max_abs_diff(&reference, &expected) < 1e-5);

    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    assert_eq!(
        fusion.kernel_count().unwrap(),
        1,
        "{}",
        fusion.dump().unwrap()
    );
    let mut fused = vec![f32::NAN; ROWS * COLS];
    fusion
        .run(
            &[(&xs).into(), (&gs).into(), (&bs).into()],
            &mut [(&mut fused).into()],
        )
        .unwrap();
    assert!(max_abs_diff(&fused, &expected) < 1e-4);
    assert!(max_abs_diff(&fused, &to_f64(&reference)) < 1e-4);
}

#[test]
fn softmax_matches_reference_and_direct_math_under_every_policy() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[ROWS as i64, COLS as i64]);
    let e = (x - x.max(&[1], true)).exp();
    graph.output("y", e / e.sum(&[1], true)).unwrap();

    let xs = uniform(ROWS * COLS, -6.0, 6.0, 4);
    let expected = direct_softmax(&xs);
    let mut reference = vec![0.0f32; ROWS * COLS];
    graph
        .evaluate_reference(&[(&xs).into()], &mut [(&mut reference).into()])
        .unwrap();
    assert!(max_abs_diff(&reference, &expected) < 1e-7);

    for policy in FusionPolicy::ALL {
        let fusion = graph.fuse(&FuseOptions::new().policy(*policy)).unwrap();
        let mut fused = vec![f32::NAN; ROWS * COLS];
        fusion
            .run(&[(&xs[..]).into()], &mut [(&mut fused[..]).into()])
            .unwrap();
        assert!(
            max_abs_diff(&fused, &expected) < 1e-6,
            "policy {policy:?}: {}",
            fusion.dump().unwrap()
        );
    }
}

#[test]
fn operators_broadcast_and_take_scalars() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let a = graph.input("a", DType::F32, &[2, 3]);
    let b = graph.input("b", DType::F32, &[3]);
    let c = graph.input("c", DType::F32, &[2, 1]);
    let y = (a + b) * c - 1.5 / (a * a + 1.0) + (-b) / 2.0 - (2.0 - c);
    assert_eq!(y.dims().unwrap(), vec![2, 3]);
    graph.output("y", y).unwrap();

    let av = [1.0f32, -2.0, 3.0, 0.5, 4.0, -1.0];
    let bv = [0.25f32, 2.0, -3.0];
    let cv = [2.0f32, -1.0];
    let mut expected = Vec::new();
    for r in 0..2 {
        for k in 0..3 {
            let (a, b, c) = (av[r * 3 + k] as f64, bv[k] as f64, cv[r] as f64);
            expected.push((a + b) * c - 1.5 / (a * a + 1.0) + (-b) / 2.0 - (2.0 - c));
        }
    }
    let mut reference = [0.0f32; 6];
    graph
        .evaluate_reference(
            &[(&av).into(), (&bv).into(), (&cv).into()],
            &mut [(&mut reference).into()],
        )
        .unwrap();
    assert!(max_abs_diff(&reference, &expected) < 1e-6);
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let mut fused = [0.0f32; 6];
    fusion
        .run(
            &[(&av).into(), (&bv).into(), (&cv).into()],
            &mut [(&mut fused).into()],
        )
        .unwrap();
    assert!(max_abs_diff(&fused, &expected) < 1e-6);
}

#[test]
fn reductions_layout_cast_select_and_iota() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[2, 3, 4]);
    let sum_kept = x.sum(&[0, 2], true);
    let max_dropped = x.max(&[-1], false);
    let transposed = x.permute(&[2, 0, 1]);
    let reshaped = x.reshape(&[4, -1]);
    let prod = x.prod(&[1], false);
    let min = x.min(&[0, 1, 2], false);
    assert_eq!(sum_kept.dims().unwrap(), vec![1, 3, 1]);
    assert_eq!(max_dropped.dims().unwrap(), vec![2, 3]);
    assert_eq!(transposed.dims().unwrap(), vec![4, 2, 3]);
    assert_eq!(reshaped.dims().unwrap(), vec![4, 6]);
    assert_eq!(min.rank().unwrap(), 0);
    let positive = x.greater(graph.constant_f64(DType::F32, 0.0));
    let clipped = positive.select(x, graph.constant_f64(DType::F32, -1.0));
    let as_int = (x * 10.0).cast(DType::I32);
    let column = graph.iota(DType::I64, &[2, 3, 4], 2);
    for (name, value) in [
        ("sum", sum_kept),
        ("max", max_dropped),
        ("transposed", transposed),
        ("reshaped", reshaped),
        ("prod", prod),
        ("min", min),
        ("positive", positive),
        ("clipped", clipped),
        ("as_int", as_int),
        ("column", column),
    ] {
        graph.output(name, value).unwrap();
    }

    let xs: Vec<f32> = (0..24).map(|i| (i as f32 - 11.5) / 4.0).collect();
    let at = |b: usize, r: usize, c: usize| xs[b * 12 + r * 4 + c];
    let mut sum = [0.0f32; 3];
    let mut max = [0.0f32; 6];
    let mut transposed_out = [0.0f32; 24];
    let mut reshaped_out = [0.0f32; 24];
    let mut prod_out = [0.0f32; 8];
    let mut min_out = [0.0f32; 1];
    let mut positive_out = [false; 24];
    let mut clipped_out = [0.0f32; 24];
    let mut int_out = [0i32; 24];
    let mut column_out = [0i64; 24];
    graph
        .evaluate_reference(
            &[(&xs).into()],
            &mut [
                (&mut sum).into(),
                (&mut max).into(),
                (&mut transposed_out).into(),
                (&mut reshaped_out).into(),
                (&mut prod_out).into(),
                (&mut min_out).into(),
                (&mut positive_out).into(),
                (&mut clipped_out).into(),
                (&mut int_out).into(),
                (&mut column_out).into(),
            ],
        )
        .unwrap();

    for r in 0..3 {
        let expected: f32 = (0..2)
            .flat_map(|b| (0..4).map(move |c| (b, c)))
            .map(|(b, c)| at(b, r, c))
            .sum();
        assert!((sum[r] - expected).abs() < 1e-5);
    }
    for b in 0..2 {
        for r in 0..3 {
            assert_eq!(
                max[b * 3 + r],
                (0..4).map(|c| at(b, r, c)).fold(f32::MIN, f32::max)
            );
        }
    }
    for c in 0..4 {
        for b in 0..2 {
            for r in 0..3 {
                assert_eq!(transposed_out[c * 6 + b * 3 + r], at(b, r, c));
            }
        }
    }
    assert_eq!(reshaped_out.to_vec(), xs);
    for b in 0..2 {
        for c in 0..4 {
            let expected: f64 = (0..3).map(|r| at(b, r, c) as f64).product();
            assert!((prod_out[b * 4 + c] as f64 - expected).abs() < 1e-5);
        }
    }
    assert_eq!(min_out[0], -11.5 / 4.0);
    for (i, &v) in xs.iter().enumerate() {
        assert_eq!(positive_out[i], v > 0.0);
        assert_eq!(clipped_out[i], if v > 0.0 { v } else { -1.0 });
        assert_eq!(int_out[i], (v * 10.0).trunc() as i32);
        assert_eq!(column_out[i], (i % 4) as i64);
    }

    // The fused plan computes the same outputs.
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let mut fused_sum = [0.0f32; 3];
    let mut fused_max = [0.0f32; 6];
    let mut fused_transposed = [0.0f32; 24];
    let mut fused_reshaped = [0.0f32; 24];
    let mut fused_prod = [0.0f32; 8];
    let mut fused_min = [0.0f32; 1];
    let mut fused_positive = [false; 24];
    let mut fused_clipped = [0.0f32; 24];
    let mut fused_int = [0i32; 24];
    let mut fused_column = [0i64; 24];
    fusion
        .run(
            &[(&xs).into()],
            &mut [
                (&mut fused_sum).into(),
                (&mut fused_max).into(),
                (&mut fused_transposed).into(),
                (&mut fused_reshaped).into(),
                (&mut fused_prod).into(),
                (&mut fused_min).into(),
                (&mut fused_positive).into(),
                (&mut fused_clipped).into(),
                (&mut fused_int).into(),
                (&mut fused_column).into(),
            ],
        )
        .unwrap();
    for r in 0..3 {
        assert!((fused_sum[r] - sum[r]).abs() < 1e-5);
    }
    assert_eq!(fused_max, max);
    assert_eq!(fused_transposed, transposed_out);
    assert_eq!(fused_reshaped, reshaped_out);
    for i in 0..8 {
        assert!((fused_prod[i] - prod_out[i]).abs() < 1e-5);
    }
    assert_eq!(fused_min, min_out);
    assert_eq!(fused_positive, positive_out);
    assert_eq!(fused_clipped, clipped_out);
    assert_eq!(fused_int, int_out);
    assert_eq!(fused_column, column_out);
}

#[test]
fn unary_methods_match_std() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F64, &[8]);
    type Reference = fn(f64) -> f64;
    let cases: [(fstitch::Value, Reference); 12] = [
        (x.abs(), f64::abs),
        (x.exp(), f64::exp),
        (x.abs().log(), |v| v.abs().ln()),
        (x.abs().sqrt(), |v| v.abs().sqrt()),
        (x.abs().rsqrt(), |v| 1.0 / v.abs().sqrt()),
        (x.reciprocal(), |v| 1.0 / v),
        (x.tanh(), f64::tanh),
        (x.sigmoid(), |v| 1.0 / (1.0 + (-v).exp())),
        (x.relu(), |v| v.max(0.0)),
        (x.silu(), |v| v / (1.0 + (-v).exp())),
        (x.floor(), f64::floor),
        (x.sin() + x.cos(), |v| v.sin() + v.cos()),
    ];
    for (i, (value, _)) in cases.iter().enumerate() {
        graph.output(&format!("y{i}"), *value).unwrap();
    }
    let xs = [-2.5f64, -1.25, -0.5, 0.3, 0.75, 1.5, 2.0, 3.25];
    let mut outputs = vec![vec![0.0f64; 8]; cases.len()];
    let mut views: Vec<fstitch::HostSliceMut> = outputs.iter_mut().map(Into::into).collect();
    graph
        .evaluate_reference(&[(&xs).into()], &mut views)
        .unwrap();
    drop(views);
    for (i, (_, reference)) in cases.iter().enumerate() {
        for (k, &v) in xs.iter().enumerate() {
            let expected = reference(v);
            assert!(
                (outputs[i][k] - expected).abs() <= 1e-12 * expected.abs().max(1.0),
                "case {i} at {v}: {} vs {expected}",
                outputs[i][k]
            );
        }
    }
}

#[test]
fn f16_and_bf16_bits_match_the_library_casts() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[16]);
    graph.output("h", x.cast(DType::F16)).unwrap();
    graph.output("b", x.cast(DType::BF16)).unwrap();
    let h_in = graph.input("h_in", DType::F16, &[16]);
    let b_in = graph.input("b_in", DType::BF16, &[16]);
    graph.output("h_back", h_in.cast(DType::F32)).unwrap();
    graph.output("b_back", b_in.cast(DType::F32)).unwrap();

    let xs: [f32; 16] = [
        0.0,
        -0.0,
        1.0,
        -2.0,
        0.1,
        65504.0,
        65520.0,
        1.0e-7,
        6.0e-8,
        2.9802322e-8,
        -7.77,
        -1.0e5,
        1.0e-3,
        0.333333,
        f32::INFINITY,
        1.000_976_6,
    ];
    let h_bits: Vec<F16> = xs.iter().map(|&v| F16::from_f32(v)).collect();
    let b_bits: Vec<Bf16> = xs.iter().map(|&v| Bf16::from_f32(v)).collect();
    let mut h = [F16(0); 16];
    let mut b = [Bf16(0); 16];
    let mut h_back = [0.0f32; 16];
    let mut b_back = [0.0f32; 16];
    graph
        .evaluate_reference(
            &[(&xs).into(), (&h_bits).into(), (&b_bits).into()],
            &mut [
                (&mut h).into(),
                (&mut b).into(),
                (&mut h_back).into(),
                (&mut b_back).into(),
            ],
        )
        .unwrap();
    assert_eq!(h.to_vec(), h_bits, "f32 -> f16 rounding");
    assert_eq!(b.to_vec(), b_bits, "f32 -> bf16 rounding");
    for i in 0..16 {
        assert_eq!(
            h_back[i].to_bits(),
            h_bits[i].to_f32().to_bits(),
            "f16 -> f32 at {i}"
        );
        assert_eq!(
            b_back[i].to_bits(),
            b_bits[i].to_f32().to_bits(),
            "bf16 -> f32 at {i}"
        );
    }
    // Known bit patterns, independent of the library.
    assert_eq!(F16::from_f32(1.0), F16(0x3c00));
    assert_eq!(F16::from_f32(-2.0), F16(0xc000));
    assert_eq!(F16::from_f32(65504.0), F16(0x7bff));
    assert_eq!(F16::from_f32(65520.0), F16(0x7c00));
    assert_eq!(F16::from_f32(0.1), F16(0x2e66));
    assert_eq!(F16::from_f32(5.9604645e-8), F16(0x0001));
    assert_eq!(F16::from_f32(2.9802322e-8), F16(0x0000));
    assert!(F16::from_f32(f32::NAN).to_f32().is_nan());
    assert_eq!(F16(0x0001).to_f32(), 5.9604645e-8);
    assert_eq!(Bf16::from_f32(1.0), Bf16(0x3f80));
    assert_eq!(Bf16::from_f32(3.140625), Bf16(0x4049));
    assert_eq!(
        Bf16::from_f32(1.0 + 1.0 / 256.0),
        Bf16(0x3f80),
        "a tie rounds to even"
    );
    assert!(Bf16::from_f32(f32::NAN).to_f32().is_nan());
}

#[test]
fn f16_graph_runs_fused() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F16, &[4, 32]);
    let w = graph.input("w", DType::F16, &[32]);
    let ms = (x * x).mean(&[-1], true);
    graph.output("y", x * (ms + 1e-6).rsqrt() * w).unwrap();
    let xs: Vec<F16> = uniform(128, -2.0, 2.0, 7)
        .into_iter()
        .map(F16::from_f32)
        .collect();
    let ws: Vec<F16> = uniform(32, 0.5, 1.5, 8)
        .into_iter()
        .map(F16::from_f32)
        .collect();
    let mut reference = vec![F16(0); 128];
    let mut fused = vec![F16(0); 128];
    graph
        .evaluate_reference(
            &[(&xs).into(), (&ws).into()],
            &mut [(&mut reference).into()],
        )
        .unwrap();
    graph
        .fuse(&FuseOptions::new())
        .unwrap()
        .run(&[(&xs).into(), (&ws).into()], &mut [(&mut fused).into()])
        .unwrap();
    for row in 0..4 {
        let values: Vec<f64> = (0..32).map(|c| xs[row * 32 + c].to_f32() as f64).collect();
        let rms = (values.iter().map(|v| v * v).sum::<f64>() / 32.0 + 1e-6).sqrt();
        for c in 0..32 {
            let expected = values[c] / rms * ws[c].to_f32() as f64;
            let tolerance = 2e-3 * expected.abs().max(1.0);
            assert!((reference[row * 32 + c].to_f32() as f64 - expected).abs() < tolerance);
            assert!((fused[row * 32 + c].to_f32() as f64 - expected).abs() < tolerance);
        }
    }
}

#[test]
fn bool_outputs_are_normalized_and_integers_wrap() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let a = graph.input("a", DType::I32, &[5]);
    let b = graph.input("b", DType::I32, &[5]);
    graph.output("lt", a.less(b)).unwrap();
    graph.output("not", a.logical_not()).unwrap();
    graph.output("sum", a + b).unwrap();
    graph.output("quotient", a / b).unwrap();
    let av = [i32::MAX, -7, 0, 9, 3];
    let bv = [1, 2, 5, 0, -3];
    let mut lt = [true; 5];
    let mut not = [true; 5];
    let mut sum = [0i32; 5];
    let mut quotient = [0i32; 5];
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    fusion
        .run(
            &[(&av).into(), (&bv).into()],
            &mut [
                (&mut lt).into(),
                (&mut not).into(),
                (&mut sum).into(),
                (&mut quotient).into(),
            ],
        )
        .unwrap();
    assert_eq!(lt, [false, true, true, false, false]);
    assert_eq!(not, [false, false, true, false, false]);
    assert_eq!(sum, [i32::MIN, -5, 5, 9, 0]);
    assert_eq!(quotient, [i32::MAX, -3, 0, 0, -1]);
}
