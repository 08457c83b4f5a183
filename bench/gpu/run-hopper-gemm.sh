#!/usr/bin/env bash
# The FP8 wgmma GEMM on a Hopper GPU (H100/H200): correctness against a CPU
# reference and cuBLASLt's FP8 GEMM, then TFLOP/s against cuBLASLt FP8 and
# BF16 on 4096^3, 8192^3 and the Llama-3-8B layer GEMMs at 4096 tokens.
#
#   bench/gpu/run-hopper-gemm.sh [--iterations=20] [--skip-timing]
#
# Builds fp8-opt and fp8-hopper-gemm with the project's CMake (in $BUILD_DIR,
# default build-gpu-bench), lowers bench/gpu/hopper-gemm.mlir with
# fp8-lower-gemm-to-nvvm (plain, promote=1, tma-store=1), extracts the PTX, records
# ptxas -v when the toolkit is there, and runs the driver. Results go to
# $OUT_DIR (default $BUILD_DIR/hopper-gemm). Needs only the NVIDIA driver
# (libcuda.so.1) to run, and libcublasLt for the comparisons (found with
# dlopen; LD_LIBRARY_PATH=/usr/local/cuda/lib64 if it is not on the default
# path). Without a GPU it stops with "no GPU" and exit status 2.
#
# FP8_BUILD_LOCK=/path serializes the build with flock (shared build trees).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-gpu-bench}"
out="${OUT_DIR:-$build/hopper-gemm}"
BUILD_DIR="$build" "$root/scripts/build.sh" fp8-opt fp8-hopper-gemm

mkdir -p "$out"
for variant in plain promote tmastore; do
  opts=""
  [ "$variant" = promote ] && opts="=promote=1"
  [ "$variant" = tmastore ] && opts="=tma-store=1"
  "$build/bin/fp8-opt" "$root/bench/gpu/hopper-gemm.mlir" \
    --fp8-lower-gemm-to-nvvm$opts -o "$out/$variant.mlir"
  python3 "$root/scripts/extract-ptx.py" "$out/$variant.mlir" "$out/$variant" >/dev/null
done

ptxas="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
if [ -x "$ptxas" ]; then
  for variant in plain promote tmastore; do
    "$ptxas" -arch=sm_90a -v "$out/$variant.fp8_gemm_kernels.ptx" \
      -o "$out/$variant.cubin" 2>&1
  done > "$out/ptxas.txt"
  echo "ptxas -v: $out/ptxas.txt"
  if grep -q warning "$out/ptxas.txt"; then
    echo "run-hopper-gemm: ptxas warned (serialized wgmma?):" >&2
    grep warning "$out/ptxas.txt" >&2
    exit 1
  fi
fi

if [ -d /usr/local/cuda/lib64 ]; then
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
fi
status=0
"$build/bin/fp8-hopper-gemm" --ptx "$out/plain.fp8_gemm_kernels.ptx" \
  --ptx-promote "$out/promote.fp8_gemm_kernels.ptx" \
  --ptx-tmastore "$out/tmastore.fp8_gemm_kernels.ptx" "$@" 2>&1 \
  | tee "$out/results.txt" || status=${PIPESTATUS[0]}
if [ "$status" -eq 2 ]; then
  echo "run-hopper-gemm: no GPU (or no CUDA driver) here: nothing measured" >&2
fi
exit "$status"
