#!/usr/bin/env bash
# The Python and Rust examples in README.md are the bindings' own README examples, which the
# bindings' tests run: each ```python / ```rust block of README.md must appear verbatim in
# bindings/python/README.md or bindings/rust/README.md.
# Usage: check_readme_bindings.sh SOURCE_DIR
set -euo pipefail
python3 - "$1" <<'PY'
import re, sys
root = sys.argv[1]
readme = open(f"{root}/README.md").read()
failures = 0
for lang, other in (("python", "bindings/python/README.md"), ("rust", "bindings/rust/README.md")):
    blocks = re.findall(r"```" + lang + r"\n.*?```\n", readme, re.S)
    if not blocks:
        print(f"README.md has no {lang} example")
        failures += 1
    source = open(f"{root}/{other}").read()
    for block in blocks:
        if block not in source:
            print(f"README.md's {lang} example differs from the one in {other}")
            failures += 1
print("readme bindings: OK" if failures == 0 else f"readme bindings: {failures} failure(s)")
sys.exit(1 if failures else 0)
PY
