// A host compiler that does not finish is stopped at the compile timeout, with its whole
// process group; a compiler wrapper that leaves a background process holding the output
// pipe does not make the compile wait for that process. The timeout comes from
// HostCompileOptions::compile_timeout, else FSTITCH_HOST_COMPILE_TIMEOUT, else 10 minutes.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "host_test_support.hpp"
#include "runtime/host/compiler.hpp"
#include "runtime/host/process.hpp"

namespace fstitch::host::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const char* const kFillKernel = R"(
extern "C" __global__ void fst_fill(float* y, float value, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = value + i;
}
FST_HOST_ENTRY(fst_fill)
)";

// An executable shell script `name` in `folder`.
std::string write_script(const CacheFolder& folder, const std::string& name, const std::string& body) {
  const std::string path = folder.path() + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  chmod(path.c_str(), 0755);
  return path;
}

// The process ids a script wrote to `file`, one a line.
std::vector<pid_t> read_pids(const std::string& file) {
  std::vector<pid_t> pids;
  std::ifstream in(file);
  for (long pid = 0; in >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// Whether `pid` still runs (a zombie waiting for its reaper does not).
bool is_running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t after_name = line.rfind(')');
  return after_name != std::string::npos && line.size() > after_name + 2 && line[after_name + 2] != 'Z';
}

// Waits (boundedly) for `pid` to be gone: a killed process ends as soon as the kernel has
// torn it down, which is not instantaneous.
bool ends_soon(pid_t pid) {
  for (int i = 0; i < 500 && is_running(pid); ++i) std::this_thread::sleep_for(milliseconds(10));
  return !is_running(pid);
}

// Kills what a test's scripts left running.
class LeftoverProcesses {
 public:
  explicit LeftoverProcesses(std::string file) : file_(std::move(file)) {}
  ~LeftoverProcesses() {
    for (pid_t pid : read_pids(file_)) kill(pid, SIGKILL);
  }
  std::vector<pid_t> pids() const { return read_pids(file_); }

 private:
  std::string file_;
};

void expect_fills(const HostModule& module) {
  std::vector<float> y(64, 0.0f);
  float* yp = y.data();
  float value = 1.5f;
  int n = 64;
  void* params[] = {&yp, &value, &n};
  module.launch("fst_fill", {1}, {32}, 0, params);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(y[i], 1.5f + static_cast<float>(i));
}

// A compiler that answers --version, then, asked to compile, starts a background process
// and waits forever: the timeout must end both.
TEST(HostCompileTimeout, AHangingCompilerIsKilledWithItsProcessGroup) {
  const CacheFolder folder;
  const std::string pids = folder.path() + "/pids";
  const std::string compiler =
      write_script(folder, "hanging-c++",
                   "if [ \"$1\" = --version ]; then echo hanging-c++ 1.0; exit 0; fi\n"
                   "echo compiling...\n"
                   "echo $$ >> " +
                       pids +
                       "\n"
                       "sleep 100000 &\n"
                       "echo $! >> " +
                       pids +
                       "\n"
                       "wait\n");
  const LeftoverProcesses leftovers(pids);
  const ScopedEnvironment cxx("FSTITCH_HOST_CXX", compiler.c_str());
  const ScopedEnvironment timeout("FSTITCH_HOST_COMPILE_TIMEOUT", "0.5");
  HostCompileOptions options;
  options.cache_dir = folder.path();
  const Error error = catch_error([&] { HostModule::compile(kFillKernel, options); });
  EXPECT_EQ(error.code(), StatusCode::kCompile);
  EXPECT_CONTAINS(error.what(), "did not finish within 0.5 s (FSTITCH_HOST_COMPILE_TIMEOUT='0.5')");
  EXPECT_CONTAINS(error.what(), "killed with its process group");
  EXPECT_CONTAINS(error.what(), compiler);
  EXPECT_CONTAINS(error.what(), "compiling...");  // what it printed before it hung
  const std::vector<pid_t> started = leftovers.pids();
  ASSERT_EQ(started.size(), 2u) << "the script records itself and its background process";
  for (pid_t pid : started) EXPECT_TRUE(ends_soon(pid)) << "process " << pid << " survived the timeout";
}

TEST(HostCompileTimeout, TheCompileOptionsLimitComesFirst) {
  const CacheFolder folder;
  const std::string compiler =
      write_script(folder, "hanging-c++",
                   "if [ \"$1\" = --version ]; then echo hanging-c++ 2.0; exit 0; fi\nexec sleep 100000\n");
  const ScopedEnvironment cxx("FSTITCH_HOST_CXX", compiler.c_str());
  const ScopedEnvironment timeout("FSTITCH_HOST_COMPILE_TIMEOUT", "600");
  HostCompileOptions options;
  options.disk_cache = false;
  options.compile_timeout = milliseconds(300);
  const Error error = catch_error([&] { HostModule::compile(kFillKernel, options); });
  EXPECT_EQ(error.code(), StatusCode::kCompile);
  EXPECT_CONTAINS(error.what(), "did not finish within 0.3 s (the limit in the compile options)");
  EXPECT_CONTAINS(error.what(), "FSTITCH_HOST_COMPILE_TIMEOUT");
}

// Asking the version already hangs: the compiler "does not run".
TEST(HostCompileTimeout, AVersionQueryThatHangsIsReported) {
  const CacheFolder folder;
  const std::string compiler = write_script(folder, "silent-c++", "exec sleep 100000\n");
  const ScopedEnvironment cxx("FSTITCH_HOST_CXX", compiler.c_str());
  const ScopedEnvironment timeout("FSTITCH_HOST_COMPILE_TIMEOUT", "0.3");
  const Error error = catch_error([&] { HostModule::compile(kFillKernel); });
  EXPECT_EQ(error.code(), StatusCode::kNoCompiler);
  EXPECT_CONTAINS(error.what(), "--version' failed (it did not finish within 0.3 s");
  EXPECT_CONTAINS(error.what(), "FSTITCH_HOST_COMPILE_TIMEOUT");
}

// A wrapper that runs the real compiler but leaves `sleep` behind, holding stdout and
// stderr: the compile ends when the compiler does, far inside its limit, and the wrapper's
// leftover is not the library's to kill.
TEST(HostCompileTimeout, AWrappersLeftoverChildIsNotWaitedFor) {
  const CacheFolder folder;
  const std::string pids = folder.path() + "/pids";
  const std::string wrapper = write_script(folder, "wrapping-c++",
                                           "sleep 1000 &\n"
                                           "echo $! >> " +
                                               pids +
                                               "\n"
                                               "exec c++ \"$@\"\n");
  const LeftoverProcesses leftovers(pids);
  const ScopedEnvironment cxx("FSTITCH_HOST_CXX", wrapper.c_str());
  HostCompileOptions options;
  options.cache_dir = folder.path();
  // Far more than the compile needs; a compile that waited for the leftover would reach it.
  options.compile_timeout = milliseconds(120'000);
  const std::shared_ptr<HostModule> module = HostModule::compile(kFillKernel, options);
  expect_fills(*module);
  const std::vector<pid_t> started = leftovers.pids();
  ASSERT_EQ(started.size(), 2u) << "one leftover for --version, one for the compile";
  for (pid_t pid : started) EXPECT_TRUE(is_running(pid)) << "the wrapper's leftover " << pid << " was killed";
}

TEST(HostCompileTimeout, TheLimitComesFromTheEnvironment) {
  HostCompileOptions options;
  {
    const ScopedEnvironment timeout("FSTITCH_HOST_COMPILE_TIMEOUT", "");
    EXPECT_EQ(host_compile_timeout(options).limit, kDefaultCompileTimeout);
    EXPECT_EQ(host_compile_timeout(options).origin, "the default limit");
  }
  const std::pair<const char*, milliseconds> good[] = {{"30", milliseconds(30'000)},
                                                       {"2.5", milliseconds(2'500)},
                                                       {".25", milliseconds(250)},
                                                       {"0.0001", milliseconds(1)},
                                                       {"604800", milliseconds(604'800'000)}};
  for (const auto& [text, limit] : good) {
    const ScopedEnvironment timeout("FSTITCH_HOST_COMPILE_TIMEOUT", text);
    EXPECT_EQ(host_compile_timeout(options).limit, limit) << text;
  }
  for (const char* bad : {"0", "-1", "abc", "10s", " 5", "inf", "nan", "1e9", "604801"}) {
    const ScopedEnvironment timeout("FSTITCH_HOST_COMPILE_TIMEOUT", bad);
    const Error error = catch_error([&] { host_compile_timeout(options); });
    EXPECT_EQ(error.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_CONTAINS(error.what(),
                    "FSTITCH_HOST_COMPILE_TIMEOUT='" + std::string(bad) + "' is not a number of seconds");
    // A malformed limit is refused before anything is compiled or taken from a cache.
    EXPECT_EQ(catch_error([] { HostModule::compile(kFillKernel); }).code(), StatusCode::kInvalidArgument)
        << bad;
  }
  options.compile_timeout = milliseconds(0);
  EXPECT_EQ(catch_error([&] { host_compile_timeout(options); }).code(), StatusCode::kInvalidArgument);
}

TEST(HostProcess, TheProgramsEndEndsTheRunNotThePipes) {
  const CacheFolder folder;
  const std::string pids = folder.path() + "/pids";
  const LeftoverProcesses leftovers(pids);
  ProcessLimits limits;
  limits.timeout = milliseconds(120'000);  // a run that waited for the pipe's end would reach it
  const ProcessResult result =
      run_process({"/bin/sh", "-c", "sleep 1000 & echo $! >> " + pids + "; echo done; exit 4"}, limits);
  EXPECT_TRUE(result.exited);
  EXPECT_EQ(result.exit_status, 4);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.output, "done\n");
}

TEST(HostProcess, ATimeoutKillsTheProcessGroup) {
  ProcessLimits limits;
  limits.timeout = milliseconds(200);
  const ProcessResult result = run_process({"/bin/sh", "-c", "echo started; sleep 1000 & wait"}, limits);
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.exited);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(result.output, "started\n");
}

}  // namespace
}  // namespace fstitch::host::testing
