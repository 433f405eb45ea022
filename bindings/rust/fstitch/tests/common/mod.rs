//! Helpers shared by the integration tests.
#![allow(dead_code)]

use fstitch::{Backend, Context, LogLevel};

/// A host-backend context with its disk cache under the test's temporary directory.
pub fn host_context() -> Context {
    Context::builder()
        .backend(Backend::Host)
        .log_level(LogLevel::Error)
        .cache_dir(cache_dir())
        .build()
        .expect("a host-backend context")
}

pub fn cache_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fstitch-cache")
}

/// Deterministic data in [lo, hi): a 64-bit LCG.
pub fn uniform(len: usize, lo: f32, hi: f32, seed: u64) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            (lo as f64 + unit * (hi - lo) as f64) as f32
        })
        .collect()
}

/// Largest |a - b| over two buffers of equal length.
pub fn max_abs_diff(a: &[f32], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (x as f64 - y).abs())
        .fold(0.0, f64::max)
}

pub fn to_f64(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| v as f64).collect()
}
