//! Tensor constants: built from typed slices and bytes, refused when the data does not fit,
//! printed and parsed exactly, run fused on the host backend, and handed to a framework as
//! the fusion's constants.

mod common;

use common::host_context;
use fstitch::{DType, FuseOptions, FusionPolicy, Graph, ParamKind, Status, F16};

#[test]
fn constants_from_slices_and_bytes_have_their_type() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let table = graph.constant_tensor(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(table.dtype().unwrap(), DType::F32);
    assert_eq!(table.dims().unwrap(), [2, 3]);
    let mask = graph.constant_tensor(&[true, false], &[2]);
    assert_eq!(mask.dtype().unwrap(), DType::Bool);
    let half = graph.constant_tensor_bytes(DType::F16, &[2], &[0x00, 0x3c, 0x01, 0x7e]);
    assert_eq!(half.dims().unwrap(), [2]);
    graph.output("half", half).unwrap();
    let text = graph.to_text().unwrap();
    assert!(text.contains("tensor [0x3c00, 0x7e01] : f16[2]"), "{text}");
    let parsed = Graph::parse(&context, &text).unwrap();
    assert_eq!(parsed.to_text().unwrap(), text);
}

#[test]
fn data_that_does_not_fit_is_refused() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    graph.constant_tensor(&[1i32, 2, 3], &[2, 2]);
    let error = graph.status().unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert!(
        error
            .message()
            .contains("bytes is 12, but a i32[2,2] tensor has 16"),
        "{error}"
    );

    let graph = Graph::new(&context).unwrap();
    graph.constant_tensor_bytes(DType::Bool, &[2], &[1, 7]);
    let error = graph.status().unwrap_err();
    assert!(error.message().contains("element 1 is byte 7"), "{error}");
}

#[test]
fn fused_runs_read_the_constants_and_the_fusion_lists_them() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    const ROWS: usize = 3;
    const COLS: usize = 8;
    let scale: Vec<f32> = (0..COLS).map(|k| 0.5 * k as f32 - 1.0).collect();
    let halves: Vec<F16> = (0..ROWS * COLS)
        .map(|k| F16::from_bits(if k % 2 == 0 { 0x3c00 } else { 0xc000 })) // 1, -2
        .collect();
    let x = graph.input("x", DType::F32, &[ROWS as i64, COLS as i64]);
    let s = graph.constant_tensor(&scale, &[COLS as i64]);
    let h = graph.constant_tensor(&halves, &[ROWS as i64, COLS as i64]);
    let y = x * s + graph.cast(h, DType::F32);
    graph.output("y", y).unwrap();
    graph.output("scale", s).unwrap();

    let xs: Vec<f32> = (0..ROWS * COLS).map(|k| 0.25 * k as f32).collect();
    let expected: Vec<f32> = (0..ROWS * COLS)
        .map(|k| xs[k] * scale[k % COLS] + if k % 2 == 0 { 1.0 } else { -2.0 })
        .collect();
    for policy in [FusionPolicy::Stitch, FusionPolicy::None] {
        let fusion = graph.fuse(&FuseOptions::new().policy(policy)).unwrap();
        let constants = fusion.constants().unwrap();
        assert_eq!(constants.len(), 2);
        assert_eq!(constants[0].len(), COLS * 4);
        assert_eq!(constants[0][4..8], (-0.5f32).to_ne_bytes());
        let reads_constants = (0..fusion.kernel_count().unwrap()).any(|k| {
            let kernel = fusion.kernel(k).unwrap();
            kernel
                .params()
                .unwrap()
                .iter()
                .any(|p| p.kind == ParamKind::Constant)
        });
        assert!(reads_constants);
        let mut fused = vec![f32::NAN; ROWS * COLS];
        let mut copied = vec![f32::NAN; COLS];
        fusion
            .run(
                &[(&xs).into()],
                &mut [(&mut fused).into(), (&mut copied).into()],
            )
            .unwrap();
        assert_eq!(fused, expected);
        assert_eq!(copied, scale);
    }
}
