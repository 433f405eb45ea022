// The calls of ApiProgram on contexts, option handles, fusions and kernels, and the
// stateless ones (status and dtype names, versions).
#include <climits>
#include <cstring>

#include "api_program.hpp"
#include "graph_checks.hpp"

namespace fstitch::fuzz {
namespace {

constexpr int kBadEnumCodes[] = {-1, 3, 6, 99, INT_MAX, INT_MIN};

int log_calls = 0;
void count_log_call(void*, fst_log_level, const char*) {
  ++log_calls;
}

}  // namespace

void ApiProgram::context_options_call() {
  if (context_options_ == nullptr || in_.chance(16)) {
    fst_context_options_destroy(context_options_);
    context_options_ = nullptr;
    options_shadow_ = ContextOptionsShadow{};
    clear_last_error();
    if (in_.chance(8)) {
      check_status("fst_context_options_create", fst_context_options_create(nullptr),
                   Expectation::fail({FST_ERROR_INVALID_ARGUMENT}));
      return;
    }
    check_status("fst_context_options_create", fst_context_options_create(&context_options_),
                 Expectation::succeed());
    // Log messages go to a counter, not to stderr, whatever level the program sets.
    check_status("fst_context_options_set_log_callback",
                 fst_context_options_set_log_callback(context_options_, count_log_call, nullptr),
                 Expectation::succeed());
    return;
  }
  fst_context_options* options = in_.chance(8) ? nullptr : context_options_;
  const Expectation null_fails = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  clear_last_error();
  switch (in_.below(5)) {
    case 0: {
      const int backend = in_.chance(32) ? in_.pick(kBadEnumCodes) : static_cast<int>(in_.below(3));
      const bool valid = backend >= FST_BACKEND_AUTO && backend <= FST_BACKEND_HOST;
      check_status("fst_context_options_set_backend",
                   fst_context_options_set_backend(options, static_cast<fst_backend>(backend)),
                   options && valid ? Expectation::succeed() : null_fails);
      if (options && valid) options_shadow_.backend = static_cast<fst_backend>(backend);
      break;
    }
    case 1: {
      const int device =
          in_.chance(64) ? INT_MIN + static_cast<int>(in_.below(3)) : static_cast<int>(in_.below(4)) - 1;
      check_status("fst_context_options_set_device", fst_context_options_set_device(options, device),
                   options && device >= 0 ? Expectation::succeed() : null_fails);
      break;
    }
    case 2: {
      const int level = in_.chance(32) ? in_.pick(kBadEnumCodes) : static_cast<int>(in_.below(6));
      const bool valid = level >= FST_LOG_OFF && level <= FST_LOG_TRACE;
      check_status("fst_context_options_set_log_level",
                   fst_context_options_set_log_level(options, static_cast<fst_log_level>(level)),
                   options && valid ? Expectation::succeed() : null_fails);
      break;
    }
    case 3:
      check_status("fst_context_options_set_log_callback",
                   fst_context_options_set_log_callback(options, count_log_call, this),
                   options ? Expectation::succeed() : null_fails);
      break;
    default: {
      static const char* const kDirs[] = {nullptr, "", "off", "/nonexistent/fstitch-fuzz-cache"};
      const char* dir = in_.pick(kDirs);
      const bool valid = dir == nullptr || *dir != '\0';
      check_status("fst_context_options_set_cache_dir", fst_context_options_set_cache_dir(options, dir),
                   options && valid ? Expectation::succeed() : null_fails);
      if (options && valid) options_shadow_.cache_dir = dir == nullptr ? "off" : dir;
      break;
    }
  }
}

void ApiProgram::create_context() {
  const size_t slot = in_.below(contexts_.size());
  ContextSlot& c = contexts_[slot];
  fst_context_destroy(c.context);
  c = ContextSlot{};
  const bool with_options = context_options_ != nullptr && in_.chance(200);
  const ContextOptionsShadow shadow = with_options ? options_shadow_ : ContextOptionsShadow{};
  fst_context* const sentinel = reinterpret_cast<fst_context*>(0x1);
  fst_context* context = sentinel;
  clear_last_error();
  if (in_.chance(4)) {
    check_status("fst_context_create", fst_context_create(context_options_, nullptr),
                 Expectation::fail({FST_ERROR_INVALID_ARGUMENT}));
    return;
  }
  const fst_status status = fst_context_create(with_options ? context_options_ : nullptr, &context);
  // The fuzz environment names a CUDA driver that does not exist.
  check_status(
      "fst_context_create", status,
      shadow.backend == FST_BACKEND_CUDA ? Expectation::fail({FST_ERROR_NO_DRIVER}) : Expectation::succeed());
  if (status != FST_OK) {
    check_untouched("fst_context_create", "out_context", context, sentinel);
    return;
  }
  c.context = context;
  c.backend = shadow.backend;
  c.cache_dir = shadow.cache_dir;
}

void ApiProgram::destroy_context() {
  ContextSlot& c = contexts_[in_.below(contexts_.size())];
  fst_context_destroy(c.context);  // graphs and fusions keep their own reference
  c = ContextSlot{};
}

void ApiProgram::query_context() {
  const ContextSlot& c = contexts_[in_.below(contexts_.size())];
  const fst_context* context = c.context;
  const Expectation expect =
      context == nullptr ? Expectation::fail({FST_ERROR_INVALID_ARGUMENT}) : Expectation::succeed();
  const fst_backend backend_sentinel = static_cast<fst_backend>(0x5a5a);
  fst_backend backend = backend_sentinel;
  clear_last_error();
  fst_status status = fst_context_backend(context, &backend);
  check_status("fst_context_backend", status, expect);
  if (status != FST_OK)
    check_untouched("fst_context_backend", "out_backend", backend, backend_sentinel);
  else if (backend != c.backend)
    violation("fst_context_backend is not the backend the context was made with");

  backend = backend_sentinel;
  clear_last_error();
  status = fst_context_active_backend(context, &backend);
  check_status("fst_context_active_backend", status, expect);
  if (status == FST_OK && backend != FST_BACKEND_HOST)
    violation("a context without a driver is not on the host");

  int sm = 0x5a5a;
  clear_last_error();
  status = fst_context_device_arch(context, &sm);
  check_status("fst_context_device_arch", status,
               context == nullptr ? expect : Expectation::fail({FST_ERROR_NO_DEVICE}));
  check_untouched("fst_context_device_arch", "out_sm", sm, 0x5a5a);

  fst_log_level level = static_cast<fst_log_level>(0x5a5a);
  clear_last_error();
  status = fst_context_log_level(context, &level);
  check_status("fst_context_log_level", status, expect);
  if (status == FST_OK && (level < FST_LOG_OFF || level > FST_LOG_TRACE)) violation("log level out of range");

  const char* path = reinterpret_cast<const char*>(0x1);
  clear_last_error();
  status = fst_context_cache_dir(context, &path);
  check_status("fst_context_cache_dir", status, expect);
  if (status != FST_OK)
    check_untouched("fst_context_cache_dir", "out_path", path, reinterpret_cast<const char*>(0x1));
  else if (c.cache_dir != path)
    violation("fst_context_cache_dir is \"" + std::string(path) + "\", set \"" + c.cache_dir + "\"");

  const int log_level = in_.chance(32) ? in_.pick(kBadEnumCodes) : static_cast<int>(in_.below(6));
  const bool null_message = in_.chance(32);
  Expectation log_expect = expect;
  if (log_level < FST_LOG_ERROR || log_level > FST_LOG_TRACE || null_message)
    log_expect.fault(FST_ERROR_INVALID_ARGUMENT);
  clear_last_error();
  check_status(
      "fst_context_log",
      fst_context_log(context, static_cast<fst_log_level>(log_level), null_message ? nullptr : "fuzz"),
      log_expect);
}

void ApiProgram::fuse_options_call() {
  if (fuse_options_ == nullptr || in_.chance(16)) {
    fst_fuse_options_destroy(fuse_options_);
    fuse_options_ = nullptr;
    clear_last_error();
    check_status("fst_fuse_options_create", fst_fuse_options_create(&fuse_options_), Expectation::succeed());
    return;
  }
  fst_fuse_options* options = in_.chance(8) ? nullptr : fuse_options_;
  const Expectation null_fails = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  clear_last_error();
  switch (in_.below(4)) {
    case 0: {
      const int policy = in_.chance(32) ? in_.pick(kBadEnumCodes) : static_cast<int>(in_.below(3));
      check_status("fst_fuse_options_set_policy",
                   fst_fuse_options_set_policy(options, static_cast<fst_fusion_policy>(policy)),
                   options && policy >= 0 && policy <= 2 ? Expectation::succeed() : null_fails);
      break;
    }
    case 1: {
      static const int kArchs[] = {80, 90, 90, 0, 75, 86, 100, -90};
      const int sm = in_.pick(kArchs);
      Expectation expect = options ? Expectation::succeed() : null_fails;
      if (options && sm != 80 && sm != 90) expect = Expectation::fail({FST_ERROR_UNSUPPORTED});
      check_status("fst_fuse_options_set_target_arch", fst_fuse_options_set_target_arch(options, sm), expect);
      break;
    }
    case 2: {
      static const size_t kBudgets[] = {48 * 1024, 1024, 227 * 1024, 1023, 227 * 1024 + 1, 0, SIZE_MAX, 4096};
      const size_t bytes = in_.pick(kBudgets);
      check_status("fst_fuse_options_set_shared_memory_budget",
                   fst_fuse_options_set_shared_memory_budget(options, bytes),
                   options && bytes >= 1024 && bytes <= 227 * 1024 ? Expectation::succeed() : null_fails);
      break;
    }
    default: {
      static const int kCaps[] = {64, 32, 255, 31, 256, 0, -1, 128};
      const int registers = in_.pick(kCaps);
      check_status("fst_fuse_options_set_register_cap", fst_fuse_options_set_register_cap(options, registers),
                   options && registers >= 32 && registers <= 255 ? Expectation::succeed() : null_fails);
      break;
    }
  }
}

void ApiProgram::fuse(int slot) {
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  fst_fusion* const sentinel = reinterpret_cast<fst_fusion*>(0x1);
  fst_fusion* fusion = sentinel;
  const fst_fuse_options* options = in_.chance(128) ? fuse_options_ : nullptr;
  const bool null_graph = in_.chance(6);
  const bool null_out = in_.chance(4);
  Expectation expect;
  if (null_graph || null_out)
    expect = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  else if (g.error != FST_OK)
    expect = Expectation::fail({g.error});
  else if (g.output_names.empty())
    expect = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  bool may_run_out_of_sizes = false;
  if (expect.kind == Expectation::Kind::kSucceed) {
    // Planning costs more than any other call: a few per input.
    if (fuses_ >= kMaxFusesPerInput) return;
    ++fuses_;
    may_run_out_of_sizes = fuse_expectation(g.graph).kind == Expectation::Kind::kUnknown;
  }
  clear_last_error();
  const fst_status status = fst_fuse(null_graph ? nullptr : g.graph, options, null_out ? nullptr : &fusion);
  check_status(
      "fst_fuse", status,
      may_run_out_of_sizes && status != FST_OK ? Expectation::fail({FST_ERROR_OUT_OF_MEMORY}) : expect);
  if (status != FST_OK) {
    check_untouched("fst_fuse", "out_fusion", fusion, sentinel);
    return;
  }
  check_fusion_queries(fusion, g.input_names.size(), g.output_names.size());
  FusionSlot& f = fusions_[in_.below(fusions_.size())];
  fst_fusion_destroy(f.fusion);
  f = FusionSlot{fusion, g.input_names.size(), g.output_names.size(), g.has_opaque, slot};

  uint64_t planned = 0;
  uint64_t lower_bound = 0;
  check_status("fst_fusion_planned_bytes", fst_fusion_planned_bytes(fusion, &planned, &lower_bound),
               Expectation::succeed());
  if (planned < lower_bound)
    violation("planned bytes " + std::to_string(planned) + " are below the lower bound " +
              std::to_string(lower_bound));
}

void ApiProgram::destroy_fusion() {
  FusionSlot& f = fusions_[in_.below(fusions_.size())];
  fst_fusion_destroy(f.fusion);
  f = FusionSlot{};
}

void ApiProgram::query_fusion() {
  const FusionSlot& f = fusions_[in_.below(fusions_.size())];
  const Expectation null_fails = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  if (f.fusion == nullptr) {
    size_t count = 0x5a5a;
    clear_last_error();
    check_status("fst_fusion_kernel_count", fst_fusion_kernel_count(nullptr, &count), null_fails);
    check_untouched("fst_fusion_kernel_count", "out_count", count, size_t{0x5a5a});
    uint64_t planned = 0x5a5a;
    uint64_t bound = 0x5a5a;
    clear_last_error();
    check_status("fst_fusion_planned_bytes", fst_fusion_planned_bytes(nullptr, &planned, &bound), null_fails);
    char* text = reinterpret_cast<char*>(0x1);
    clear_last_error();
    check_status("fst_fusion_dump", fst_fusion_dump(nullptr, &text), null_fails);
    check_untouched("fst_fusion_dump", "out_text", text, reinterpret_cast<char*>(0x1));
    return;
  }
  switch (in_.below(4)) {
    case 0:
      check_fusion_queries(f.fusion, f.inputs, f.outputs);
      break;
    case 1: {
      size_t count = 0;
      check_status("fst_fusion_kernel_count", fst_fusion_kernel_count(f.fusion, &count),
                   Expectation::succeed());
      const fst_kernel* const sentinel = reinterpret_cast<const fst_kernel*>(0x1);
      const fst_kernel* kernel = sentinel;
      const size_t index = in_.chance(128) ? count + in_.below(3) : SIZE_MAX;
      clear_last_error();
      check_status("fst_fusion_kernel", fst_fusion_kernel(f.fusion, index, &kernel), null_fails);
      check_untouched("fst_fusion_kernel", "out_kernel", kernel, sentinel);
      break;
    }
    case 2:
      call_fusion_run(f);
      break;
    default: {
      size_t bytes = 0x5a5a;
      clear_last_error();
      check_status("fst_fusion_workspace_size", fst_fusion_workspace_size(f.fusion, nullptr), null_fails);
      check_status("fst_fusion_workspace_size", fst_fusion_workspace_size(f.fusion, &bytes),
                   Expectation::succeed());
      break;
    }
  }
}

// Only arguments fst_fusion_run must refuse before it compiles anything.
void ApiProgram::call_fusion_run(const FusionSlot& f) {
  static const void* const kInputs[16] = {};
  static void* const kOutputs[16] = {};
  size_t ninputs = f.inputs;
  size_t noutputs = f.outputs;
  const void* const* inputs = kInputs;
  void* const* outputs = kOutputs;  // all NULL: refused by index
  switch (in_.below(4)) {
    case 0:
      ninputs += 1 + in_.below(3);
      break;
    case 1:
      noutputs = in_.chance(128) ? noutputs + 1 : 0;
      break;
    case 2:
      outputs = nullptr;
      break;
    default:
      if (ninputs > 16 || noutputs > 16) return;
      break;
  }
  clear_last_error();
  // Bad arguments are refused before anything else, also for a plan with opaque operations
  // (which a plain run then refuses as unsupported).
  check_status("fst_fusion_run",
               fst_fusion_run(in_.chance(8) ? nullptr : f.fusion, inputs, ninputs, outputs, noutputs, nullptr,
                              nullptr),
               Expectation::fail({FST_ERROR_INVALID_ARGUMENT}));
}

void ApiProgram::query_kernel() {
  const FusionSlot& f = fusions_[in_.below(fusions_.size())];
  const Expectation null_fails = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  if (f.fusion == nullptr) {
    const char* name = reinterpret_cast<const char*>(0x1);
    clear_last_error();
    check_status("fst_kernel_name", fst_kernel_name(nullptr, &name), null_fails);
    check_untouched("fst_kernel_name", "out_name", name, reinterpret_cast<const char*>(0x1));
    clear_last_error();
    check_status("fst_kernel_launch", fst_kernel_launch(nullptr, nullptr, 0, nullptr), null_fails);
    return;
  }
  size_t count = 0;
  check_status("fst_fusion_kernel_count", fst_fusion_kernel_count(f.fusion, &count), Expectation::succeed());
  if (count == 0) return;
  const fst_kernel* kernel = nullptr;
  check_status("fst_fusion_kernel", fst_fusion_kernel(f.fusion, in_.below(count), &kernel),
               Expectation::succeed());
  size_t params = 0;
  check_status("fst_kernel_param_count", fst_kernel_param_count(kernel, &params), Expectation::succeed());
  switch (in_.below(4)) {
    case 0: {
      const size_t index = params + in_.below(3);
      fst_param_kind kind = static_cast<fst_param_kind>(0x5a5a);
      size_t where = 0x5a5a;
      clear_last_error();
      check_status("fst_kernel_param", fst_kernel_param(kernel, index, &kind, &where, nullptr), null_fails);
      check_untouched("fst_kernel_param", "out_kind", kind, static_cast<fst_param_kind>(0x5a5a));
      check_untouched("fst_kernel_param", "out_index", where, size_t{0x5a5a});
      break;
    }
    case 1: {
      // On the host backend there is no CUfunction.
      void* function = reinterpret_cast<void*>(0x1);
      clear_last_error();
      check_status("fst_kernel_function", fst_kernel_function(kernel, &function),
                   Expectation::fail({FST_ERROR_UNSUPPORTED}));
      check_untouched("fst_kernel_function", "out_function", function, reinterpret_cast<void*>(0x1));
      break;
    }
    case 2:
      call_kernel_launch(kernel);
      break;
    default: {
      if (f.graph_slot < 0 || params == 0) break;
      // A parameter's value belongs to the graph the fusion was made from.
      const GraphSlot& g = graphs_[static_cast<size_t>(f.graph_slot)];
      fst_param_kind kind{};
      size_t where = 0;
      fst_value value = FST_VALUE_INVALID;
      check_status("fst_kernel_param", fst_kernel_param(kernel, in_.below(params), &kind, &where, &value),
                   Expectation::succeed());
      // Scratch in the workspace (a split reduction's partials and counters) holds no value.
      if (value == FST_VALUE_INVALID && kind == FST_PARAM_WORKSPACE) break;
      fst_dtype dtype{};
      check_status("fst_value_dtype", fst_value_dtype(g.graph, value, &dtype), Expectation::succeed());
      break;
    }
  }
}

// Only arguments fst_kernel_launch must refuse before it compiles anything.
void ApiProgram::call_kernel_launch(const fst_kernel* kernel) {
  size_t params = 0;
  fst_kernel_param_count(kernel, &params);
  static int storage[32];
  void* args[32];
  for (size_t i = 0; i < 32; ++i) args[i] = &storage[i];
  size_t nargs = params;
  void* const* array = args;
  if (params == 0 || params > 32 || in_.chance(128)) {
    nargs = params + 1 + in_.below(3);
    if (nargs > 32) array = nullptr;
  } else {
    args[in_.below(params)] = nullptr;
  }
  if (in_.chance(32)) array = nullptr;
  if (array == nullptr && nargs == 0) nargs = 1;
  clear_last_error();
  check_status("fst_kernel_launch", fst_kernel_launch(kernel, array, nargs, nullptr),
               Expectation::fail({FST_ERROR_INVALID_ARGUMENT}));
}

void ApiProgram::misc_call() {
  const int code = static_cast<int>(in_.bits(4));
  const char* status_name = fst_status_string(static_cast<fst_status>(code));
  if (status_name == nullptr || *status_name == '\0') violation("fst_status_string gave an empty name");
  if ((code < FST_OK || code > FST_ERROR_INTERNAL) && std::strcmp(status_name, "FST_STATUS_UNKNOWN") != 0)
    violation("fst_status_string names an unknown status " + std::to_string(code));
  static const size_t kSizes[] = {0, 4, 2, 2, 8, 1, 4, 8, 1, 1};
  const size_t size = fst_dtype_size(static_cast<fst_dtype>(code));
  if (size != (is_dtype(code) ? kSizes[code] : 0)) violation("fst_dtype_size(" + std::to_string(code) + ")");
  const char* dtype_name = fst_dtype_name(static_cast<fst_dtype>(code));
  if (dtype_name == nullptr || *dtype_name == '\0') violation("fst_dtype_name gave an empty name");
  if (fst_version_number() != FST_VERSION_NUMBER) violation("fst_version_number differs from the header");
  fst_string_free(nullptr);
  fst_graph_destroy(nullptr);
  fst_fusion_destroy(nullptr);
  fst_context_destroy(nullptr);
  fst_context_options_destroy(nullptr);
  fst_fuse_options_destroy(nullptr);
}

}  // namespace fstitch::fuzz
