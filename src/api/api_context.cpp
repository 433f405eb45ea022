// fst_context_options_* and fst_context_*.
#include "api/compile_stat.hpp"
#include "api/handles.hpp"
#include "runtime/cuda/device.hpp"

using fstitch::fail;
using fstitch::StatusCode;
using fstitch::api::guarded;
using fstitch::api::require_not_null;

namespace {

fstitch::LogSink make_sink(fst_log_callback callback, void* user_data) {
  if (callback == nullptr) return {};
  return [callback, user_data](fstitch::LogLevel level, const char* message) {
    callback(user_data, static_cast<fst_log_level>(level), message);
  };
}

}  // namespace

extern "C" {

FST_API fst_status fst_context_options_create(fst_context_options** out_options) {
  return guarded(__func__, [&] {
    require_not_null(out_options, "out_options");
    auto* options = new fst_context_options();
    options->config = fstitch::default_context_config();
    *out_options = options;
  });
}

FST_API void fst_context_options_destroy(fst_context_options* options) {
  delete options;
}

FST_API fst_status fst_context_options_set_backend(fst_context_options* options, fst_backend backend) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    const int code = fstitch::api::enum_code(backend);
    if (code < FST_BACKEND_AUTO || code > FST_BACKEND_HOST) {
      fail(StatusCode::kInvalidArgument,
           "backend " + std::to_string(code) + " is not an fst_backend (0 auto, 1 cuda, 2 host)");
    }
    options->config.backend = static_cast<fstitch::Backend>(code);
  });
}

FST_API fst_status fst_context_options_set_device(fst_context_options* options, int device_ordinal) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    if (device_ordinal < 0) {
      fail(StatusCode::kInvalidArgument, "device ordinal " + std::to_string(device_ordinal) + " is negative");
    }
    options->config.device = device_ordinal;
  });
}

FST_API fst_status fst_context_options_set_log_level(fst_context_options* options, fst_log_level level) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    const int code = fstitch::api::enum_code(level);
    if (code < FST_LOG_OFF || code > FST_LOG_TRACE) {
      fail(StatusCode::kInvalidArgument,
           "log level " + std::to_string(code) + " is not an fst_log_level (0 off .. 5 trace)");
    }
    options->config.log_level = static_cast<fstitch::LogLevel>(code);
  });
}

FST_API fst_status fst_context_options_set_log_callback(fst_context_options* options,
                                                        fst_log_callback callback, void* user_data) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    options->config.log_sink = make_sink(callback, user_data);
  });
}

FST_API fst_status fst_context_options_set_cache_dir(fst_context_options* options, const char* path) {
  return guarded(__func__, [&] {
    require_not_null(options, "options");
    if (path == nullptr) {
      options->config.cache_dir = fstitch::default_context_config().cache_dir;
      return;
    }
    if (*path == '\0')
      fail(StatusCode::kInvalidArgument, "path is empty (use \"off\" to disable the disk cache)");
    options->config.cache_dir = path;
  });
}

FST_API fst_status fst_context_create(const fst_context_options* options, fst_context** out_context) {
  return guarded(__func__, [&] {
    require_not_null(out_context, "out_context");
    fstitch::ContextConfig config = options ? options->config : fstitch::default_context_config();
    auto context = std::make_unique<fst_context>();
    context->impl = std::make_shared<fstitch::Context>(std::move(config));
    const fstitch::Context& c = *context->impl;
    std::string message = std::string("context created: backend ") + fstitch::backend_name(c.config.backend);
    if (c.config.backend == fstitch::Backend::kAuto) {
      message += std::string(" chose ") + fstitch::backend_name(c.active_backend());
    }
    if (c.device) {
      const fstitch::cuda::DeviceInfo& d = c.device->info();
      message += ", device " + std::to_string(d.ordinal) + " " + d.name + " (sm_" +
                 std::to_string(d.compute_capability()) + ", " + std::to_string(d.multiprocessors) +
                 " multiprocessors, driver " + c.device->driver().library() + ")";
    } else if (!c.backend_reason.empty()) {
      message += " (" + c.backend_reason + ")";
    }
    message += ", cache " + c.config.cache_dir;
    c.logger.log(fstitch::LogLevel::kInfo, message);
    *out_context = context.release();
  });
}

FST_API void fst_context_destroy(fst_context* context) {
  delete context;
}

FST_API fst_status fst_context_backend(const fst_context* context, fst_backend* out_backend) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(out_backend, "out_backend");
    *out_backend = static_cast<fst_backend>(context->impl->config.backend);
  });
}

FST_API fst_status fst_context_active_backend(const fst_context* context, fst_backend* out_backend) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(out_backend, "out_backend");
    *out_backend = static_cast<fst_backend>(context->impl->active_backend());
  });
}

FST_API fst_status fst_context_device_arch(const fst_context* context, int* out_sm) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(out_sm, "out_sm");
    if (!context->impl->device) {
      std::string why =
          context->impl->backend_reason.empty() ? "" : " (" + context->impl->backend_reason + ")";
      fail(StatusCode::kNoDevice, "the context runs on the host backend and has no device" + why);
    }
    *out_sm = context->impl->device->info().compute_capability();
  });
}

FST_API fst_status fst_context_log_level(const fst_context* context, fst_log_level* out_level) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(out_level, "out_level");
    *out_level = static_cast<fst_log_level>(context->impl->config.log_level);
  });
}

FST_API fst_status fst_context_cache_dir(const fst_context* context, const char** out_path) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(out_path, "out_path");
    *out_path = context->impl->config.cache_dir.c_str();
  });
}

FST_API fst_status fst_context_compile_stat(const fst_context* context, fst_compile_stat stat,
                                            uint64_t* out_value) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(out_value, "out_value");
    *out_value = fstitch::api::compile_stat_value(context->impl->compiled.load(), stat);
  });
}

FST_API fst_status fst_context_log(const fst_context* context, fst_log_level level, const char* message) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(message, "message");
    const int code = fstitch::api::enum_code(level);
    if (code < FST_LOG_ERROR || code > FST_LOG_TRACE) {
      fail(StatusCode::kInvalidArgument,
           "log level " + std::to_string(code) + " is not a message level (1 error .. 5 trace)");
    }
    context->impl->logger.log(static_cast<fstitch::LogLevel>(code), message);
  });
}

}  // extern "C"
