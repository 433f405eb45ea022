#!/usr/bin/env bash
# Installs the build into a fresh prefix and uses it as an outside project would:
#  1. checks the installed tree (header, library and its links, pkg-config file, CMake package),
#  2. builds consumer.c with `cc $(pkg-config --cflags --libs fstitch)` and runs it,
#  3. builds cmake_project/ with find_package(fstitch) and runs it (found through its RPATH),
#  4. checks that find_package refuses a version the package does not provide,
#  5. builds the example programs (layernorm, softmax, fstitch-run) out of tree from their
#     sources in examples/, with pkg-config and through examples_project/ (find_package), and
#     runs each build: the examples must print their OK line.
# Usage: run_consumer.sh BUILD_DIR SOURCE_DIR C_COMPILER CMAKE_COMMAND CMAKE_GENERATOR VERSION ABI
set -euo pipefail

build_dir=$1
source_dir=$2
cc=$3
cmake=$4
generator=$5
version=$6
abi=$7

work=$(mktemp -d "${TMPDIR:-/tmp}/fstitch-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
failures=0
fail() {
  echo "run_consumer: FAIL: $*" >&2
  failures=$((failures + 1))
}

echo "run_consumer: installing $build_dir into $prefix"
"$cmake" --install "$build_dir" --prefix "$prefix" >"$work/install.log" || {
  cat "$work/install.log" >&2
  echo "run_consumer: FAIL: cmake --install failed" >&2
  exit 1
}

# 1. The installed tree. The library directory is lib/ or lib/<multiarch>/ (GNUInstallDirs):
#    take it from where the pkg-config file landed.
pc=$(find "$prefix" -path '*/pkgconfig/fstitch.pc' -print | head -n 1)
[ -n "$pc" ] || { echo "run_consumer: FAIL: no pkgconfig/fstitch.pc under $prefix" >&2; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
case "$libdir" in
  "$prefix"/lib | "$prefix"/lib64 | "$prefix"/lib/*) ;;
  *) fail "library directory $libdir is not lib/, lib64/ or lib/<multiarch>/" ;;
esac

[ -f "$prefix/include/fstitch.h" ] || fail "include/fstitch.h is not installed"
extra_headers=$(find "$prefix/include" -type f ! -name fstitch.h -print)
[ -z "$extra_headers" ] || fail "internal files installed under include/: $extra_headers"
# The file carries the ABI major with the minor and patch: libfstitch.so.1.3.0 for 0.3.0.
file_version=$abi.${version#*.}
[ -f "$libdir/libfstitch.so.$file_version" ] && [ ! -L "$libdir/libfstitch.so.$file_version" ] ||
  fail "$libdir/libfstitch.so.$file_version is not a regular file"
[ -L "$libdir/libfstitch.so.$abi" ] || fail "$libdir/libfstitch.so.$abi is not a symlink"
[ -L "$libdir/libfstitch.so" ] || fail "$libdir/libfstitch.so is not a symlink"
[ "$(readlink -f "$libdir/libfstitch.so")" = "$(readlink -f "$libdir/libfstitch.so.$file_version")" ] ||
  fail "libfstitch.so does not lead to libfstitch.so.$file_version"
[ "$(readlink -f "$libdir/libfstitch.so.$abi")" = "$(readlink -f "$libdir/libfstitch.so.$file_version")" ] ||
  fail "libfstitch.so.$abi does not lead to libfstitch.so.$file_version"
for file in fstitchConfig.cmake fstitchConfigVersion.cmake fstitchTargets.cmake; do
  [ -f "$libdir/cmake/fstitch/$file" ] || fail "$libdir/cmake/fstitch/$file is not installed"
done
static_libraries=$(find "$prefix" -name '*.a' -print)
[ -z "$static_libraries" ] || fail "a static library was installed: $static_libraries"

# 2. pkg-config, looking only at the fresh prefix.
export PKG_CONFIG_LIBDIR="$libdir/pkgconfig"
unset PKG_CONFIG_PATH
pc_version=$(pkg-config --modversion fstitch) || fail "pkg-config does not know fstitch"
[ "${pc_version:-}" = "$version" ] || fail "pkg-config says version '${pc_version:-}', expected $version"
flags=$(pkg-config --cflags --libs fstitch)
echo "run_consumer: pkg-config --cflags --libs fstitch: $flags"
# shellcheck disable=SC2086  # the flags are words
if "$cc" -std=c99 -pedantic -Werror -Wall -Wextra -o "$work/consumer_pkgconfig" "$source_dir/consumer.c" $flags; then
  output=$(LD_LIBRARY_PATH="$libdir" "$work/consumer_pkgconfig") || fail "the pkg-config consumer failed: $output"
  grep -q "OK" <<<"$output" || fail "the pkg-config consumer did not print OK: $output"
  echo "run_consumer: pkg-config consumer: $output"
else
  fail "the pkg-config consumer did not compile"
fi

# 3. find_package(fstitch) from a CMake project.
if "$cmake" -S "$source_dir/cmake_project" -B "$work/cmake_build" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 &&
  "$cmake" --build "$work/cmake_build" >"$work/build.log" 2>&1; then
  binary="$work/cmake_build/fstitch_consumer"
  # It must load the installed library, not the one in the build tree.
  loaded=$(env -u LD_LIBRARY_PATH ldd "$binary" | awk '/libfstitch\.so/ {print $3}')
  [ "$(readlink -f "${loaded:-/nonexistent}")" = "$(readlink -f "$libdir/libfstitch.so.$abi")" ] ||
    fail "the CMake consumer loads '$loaded' instead of the installed library"
  output=$(env -u LD_LIBRARY_PATH "$binary") || fail "the CMake consumer failed: $output"
  grep -q "OK" <<<"$output" || fail "the CMake consumer did not print OK: $output"
  echo "run_consumer: CMake consumer: $output"
else
  cat "$work/configure.log" "$work/build.log" 2>/dev/null >&2 || true
  fail "the CMake consumer did not configure or build"
fi

# 4. A version the package does not provide is refused.
if "$cmake" -S "$source_dir/cmake_project" -B "$work/cmake_build_v99" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" -DFSTITCH_CONSUMER_REQUIRE_VERSION=99.0 >"$work/configure_v99.log" 2>&1; then
  fail "find_package(fstitch 99.0) succeeded against version $version"
fi

# 5. The examples, from their sources only. Each program runs on the default backend (the GPU
#    when there is one) on a small problem; fstitch-run checks a sample graph with several
#    outputs of mixed dtypes.
examples_dir=$(cd "$source_dir/../../examples" && pwd) ||
  { echo "run_consumer: FAIL: no examples/ beside tests/ in $source_dir/../.." >&2; exit 1; }
example_shared=("$examples_dir/example_util.c" "$examples_dir/fusion_runner.c" "$examples_dir/device_buffers.c")
example_sources() {
  case $1 in
    layernorm) echo "$examples_dir/layernorm.c $examples_dir/example_cli.c" ;;
    softmax) echo "$examples_dir/softmax.c $examples_dir/example_cli.c" ;;
    fstitch-run)
      echo "$examples_dir/fstitch_run.c $examples_dir/dtype_values.c $examples_dir/output_check.c" \
        "$examples_dir/graph_precision.c"
      ;;
  esac
}
# Runs one built example and checks its OK line. $1 says how it was built, $2 is its path,
# $3 the directory to load libfstitch from ("": the binary's own RPATH).
check_example() {
  local how=$1 binary=$2 library_path=$3 name expected output
  local -a environment=(-u LD_LIBRARY_PATH)
  [ -n "$library_path" ] && environment=("LD_LIBRARY_PATH=$library_path")
  name=$(basename "$binary")
  case $name in
    layernorm) set -- --rows 8 --cols 300 ;;
    softmax) set -- --rows 8 --cols 300 ;;
    fstitch-run) set -- "$examples_dir/graphs/mixed_outputs.fst" ;;
  esac
  expected="$name: OK"
  [ "$name" = fstitch-run ] && expected="fstitch-run: OK: "
  if output=$(env "${environment[@]}" "$binary" "$@" 2>&1) &&
    grep -q "$expected" <<<"$output"; then
    echo "run_consumer: $how $name: $(grep "$expected" <<<"$output")"
  else
    fail "the $how $name did not print '$expected': $output"
  fi
}

mkdir -p "$work/examples_pkgconfig"
for example in layernorm softmax fstitch-run; do
  # shellcheck disable=SC2046,SC2086  # the source lists and the flags are words
  if "$cc" -std=c99 -pedantic -Werror -Wall -Wextra -o "$work/examples_pkgconfig/$example" \
    $(example_sources "$example") "${example_shared[@]}" $flags -ldl -lm; then
    check_example "pkg-config" "$work/examples_pkgconfig/$example" "$libdir"
  else
    fail "the pkg-config build of $example did not compile"
  fi
done

if "$cmake" -S "$source_dir/examples_project" -B "$work/examples_build" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DFSTITCH_EXAMPLES_DIR="$examples_dir" \
  >"$work/examples_configure.log" 2>&1 &&
  "$cmake" --build "$work/examples_build" >"$work/examples_build.log" 2>&1; then
  for example in layernorm softmax fstitch-run; do
    binary="$work/examples_build/$example"
    loaded=$(env -u LD_LIBRARY_PATH ldd "$binary" | awk '/libfstitch\.so/ {print $3}')
    [ "$(readlink -f "${loaded:-/nonexistent}")" = "$(readlink -f "$libdir/libfstitch.so.$abi")" ] ||
      fail "the CMake-built $example loads '$loaded' instead of the installed library"
    check_example "CMake-built" "$binary" ""
  done
else
  cat "$work/examples_configure.log" "$work/examples_build.log" 2>/dev/null >&2 || true
  fail "the examples project did not configure or build"
fi

if [ "$failures" -ne 0 ]; then
  echo "run_consumer: $failures failure(s)" >&2
  exit 1
fi
echo "run_consumer: OK"
