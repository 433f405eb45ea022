//! Inspecting a fusion: plan dump, traffic, workspace, and each kernel's name, source,
//! compiled forms, launch configuration and parameters; launching kernels one by one.

mod common;

use common::{host_context, uniform};
use fstitch::{DType, FuseOptions, FusionPolicy, Graph, LaunchKind, ParamKind, Status};

const ROWS: i64 = 8;
const COLS: i64 = 64;

/// softmax(x) * scale + shift over rows: reductions with elementwise consumers.
fn build(graph: &Graph) {
    let x = graph.input("x", DType::F32, &[ROWS, COLS]);
    let scale = graph.input("scale", DType::F32, &[COLS]);
    let e = (x - x.max(&[-1], true)).exp();
    let y = e / e.sum(&[-1], true) * scale + 0.5;
    graph.output("y", y).unwrap();
    graph.output("row_max", x.max(&[-1], false)).unwrap();
}

#[test]
fn a_stitched_plan_is_one_kernel_that_moves_the_lower_bound() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    build(&graph);
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    assert_eq!(
        fusion.kernel_count().unwrap(),
        1,
        "{}",
        fusion.dump().unwrap()
    );
    let bytes = fusion.planned_bytes().unwrap();
    // Each input read once, each output written once: computed here from the shapes.
    let lower_bound = (ROWS * COLS + COLS + ROWS * COLS + ROWS) as u64 * 4;
    assert_eq!(bytes.lower_bound, lower_bound);
    assert_eq!(bytes.planned, lower_bound, "{}", fusion.dump().unwrap());
    assert_eq!(fusion.workspace_size().unwrap(), 0);
}

#[test]
fn kernels_describe_themselves() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    build(&graph);
    let fusion = graph
        .fuse(&FuseOptions::new().policy(FusionPolicy::None))
        .unwrap();
    let kernels = fusion.kernels().unwrap();
    assert!(kernels.len() > 1);
    assert_eq!(kernels.len(), fusion.kernel_count().unwrap());
    let workspace = fusion.workspace_size().unwrap();
    assert!(
        workspace > 0,
        "intermediates between kernels need a workspace"
    );
    let dump = fusion.dump().unwrap();
    let bytes = fusion.planned_bytes().unwrap();
    assert!(bytes.planned > bytes.lower_bound);

    let mut inputs_seen = vec![false; 2];
    let mut outputs_seen = vec![false; 2];
    for kernel in &kernels {
        let name = kernel.name().unwrap();
        assert!(!name.is_empty());
        assert!(dump.contains(name), "the dump names kernel {name}");
        let source = kernel.source().unwrap();
        assert!(source.contains(name) && source.contains("__global__"));
        let config = kernel.launch_config().unwrap();
        assert!(
            config.grid.iter().chain(&config.block).all(|&d| d >= 1),
            "{config:?}"
        );
        assert!(config.block.iter().product::<u32>() <= 1024);
        assert!(matches!(
            kernel.launch_kind().unwrap(),
            LaunchKind::Regular | LaunchKind::Cooperative
        ));
        let estimate = kernel.estimated_bytes().unwrap();
        let params = kernel.params().unwrap();
        assert!(estimate.written > 0, "{name}: {estimate:?}");
        // A kernel reads memory unless all it computes comes from constants.
        assert_eq!(
            estimate.read > 0,
            params.len() > 1,
            "{name}: {estimate:?}\n{dump}"
        );
        assert_eq!(params.len(), kernel.param_count().unwrap());
        for param in params {
            match param.kind {
                ParamKind::Input => {
                    inputs_seen[param.index] = true;
                    assert_eq!(param.value, graph.input_value(param.index).unwrap().raw());
                }
                ParamKind::Output => {
                    outputs_seen[param.index] = true;
                    assert_eq!(param.value, graph.output_value(param.index).unwrap().raw());
                }
                ParamKind::Workspace => assert!(param.index < workspace),
                ParamKind::Constant => panic!("this graph has no tensor constants"),
            }
        }
        let error = kernel.function().unwrap_err();
        assert_eq!(error.status(), Status::Unsupported, "{error}");
    }
    assert_eq!(inputs_seen, [true, true]);
    assert_eq!(outputs_seen, [true, true]);
}

#[test]
fn ptx_and_cubin_when_nvrtc_is_available() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    build(&graph);
    let fusion = graph.fuse(&FuseOptions::new().target_arch(80)).unwrap();
    let kernel = fusion.kernel(0).unwrap();
    match kernel.ptx() {
        Ok(ptx) => {
            assert!(ptx.contains(".entry"), "{ptx}");
            assert!(ptx.contains(kernel.name().unwrap()));
            assert!(ptx.contains("sm_80"));
            let cubin = kernel.cubin().unwrap();
            assert!(cubin.starts_with(b"\x7fELF"), "a CUBIN is an ELF image");
        }
        Err(error) => {
            assert_eq!(error.status(), Status::NoCompiler, "{error}");
            assert_eq!(kernel.cubin().unwrap_err().status(), Status::NoCompiler);
        }
    }
    assert!(fusion.kernel(1).is_err());
}

