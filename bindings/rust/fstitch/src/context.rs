//! Contexts: backend, device, logging and kernel cache configuration.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use fstitch_sys as sys;

use crate::compile_stats::{self, CompileStats};
use crate::enums::{from_c, Backend, LogLevel};
use crate::error::{check, Error, Result, Status};
use crate::util::{c_string, copy_c_str};

/// A log receiver: called from any thread that calls into fstitch, possibly from several
/// at once.
type LogSink = Box<dyn Fn(LogLevel, &str) + Send + Sync + 'static>;

/// Process-level configuration: backend, device, logging and the kernel cache directory.
///
/// Immutable and thread-safe (`Send + Sync`); cloning it is cheap and shares the same C
/// context. Graphs and fusions hold a clone, so a context may be dropped before them.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    raw: NonNull<sys::fst_context>,
    active_backend: Backend,
    // Read by the C logger through a raw pointer; freed only after the C context is gone.
    _log_sink: Option<Box<LogSink>>,
}

// SAFETY: fstitch.h documents fst_context as immutable and thread-safe, and the log sink
// is Send + Sync.
unsafe impl Send for ContextInner {}
unsafe impl Sync for ContextInner {}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // SAFETY: raw came from fst_context_create and is released once. Every graph and
        // fusion made from it holds this Arc, so no C object that could log outlives it.
        unsafe { sys::fst_context_destroy(self.raw.as_ptr()) };
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("active_backend", &self.inner.active_backend)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// A context with the defaults: backend auto (CUDA when a driver and an sm_80+ device
    /// exist, else host, or as `FSTITCH_BACKEND` says), device 0, log level warn (or
    /// `FSTITCH_LOG`), messages to stderr, the default cache directory.
    pub fn new() -> Result<Context> {
        ContextBuilder::default().build()
    }

    /// A builder for a context with chosen options.
    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }

    /// The backend requested when the context was created (possibly [`Backend::Auto`]).
    pub fn backend(&self) -> Result<Backend> {
        let mut backend = sys::FST_BACKEND_AUTO;
        // SAFETY: a live context and a valid out pointer.
        check(unsafe { sys::fst_context_backend(self.as_raw(), &mut backend) })?;
        from_c(backend, Backend::from_raw, "fst_context_backend")
    }

    /// The backend runs use: [`Backend::Cuda`] or [`Backend::Host`], never `Auto`.
    pub fn active_backend(&self) -> Backend {
        self.inner.active_backend
    }

    /// The device's compute capability as 10 * major + minor (90 for an H100 or H200);
    /// [`Status::NoDevice`] on the host backend.
    pub fn device_arch(&self) -> Result<i32> {
        let mut sm = 0;
        // SAFETY: a live context and a valid out pointer.
        check(unsafe { sys::fst_context_device_arch(self.as_raw(), &mut sm) })?;
        Ok(sm)
    }

    /// The log level in force.
    pub fn log_level(&self) -> Result<LogLevel> {
        let mut level = sys::FST_LOG_OFF;
        // SAFETY: a live context and a valid out pointer.
        check(unsafe { sys::fst_context_log_level(self.as_raw(), &mut level) })?;
        from_c(level, LogLevel::from_raw, "fst_context_log_level")
    }

    /// The disk cache directory in force, or `"off"`.
    pub fn cache_dir(&self) -> Result<String> {
        let mut path: *const c_char = ptr::null();
        // SAFETY: a live context and a valid out pointer; the string lives with the context
        // and is copied here.
        unsafe {
            check(sys::fst_context_cache_dir(self.as_raw(), &mut path))?;
            copy_c_str(path, "fst_context_cache_dir")
        }
    }

    /// What the compiles of every fusion of this context did so far.
    pub fn compile_stats(&self) -> Result<CompileStats> {
        // SAFETY: a live context and a valid out pointer for each call.
        compile_stats::read(|stat, out| unsafe {
            sys::fst_context_compile_stat(self.as_raw(), stat, out)
        })
    }

    /// Emits `message` through the context's logger, as fstitch's own messages are.
    pub fn log(&self, level: LogLevel, message: &str) -> Result<()> {
        let message = c_string(message, "log message")?;
        // SAFETY: a live context and a NUL-terminated message.
        check(unsafe { sys::fst_context_log(self.as_raw(), level.to_raw(), message.as_ptr()) })
    }

    /// The C handle, for calls through [`crate::sys`]; valid while this context (or a clone)
    /// lives. Do not destroy it.
    pub fn as_raw(&self) -> *mut sys::fst_context {
        self.inner.raw.as_ptr()
    }
}

/// Options for [`Context`], applied by [`ContextBuilder::build`], which reports the first
/// option the library rejects.
#[derive(Default)]
pub struct ContextBuilder {
    backend: Option<Backend>,
    device: Option<i32>,
    log_level: Option<LogLevel>,
    cache_dir: Option<PathBuf>,
    log_sink: Option<LogSink>,
}

impl std::fmt::Debug for ContextBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextBuilder")
            .field("backend", &self.backend)
            .field("device", &self.device)
            .field("log_level", &self.log_level)
            .field("cache_dir", &self.cache_dir)
            .field("log_callback", &self.log_sink.is_some())
            .finish()
    }
}

