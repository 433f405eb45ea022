#!/usr/bin/env bash
# Checks the exported surface of libfstitch:
#  - every defined dynamic symbol starts with fst_ (nothing of the C++ runtime or internals),
#  - every function declared FST_API in fstitch.h is exported,
#  - every exported symbol carries an FSTITCH_1.<n> version node (FSTITCH_1.0 for the first
#    release, later nodes for functions added since),
#  - the SONAME is libfstitch.so.<FST_ABI_VERSION>, the file libfstitch.so.<ABI>.<minor>.<patch>,
#    and no CUDA library is NEEDED,
#  - the C++ runtime is linked in statically (no libstdc++ / libgcc_s dependency), unless
#    --allow-shared-runtime is given (sanitizer builds).
# Usage: check_exports.sh LIBRARY HEADER [--allow-shared-runtime]
set -euo pipefail

lib=$1
header=$2
allow_shared_runtime=${3:-}
failures=0
fail() {
  echo "check_exports: FAIL: $*" >&2
  failures=$((failures + 1))
}

[ -f "$lib" ] || { echo "check_exports: no library at $lib" >&2; exit 1; }
[ -f "$header" ] || { echo "check_exports: no header at $header" >&2; exit 1; }

# ABI 1 starts at the FSTITCH_1.0 node; additions go into FSTITCH_1.1, 1.2, ...
version_node=FSTITCH_1.0

# Functions the header declares (the name is on the line that starts with FST_API).
declared=$(grep -E '^FST_API ' "$header" | sed -E 's/^.*[^A-Za-z0-9_](fst_[A-Za-z0-9_]+)\(.*$/\1/' | sort -u)
declared_count=$(printf '%s\n' "$declared" | grep -c '^fst_' || true)
[ "$declared_count" -gt 0 ] || fail "found no FST_API declarations in $header"

# Defined dynamic symbols, without the @VERSION suffix newer nm prints. The version
# definition itself shows up as an absolute symbol named after the node; it is not code.
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" || $3 !~ /^FSTITCH_/ {print $3}' | sed -E 's/@.*$//' | sort -u)
[ -n "$exported" ] || fail "no defined dynamic symbols in $lib"

while read -r name; do
  [ -z "$name" ] && continue
  case "$name" in
    fst_*) ;;
    *) fail "exported symbol '$name' does not start with fst_" ;;
  esac
done <<<"$exported"

while read -r name; do
  [ -z "$name" ] && continue
  grep -qx "$name" <<<"$exported" || fail "'$name' is declared in fstitch.h but not exported"
done <<<"$declared"

# Exported but not declared: a symbol the header does not promise is an ABI accident.
while read -r name; do
  [ -z "$name" ] && continue
  grep -qx "$name" <<<"$declared" || fail "'$name' is exported but not declared FST_API in fstitch.h"
done <<<"$exported"

# Every defined symbol is versioned with a node: "name@@FSTITCH_1.0" in readelf's table.
# The absolute entry named after the node is the version definition itself.
unversioned=$(readelf --dyn-syms -W "$lib" |
  awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && !($7 == "ABS" && $8 ~ /^FSTITCH_/) {print $8}' |
  grep -Ev '@@FSTITCH_1\.[0-9]+$' || true)
[ -z "$unversioned" ] || fail "symbols without an FSTITCH_1.<n> version node: $(echo $unversioned)"
# (Captured first: grep -q closing the pipe early would fail the pipeline under pipefail.)
version_info=$(readelf -V -W "$lib")
grep -q "Name: ${version_node}" <<<"$version_info" || fail "no version definition ${version_node}"

abi=$(sed -nE 's/^#define FST_ABI_VERSION ([0-9]+).*/\1/p' "$header")
soname=$(readelf -d -W "$lib" | sed -nE 's/.*\(SONAME\).*\[(.*)\].*/\1/p')
[ "$soname" = "libfstitch.so.${abi}" ] || fail "SONAME is '$soname', expected libfstitch.so.${abi}"

# The file itself carries the ABI major too: libfstitch.so.<ABI>.<minor>.<patch>.
minor=$(sed -nE 's/^#define FST_VERSION_MINOR ([0-9]+).*/\1/p' "$header")
patch=$(sed -nE 's/^#define FST_VERSION_PATCH ([0-9]+).*/\1/p' "$header")
file_name=$(basename "$(readlink -f "$lib")")
[ "$file_name" = "libfstitch.so.${abi}.${minor}.${patch}" ] ||
  fail "the library file is '$file_name', expected libfstitch.so.${abi}.${minor}.${patch}"

needed=$(readelf -d -W "$lib" | sed -nE 's/.*\(NEEDED\).*\[(.*)\].*/\1/p')
# CUDA is loaded at run time (driver and NVRTC with dlopen): the library must load and
# plan on machines without any of it.
if grep -Eq '^lib(cuda|cudart|nvrtc|nvJitLink)' <<<"$needed"; then
  fail "the library links CUDA libraries, which it must load with dlopen: $(echo $needed)"
fi
if [ "$allow_shared_runtime" != "--allow-shared-runtime" ]; then
  if grep -Eq '^(libstdc\+\+|libgcc_s)' <<<"$needed"; then
    fail "the library needs the shared C++ runtime: $(echo $needed)"
  fi
fi

if [ "$failures" -ne 0 ]; then
  echo "check_exports: $failures failure(s)" >&2
  exit 1
fi
echo "check_exports: OK: $declared_count functions exported under FSTITCH_1.<n> nodes, SONAME $soname"
