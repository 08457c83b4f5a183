#!/usr/bin/env bash
# The training-parity study of issue 35 (item 3): every recipe from SEEDS
# seeds for STEPS steps on one model size, with fp8-train's means, 95%
# intervals of the paired gap to BF16 and verdicts. Each finished run is
# kept as a record in RECORDS (committed under bench/results/), so the
# study, hours of these 2 cores, can be stopped and continued: a rerun
# trains only the runs that have no record yet and reports all of them.
#
#   bench/train-parity-study.sh [BUILD_DIR] [OUT_DIR]
#   SIZE=small|large (default small)  SEEDS=5  STEPS=1000
#   RECIPES=... (default: the nine of the study)  RECORDS=DIR
#
# small: 2 layers, hidden 256, 4 heads, FFN 704 (the parity model);
# large: 4 layers, hidden 384, 6 heads, FFN 1024. Both seq 64, batch 8,
# byte vocabulary, AdamW, bf16 compute from f32 masters.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
size=${SIZE:-small}
out="${2:-$build/parity-study/$size}"
seeds=${SEEDS:-5}
steps=${STEPS:-1000}
records=${RECORDS:-$root/bench/results/train-parity/$size}
recipes=${RECIPES:-"fp32,bf16,delayed,history16=scaling=delayed history=16,megatron=scaling=delayed history=1 algo=most_recent,current,row=granularity=row,block=granularity=block,mx=granularity=mx"}
case "$size" in
  small) model=(--layers=2 --hidden=256 --heads=4 --ffn=704) ;;
  large) model=(--layers=4 --hidden=384 --heads=6 --ffn=1024) ;;
  *) echo "train-parity-study: SIZE is small or large, not '$size'" >&2; exit 1 ;;
esac
mkdir -p "$out"

"$build/bin/fp8-gen" --arch=llama --mode=train "${model[@]}" --seq=64 \
  --batch=8 --vocab=256 --dtype=bf16 -o "$out/step.mlir"
start=$(date +%s)
"$build/bin/fp8-train" "$out/step.mlir" --steps="$steps" --seeds="$seeds" \
  --recipes="$recipes" --val-every=$(( steps / 10 > 0 ? steps / 10 : 1 )) \
  --records="$records" --csv="$out/study.csv" --plot="$out/study.png" \
  --json > "$out/study.json"
end=$(date +%s)
sed -n '/^{/q;p' "$out/study.json"
echo "train-parity-study: $size, $seeds seeds x $steps steps in $(( end - start )) s; records in $records, files in $out"
