#include "runtime/host/compiler.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "runtime/host/process.hpp"
#include "runtime/host/sanitizer.hpp"
#include "support/error.hpp"

namespace fstitch::host {
namespace {

constexpr std::size_t kMaxLogBytes = 64 * 1024;

std::atomic<std::uint64_t> g_compiler_processes{0};

bool is_executable_file(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (is_executable_file(name)) return name;
    return std::nullopt;
  }
  const char* path_variable = std::getenv("PATH");
  const std::string path = path_variable != nullptr ? path_variable : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = path.find(':', begin);
    std::string dir = path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    if (end == std::string::npos) return std::nullopt;
    begin = end + 1;
  }
}

constexpr const char* kTimeoutVariable = "FSTITCH_HOST_COMPILE_TIMEOUT";

ProcessResult run_compiler(const std::vector<std::string>& argv,
                           std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
  g_compiler_processes.fetch_add(1, std::memory_order_relaxed);
  ProcessLimits limits;
  limits.max_output = kMaxLogBytes;
  limits.timeout = timeout;
  return run_process(argv, limits);
}

// "600 s", "0.25 s": milliseconds as seconds, without trailing zeros.
std::string seconds_text(std::chrono::milliseconds duration) {
  const long long ms = duration.count();
  std::string text = std::to_string(ms / 1000);
  if (ms % 1000 != 0) {
    std::string fraction = std::to_string(1000 + ms % 1000).substr(1);
    while (fraction.back() == '0') fraction.pop_back();
    text += "." + fraction;
  }
  return text + " s";
}

// Seconds as milliseconds (rounded up: a positive limit never becomes zero), or nothing
// when `text` is not a plain positive number of seconds within kMaxCompileTimeout.
std::optional<std::chrono::milliseconds> parse_seconds(const std::string& text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(seconds) || seconds <= 0 ||
      seconds > static_cast<double>(kMaxCompileTimeout.count())) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
}

// `--version` output per compiler file (path, size, modification time): asked once.
std::string compiler_identity(const std::string& path, const std::string& origin,
                              const CompileTimeout& timeout) {
  struct stat info;
  std::string file_key = path;
  if (stat(path.c_str(), &info) == 0) {
    file_key += "|" + std::to_string(info.st_size) + "|" + std::to_string(info.st_mtim.tv_sec) + "." +
                std::to_string(info.st_mtim.tv_nsec);
  }
  static std::mutex mutex;
  static std::map<std::string, std::string> identities;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto found = identities.find(file_key);
    if (found != identities.end()) return found->second;
  }
  const ProcessResult result = run_compiler({path, "--version"}, timeout.limit);
  if (result.spawn_error != 0 || !result.exited || result.exit_status != 0) {
    const std::string why = result.spawn_error != 0 ? std::strerror(result.spawn_error)
                            : result.timed_out ? "it did not finish within " + seconds_text(timeout.limit) +
                                                     " (" + timeout.origin + ") and was killed; " +
                                                     kTimeoutVariable + " sets the limit in seconds"
                            : result.exited ? "exit status " + std::to_string(result.exit_status)
                                            : "signal " + std::to_string(result.signal);
    fail(StatusCode::kNoCompiler, "host C++ compiler " + origin + " does not run: '" + path +
                                      " --version' failed (" + why + ")" +
                                      (result.output.empty() ? "" : ":\n" + result.output));
  }
  std::lock_guard<std::mutex> lock(mutex);
  identities.emplace(file_key, result.output);
  return result.output;
}

}  // namespace

HostCompiler find_host_compiler(const CompileTimeout& timeout) {
  if (const char* chosen = std::getenv("FSTITCH_HOST_CXX"); chosen != nullptr && *chosen != '\0') {
    const std::string origin = std::string("FSTITCH_HOST_CXX='") + chosen + "'";
    const std::optional<std::string> path = find_executable(chosen);
    if (!path) {
      fail(StatusCode::kNoCompiler, origin + " is not an executable file" +
                                        (std::strchr(chosen, '/') != nullptr ? "" : " on PATH") +
                                        "; set it to a C++17 compiler (a program, without arguments)");
    }
    return {*path, compiler_identity(*path, origin, timeout)};
  }
#ifdef FSTITCH_HOST_SANITIZER_CXX
  if (is_executable_file(FSTITCH_HOST_SANITIZER_CXX)) {
    return {FSTITCH_HOST_SANITIZER_CXX,
            compiler_identity(FSTITCH_HOST_SANITIZER_CXX,
                              "the compiler this ThreadSanitizer build was built with", timeout)};
  }
#endif
  for (const char* name : {"c++", "g++", "clang++"}) {
    if (const std::optional<std::string> path = find_executable(name)) {
      return {*path, compiler_identity(*path, std::string("'") + name + "' found on PATH", timeout)};
    }
  }
  fail(StatusCode::kNoCompiler,
       "the host backend needs a C++17 compiler and none of c++, g++, clang++ is on PATH; install one or set "
       "FSTITCH_HOST_CXX");
}

