#!/usr/bin/env bash
# Accuracy of the scaling granularities (fp8-pipeline granularity=...) on the
# CPU, where every recipe is bit-exact to its definition. Prints three
# markdown tables (docs/cpu-accuracy.md, "Finer scaling"):
#   1. one linear layer's GEMM, y = x w^T (x [512, 4096], w [4096, 4096]),
#      with N(0, 1) activations and with 4 outlier channels (0.1%) x100:
#      SQNR, worst and median row, FP8 run time;
#   2. every example and shared input under each recipe: the worst SQNR over
#      the outputs at the last step;
#   3. MX scale exponents rounded up (TE) against the OCP spec's floor
#      (bench/mx_rounding.cpp).
#
#   bench/block-scaling.sh [BUILD_DIR]      (default: build)
set -euo pipefail

build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
npy="$src/test/Integration/Inputs/npy.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

recipes=("scaling=delayed history=16" "scaling=current" "scaling=current power-of-two"
         "granularity=row" "granularity=row exact-scales" "granularity=block"
         "granularity=block exact-scales" "granularity=mx")

# Reads an fp8-run --json report on stdin; prints the fields asked for
# ("sqnr", "worst", "median", "time", "min": worst SQNR over outputs) of its
# last step.
summarize() {
  python3 -c '
import json, sys
report = json.load(sys.stdin)
step = report["steps"][-1]
outs = [o for o in step["outputs"] if o.get("sqnr_db") is not None]
fields = {
  "sqnr": lambda: "%.2f" % outs[0]["sqnr_db"],
  "worst": lambda: "%.2f" % outs[0]["worst_row_sqnr_db"],
  "median": lambda: "%.2f" % outs[0]["median_row_sqnr_db"],
  "time": lambda: "%.3f" % report["fp8_run_seconds"],
  "min": lambda: "%.2f" % min(o["sqnr_db"] for o in outs),
}
print(" | ".join(fields[f]() for f in sys.argv[1:]))
' "$@"
}

cat > "$work/linear.mlir" <<'MLIR'
func.func @linear(%x: tensor<512x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<512x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x4096xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<512x4096xf32>) -> tensor<512x4096xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<512x4096xf32>, tensor<4096x4096xf32>)
      outs(%c : tensor<512x4096xf32>) -> tensor<512x4096xf32>
  return %y : tensor<512x4096xf32>
}
MLIR
python3 "$npy" "$work/x.npy" --shape 512x4096 --normal 1 1.0
python3 "$npy" "$work/xo.npy" --shape 512x4096 --normal 1 1.0 --outlier-channels 4 100

echo "### One GEMM, 512 x 4096 x 4096 (y = x w^T, w ~ N(0, 1/4096)); delayed scaling at its second step"
echo
echo "| recipe | N(0,1): SQNR | worst row | median row | outliers: SQNR | worst row | median row | FP8 run (s) |"
echo "|---|---|---|---|---|---|---|---|"
for recipe in "${recipes[@]}"; do
  normal=$("$build/bin/fp8-run" "$work/linear.mlir" --fp8-pipeline="$recipe" \
    --arg=0:"$work/x.npy" --steps=2 --same-inputs --quiet --json |
    summarize sqnr worst median)
  outliers=$("$build/bin/fp8-run" "$work/linear.mlir" --fp8-pipeline="$recipe" \
    --arg=0:"$work/xo.npy" --steps=2 --same-inputs --quiet --json |
    summarize sqnr worst median time)
  echo "| $recipe | $normal | $outliers |"
done
echo

seed="$work/seed.npy"
python3 "$npy" "$seed" --shape scalar --normal 0 0 --set 0=1
graphs=(
  "examples/gpt2-block.mlir|"
  "examples/llama-block.mlir|"
  "examples/llama-ffn-block.mlir|"
  "examples/llama-ffn-train.mlir|"
  "examples/llama-train-step.mlir|--dist=zeros --int-range=128 --arg=0:uniform --arg=1:uniform --arg=2:$seed --arg=5:uniform:1 --arg=10:uniform:1 --arg=14:uniform:1 --arg=4:normal:0.125 --arg=6:normal:0.125 --arg=7:normal:0.125 --arg=8:normal:0.125 --arg=9:normal:0.125 --arg=11:normal:0.125 --arg=12:normal:0.125 --arg=13:normal:0.125 --arg=15:normal:0.125"
  "test/Inputs/graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir|"
  "test/Inputs/graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir|--int-range=2"
)

echo "### Every example and shared input: worst output SQNR (dB) at the second step"
echo
header="| graph |"; rule="|---|"
for recipe in "${recipes[@]}"; do header+=" $recipe |"; rule+="---|"; done
echo "$header"; echo "$rule"
for entry in "${graphs[@]}"; do
  graph=${entry%%|*}; args=${entry#*|}
  path="$src/$graph"
  row="| $(basename "$graph" .mlir) |"
  for recipe in "${recipes[@]}"; do
    # shellcheck disable=SC2086
    value=$("$build/bin/fp8-run" "$path" --fp8-pipeline="$recipe" --steps=2 \
      --same-inputs --quiet --json $args 2>/dev/null | summarize min || echo "failed")
    row+=" $value |"
  done
  echo "$row"
done
echo

echo "### MX scale exponent: rounded up (TE) or down (OCP spec)"
echo
ninja -C "$build" fp8-mx-rounding > /dev/null
"$build/bin/fp8-mx-rounding"
