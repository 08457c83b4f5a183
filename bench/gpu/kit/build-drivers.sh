#!/usr/bin/env bash
# Builds the GPU kit's host drivers (fp8-hopper-casts, fp8-hopper-gemm) from
# the kit's src/ with any C++17 compiler and nothing else: no LLVM, no CUDA
# (the driver is opened with dlopen at run time). libstdc++ and libgcc are
# linked statically, so the binaries need only the C library (and libcuda).
#
#   build-drivers.sh SRC_DIR OUT_DIR
#
# scripts/gpu-kit.sh runs it to make the kit's bin/; the kit's run.sh runs
# it again on the GPU machine when the prebuilt binaries do not start there.
set -euo pipefail
src="$1"
out="$2"
cxx="${CXX:-$(command -v c++ || command -v g++ || command -v clang++)}"
mkdir -p "$out"
common=("$src/lib/Runtime/CudaRuntime.cpp" "$src/lib/Numerics/Float8.cpp"
        "$src/lib/Numerics/Scaling.cpp")
flags=(-std=c++17 -O2 -Wno-psabi -I"$src/include" -I"$src/bench/gpu"
       -static-libstdc++ -static-libgcc)
"$cxx" "${flags[@]}" "$src/bench/gpu/hopper-casts.cpp" "${common[@]}" \
  -o "$out/fp8-hopper-casts" -ldl &
"$cxx" "${flags[@]}" "$src/bench/gpu/hopper-gemm.cpp" "${common[@]}" \
  -o "$out/fp8-hopper-gemm" -ldl &
wait %1
wait %2
