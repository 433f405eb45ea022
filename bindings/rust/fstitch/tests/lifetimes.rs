//! Ownership and threads: a fusion outlives its graph and context, handles are Send/Sync
//! as fstitch.h allows, log callbacks stay valid, contexts report their configuration.

mod common;

use std::sync::{Arc, Mutex};

use common::{cache_dir, host_context, uniform};
use fstitch::{
    Backend, CompileStats, Context, DType, FuseOptions, Fusion, Graph, Kernel, LogLevel, Status,
};

fn assert_send_sync<T: Send + Sync>() {}
fn assert_send<T: Send>() {}

#[test]
fn handles_are_send_and_sync_where_the_header_allows() {
    assert_send_sync::<Context>();
    assert_send_sync::<Fusion>();
    assert_send_sync::<Kernel<'static>>();
    assert_send_sync::<fstitch::Error>();
    assert_send::<Graph>();
}

fn rms_norm_fusion(context: &Context) -> Fusion {
    let graph = Graph::new(context).unwrap();
    let x = graph.input("x", DType::F32, &[4, 32]);
    let ms = (x * x).mean(&[-1], true);
    graph.output("y", x * (ms + 1e-6).rsqrt()).unwrap();
    graph.fuse(&FuseOptions::new()).unwrap()
}

fn direct_rms_norm(x: &[f32]) -> Vec<f32> {
    x.chunks(32)
        .flat_map(|row| {
            let ms = row.iter().map(|&v| v as f64 * v as f64).sum::<f64>() / 32.0;
            row.iter()
                .map(move |&v| (v as f64 / (ms + 1e-6).sqrt()) as f32)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_fusion_outlives_its_graph_and_context() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::F32, &[4, 32]);
    let ms = (x * x).mean(&[-1], true);
    graph.output("y", x * (ms + 1e-6).rsqrt()).unwrap();
    let fusion = graph.fuse(&FuseOptions::new()).unwrap();
    drop(graph);
    drop(context);

    let kernels = fusion.kernels().unwrap();
    assert!(!kernels[0].source().unwrap().is_empty());
    let xs = uniform(128, -2.0, 2.0, 5);
    let mut y = vec![0.0f32; 128];
    fusion.run(&[(&xs).into()], &mut [(&mut y).into()]).unwrap();
    for (got, want) in y.iter().zip(direct_rms_norm(&xs)) {
        assert!((got - want).abs() < 1e-5);
    }
    assert_eq!(fusion.context().active_backend(), Backend::Host);
    drop(fusion);
}

#[test]
fn one_fusion_runs_from_several_threads_at_once() {
    let context = host_context();
    let fusion = rms_norm_fusion(&context);
    drop(context);
    let expected: Vec<Vec<f32>> = (0..4)
        .map(|seed| direct_rms_norm(&uniform(128, -3.0, 3.0, seed)))
        .collect();
    std::thread::scope(|scope| {
        for (seed, expected) in expected.iter().enumerate() {
            let fusion = &fusion;
            scope.spawn(move || {
                let xs = uniform(128, -3.0, 3.0, seed as u64);
                for _ in 0..3 {
                    let mut y = vec![0.0f32; 128];
                    fusion.run(&[(&xs).into()], &mut [(&mut y).into()]).unwrap();
                    for (got, want) in y.iter().zip(expected) {
                        assert!((got - want).abs() < 1e-5);
                    }
                }
                let kernel = fusion.kernel(0).unwrap();
                assert!(!kernel.name().unwrap().is_empty());
            });
        }
    });
}

#[test]
fn graphs_move_between_threads_and_contexts_are_shared() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let fusion = std::thread::spawn(move || {
        let x = graph.input("x", DType::F32, &[3]);
        graph.output("y", x * 2.0).unwrap();
        graph.fuse(&FuseOptions::new()).unwrap()
    })
    .join()
    .unwrap();
    let shared = context.clone();
    std::thread::spawn(move || Graph::new(&shared).unwrap().value_count().unwrap())
        .join()
        .unwrap();
    let (x, mut y) = ([1.0f32, 2.0, 3.0], [0.0f32; 3]);
    fusion.run(&[(&x).into()], &mut [(&mut y).into()]).unwrap();
    assert_eq!(y, [2.0, 4.0, 6.0]);
}

