#!/usr/bin/env bash
# Fails if some function declared FST_API in fstitch.h is never called by the C API test.
# Usage: check_coverage.sh HEADER TEST_SOURCE...
set -euo pipefail

header=$1
shift
missing=0
for name in $(grep -E '^FST_API ' "$header" | sed -E 's/^.*[^A-Za-z0-9_](fst_[A-Za-z0-9_]+)\(.*$/\1/' | sort -u); do
  if ! grep -qE "(^|[^A-Za-z0-9_])${name}\(" "$@"; then
    echo "check_coverage: ${name} is never called by the C API test" >&2
    missing=$((missing + 1))
  fi
done
if [ "$missing" -ne 0 ]; then
  exit 1
fi
echo "check_coverage: OK: every FST_API function is called"
