//! Records the directory where fstitch-sys found libfstitch as an rpath of this crate's
//! tests and examples, so that they run without LD_LIBRARY_PATH. (Link arguments of a
//! build script apply to its own package only; fstitch-sys passes the directory on as
//! `DEP_FSTITCH_LIB_DIR`.)

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_FSTITCH_LIB_DIR");
    let rpath_supported = !matches!(
        std::env::var("CARGO_CFG_TARGET_OS").as_deref(),
        Ok("windows") | Err(_)
    );
    if let Some(dir) = std::env::var_os("DEP_FSTITCH_LIB_DIR") {
        if rpath_supported && !dir.is_empty() {
            let dir = std::path::PathBuf::from(dir);
            // Applies to this package's tests, examples and benches (a library ignores it).
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        }
    }
}
