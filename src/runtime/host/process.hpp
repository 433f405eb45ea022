// Running a program without a shell, capturing what it prints.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fstitch::host {

struct ProcessResult {
  int spawn_error = 0;  // errno when the program could not be started, else 0
  bool exited = false;  // it ended through exit(); exit_status is then valid
  int exit_status = -1;
  int signal = 0;      // the signal that ended it, when it did not exit
  std::string output;  // stdout and stderr interleaved, cut at max_output bytes
};

// Runs argv[0] (a path) with the arguments argv, the environment of this process and
// stdin from /dev/null. No shell is involved: arguments are passed as they are.
ProcessResult run_process(const std::vector<std::string>& argv, std::size_t max_output = 1 << 20);

// The command line as one string, arguments with spaces or quotes single-quoted, for messages.
std::string command_text(const std::vector<std::string>& argv);

}  // namespace fstitch::host
