//! The CUDA-backend paths of the binding, against fstitch's stand-in driver library
//! (tests/cuda: the driver entry points, simulated in host memory, recording every launch).
//! Runs when FSTITCH_TEST_FAKE_CUDA names libfstitch_fake_cuda.so (run-tests sets it when the
//! build has one); this file holds a single test because it sets FSTITCH_CUDA_DRIVER.

mod common;

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::ptr;

use common::cache_dir;
use fstitch::{
    Backend, Context, DType, FuseOptions, FusionPolicy, Graph, LaunchKind, LogLevel, ParamKind,
    Status,
};

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

const RTLD_NOW: c_int = 2;

/// `fake_cuda_launch_record` of tests/cuda/fake_cuda.h.
#[repr(C)]
struct LaunchRecord {
    function: *mut c_void,
    kernel: [c_char; 128],
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_bytes: c_uint,
    stream: *mut c_void,
    cooperative: c_int,
    context: *mut c_void,
    param_count: c_int,
    params: [*mut c_void; 32],
    call_index: usize,
    cluster: [c_uint; 3],
}

/// The stand-in's control functions, from the same library instance fstitch loads.
struct FakeDriver {
    reset: unsafe extern "C" fn(),
    clear_records: unsafe extern "C" fn(),
    set_param_count: unsafe extern "C" fn(*const c_char, c_int),
    launch_count: unsafe extern "C" fn() -> usize,
    launch: unsafe extern "C" fn(usize, *mut LaunchRecord) -> c_int,
}

impl FakeDriver {
    fn open(path: &str) -> FakeDriver {
        let c_path = CString::new(path).unwrap();
        let handle = unsafe { dlopen(c_path.as_ptr(), RTLD_NOW) };
        assert!(!handle.is_null(), "dlopen({path}) failed");
        let symbol = |name: &str| {
            let c_name = CString::new(name).unwrap();
            let address = unsafe { dlsym(handle, c_name.as_ptr()) };
            assert!(!address.is_null(), "{path} lacks {name}");
            address
        };
        unsafe {
            FakeDriver {
                reset: std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(symbol(
                    "fake_cuda_reset",
                )),
                clear_records: std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(symbol(
                    "fake_cuda_clear_records",
                )),
                set_param_count: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*const c_char, c_int),
                >(symbol("fake_cuda_set_param_count")),
                launch_count: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> usize>(
                    symbol("fake_cuda_launch_count"),
                ),
                launch: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(usize, *mut LaunchRecord) -> c_int,
                >(symbol("fake_cuda_launch")),
            }
        }
    }

    fn launch(&self, index: usize) -> LaunchRecord {
        let mut record = std::mem::MaybeUninit::<LaunchRecord>::zeroed();
        assert_eq!(unsafe { (self.launch)(index, record.as_mut_ptr()) }, 1);
        unsafe { record.assume_init() }
    }
}

/// A recognizable fake device address.
fn device_address(base: usize) -> *mut c_void {
    base as *mut c_void
}

#[test]
fn the_cuda_backend_through_the_stand_in_driver() {
    let Ok(path) = std::env::var("FSTITCH_TEST_FAKE_CUDA") else {
        eprintln!("FSTITCH_TEST_FAKE_CUDA is not set: the stand-in driver test does not run");
        return;
    };
    std::env::set_var("FSTITCH_CUDA_DRIVER", &path);
    let fake = FakeDriver::open(&path);
    unsafe { (fake.reset)() };

    let context = Context::builder()
        .backend(Backend::Cuda)
        .cache_dir(cache_dir())
        .log_level(LogLevel::Off)
        .build()
        .unwrap();
    assert_eq!(context.active_backend(), Backend::Cuda);
    assert_eq!(context.device_arch().unwrap(), 90);

    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[4, 64]);
    let e = (x - x.max(&[-1], true)).exp();
    graph.output("y", e / e.sum(&[-1], true)).unwrap();
    graph.output("row_max", x.max(&[-1], false)).unwrap();
    let fusion = graph
        .fuse(&FuseOptions::new().policy(FusionPolicy::Loop))
        .unwrap();
    drop(graph);

    // Host buffers are refused before the library sees them.
    let (xs, mut y, mut row_max) = ([0.0f32; 256], [0.0f32; 256], [0.0f32; 4]);
    let error = fusion
        .run(
            &[(&xs).into()],
            &mut [(&mut y).into(), (&mut row_max).into()],
        )
        .unwrap_err();
    assert_eq!(error.status(), Status::InvalidArgument);
    assert!(error.message().contains("run_raw"), "{error}");
    unsafe { (fake.clear_records)() };
    assert!(fusion
        .run(
            &[(&xs).into()],
            &mut [(&mut y).into(), (&mut row_max).into()]
        )
        .is_err());
    assert_eq!(unsafe { (fake.launch_count)() }, 0);

    // run_raw queues every kernel with the caller's pointers.
    let kernels = fusion.kernels().unwrap();
    assert!(kernels.len() > 1);
    for kernel in &kernels {
        let name = CString::new(kernel.name().unwrap()).unwrap();
        let count = kernel.param_count().unwrap() as c_int;
        unsafe { (fake.set_param_count)(name.as_ptr(), count) };
    }
    let inputs = [device_address(0x10_0000) as *const c_void];
    let outputs = [device_address(0x20_0000), device_address(0x30_0000)];
    unsafe { fusion.run_raw(&inputs, &outputs, ptr::null_mut(), ptr::null_mut()) }.unwrap();
    assert_eq!(unsafe { (fake.launch_count)() }, kernels.len());
    for (index, kernel) in kernels.iter().enumerate() {
        let record = fake.launch(index);
        let name = unsafe { CStr::from_ptr(record.kernel.as_ptr()) };
        assert_eq!(name.to_str().unwrap(), kernel.name().unwrap());
        let config = kernel.launch_config().unwrap();
        assert_eq!(record.grid, config.grid);
        assert_eq!(record.block, config.block);
        assert_eq!(record.shared_bytes as usize, config.dynamic_shared_bytes);
        assert_eq!(
            record.cooperative == 1,
            kernel.launch_kind().unwrap() == LaunchKind::Cooperative
        );
        assert_eq!(record.cluster, [kernel.cluster_blocks().unwrap(), 1, 1]);
        for (position, param) in kernel.params().unwrap().iter().enumerate() {
            let expected = match param.kind {
                ParamKind::Input => inputs[param.index].cast_mut(),
                ParamKind::Output => outputs[param.index],
                ParamKind::Workspace => continue,
                ParamKind::Constant => panic!("this graph has no tensor constants"),
            };
            assert_eq!(
                record.params[position],
                expected,
                "{}",
                kernel.name().unwrap()
            );
        }
    }

    // One kernel through its CUfunction and Kernel::launch.
    let kernel = kernels[0];
    assert!(!kernel.function().unwrap().is_null());
    unsafe { (fake.clear_records)() };
    let workspace = 0x40_0000usize;
    let args: Vec<*mut c_void> = kernel
        .params()
        .unwrap()
        .iter()
        .map(|param| match param.kind {
            ParamKind::Input => inputs[param.index].cast_mut(),
            ParamKind::Output => outputs[param.index],
            ParamKind::Workspace => device_address(workspace + param.index),
            ParamKind::Constant => panic!("this graph has no tensor constants"),
        })
        .collect();
    unsafe { kernel.launch(&args, ptr::null_mut()) }.unwrap();
    assert_eq!(unsafe { (fake.launch_count)() }, 1);
    let record = fake.launch(0);
    assert_eq!(&record.params[..args.len()], &args[..]);
    drop(fusion);

    opaque_steps_on_the_cuda_backend(&context, &fake);
    drop(context);
}

