//! Finds libfstitch and tells cargo how to link it.
//!
//! The library directory comes from, in order: `$FSTITCH_LIB_DIR`, the `-L` directory that
//! `pkg-config --libs-only-L fstitch` prints, or nothing (the linker's default search path).
//! A found directory is also recorded as an rpath of this crate's tests and passed on to
//! dependent crates as `DEP_FSTITCH_LIB_DIR` (this crate `links = "fstitch"`), so their
//! tests and examples run without `LD_LIBRARY_PATH`.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for variable in [
        "FSTITCH_LIB_DIR",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "PKG_CONFIG_SYSROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={variable}");
    }

    if let Some(dir) = library_dir() {
        println!("cargo:rustc-link-search=native={}", dir.display());
        if rpath_supported() {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        }
        println!("cargo:lib_dir={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=fstitch");
}

fn library_dir() -> Option<PathBuf> {
    if let Some(dir) = env::var_os("FSTITCH_LIB_DIR").filter(|dir| !dir.is_empty()) {
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            println!(
                "cargo:warning=FSTITCH_LIB_DIR={} is not a directory",
                dir.display()
            );
        }
        return Some(dir);
    }
    pkg_config_dir()
}

/// The first `-L` directory of `pkg-config --libs-only-L fstitch`; None when pkg-config is
/// missing, does not know fstitch, or prints no `-L` (a library in a default directory).
fn pkg_config_dir() -> Option<PathBuf> {
    let program = env::var_os("PKG_CONFIG").unwrap_or_else(|| "pkg-config".into());
    let output = Command::new(program)
        .args(["--libs-only-L", "fstitch"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    text.split_whitespace()
        .filter_map(|flag| flag.strip_prefix("-L"))
        .find(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

/// `-Wl,-rpath` is understood by the GNU and LLVM linker drivers of ELF and Mach-O targets.
fn rpath_supported() -> bool {
    !matches!(
        env::var("CARGO_CFG_TARGET_OS").as_deref(),
        Ok("windows") | Err(_)
    )
}
