#!/usr/bin/env bash
# Issue 33's measure of fused attention on the CPU: one Llama layer from
# fp8-gen (hidden 512, 8 query heads on 2 KV heads, bf16, causal), one
# fp8-run step per sequence length, in three forms:
#   written   the graph as fp8-gen writes it (scores materialized)
#   pipeline  the same file, fp8-run --fp8-pipeline="fuse-attention=true":
#             the FP8 version is fused, the reference and the golden are the
#             graph as written (so its SQNR is against the written golden)
#   fused     the file after fp8-opt --fp8-fuse-attention: every version
#             fused (the fused graph's time and peak memory)
# Prints fp8-run's per-step times, the FP8 output's SQNR (dB) against the
# golden, wall time and peak RSS (/usr/bin/time -v), and the load average
# (2-core machines are shared: rerun a row taken under load).
#
#   bench/attention.sh [BUILD_DIR]                   (default: build)
#   SEQS="1024 4096" FORMS="written fused" bench/attention.sh
#   SEQS=32768 FORMS=fused bench/attention.sh       (written needs ~35 GB)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
seqs=${SEQS:-"1024 4096"}
forms=${FORMS:-"written pipeline fused"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-6s %-9s %10s %10s %9s %9s %10s  %s\n' seq form "ref s" "fp8 s" "SQNR dB" "wall s" "peak MB" load
for seq in $seqs; do
  "$build/bin/fp8-gen" --arch=llama --layers=1 --hidden=512 --heads=8 \
    --kv-heads=2 --seq="$seq" --batch=1 --dtype=bf16 > "$work/written.mlir"
  "$build/bin/fp8-opt" "$work/written.mlir" --fp8-fuse-attention \
    -o "$work/fused.mlir"
  for form in $forms; do
    case $form in
      written)  args=("$work/written.mlir") ;;
      pipeline) args=("$work/written.mlir" --fp8-pipeline=fuse-attention=true) ;;
      fused)    args=("$work/fused.mlir") ;;
      *) echo "unknown form $form" >&2; exit 1 ;;
    esac
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v "$build/bin/fp8-run" "${args[@]}" --steps=1 \
      > "$work/run.txt" 2> "$work/time.txt"
    times=$(sed -n 's/.*run per step: reference \([0-9.]*\) s, fp8 \([0-9.]*\) s.*/\1 \2/p' "$work/run.txt")
    sqnr=$(awk '/^  output/ {getline; print $2; exit}' "$work/run.txt")
    wall=$(awk -F': ' '/Elapsed/ {n = split($2, t, ":"); s = 0;
                                   for (i = 1; i <= n; i++) s = s * 60 + t[i];
                                   print s}' "$work/time.txt")
    peak=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$work/time.txt")
    printf '%-6s %-9s %10s %10s %9s %9s %10s  %s\n' "$seq" "$form" \
      ${times:-"? ?"} "${sqnr:-?}" "$wall" "$peak" "$load"
  done
done
