#!/usr/bin/env bash
# Quick start, command 1: set up, build, and show the FP8 rewrite of a bundled
# transformer block (examples/llama-ffn-block.mlir).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

"$root/scripts/build.sh" fp8-opt
example="$root/examples/llama-ffn-block.mlir"
report="$build/llama-ffn-block.fp8-report.json"
echo "== fp8-opt --fp8-pipeline on $example"
"$build/bin/fp8-opt" "$example" \
  --fp8-pipeline="history=16 remarks report=$report"
echo "== decisions and totals: $report"
grep -E '"(decision|reason|fp8_flop_share|operand_bytes_saved)"' "$report"
