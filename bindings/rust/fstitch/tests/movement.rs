//! Slice, concat, pad, take and split: shapes, a fused rotary embedding against the same
//! math in Rust, the out-of-range rule of take, and sticky errors.

mod common;

use common::{host_context, max_abs_diff, uniform};
use fstitch::{DType, FuseOptions, Graph, Status};

#[test]
fn builders_infer_shapes() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[4, 6]);
    let idx = graph.input("idx", DType::I32, &[2, 3]);
    assert_eq!(
        x.slice(&[-3, 1], &[100, -1], &[2, 3]).dims().unwrap(),
        [2, 2]
    );
    assert_eq!(x.slice(&[0, 2], &[4, 6], &[]).dims().unwrap(), [4, 4]);
    assert_eq!(graph.concat(&[x, x, x], -1).dims().unwrap(), [4, 18]);
    assert_eq!(x.pad(&[1, 0], &[2, 3], 0.5).dims().unwrap(), [7, 9]);
    assert_eq!(x.take(idx, 1).dims().unwrap(), [4, 2, 3]);
    let parts = x.split(1, &[1, 5]);
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[1].dims().unwrap(), [4, 5]);
    graph.status().unwrap();
}

#[test]
fn rotate_half_fuses_into_one_kernel_and_matches_direct_math() {
    const ROWS: usize = 8;
    const COLS: usize = 32;
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let dims = [ROWS as i64, COLS as i64];
    let x = graph.input("x", DType::F32, &dims);
    let cos = graph.input("cos", DType::F32, &dims);
    let sin = graph.input("sin", DType::F32, &dims);
    let halves = x.split(-1, &[COLS as i64 / 2, COLS as i64 / 2]);
    let rotated = graph.concat(&[-halves[1], halves[0]], -1);
    graph.output("y", x * cos + rotated * sin).unwrap();

    let xs = uniform(ROWS * COLS, -2.0, 2.0, 11);
    let cs = uniform(ROWS * COLS, -1.0, 1.0, 12);
    let ss = uniform(ROWS * COLS, -1.0, 1.0, 13);
    let half = COLS / 2;
    let mut expected = Vec::with_capacity(ROWS * COLS);
    for r in 0..ROWS {
        for c in 0..COLS {
            let k = r * COLS + c;
            let rot = if c < half {
                -(xs[k + half] as f64)
            } else {
                xs[k - half] as f64
            };
            expected.push(xs[k] as f64 * cs[k] as f64 + rot * ss[k] as f64);
        }
    }
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
            &[(&xs).into(), (&cs).into(), (&ss).into()],
            &mut [(&mut fused).into()],
        )
        .unwrap();
    assert!(max_abs_diff(&fused, &expected) < 1e-5);
}

#[test]
fn take_gives_zero_for_out_of_range_indices() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::I64, &[2, 3]);
    let idx = graph.input("idx", DType::I64, &[5]);
    graph
        .output("y", x.take(idx, 1).pad(&[0, 1], &[0, 0], -1.0))
        .unwrap();
    let xs: Vec<i64> = (1..=6).collect();
    let indices: Vec<i64> = vec![0, -1, 3, -4, i64::MIN];
    let expected: Vec<i64> = vec![-1, 1, 3, 0, 0, 0, -1, 4, 6, 0, 0, 0];
    let mut reference = vec![7i64; 12];
    graph
        .evaluate_reference(
            &[(&xs).into(), (&indices).into()],
            &mut [(&mut reference).into()],
        )
        .unwrap();
    assert_eq!(reference, expected);
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let mut fused = vec![7i64; 12];
    fusion
        .run(
            &[(&xs).into(), (&indices).into()],
            &mut [(&mut fused).into()],
        )
        .unwrap();
    assert_eq!(fused, expected);
}

#[test]
fn errors_are_recorded_on_the_graph() {
    let context = host_context();
    for (case, status, detail) in [
        (0, Status::Shape, "must not be negative"),
        (1, Status::Dtype, "i32 or i64"),
        (2, Status::Shape, "add up to 3"),
        (3, Status::Shape, "one of each per axis"),
        (4, Status::Shape, "low pads but"),
    ] {
        let graph = Graph::new(&context).unwrap();
        let x = graph.input("x", DType::F32, &[4, 6]);
        let value = match case {
            0 => x.pad(&[0, -1], &[0, 0], 0.0),
            1 => x.take(x, 0),
            2 => x.split(0, &[1, 2])[1],
            3 => x.slice(&[0, 0], &[4], &[]),
            _ => x.pad(&[0, 0], &[0], 0.0),
        };
        assert!(!value.is_valid());
        let error = graph.status().unwrap_err();
        assert_eq!(error.status(), status, "{}", error.message());
        assert!(error.message().contains(detail), "{}", error.message());
        assert!(graph.output("y", x).is_err());
    }
}
