// Large generated modules as several translation units, compiled in parallel and linked into
// one shared object, so no single compiler process needs memory in proportion to the plan.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/host/compiler.hpp"

namespace fstitch::host {

// A module as the code generator writes it (docs/generated-code.md): the prelude (macros and
// `static` helpers), then kernels that are independent `extern "C"` functions.
struct HostModuleSource {
  std::string prelude;
  std::vector<std::string> kernels;  // each a definition followed by its FST_HOST_ENTRY
};

// The translation units of `source`: each is the prelude, then whole kernels, each after a
// "\n", as many as fit in `unit_kernel_bytes` of kernel text (at least one). The split
// depends only on the text and the limit. A module that fits gives one unit whose text is
// the module text of emit_module (prelude + "\n" + kernel + "\n" + kernel ...).
std::vector<std::string> split_module_units(const HostModuleSource& source, std::size_t unit_kernel_bytes);

// How many compiler processes a split module runs at once: one per core this process may
// use, and no more than there are units.
unsigned int unit_compile_parallelism(std::size_t unit_count);

// Builds the shared object `output` from `units`, in the private folder `work`, where
// `header` (the emulation header) has been written. One unit is compiled straight into the
// object, as `work`/kernels.cpp; several are compiled to object files in parallel
// (unit_compile_parallelism) and linked. `flags` are host_compile_flags. Errors as
// run_host_compiler's; when units fail, the error of the first failing unit is thrown.
void build_module_object(const HostCompiler& compiler, const std::vector<std::string>& flags,
                         const std::filesystem::path& header, const std::vector<std::string>& units,
                         const std::filesystem::path& work, const std::filesystem::path& output,
                         const CompileTimeout& timeout);

}  // namespace fstitch::host