impl ContextBuilder {
    /// Chooses the backend. [`Backend::Cuda`] fails at `build` without a driver or device.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }

    /// Chooses the CUDA device ordinal (ignored by the host backend); negative is an error.
    pub fn device(mut self, ordinal: i32) -> Self {
        self.device = Some(ordinal);
        self
    }

    /// Sets the log level; overrides `FSTITCH_LOG`.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Sets the on-disk kernel cache directory; `"off"` disables the disk cache.
    pub fn cache_dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(path.into());
        self
    }

    /// Sends log messages to `callback` instead of stderr. It may be called from any
    /// thread that calls into fstitch, and from several at once; a panic in it is caught
    /// and the message dropped.
    pub fn log_callback(
        mut self,
        callback: impl Fn(LogLevel, &str) + Send + Sync + 'static,
    ) -> Self {
        self.log_sink = Some(Box::new(callback));
        self
    }

    /// Creates the context; the backend is settled here.
    pub fn build(self) -> Result<Context> {
        let options = ContextOptions::new()?;
        if let Some(backend) = self.backend {
            // SAFETY: live options.
            check(unsafe { sys::fst_context_options_set_backend(options.0, backend.to_raw()) })?;
        }
        if let Some(device) = self.device {
            // SAFETY: live options.
            check(unsafe { sys::fst_context_options_set_device(options.0, device) })?;
        }
        if let Some(level) = self.log_level {
            // SAFETY: live options.
            check(unsafe { sys::fst_context_options_set_log_level(options.0, level.to_raw()) })?;
        }
        if let Some(dir) = &self.cache_dir {
            let dir = path_to_c(dir)?;
            // SAFETY: live options; the path is copied by the library.
            check(unsafe { sys::fst_context_options_set_cache_dir(options.0, dir.as_ptr()) })?;
        }
        // Boxed twice so that the C side holds a thin pointer; the outer box does not move
        // when it is stored in the context.
        let log_sink = self.log_sink.map(Box::new);
        if let Some(sink) = &log_sink {
            let user_data = &**sink as *const LogSink as *mut c_void;
            // SAFETY: live options; user_data stays valid as long as the C context, which
            // ContextInner guarantees by dropping the sink after destroying the context.
            check(unsafe {
                sys::fst_context_options_set_log_callback(
                    options.0,
                    Some(log_trampoline),
                    user_data,
                )
            })?;
        }
        let mut raw = ptr::null_mut();
        // SAFETY: live options and a valid out pointer.
        check(unsafe { sys::fst_context_create(options.0, &mut raw) })?;
        let raw = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                Status::Internal,
                "fst_context_create returned FST_OK and a NULL context",
            )
        })?;
        let mut active = sys::FST_BACKEND_HOST;
        // SAFETY: a live context and a valid out pointer.
        let status = unsafe { sys::fst_context_active_backend(raw.as_ptr(), &mut active) };
        let active = check(status)
            .and_then(|()| from_c(active, Backend::from_raw, "fst_context_active_backend"));
        match active {
            Ok(active_backend) => Ok(Context {
                inner: Arc::new(ContextInner {
                    raw,
                    active_backend,
                    _log_sink: log_sink,
                }),
            }),
            Err(error) => {
                // SAFETY: the context was just created and is released once; the log sink
                // is dropped after it.
                unsafe { sys::fst_context_destroy(raw.as_ptr()) };
                Err(error)
            }
        }
    }
}

/// Owned `fst_context_options`.
struct ContextOptions(*mut sys::fst_context_options);

impl ContextOptions {
    fn new() -> Result<ContextOptions> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out pointer.
        check(unsafe { sys::fst_context_options_create(&mut raw) })?;
        Ok(ContextOptions(raw))
    }
}

impl Drop for ContextOptions {
    fn drop(&mut self) {
        // SAFETY: created by fst_context_options_create, destroyed once.
        unsafe { sys::fst_context_options_destroy(self.0) };
    }
}

fn path_to_c(path: &std::path::Path) -> Result<std::ffi::CString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| {
            Error::new(
                Status::InvalidArgument,
                format!("cache directory {path:?} contains a NUL byte"),
            )
        })
    }
    #[cfg(not(unix))]
    {
        match path.to_str() {
            Some(text) => c_string(text, "cache directory"),
            None => Err(Error::new(
                Status::InvalidArgument,
                format!("cache directory {path:?} is not valid Unicode"),
            )),
        }
    }
}

unsafe extern "C" fn log_trampoline(
    user_data: *mut c_void,
    level: sys::fst_log_level,
    message: *const c_char,
) {
    if user_data.is_null() || message.is_null() {
        return;
    }
    // SAFETY: user_data is the LogSink registered in ContextBuilder::build, alive while the
    // context is; message is valid during the call.
    let sink = &*(user_data as *const LogSink);
    let message = CStr::from_ptr(message).to_string_lossy();
    let level = LogLevel::from_raw(level).unwrap_or(LogLevel::Trace);
    // A panic must not unwind into C.
    let _ = catch_unwind(AssertUnwindSafe(|| sink(level, &message)));
}
