#!/usr/bin/env bash
# Shows that check_abi.sh tells additions in a new version node from every other change:
# builds small versioned libraries with the C compiler, takes a baseline of the first and
# checks each variant against it.
# Usage: selftest.sh C_COMPILER
set -euo pipefail
cc=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# variant NAME HEADER SOURCE VERSION_SCRIPT: builds $work/NAME/libfstitch.so.1.
variant() {
  mkdir -p "$work/$1"
  printf '%s\n' "$2" >"$work/$1/api.h"
  printf '#include "api.h"\n%s\n' "$3" >"$work/$1/api.c"
  printf '%s\n' "$4" >"$work/$1/api.map"
  "$cc" -g -O0 -shared -fPIC -o "$work/$1/libfstitch.so.1" "$work/$1/api.c" \
    -Wl,--version-script="$work/$1/api.map" -Wl,-soname,libfstitch.so.1
}
expect() {  # expect pass|fail NAME
  if bash "$here/check_abi.sh" "$work/$2/libfstitch.so.1" "$work/baseline" >"$work/$2.log" 2>&1; then
    result=pass
  else
    result=fail
  fi
  if [ "$result" = "$1" ]; then
    echo "selftest: $2: $result, as it should"
  else
    echo "selftest: FAIL: $2: $result, expected $1:" >&2
    cat "$work/$2.log" >&2
    failures=$((failures + 1))
  fi
}

header_v1='typedef struct { int a; int b; } fst_pair; int fst_sum(const fst_pair* p); int fst_twice(int x);'
source_v1='int fst_sum(const fst_pair* p) { return p->a + p->b; } int fst_twice(int x) { return 2 * x; }'
map_v1='FSTITCH_1.0 { global: fst_sum; fst_twice; local: *; };'
variant v1 "$header_v1" "$source_v1" "$map_v1"
bash "$here/write_baseline.sh" "$work/v1/libfstitch.so.1" "$work/baseline" "$work/v1"

variant same "$header_v1" "$source_v1" "$map_v1"
expect pass same
variant added_in_new_node "$header_v1 int fst_thrice(int x);" "$source_v1 int fst_thrice(int x) { return 3 * x; }" \
  'FSTITCH_1.0 { global: fst_sum; fst_twice; local: *; }; FSTITCH_1.1 { global: fst_thrice; } FSTITCH_1.0;'
expect pass added_in_new_node
variant added_in_old_node "$header_v1 int fst_thrice(int x);" "$source_v1 int fst_thrice(int x) { return 3 * x; }" \
  'FSTITCH_1.0 { global: fst_sum; fst_twice; fst_thrice; local: *; };'
expect fail added_in_old_node
variant removed 'typedef struct { int a; int b; } fst_pair; int fst_sum(const fst_pair* p);' \
  'int fst_sum(const fst_pair* p) { return p->a + p->b; }' 'FSTITCH_1.0 { global: fst_sum; local: *; };'
expect fail removed
variant parameter_changed 'typedef struct { int a; int b; } fst_pair; int fst_sum(const fst_pair* p); int fst_twice(long x);' \
  'int fst_sum(const fst_pair* p) { return p->a + p->b; } int fst_twice(long x) { return (int)(2 * x); }' "$map_v1"
expect fail parameter_changed
variant struct_changed 'typedef struct { long a; int b; } fst_pair; int fst_sum(const fst_pair* p); int fst_twice(int x);' \
  'int fst_sum(const fst_pair* p) { return (int)p->a + p->b; } int fst_twice(int x) { return 2 * x; }' "$map_v1"
expect fail struct_changed
variant moved_node "$header_v1" "$source_v1" \
  'FSTITCH_1.0 { global: fst_sum; local: *; }; FSTITCH_1.1 { global: fst_twice; } FSTITCH_1.0;'
expect fail moved_node

[ "$failures" -eq 0 ] || exit 1
echo "selftest: OK"
