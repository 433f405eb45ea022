#include "disassembler.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace fstitch::bench {
namespace {

bool is_executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(path);
}

std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::istringstream folders(path);
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    if (folder.empty()) continue;
    const std::string candidate = folder + "/" + name;
    if (is_executable(candidate)) return candidate;
  }
  return "";
}

std::string kind_of(const std::string& path) {
  return std::filesystem::path(path).filename().string().find("cuobjdump") != std::string::npos ? "cuobjdump"
                                                                                                : "nvdisasm";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A folder removed with its contents at the end of the scope.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fstitch-sass-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a folder from " + pattern);
    path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs `argv` with standard output and error into `output`; returns the exit status (-1 when
// it could not start or ended by a signal).
int run_to_file(const std::vector<std::string>& argv, const std::filesystem::path& output) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::optional<Disassembler> Disassembler::find(const std::string& explicit_path, std::string* why) {
  std::string tried;
  auto candidate = [&](const std::string& path, const std::string& from) -> bool {
    if (is_executable(path)) return true;
    tried += (tried.empty() ? "" : "; ") + from +
             (path.empty() ? " (not found)" : " " + path + " (not executable)");
    return false;
  };
  if (explicit_path == "none") {
    tried = "none found";
  } else if (!explicit_path.empty()) {
    if (candidate(explicit_path, "--disassembler"))
      return Disassembler(explicit_path, kind_of(explicit_path));
  } else {
    const char* env = std::getenv("FSTITCH_NVDISASM");
    if (env != nullptr && *env != '\0') {
      if (candidate(env, "FSTITCH_NVDISASM")) return Disassembler(env, kind_of(env));
    } else {
      for (const char* name : {"nvdisasm", "cuobjdump"}) {
        const std::string path = on_path(name);
        if (candidate(path, std::string(name) + " on PATH")) return Disassembler(path, name);
      }
    }
  }
  if (why != nullptr) *why = tried;
  return std::nullopt;
}

std::string Disassembler::version() const {
  ScratchDir scratch;
  const std::filesystem::path output = scratch.path() / "version.txt";
  if (run_to_file({path_, "--version"}, output) != 0) return "version unknown";
  std::istringstream lines(read_file(output));
  std::string line, last;
  while (std::getline(lines, line)) {
    if (line.find("release") != std::string::npos) return line;
    if (!line.empty()) last = line;
  }
  return last.empty() ? "version unknown" : last;
}

std::string Disassembler::disassemble(const std::vector<uint8_t>& cubin) const {
  ScratchDir scratch;
  const std::filesystem::path input = scratch.path() / "kernel.cubin";
  const std::filesystem::path output = scratch.path() / "kernel.sass";
  {
    std::ofstream out(input, std::ios::binary);
    out.write(reinterpret_cast<const char*>(cubin.data()), static_cast<std::streamsize>(cubin.size()));
    if (!out) throw std::runtime_error("cannot write " + input.string());
  }
  const std::vector<std::string> argv = kind_ == "cuobjdump"
                                            ? std::vector<std::string>{path_, "-sass", input.string()}
                                            : std::vector<std::string>{path_, "-c", input.string()};
  const int status = run_to_file(argv, output);
  std::string listing = read_file(output);
  if (status != 0) {
    throw std::runtime_error(kind_ + " failed (exit status " + std::to_string(status) +
                             "): " + listing.substr(0, 400));
  }
  return listing;
}

}  // namespace fstitch::bench
