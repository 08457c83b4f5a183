#!/usr/bin/env bash
# Training parity: FP8 against BF16 and FP32 on the same model, weights and
# batches (issue "Training parity"). Generates a 2-layer Llama training step
# (hidden 256, 4 heads, FFN 704, seq 128, batch 8, byte vocabulary, AdamW,
# bf16 compute from f32 masters) and trains it STEPS steps on the shipped
# corpus with fp8-train in FP32, BF16, delayed and current scaling, plus
# E4M3-only (no E5M2 gradients) and a 16-step amax history, all on one plot.
# Writes OUT/parity.csv (+ .tensors.csv), OUT/parity.png, OUT/parity.json and
# prints fp8-train's table.
#
#   bench/train-parity.sh [BUILD_DIR] [OUT_DIR]     (default: build, build/parity)
#   STEPS=100 RECIPES=bf16,delayed bench/train-parity.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
out="${2:-$build/parity}"
steps=${STEPS:-500}
recipes=${RECIPES:-"fp32,bf16,delayed,current,e4m3=scaling=delayed format=e4m3,history16=scaling=delayed history=16"}
mkdir -p "$out"

"$build/bin/fp8-gen" --arch=llama --mode=train --layers=2 --hidden=256 \
  --heads=4 --ffn=704 --seq=128 --batch=8 --vocab=256 --dtype=bf16 \
  -o "$out/step.mlir"
start=$(date +%s)
"$build/bin/fp8-train" "$out/step.mlir" --steps="$steps" --recipes="$recipes" \
  --val-every=$(( steps / 10 > 0 ? steps / 10 : 1 )) --val-batches=8 \
  --csv="$out/parity.csv" --plot="$out/parity.png" --json > "$out/parity.json"
end=$(date +%s)
sed -n '/^{/q;p' "$out/parity.json"
echo "train-parity: $steps steps x $(tr ',' '\n' <<< "$recipes" | grep -c .) runs in $(( end - start )) s; files in $out"