std::vector<std::string> host_compile_flags(const HostCompileOptions& options) {
  std::vector<std::string> flags = {"-std=c++17",          "-fPIC", "-shared", "-fno-fast-math",
                                    "-fvisibility=hidden", "-w"};
  if (!options.optimization.empty()) flags.push_back(options.optimization);
  // Under ThreadSanitizer the kernels' memory accesses are where races would be: instrument
  // them too, with line numbers for its reports (the library's compiler must build them, so
  // that one sanitizer runtime serves both).
  if (FSTITCH_HOST_TSAN) flags.insert(flags.end(), {"-fsanitize=thread", "-g"});
  for (const std::string& flag : options.extra_flags) {
    if (!flag.empty()) flags.push_back(flag);
  }
  return flags;
}

CompileTimeout host_compile_timeout(const HostCompileOptions& options) {
  const std::string range = "a number of seconds above 0 and at most " + seconds_text(kMaxCompileTimeout);
  if (options.compile_timeout) {
    if (*options.compile_timeout <= std::chrono::milliseconds::zero() ||
        *options.compile_timeout > kMaxCompileTimeout)
      fail(StatusCode::kInvalidArgument, "the host compile timeout must be " + range);
    return {*options.compile_timeout, "the limit in the compile options"};
  }
  if (const char* text = std::getenv(kTimeoutVariable); text != nullptr && *text != '\0') {
    const std::string origin = std::string(kTimeoutVariable) + "='" + text + "'";
    const std::optional<std::chrono::milliseconds> limit = parse_seconds(text);
    if (!limit) fail(StatusCode::kInvalidArgument, origin + " is not " + range);
    return {*limit, origin};
  }
  return {kDefaultCompileTimeout, "the default limit"};
}

void run_host_compiler(const HostCompiler& compiler, const std::vector<std::string>& arguments,
                       const std::string& output, const CompileTimeout& timeout) {
  std::vector<std::string> argv = {compiler.path};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  const ProcessResult result = run_compiler(argv, timeout.limit);
  // Exit status 127 without output is how a failed exec shows where posix_spawn cannot report it.
  if (result.spawn_error != 0 || (result.exited && result.exit_status == 127 && result.output.empty())) {
    fail(StatusCode::kNoCompiler,
         "cannot start the host C++ compiler " + compiler.path + ": " +
             (result.spawn_error != 0 ? std::strerror(result.spawn_error) : "exec failed (exit status 127)"));
  }
  if (result.timed_out) {
    fail(StatusCode::kCompile, "the host C++ compiler did not finish within " + seconds_text(timeout.limit) +
                                   " (" + timeout.origin +
                                   ") and was killed with its process group: " + command_text(argv) +
                                   "\nset " + kTimeoutVariable + " to a longer time in seconds (default " +
                                   seconds_text(kDefaultCompileTimeout) + ") if the compiler is only slow" +
                                   (result.output.empty() ? "" : "; its output so far:\n" + result.output));
  }
  if (result.exited && result.exit_status == 0) return;
  // Without an exit status (SIGCHLD ignored by the application), trust the output file.
  if (!result.exited && result.signal == 0 && access(output.c_str(), R_OK) == 0) return;
  std::string log = result.output;
  if (log.size() >= kMaxLogBytes)
    log += "\n[compiler output cut at " + std::to_string(kMaxLogBytes) + " bytes]";
  if (!result.exited && result.signal != 0)
    log = "killed by signal " + std::to_string(result.signal) + "\n" + log;
  fail(StatusCode::kCompile, command_text(argv) + " failed:\n" + log);
}

void compile_shared_object(const HostCompiler& compiler, const std::vector<std::string>& flags,
                           const std::string& header, const std::string& source, const std::string& output,
                           const CompileTimeout& timeout) {
  std::vector<std::string> arguments = flags;
  arguments.insert(arguments.end(), {"-include", header, source, "-o", output});
  run_host_compiler(compiler, arguments, output, timeout);
}

std::uint64_t host_compiler_process_count() {
  return g_compiler_processes.load(std::memory_order_relaxed);
}

}  // namespace fstitch::host
