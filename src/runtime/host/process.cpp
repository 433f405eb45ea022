#include "runtime/host/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <thread>

extern char** environ;

namespace fstitch::host {
namespace {

using Clock = std::chrono::steady_clock;

// How often the child's end is checked where no pidfd can announce it.
constexpr std::chrono::milliseconds kWaitSlice{10};
// At most this much is read at once, so a process flooding the pipe cannot hold off the
// checks of the deadline and of the child's end.
constexpr std::size_t kMaxReadBurst = 1 << 20;

// Closes a descriptor once, when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  ~Descriptor() { reset(); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// A descriptor that becomes readable when the process ends, or -1 where the kernel has none.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// The spawned program, the leader of its own process group. Reaped exactly once; when
// abandoned (an exception, a timeout) the whole group is killed first, so nothing started
// for this run outlives it unnoticed.
class ChildProcess {
 public:
  explicit ChildProcess(pid_t pid) : pid_(pid), pidfd_(open_pidfd(pid)) {}
  ~ChildProcess() {
    if (!reaped_) kill_group_and_reap(nullptr);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pidfd() const { return pidfd_.get(); }

  // Whether the child has ended, recording how into *result; waits only when `block`.
  bool reap(bool block, ProcessResult* result) {
    for (;;) {
      int status = 0;
      const pid_t waited = waitpid(pid_, &status, block ? 0 : WNOHANG);
      if (waited == 0) return false;
      if (waited < 0 && errno == EINTR) continue;
      reaped_ = true;
      // ECHILD: the application ignores SIGCHLD, so the kernel reaped it: no status.
      if (waited == pid_ && result != nullptr) {
        if (WIFEXITED(status)) {
          result->exited = true;
          result->exit_status = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
          result->signal = WTERMSIG(status);
        }
      }
      return true;
    }
  }

  void kill_group_and_reap(ProcessResult* result) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);  // in case it moved to another group (setsid): it is not reaped, so still ours
    reap(true, result);
  }

 private:
  pid_t pid_;
  Descriptor pidfd_;
  bool reaped_ = false;
};

// Reads what the non-blocking pipe holds now into *output (kept up to max_output bytes).
// Returns false once the pipe is at its end (every writer closed it) or broken.
bool read_available(int fd, std::size_t max_output, std::string* output) {
  char buffer[4096];
  std::size_t burst = 0;
  while (burst < kMaxReadBurst) {
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (got <= 0) return false;
    burst += static_cast<std::size_t>(got);
    const std::size_t room = max_output - std::min(max_output, output->size());
    output->append(buffer, std::min(room, static_cast<std::size_t>(got)));
  }
  return true;
}

// Milliseconds for poll(): until the deadline (at least 1, so a deadline a fraction of a
// millisecond away is not a busy loop), capped at `cap` when given; -1 waits without end.
int poll_timeout(const std::optional<Clock::time_point>& deadline,
                 std::optional<std::chrono::milliseconds> cap) {
  std::optional<std::chrono::milliseconds> wait = cap;
  if (deadline) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
    left = std::max(left, std::chrono::milliseconds(1));
    wait = wait ? std::min(*wait, left) : left;
  }
  if (!wait) return -1;
  return static_cast<int>(std::min<std::chrono::milliseconds::rep>(wait->count(), INT_MAX));
}

// Follows the child until it ends or the deadline passes, collecting its output. The direct
// child's end finishes the run, not the pipe's: a background process that the program
// started (a compiler wrapper's leftover) may hold the pipe open for as long as it likes.
void follow(ChildProcess& child, int pipe_fd, const ProcessLimits& limits, ProcessResult* result) {
  std::optional<Clock::time_point> deadline;
  if (limits.timeout) deadline = Clock::now() + *limits.timeout;
  bool pipe_open = true;
  for (;;) {
    if (child.reap(false, result)) break;
    if (deadline && Clock::now() >= *deadline) {
      child.kill_group_and_reap(result);
      result->timed_out = true;
      break;
    }
    pollfd fds[2];
    nfds_t count = 0;
    if (pipe_open) fds[count++] = {pipe_fd, POLLIN, 0};
    if (child.pidfd() >= 0) fds[count++] = {child.pidfd(), POLLIN, 0};
    const bool end_is_announced = child.pidfd() >= 0;
    const int ready =
        poll(fds, count, poll_timeout(deadline, end_is_announced ? std::nullopt : std::optional(kWaitSlice)));
    if (ready < 0 && errno != EINTR) std::this_thread::sleep_for(kWaitSlice);  // ENOMEM: try again later
    if (ready > 0 && pipe_open && fds[0].revents != 0)
      pipe_open = read_available(pipe_fd, limits.max_output, &result->output);
  }
  // What the child wrote before it ended is in the pipe's buffer still.
  if (pipe_open) read_available(pipe_fd, limits.max_output, &result->output);
}

}  // namespace

std::string command_text(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& arg : argv) {
    if (!text.empty()) text += ' ';
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    if (plain) {
      text += arg;
      continue;
    }
    text += '\'';
    for (char c : arg) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
    text += '\'';
  }
  return text;
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessLimits& limits) {
  ProcessResult result;
  if (argv.empty()) {
    result.spawn_error = EINVAL;
    return result;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.spawn_error = errno;
    return result;
  }
  Descriptor read_end(fds[0]);
  Descriptor write_end(fds[1]);
  // Only our end is non-blocking: the two ends are separate open files.
  fcntl(read_end.get(), F_SETFL, fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  // A process group of its own: a timeout kills the program and everything it started.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();  // the child (and what it starts) holds the only write ends now
  if (spawned != 0) {
    result.spawn_error = spawned;
    return result;
  }
  ChildProcess child(pid);
  follow(child, read_end.get(), limits, &result);
  return result;
}

}  // namespace fstitch::host
