#!/usr/bin/env bash
# Checks libfstitch against the checked-in ABI baseline of libfstitch.so.1:
#  - abidiff (libabigail) finds no change to any function, variable or type the baseline
#    exports: additions are the only change ABI 1 allows;
#  - every symbol of the baseline is still exported, in the same version node;
#  - every symbol added since lives in a version node the baseline does not have.
# Usage: check_abi.sh LIBRARY BASELINE_DIR
# The baseline (libfstitch.abi, symbols.txt) is written by tools/abi-baseline when a
# release is cut; nothing else should change it.
set -euo pipefail

lib=$1
baseline=$2
failures=0
fail() {
  echo "check_abi: FAIL: $*" >&2
  failures=$((failures + 1))
}
command -v abidiff >/dev/null || { echo "check_abi: abidiff is missing (Debian package abigail-tools)" >&2; exit 1; }
[ -f "$lib" ] || { echo "check_abi: no library at $lib" >&2; exit 1; }
[ -f "$baseline/libfstitch.abi" ] || { echo "check_abi: no baseline at $baseline/libfstitch.abi" >&2; exit 1; }

# abidiff's exit status is a bit set: 1 error, 2 usage, 4 ABI change, 8 incompatible change.
set +e
report=$(abidiff --no-added-syms --no-unreferenced-symbols "$baseline/libfstitch.abi" "$lib" 2>&1)
status=$?
set -e
if [ "$status" -ne 0 ]; then
  fail "abidiff reports changes other than additions (exit status $status):"
  echo "$report" >&2
fi

# "name version" of every defined dynamic symbol (versions are the @@ node names).
current=$(readelf --dyn-syms -W "$lib" |
  awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $8 ~ /@@/ {split($8, p, "@@"); if (p[1] != p[2]) print p[1], p[2]}' |
  sort -u)
baseline_versions=$(awk '{print $2}' "$baseline/symbols.txt" | sort -u)

while read -r name version; do
  [ -z "$name" ] && continue
  now=$(awk -v n="$name" '$1 == n {print $2}' <<<"$current")
  if [ -z "$now" ]; then
    fail "$name ($version) is no longer exported"
  elif [ "$now" != "$version" ]; then
    fail "$name moved from version node $version to $now"
  fi
done <"$baseline/symbols.txt"

while read -r name version; do
  [ -z "$name" ] && continue
  grep -q "^$name " "$baseline/symbols.txt" && continue
  if grep -qx "$version" <<<"$baseline_versions"; then
    fail "$name was added to $version, a version node that was already released; add it to a new node"
  fi
done <<<"$current"

if [ "$failures" -ne 0 ]; then
  echo "check_abi: $failures failure(s)" >&2
  exit 1
fi
echo "check_abi: OK: $(wc -l <"$baseline/symbols.txt") baseline symbols unchanged, $(($(wc -l <<<"$current") - $(wc -l <"$baseline/symbols.txt"))) added in new version nodes"