#[test]
fn a_context_reports_its_configuration() {
    let context = host_context();
    assert_eq!(context.backend().unwrap(), Backend::Host);
    assert_eq!(context.active_backend(), Backend::Host);
    assert_eq!(context.log_level().unwrap(), LogLevel::Error);
    assert_eq!(context.cache_dir().unwrap(), cache_dir().to_str().unwrap());
    assert_eq!(
        context.device_arch().unwrap_err().status(),
        Status::NoDevice
    );

    let off = Context::builder()
        .backend(Backend::Host)
        .cache_dir("off")
        .build()
        .unwrap();
    assert_eq!(off.cache_dir().unwrap(), "off");

    // Auto resolves to a real backend when the context is made (set explicitly so that
    // FSTITCH_BACKEND in the environment does not change the test).
    let automatic = Context::builder()
        .backend(Backend::Auto)
        .log_level(LogLevel::Off)
        .build()
        .unwrap();
    assert_eq!(automatic.backend().unwrap(), Backend::Auto);
    assert_ne!(automatic.active_backend(), Backend::Auto);
}

#[test]
fn log_messages_reach_the_callback_while_anything_can_log() {
    let messages: Arc<Mutex<Vec<(LogLevel, String)>>> = Arc::default();
    let sink = Arc::clone(&messages);
    let context = Context::builder()
        .backend(Backend::Host)
        .cache_dir(cache_dir())
        .log_level(LogLevel::Info)
        .log_callback(move |level, message| {
            sink.lock().unwrap().push((level, message.to_owned()));
        })
        .build()
        .unwrap();
    context.log(LogLevel::Warn, "warning from rust").unwrap();
    context.log(LogLevel::Debug, "below the level").unwrap();
    {
        let messages = messages.lock().unwrap();
        assert!(messages
            .iter()
            .any(|(level, text)| *level == LogLevel::Warn && text.contains("warning from rust")));
        assert!(!messages
            .iter()
            .any(|(_, text)| text.contains("below the level")));
    }

    // The fusion keeps the callback alive after the context is dropped.
    let fusion = rms_norm_fusion(&context);
    drop(context);
    messages.lock().unwrap().clear();
    let xs = [0.5f32; 128];
    let mut y = [0.0f32; 128];
    fusion.run(&[(&xs).into()], &mut [(&mut y).into()]).unwrap();
    fusion
        .context()
        .log(LogLevel::Error, "after the drop")
        .unwrap();
    assert!(messages
        .lock()
        .unwrap()
        .iter()
        .any(|(_, text)| text.contains("after the drop")));
}

#[test]
fn a_panicking_log_callback_does_not_unwind_into_c() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let context = Context::builder()
        .backend(Backend::Host)
        .log_level(LogLevel::Warn)
        .log_callback(move |_, message| {
            if message.contains("from the test") {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                panic!("the log callback panics on purpose");
            }
        })
        .build()
        .unwrap();
    context.log(LogLevel::Error, "boom from the test").unwrap();
    context.log(LogLevel::Error, "again from the test").unwrap();
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[test]
fn the_loaded_library_has_the_expected_version() {
    assert_eq!(fstitch::version_number(), fstitch::sys::FST_VERSION_NUMBER);
    assert_eq!(
        fstitch::version_string(),
        format!(
            "{}.{}.{}",
            fstitch::sys::FST_VERSION_MAJOR,
            fstitch::sys::FST_VERSION_MINOR,
            fstitch::sys::FST_VERSION_PATCH
        )
    );
    assert_eq!(fstitch::MAX_RANK, 8);
}

#[test]
fn compile_stats_count_what_each_fusion_compiled() {
    // No disk cache: each fusion's host module is compiled at its first run.
    let context = Context::builder()
        .backend(Backend::Host)
        .cache_dir("off")
        .log_level(LogLevel::Error)
        .build()
        .unwrap();
    assert_eq!(context.compile_stats().unwrap(), CompileStats::default());
    let xs = uniform(128, -2.0, 2.0, 7);
    let mut y = vec![0.0f32; 128];
    for round in 1..=2u64 {
        let fusion = rms_norm_fusion(&context);
        assert_eq!(
            fusion.compile_stats().unwrap(),
            CompileStats::default(),
            "fusing compiles nothing"
        );
        fusion.run(&[(&xs).into()], &mut [(&mut y).into()]).unwrap();
        let stats = fusion.compile_stats().unwrap();
        assert_eq!(
            (stats.compiled, stats.disk_hits, stats.disk_writes),
            (1, 0, 0)
        );
        assert!(stats.compile_time > std::time::Duration::ZERO);
        assert_eq!(context.compile_stats().unwrap().compiled, round);
    }
}
