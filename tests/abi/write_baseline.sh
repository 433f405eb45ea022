#!/usr/bin/env bash
# Writes an ABI baseline of LIBRARY into OUT_DIR: libfstitch.abi, the libabigail description
# of the interfaces it exports (types as declared in HEADERS_DIR), and symbols.txt, each
# exported symbol with its version node. check_abi.sh compares a later build against it.
# Usage: write_baseline.sh LIBRARY OUT_DIR HEADERS_DIR   (the library needs its DWARF: -g)
set -euo pipefail
lib=$(readlink -f "$1")
out=$2
headers=$3
mkdir -p "$out"
abidw --no-corpus-path --no-comp-dir-path --exported-interfaces-only --drop-private-types \
  --headers-dir "$headers" --out-file "$out/libfstitch.abi" "$lib"
readelf --dyn-syms -W "$lib" |
  awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $8 ~ /@@/ {split($8, p, "@@"); if (p[1] != p[2]) print p[1], p[2]}' |
  sort -u >"$out/symbols.txt"
