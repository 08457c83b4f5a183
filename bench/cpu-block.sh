#!/usr/bin/env bash
# CPU cost of the FP8 version of a Llama-style transformer block, next to the
# original: fp8-run JIT-compiles both (fp8-lower-to-cpu, LLVM -O3) and runs
# them on the same inputs. Prints one markdown row per element type: JIT
# compile time (front end / fp8-pipeline + lowering + JIT) and mean run time
# per step, and the FP8 output's SQNR at the last step.
#
#   bench/cpu-block.sh [BUILD_DIR]      (default: build)
#   HIDDEN=2048 SEQ=256 STEPS=3 DTYPES="f32 bf16" bench/cpu-block.sh
#
# Both versions are scalar loops (linalg -> loops, no tiling or
# vectorization), so the absolute numbers are far from a tuned CPU GEMM;
# the point is the ratio. The FP8 GEMM decodes its E4M3 operands to f32 once
# and runs the same f32 contraction, plus the casts and amax passes, so it
# costs slightly more than an f32 reference. A bf16 reference costs much more:
# every bf16 multiply and add rounds through software (no bf16 arithmetic on
# the host), while the FP8 version accumulates in f32.
set -euo pipefail

build=${1:-build}
hidden=${HIDDEN:-1024}
seq=${SEQ:-128}
heads=${HEADS:-8}
kv_heads=${KV_HEADS:-2}
steps=${STEPS:-3}
dtypes=${DTYPES:-"f32 bf16"}
# Llama's FFN width: 8/3 hidden, rounded up to a multiple of 32.
ffn=${FFN:-$(( (hidden * 8 / 3 + 31) / 32 * 32 ))}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "Llama block: hidden $hidden, FFN $ffn, $heads heads ($kv_heads kv), seq $seq," \
     "batch 1, delayed scaling (history 16), $steps steps"
echo
echo "| dtype | compile ref (s) | compile fp8 (s) | run ref (s/step) | run fp8 (s/step) | fp8 / ref | SQNR (dB) |"
echo "|---|---|---|---|---|---|---|"
for dtype in $dtypes; do
  "$build/bin/fp8-gen" --arch=llama --hidden="$hidden" --heads="$heads" \
    --kv-heads="$kv_heads" --ffn="$ffn" --layers=1 --seq="$seq" --batch=1 \
    --dtype="$dtype" --weights=args -o "$work/block-$dtype.mlir"
  # Weights N(0, 1/fan_in): the projections read hidden, the down projection
  # reads the FFN width.
  w=$(python3 -c "print(1 / $hidden ** 0.5)")
  wd=$(python3 -c "print(1 / $ffn ** 0.5)")
  "$build/bin/fp8-run" "$work/block-$dtype.mlir" --fp8-pipeline="history=16" \
    --steps="$steps" --arg=2:normal:$w --arg=3:normal:$w --arg=4:normal:$w \
    --arg=5:normal:$w --arg=7:normal:$w --arg=8:normal:$w --arg=9:normal:$wd \
    --json > "$work/report-$dtype.json"
  python3 - "$work/report-$dtype.json" "$dtype" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sqnr = r["steps"][-1]["outputs"][0]["sqnr_db"]
print("| %s | %.2f | %.2f | %.3f | %.3f | %.2f | %.1f |" % (
    sys.argv[2], r["reference_compile_seconds"], r["fp8_compile_seconds"],
    r["reference_run_seconds"], r["fp8_run_seconds"],
    r["fp8_run_seconds"] / r["reference_run_seconds"], sqnr))
PY
done
