//! Softmax over the last axis: fused into one kernel, run on the host backend, and
//! checked against fstitch's reference evaluator.
use fstitch::{Backend, Context, DType, FuseOptions, Graph};

fn main() -> fstitch::Result<()> {
    let context = Context::builder().backend(Backend::Host).build()?;
    let graph = Graph::new(&context)?;
    let x = graph.input("x", DType::F32, &[4, 64]);
    let e = (x - x.max(&[-1], true)).exp();
    graph.output("y", e / e.sum(&[-1], true))?;

    let fusion = graph.fuse(&FuseOptions::new())?;
    println!("kernels: {}", fusion.kernel_count()?);

    let x_data: Vec<f32> = (0..256).map(|i| (i % 17) as f32 * 0.25 - 2.0).collect();
    let (mut fused, mut reference) = (vec![0.0f32; 256], vec![0.0f32; 256]);
    fusion.run(&[(&x_data).into()], &mut [(&mut fused).into()])?;
    graph.evaluate_reference(&[(&x_data).into()], &mut [(&mut reference).into()])?;

    let max_error = fused
        .iter()
        .zip(&reference)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!("max |fused - reference| = {max_error:e}");
    assert!(
        max_error <= 1e-6,
        "the fused softmax differs from the reference"
    );
    Ok(())
}
