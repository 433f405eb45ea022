#include "runtime/host/host_module.hpp"

#include <dlfcn.h>

#include <cctype>
#include <filesystem>
#include <optional>
#include <system_error>
#include <vector>

#include "runtime/host/compiler.hpp"
#include "runtime/host/emulation_text.hpp"
#include "runtime/host/host_abi.hpp"
#include "runtime/host/launch.hpp"
#include "runtime/host/object_cache.hpp"
#include "support/error.hpp"
#include "support/log.hpp"

namespace fstitch::host {
namespace fs = std::filesystem;
namespace {

using BindFunction = unsigned int (*)(const fst_host_api*);
using ParamCountFunction = unsigned int (*)();

template <class Function>
Function as_function(void* symbol) {
  return reinterpret_cast<Function>(symbol);
}

std::string join(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += part + '\n';
  return text;
}

fs::path temporary_root() {
  std::error_code error;
  fs::path root = fs::temp_directory_path(error);
  return error ? fs::path("/tmp") : root;
}

CacheWarningSink cache_warning_sink(const HostCompileOptions& options) {
  if (options.warn) return options.warn;
  return [](const std::string& message) { Logger().log(LogLevel::kWarn, message); };
}

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// dlopen, then hand the object the runtime's service table. Nothing when dlopen fails
// (*why says why); throws when the object is not one the emulation header produced.
void* load_object(const fs::path& path, std::string* why) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* message = dlerror();
    *why = message != nullptr ? message : "unknown dlopen error";
    return nullptr;
  }
  void* bind = dlsym(handle, "fst_host_bind");
  if (bind == nullptr || as_function<BindFunction>(bind)(&host_api()) != FST_HOST_ABI_VERSION) {
    dlclose(handle);
    *why = path.string() + " was not built against this library's emulation header (fst_host_bind " +
           (bind == nullptr ? "is missing" : "refused ABI version " + std::to_string(FST_HOST_ABI_VERSION)) +
           ")";
    return nullptr;
  }
  return handle;
}

}  // namespace

HostModule::HostModule(void* handle, std::string object_path, CompileStats compiled, std::size_t unit_count)
    : handle_(handle), object_path_(std::move(object_path)), compiled_(compiled), unit_count_(unit_count) {}

HostModule::~HostModule() {
  dlclose(handle_);
}

std::shared_ptr<HostModule> HostModule::compile(const std::string& source,
                                                const HostCompileOptions& options) {
  return compile_units({source}, options);
}

std::shared_ptr<HostModule> HostModule::compile(const HostModuleSource& source,
                                                const HostCompileOptions& options) {
  return compile_units(split_module_units(source, options.unit_kernel_bytes), options);
}

std::shared_ptr<HostModule> HostModule::compile_units(const std::vector<std::string>& units,
                                                      const HostCompileOptions& options) {
  const CompileTimeout timeout = host_compile_timeout(options);
  const HostCompiler compiler = find_host_compiler(timeout);
  const std::vector<std::string> flags = host_compile_flags(options);
  const std::string_view header = emulation_header_text();
  const std::string flag_text = join(flags);
  std::vector<std::string_view> key_parts = {header, compiler.path, compiler.identity, flag_text};
  key_parts.insert(key_parts.end(), units.begin(), units.end());  // one unit: the key of the whole text
  const std::string key = host_object_key(key_parts);

  const CacheWarningSink warn = cache_warning_sink(options);
  std::optional<HostObjectCache> cache;
  if (options.disk_cache) cache = HostObjectCache::open(options.cache_dir, warn);
  std::string why;
  CompileStats counted;
  if (cache) {
    if (const std::optional<fs::path> cached = cache->find(key)) {
      if (void* handle = load_object(*cached, &why)) {
        counted.disk_hits = 1;
        return std::shared_ptr<HostModule>(new HostModule(handle, cached->string(), counted, units.size()));
      }
      cache->discard(key);  // unloadable: build it again
      counted.disk_discards = 1;
    }
  }

  // Compiles happen in a private folder (mode 0700) under the temporary directory, where the
  // compiler keeps its own files too, never in the cache: a full, read-only or vanishing
  // cache folder costs reuse only.
  const TemporaryFolder work(temporary_root());
  const fs::path header_path = work.path() / "emulation.h";
  const fs::path built_path = work.path() / "kernels.so";
  write_file(header_path, header);
  const auto start = std::chrono::steady_clock::now();
  build_module_object(compiler, flags, header_path, units, work.path(), built_path, timeout);
  counted.compiled = 1;
  counted.compile_nanoseconds = nanoseconds_since(start);
  if (cache) {
    // The cached copy is loaded when there is one: its name is unique to its contents.
    if (const std::optional<fs::path> stored = cache->store(key, built_path)) {
      counted.disk_writes = 1;
      if (void* handle = load_object(*stored, &why)) {
        return std::shared_ptr<HostModule>(new HostModule(handle, stored->string(), counted, units.size()));
      }
    }
  }
  void* handle = load_object(built_path, &why);
  if (handle == nullptr) fail(StatusCode::kCompile, "cannot load the compiled host object: " + why);
  return std::shared_ptr<HostModule>(new HostModule(handle, built_path.string(), counted, units.size()));
}

void* HostModule::symbol(const std::string& name) const {
  return dlsym(handle_, name.c_str());
}

bool HostModule::has_kernel(const std::string& kernel) const {
  return is_identifier(kernel) && symbol("fst_host_entry_" + kernel) != nullptr;
}

void HostModule::launch(const std::string& kernel, Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes,
                        void** params, const HostLaunchOptions& options) const {
  void* entry = is_identifier(kernel) ? symbol("fst_host_entry_" + kernel) : nullptr;
  if (entry == nullptr) {
    fail(StatusCode::kInvalidArgument,
         "the host module has no kernel '" + kernel + "' (no symbol fst_host_entry_" + kernel +
             "; each kernel must be followed by FST_HOST_ENTRY(" + kernel + "))");
  }
  if (params == nullptr) {
    void* count = symbol("fst_host_param_count_" + kernel);
    if (count != nullptr && as_function<ParamCountFunction>(count)() > 0) {
      fail(StatusCode::kInvalidArgument,
           "launch of kernel '" + kernel + "': params is NULL but the kernel takes " +
               std::to_string(as_function<ParamCountFunction>(count)()) + " parameters");
    }
  }
  const KernelLaunch launch = make_kernel_launch(kernel, as_function<KernelEntry>(entry), grid, block,
                                                 dynamic_shared_bytes, params, options);
  execute_launch(launch, options);
}

}  // namespace fstitch::host
