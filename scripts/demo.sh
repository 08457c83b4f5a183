#!/usr/bin/env bash
# Quick start, command 1: set up, build, show the FP8 rewrite of a bundled
# transformer block (examples/llama-ffn-block.mlir), then run it as written
# and in FP8 on the CPU and compare.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

"$root/scripts/build.sh" fp8-opt fp8-run
example="$root/examples/llama-ffn-block.mlir"
report="$build/llama-ffn-block.fp8-report.json"
echo "== fp8-opt --fp8-pipeline on $example"
"$build/bin/fp8-opt" "$example" \
  --fp8-pipeline="history=16 remarks report=$report"
echo "== decisions and totals: $report"
grep -E '"(decision|reason|fp8_flop_share|operand_bytes_saved)"' "$report"
# fp8-run draws the weights N(0, 1/K) for their GEMM's K (its header says so)
# and measures both versions against the block in f32; three steps of
# delayed scaling.
echo "== fp8-run: the block as written and its FP8 version against f32"
"$build/bin/fp8-run" "$example" --fp8-pipeline="history=16" --steps=3
