// Running a program without a shell, capturing what it prints, within a time limit.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fstitch::host {

struct ProcessLimits {
  std::size_t max_output = 1 << 20;  // bytes of output kept; the rest is read and dropped
  // How long the program may run; past it, its whole process group is killed. Nothing: no limit.
  std::optional<std::chrono::milliseconds> timeout;
};

struct ProcessResult {
  int spawn_error = 0;  // errno when the program could not be started, else 0
  bool exited = false;  // it ended through exit(); exit_status is then valid
  int exit_status = -1;
  int signal = 0;          // the signal that ended it, when it did not exit
  bool timed_out = false;  // it ran past the limit and its process group was killed
  std::string output;      // stdout and stderr interleaved, cut at max_output bytes
};

// Runs argv[0] (a path) with the arguments argv, the environment of this process and
// stdin from /dev/null, as the leader of a new process group. No shell is involved:
// arguments are passed as they are. Returns once the program itself has ended: output that
// processes it left behind still write to the pipe is not waited for.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessLimits& limits = {});

// The command line as one string, arguments with spaces or quotes single-quoted, for messages.
std::string command_text(const std::vector<std::string>& argv);

}  // namespace fstitch::host
