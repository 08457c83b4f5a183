#!/usr/bin/env bash
# Compile time of fp8-opt's full --fp8-pipeline (TOSA front end, quantize,
# optimize, verify) on Llama-style models at hidden 4096 (Llama-2-7B shapes,
# weights as function arguments so the files stay small), next to the same
# binary only parsing, verifying and printing the file. Wall time and peak RSS
# from /usr/bin/time, best of $REPEAT runs; prints a Markdown table.
#
#   bench/compile-time.sh [build-dir]     (REPEAT=3 LAYERS="1 2 ..." to change)
set -euo pipefail
build=${1:-$(dirname "$0")/../build}
gen=$build/bin/fp8-gen
opt=$build/bin/fp8-opt
repeat=${REPEAT:-3}
layers=${LAYERS:-"1 2 4 8 16 32 48 96"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Best (minimum) wall time of $repeat runs and the peak RSS of that run.
measure() {
  local best="" rss=""
  for _ in $(seq "$repeat"); do
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" -o /dev/null 2>/dev/null
    read -r t m < "$work/time"
    if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then
      best=$t rss=$m
    fi
  done
  echo "$best $rss"
}

row() {
  local name=$1 file=$2
  local size parse pipe
  size=$(du -k "$file" | cut -f1)
  parse=$(measure "$opt" "$file")
  pipe=$(measure "$opt" "$file" --fp8-pipeline)
  read -r pt pm <<< "$parse"
  read -r qt qm <<< "$pipe"
  local gemms
  gemms=$("$opt" "$file" --fp8-pipeline -o - 2>/dev/null | grep -c 'fp8.scaled_matmul' || true)
  printf '| %s | %s | %s | %.2f | %d | %.2f | %d | %.2fx |\n' "$name" "$size" \
    "$gemms" "$pt" $((pm / 1024)) "$qt" $((qm / 1024)) \
    "$(awk "BEGIN{print ($pt > 0) ? $qt / $pt : 0}")"
}

echo '| model | file KiB | FP8 GEMMs | parse+print s | MiB | pipeline s | MiB | ratio |'
echo '|---|---|---|---|---|---|---|---|'
for n in $layers; do
  "$gen" --arch=llama --layers="$n" --hidden=4096 --heads=32 --kv-heads=8 \
    --ffn=11008 --seq=2048 --vocab=32000 --dtype=bf16 --weights=args \
    -o "$work/llama-$n.mlir"
  row "llama ${n}L" "$work/llama-$n.mlir"
done
# The biggest shared input (a real exported Qwen-1.5B decoder layer in TOSA).
graphs=$(dirname "$0")/../test/Inputs/graphs
row "buddy qwen1.5b layer (tosa)" "$graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir"
