#!/usr/bin/env bash
# Compiles and runs the C example in README.md against the built library, so the README's
# code stays true. Usage: check_readme_example.sh <README.md> <include dir> <library dir> <work dir>
set -euo pipefail
readme=$1 include=$2 libdir=$3 work=$4
mkdir -p "$work"
awk '/^```c$/{on=1; next} /^```$/{if(on){exit}} on' "$readme" > "$work/readme_example.c"
test -s "$work/readme_example.c"
cc -std=c99 -Wall -Wextra -Werror -pedantic -I"$include" "$work/readme_example.c" -L"$libdir" -lfstitch \
  -Wl,-rpath,"$libdir" -o "$work/readme_example"
"$work/readme_example"
