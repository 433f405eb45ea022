#!/usr/bin/env bash
# Runs a command that must end with a given exit status and print a message matching an
# extended regular expression (on stdout or stderr): how the examples' error paths are tested.
# Usage: expect_exit.sh STATUS REGEX COMMAND [ARGS...]
set -uo pipefail
expected_status=$1
pattern=$2
shift 2
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -ne "$expected_status" ]; then
  echo "expect_exit: FAIL: exit status $status, expected $expected_status" >&2
  exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$output"; then
  echo "expect_exit: FAIL: no line matches '$pattern'" >&2
  exit 1
fi
echo "expect_exit: OK (exit status $status)"
