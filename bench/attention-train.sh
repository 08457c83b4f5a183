#!/usr/bin/env bash
# Issue 33 item 4's measure: a training step whose attention is fused
# (fp8.attention keeping its log-sum-exp, fp8.attention_grad recomputing P
# by tiles) against the same step as written (the forward saves P, the
# backward computes dP and dS over whole sq x sk tensors). One Llama layer
# from fp8-gen --mode=train (hidden 512, 8 query heads on 2 KV heads, bf16,
# causal, vocabulary 256), fp8-train for a few steps per sequence length,
# one process per recipe:
#   hp-fused / hp-written   every GEMM in high precision (exclude=.*)
#   fp8-fused / fp8-written TE's delayed scaling (the default recipe)
# Prints fp8-train's seconds per step (the median of the steps after the
# first), its final loss, wall time, peak RSS (/usr/bin/time -v) and the
# load average (2-core machines are shared: rerun a row taken under load).
#
#   bench/attention-train.sh [BUILD_DIR]             (default: build)
#   SEQS="1024 2048" STEPS=4 bench/attention-train.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
seqs=${SEQS:-"1024 2048"}
steps=${STEPS:-4}
recipes=${RECIPES:-"hp-fused hp-written fp8-fused fp8-written"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-6s %-12s %9s %11s %9s %10s  %s\n' seq recipe "s/step" "final loss" "wall s" "peak MB" load
for seq in $seqs; do
  "$build/bin/fp8-gen" --arch=llama --mode=train --layers=1 --hidden=512 \
    --heads=8 --kv-heads=2 --seq="$seq" --batch=1 --vocab=256 --dtype=bf16 \
    --form=generic > "$work/step.mlir"
  for recipe in $recipes; do
    case $recipe in
      hp-fused)    spec="hp-fused=state=globals exclude=.*" ;;
      hp-written)  spec="hp-written=state=globals exclude=.* fuse-attention=false" ;;
      fp8-fused)   spec="fp8-fused=state=globals" ;;
      fp8-written) spec="fp8-written=state=globals fuse-attention=false" ;;
      *) echo "unknown recipe $recipe" >&2; exit 1 ;;
    esac
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v "$build/bin/fp8-train" "$work/step.mlir" \
      --steps="$steps" --val-every="$steps" --recipes="$spec" \
      --csv="$work/run.csv" --quiet > /dev/null 2> "$work/time.txt"
    perstep=$(awk -F, 'NR > 2 {print $6}' "$work/run.csv" | sort -g |
              awk '{v[NR] = $1} END {printf "%.3f", v[int((NR + 1) / 2)]}')
    loss=$(awk -F, 'END {print $3}' "$work/run.csv")
    wall=$(awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = 0;
                                   for (i = 1; i <= n; i++) s = s * 60 + t[i];
                                   print s}' "$work/time.txt")
    peak=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$work/time.txt")
    printf '%-6s %-12s %9s %11s %9s %10s  %s\n' "$seq" "$recipe" "$perstep" \
      "$loss" "$wall" "$peak" "$load"
  done
done