/// Workspace memory with the alignment of the library's own allocations.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

#[test]
fn launching_kernels_one_by_one_matches_a_run() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    build(&graph);
    let fusion = graph
        .fuse(&FuseOptions::new().policy(FusionPolicy::Loop))
        .unwrap();
    let x = uniform((ROWS * COLS) as usize, -4.0, 4.0, 11);
    let scale = uniform(COLS as usize, 0.5, 2.0, 12);
    let mut y = vec![0.0f32; (ROWS * COLS) as usize];
    let mut row_max = vec![0.0f32; ROWS as usize];
    fusion
        .run(
            &[(&x).into(), (&scale).into()],
            &mut [(&mut y).into(), (&mut row_max).into()],
        )
        .unwrap();

    let mut y_manual = vec![f32::NAN; y.len()];
    let mut row_max_manual = vec![f32::NAN; row_max.len()];
    let mut workspace = vec![Line([0; 64]); fusion.workspace_size().unwrap().div_ceil(64)];
    let base = workspace.as_mut_ptr().cast::<u8>();
    let inputs = [
        x.as_ptr().cast_mut().cast(),
        scale.as_ptr().cast_mut().cast(),
    ];
    let outputs = [
        y_manual.as_mut_ptr().cast(),
        row_max_manual.as_mut_ptr().cast(),
    ];
    for kernel in fusion.kernels().unwrap() {
        let args: Vec<*mut std::ffi::c_void> = kernel
            .params()
            .unwrap()
            .iter()
            .map(|param| match param.kind {
                ParamKind::Input => inputs[param.index],
                ParamKind::Output => outputs[param.index],
                ParamKind::Workspace => unsafe { base.add(param.index).cast() },
                ParamKind::Constant => panic!("this graph has no tensor constants"),
            })
            .collect();
        unsafe { kernel.launch(&args, std::ptr::null_mut()) }.unwrap();
        let error = unsafe { kernel.launch(&args[1..], std::ptr::null_mut()) }.unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
    }
    assert_eq!(y_manual, y);
    assert_eq!(row_max_manual, row_max);
}

#[test]
fn a_split_column_reduction_names_the_workspace_it_needs_zeroed() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[4096, 40]);
    graph.output("r", x.sum(&[0], false)).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let kernel = fusion.kernel(0).unwrap();
    let (offset, bytes) = kernel.zeroed_workspace().unwrap();
    assert!(bytes > 0, "{}", fusion.dump().unwrap());
    assert!(offset + bytes <= fusion.workspace_size().unwrap());

    let graph = Graph::new(&context).unwrap();
    let y = graph.input("y", DType::F32, &[8, 8]);
    graph.output("z", y.exp()).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    assert_eq!(
        fusion.kernel(0).unwrap().zeroed_workspace().unwrap(),
        (0, 0)
    );
}

#[test]
fn two_long_rows_are_split_across_clusters_of_blocks() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[2, 20000]);
    let e = (x - x.max(&[-1], true)).exp();
    graph.output("y", e / e.sum(&[-1], true)).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let kernel = fusion.kernel(0).unwrap();
    // Two rows cannot fill an sm_90 device with a block each: clusters of blocks split them.
    assert_eq!(
        kernel.launch_kind().unwrap(),
        LaunchKind::Cluster,
        "{}",
        fusion.dump().unwrap()
    );
    let blocks = kernel.cluster_blocks().unwrap();
    assert!((2..=8).contains(&blocks));
    assert_eq!(kernel.launch_config().unwrap().grid[0] % blocks, 0);

    let graph = Graph::new(&context).unwrap();
    let y = graph.input("y", DType::F32, &[8, 8]);
    graph.output("z", y.exp()).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    assert_eq!(fusion.kernel(0).unwrap().cluster_blocks().unwrap(), 1);
}

#[test]
fn grid_for_occupancy_is_a_wave_or_the_work_units() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[8192, 1024]);
    graph.output("y", x * 2.0 + 1.0).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    let kernel = fusion.kernel(0).unwrap();
    let planned = kernel.launch_config().unwrap().grid;
    let all_work = kernel.grid_for_occupancy(1 << 20, 1 << 11).unwrap();
    assert!(all_work[0] >= planned[0]);
    assert_eq!(&all_work[1..], &[1, 1]);
    assert_eq!(
        kernel.grid_for_occupancy(12, 132).unwrap(),
        [all_work[0].min(12 * 132), 1, 1]
    );
    assert_eq!(kernel.grid_for_occupancy(1, 1).unwrap(), [1, 1, 1]);
    for (blocks, sms, detail) in [
        (0, 132, "blocks_per_multiprocessor"),
        (4, 0, "multiprocessors"),
    ] {
        let error = kernel.grid_for_occupancy(blocks, sms).unwrap_err();
        assert_eq!(error.status(), Status::InvalidArgument, "{error}");
        assert!(error.to_string().contains(detail), "{error}");
    }
}
