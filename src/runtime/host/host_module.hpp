// The host backend's module: generated CUDA C compiled by the host C++ compiler against the
// emulation header, loaded with dlopen, and launched like cuLaunchKernel.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/host/host_options.hpp"
#include "runtime/host/module_units.hpp"
#include "support/compile_stats.hpp"

namespace fstitch::host {

class HostModule {
 public:
  // Compiles `source` (a generated file: docs/generated-code.md) into a shared object, or
  // takes it from the disk cache, and loads it. Throws Error(kNoCompiler) when no host
  // compiler can be found or run, Error(kCompile) with the compiler's command and output
  // when compilation fails. Safe to call from several threads at once.
  static std::shared_ptr<HostModule> compile(const std::string& source,
                                             const HostCompileOptions& options = {});
  // The same for a generated module given as its kernels: one translation unit when its
  // kernel text fits in options.unit_kernel_bytes (the same object as compiling the joined
  // text), else several (split_module_units), compiled in parallel and linked into one object.
  static std::shared_ptr<HostModule> compile(const HostModuleSource& source,
                                             const HostCompileOptions& options = {});

  ~HostModule();
  HostModule(const HostModule&) = delete;
  HostModule& operator=(const HostModule&) = delete;

  // Runs `kernel` over `grid` blocks of `block` threads and returns when every block has
  // finished. params[i] points to the value of the kernel's i-th parameter, as with
  // cuLaunchKernel. Throws Error(kInvalidArgument) for an unknown kernel or an invalid
  // configuration, Error(kLaunch) when a block cannot finish (barrier deadlock, invalid warp
  // operation, shared memory overflow, __trap) or a cooperative grid is too large. Safe to
  // call from several threads at once.
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes,
              void** params, const HostLaunchOptions& options = {}) const;

  bool has_kernel(const std::string& kernel) const;
  // Whether compile() found the object in the disk cache instead of running the compiler.
  bool loaded_from_cache() const { return compiled_.disk_hits > 0; }
  // What compile() did for this module: one compile or one disk hit, the entry it wrote or
  // discarded, the compiler's time.
  const CompileStats& compile_stats() const { return compiled_; }
  // The loaded object's file (removed already when the disk cache was off).
  const std::string& object_path() const { return object_path_; }
  // How many translation units the object is built from (1 unless the module was split).
  std::size_t unit_count() const { return unit_count_; }

 private:
  HostModule(void* handle, std::string object_path, CompileStats compiled, std::size_t unit_count);
  // Every compile: the object of these translation units, from the cache or built.
  static std::shared_ptr<HostModule> compile_units(const std::vector<std::string>& units,
                                                   const HostCompileOptions& options);
  void* symbol(const std::string& name) const;

  void* handle_;
  std::string object_path_;
  CompileStats compiled_;
  std::size_t unit_count_;
};

}  // namespace fstitch::host
