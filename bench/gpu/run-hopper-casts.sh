#!/usr/bin/env bash
# FP8 cast kernels on a Hopper GPU (H100/H200): bit-exactness against the CPU
# numerics library and bandwidth against a device-to-device copy.
#
#   bench/gpu/run-hopper-casts.sh [--sizes-mib=1,4,16,64,256,1024] [--iterations=20]
#
# Builds fp8-opt and fp8-hopper-casts with the project's CMake (in $BUILD_DIR,
# default build-gpu-bench), lowers bench/gpu/hopper-casts.mlir with
# fp8-lower-to-nvvm, extracts the PTX, reports ptxas -v resources when the
# toolkit is there, and runs the driver. Results go to $OUT_DIR (default
# $BUILD_DIR/hopper-casts). Needs only the NVIDIA driver (libcuda.so.1) to
# run; without a GPU it stops with "no GPU" and exit status 2.
#
# FP8_BUILD_LOCK=/path serializes the build with flock (shared build trees).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-gpu-bench}"
out="${OUT_DIR:-$build/hopper-casts}"
BUILD_DIR="$build" "$root/scripts/build.sh" fp8-opt fp8-hopper-casts

mkdir -p "$out"
"$build/bin/fp8-opt" "$root/bench/gpu/hopper-casts.mlir" --fp8-lower-to-nvvm \
  -o "$out/kernels.mlir"
python3 "$root/scripts/extract-ptx.py" "$out/kernels.mlir" "$out/kernels" >/dev/null
ptx="$out/kernels.fp8_kernels.ptx"

ptxas="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
if [ -x "$ptxas" ]; then
  "$ptxas" -arch=sm_90a -v "$ptx" -o "$out/kernels.cubin" > "$out/ptxas.txt" 2>&1
  echo "ptxas -v: $out/ptxas.txt"
fi

status=0
"$build/bin/fp8-hopper-casts" --ptx "$ptx" "$@" 2>&1 | tee "$out/results.txt" \
  || status=${PIPESTATUS[0]}
if [ "$status" -eq 2 ]; then
  echo "run-hopper-casts: no GPU (or no CUDA driver) here: nothing measured" >&2
fi
exit "$status"