/// Runs with opaque operations on the CUDA backend: the closure comes between the launches
/// in step order, with device pointers at the plan's locations, and refuses typed slices.
fn opaque_steps_on_the_cuda_backend(context: &Context, fake: &FakeDriver) {
    let graph = Graph::new(context).unwrap();
    let x = graph.input("x", DType::F32, &[4, 8]);
    let w = graph.input("w", DType::F32, &[8, 6]);
    let h = graph.opaque("matmul", &[x * 0.5, w], DType::F32, &[4, 6]);
    graph.output("y", h.tanh()).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    drop(graph);
    for kernel in fusion.kernels().unwrap() {
        let name = CString::new(kernel.name().unwrap()).unwrap();
        let count = kernel.param_count().unwrap() as c_int;
        unsafe { (fake.set_param_count)(name.as_ptr(), count) };
    }
    let steps = fusion.steps().unwrap();
    let op = fusion.opaque_op(0).unwrap();
    let kernels_before = steps
        .iter()
        .position(|step| matches!(step, fstitch::Step::Opaque(_)))
        .unwrap();
    let inputs = [
        0x50_0000usize as *const c_void,
        0x60_0000usize as *const c_void,
    ];
    let outputs = [device_address(0x70_0000)];
    let workspace = 0x80_0000usize;
    let address = |kind: ParamKind, index: usize| match kind {
        ParamKind::Input => inputs[index] as usize,
        ParamKind::Output => outputs[index] as usize,
        ParamKind::Workspace => workspace + index,
        ParamKind::Constant => panic!("this graph has no tensor constants"),
    };
    unsafe { (fake.clear_records)() };
    let mut calls = 0;
    unsafe {
        fusion.run_raw_with_opaque(
            &inputs,
            &outputs,
            device_address(workspace),
            ptr::null_mut(),
            |call| {
                calls += 1;
                assert!(!call.is_host());
                assert!(call.stream()?.is_null());
                assert_eq!((fake.launch_count)(), kernels_before);
                for (index, operand) in op.operands.iter().enumerate() {
                    let data = call.operand(index)?.data as usize;
                    assert_eq!(data, address(operand.kind, operand.index));
                }
                let result = call.result()?.data as usize;
                assert_eq!(result, address(op.result.kind, op.result.index));
                let refused = call.operand_slice::<f32>(0).unwrap_err();
                assert_eq!(refused.status(), Status::InvalidArgument);
                assert!(refused.message().contains("device memory"), "{refused}");
                Ok(())
            },
        )
    }
    .unwrap();
    assert_eq!(calls, 1);
    assert_eq!(
        unsafe { (fake.launch_count)() },
        fusion.kernel_count().unwrap()
    );
    // Host buffers are refused before the library sees them.
    let (xs, ws, mut ys) = ([0.0f32; 32], [0.0f32; 48], [0.0f32; 24]);
    let error = fusion
        .run_with_opaque(
            &[(&xs).into(), (&ws).into()],
            &mut [(&mut ys).into()],
            |_| Ok(()),
        )
        .unwrap_err();
    assert!(error.message().contains("run_raw_with_opaque"), "{error}");
}
