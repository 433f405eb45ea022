#include "runtime/host/module_units.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "runtime/host/object_cache.hpp"
#include "support/error.hpp"

namespace fstitch::host {
namespace fs = std::filesystem;
namespace {

unsigned int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned int>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// The flags for an object file: those of the shared object, which link it, without -shared.
std::vector<std::string> object_file_arguments(const std::vector<std::string>& flags, const fs::path& header,
                                               const fs::path& source, const fs::path& object) {
  std::vector<std::string> arguments;
  for (const std::string& flag : flags) {
    if (flag != "-shared") arguments.push_back(flag);
  }
  arguments.insert(arguments.end(),
                   {"-c", "-include", header.string(), source.string(), "-o", object.string()});
  return arguments;
}

// Compiles units[i] into objects[i] on `workers` threads. Once a unit fails no new ones are
// started; the error of the lowest failing unit is rethrown, so the message does not depend
// on timing.
void compile_units_in_parallel(const HostCompiler& compiler, const std::vector<std::string>& flags,
                               const fs::path& header, const std::vector<fs::path>& sources,
                               const std::vector<fs::path>& objects, const CompileTimeout& timeout) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::size_t failed_unit = sources.size();
  std::exception_ptr failure;
  auto work = [&] {
    for (;;) {
      const std::size_t unit = next.fetch_add(1);
      if (unit >= sources.size() || failed.load()) return;
      try {
        run_host_compiler(compiler, object_file_arguments(flags, header, sources[unit], objects[unit]),
                          objects[unit].string(), timeout);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (unit < failed_unit) {
          failed_unit = unit;
          failure = std::current_exception();
        }
        failed.store(true);
      }
    }
  };
  std::vector<std::thread> threads;
  const unsigned int workers = unit_compile_parallelism(sources.size());
  try {
    for (unsigned int t = 1; t < workers; ++t) threads.emplace_back(work);
  } catch (const std::system_error&) {
    // Fewer threads than cores (a thread limit) only costs time.
  }
  work();
  for (std::thread& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

std::vector<std::string> split_module_units(const HostModuleSource& source, std::size_t unit_kernel_bytes) {
  std::vector<std::string> units;
  std::size_t kernel_bytes = 0;
  for (const std::string& kernel : source.kernels) {
    if (units.empty() || (kernel_bytes > 0 && kernel_bytes + kernel.size() > unit_kernel_bytes)) {
      units.push_back(source.prelude);
      kernel_bytes = 0;
    }
    units.back() += "\n";
    units.back() += kernel;
    kernel_bytes += kernel.size();
  }
  if (units.empty()) units.push_back(source.prelude);
  return units;
}

unsigned int unit_compile_parallelism(std::size_t unit_count) {
  return static_cast<unsigned int>(
      std::max<std::size_t>(1, std::min<std::size_t>(usable_cores(), unit_count)));
}

void build_module_object(const HostCompiler& compiler, const std::vector<std::string>& flags,
                         const fs::path& header, const std::vector<std::string>& units, const fs::path& work,
                         const fs::path& output, const CompileTimeout& timeout) {
  if (units.size() == 1) {
    const fs::path source = work / "kernels.cpp";
    write_file(source, units.front());
    compile_shared_object(compiler, flags, header.string(), source.string(), output.string(), timeout);
    return;
  }
  std::vector<fs::path> sources;
  std::vector<fs::path> objects;
  for (std::size_t i = 0; i < units.size(); ++i) {
    sources.push_back(work / ("unit" + std::to_string(i) + ".cpp"));
    objects.push_back(work / ("unit" + std::to_string(i) + ".o"));
    write_file(sources.back(), units[i]);
  }
  compile_units_in_parallel(compiler, flags, header, sources, objects, timeout);
  std::vector<std::string> link = flags;
  for (const fs::path& object : objects) link.push_back(object.string());
  link.insert(link.end(), {"-o", output.string()});
  run_host_compiler(compiler, link, output.string(), timeout);
}

}  // namespace fstitch::host
