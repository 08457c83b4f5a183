#!/usr/bin/env bash
# Quick start, command 1: set up, build, and show what fp8-mlir does to a
# bundled transformer example.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

"$root/scripts/build.sh" fp8-opt
example="$root/examples/fp8-ops.mlir"
echo "== $example: the fp8 dialect, folded (constant weights quantize at compile time)"
"$build/bin/fp8-opt" "$example" --canonicalize
echo "== fp8-verify on it"
"$build/bin/fp8-opt" "$example" --fp8-verify > /dev/null && echo "fp8-verify: ok"
