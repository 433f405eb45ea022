// Running part of a test in a forked child: with a deadline, so that a hang fails the test
// instead of stalling the run, or as another user, since tests run as root here and root
// bypasses the permission checks under test.
#pragma once

#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

namespace fstitch::testing {

// A user id no account of the test machine has: "someone else" for ownership tests.
inline constexpr uid_t kStrangerUid = 54321;

// How a body run in a child ended.
enum class ChildEnd { kPassed, kFailed, kSkipped, kTimedOut, kCrashed };

inline const char* child_end_name(ChildEnd end) {
  switch (end) {
    case ChildEnd::kPassed:
      return "passed";
    case ChildEnd::kFailed:
      return "failed";
    case ChildEnd::kSkipped:
      return "skipped";
    case ChildEnd::kTimedOut:
      return "timed out";
    case ChildEnd::kCrashed:
      return "crashed";
  }
  return "?";
}

// Runs `body` in a forked child killed by SIGALRM after `seconds`. The child prints its own
// gtest failures; they, a GTEST_SKIP, the deadline or a crash are told apart by the result.
inline ChildEnd run_in_child(const std::function<void()>& body, unsigned seconds) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    return ChildEnd::kCrashed;
  }
  if (pid == 0) {
    signal(SIGALRM, SIG_DFL);
    alarm(seconds);
    body();
    std::fflush(nullptr);
    _exit(::testing::Test::HasFailure() ? 1 : ::testing::Test::IsSkipped() ? 77 : 0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGALRM ? ChildEnd::kTimedOut : ChildEnd::kCrashed;
  if (!WIFEXITED(status)) return ChildEnd::kCrashed;
  switch (WEXITSTATUS(status)) {
    case 0:
      return ChildEnd::kPassed;
    case 77:
      return ChildEnd::kSkipped;
    default:
      return ChildEnd::kFailed;
  }
}

// Expects the lambda given after `seconds`, run in a child, to pass within `seconds`; skips
// the test when the child skipped.
#define FSTITCH_EXPECT_CHILD_PASSES(seconds, ...)                                                            \
  do {                                                                                                       \
    const ::fstitch::testing::ChildEnd fstitch_end = ::fstitch::testing::run_in_child(__VA_ARGS__, seconds); \
    if (fstitch_end == ::fstitch::testing::ChildEnd::kSkipped) GTEST_SKIP() << "skipped in the child";       \
    EXPECT_EQ(fstitch_end, ::fstitch::testing::ChildEnd::kPassed)                                            \
        << "the child " << ::fstitch::testing::child_end_name(fstitch_end);                                  \
  } while (false)

// Whether ownership can be given away (chown) and taken on (setuid): only as root.
inline bool can_act_as_others() {
  return geteuid() == 0;
}

// Gives `path` and everything under it to `uid`.
inline void chown_tree(const std::filesystem::path& path, uid_t uid) {
  ASSERT_EQ(lchown(path.c_str(), uid, static_cast<gid_t>(uid)), 0) << path;
  std::error_code error;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(path, error))) return;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    ASSERT_EQ(lchown(entry.path().c_str(), uid, static_cast<gid_t>(uid)), 0) << entry.path();
  }
}

// In a child: becomes `uid` when running as root, so that permissions apply; as another user
// the permissions apply already and nothing changes.
inline void become_unprivileged(uid_t uid) {
  if (geteuid() != 0) return;
  ASSERT_EQ(setgroups(0, nullptr), 0);
  ASSERT_EQ(setgid(static_cast<gid_t>(uid)), 0);
  ASSERT_EQ(setuid(uid), 0);
}

}  // namespace fstitch::testing
