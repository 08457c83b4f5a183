#!/usr/bin/env bash
# Builds the GPU kit's host drivers (fp8-hopper-casts, fp8-hopper-gemm,
# fp8-hopper-attention, fp8-block-bench) and the GPU runtime library of the compiled programs
# (libfp8_gpu_runtime.so, MLIR's mgpu* ABI) from
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
"$cxx" "${flags[@]}" "$src/bench/gpu/hopper-attention.cpp" "${common[@]}" \
  -o "$out/fp8-hopper-attention" -ldl &
"$cxx" "${flags[@]}" "$src/bench/gpu/block-bench.cpp" \
  "$src/lib/Runtime/CudaRuntime.cpp" -o "$out/fp8-block-bench" -ldl &
# Only the ABI exported: mgpu*, fp8Gpu*, the generic allocation functions
# (not the static libstdc++ inside, nor its template instances).
exports="$out/.runtime-exports.map"
printf '{ global: mgpu*; fp8Gpu*; _mlir_memref_to_llvm_*; local: *; };\n' \
  > "$exports"
"$cxx" "${flags[@]}" -shared -fPIC -fvisibility=hidden \
  -Wl,-soname,libfp8_gpu_runtime.so -Wl,--exclude-libs,ALL \
  -Wl,--version-script,"$exports" \
  "$src/lib/Runtime/MgpuRuntime.cpp" \
  "$src/lib/Runtime/CudaRuntime.cpp" -o "$out/libfp8_gpu_runtime.so" -ldl &
wait %1
wait %2
wait %3
wait %4
wait %5
rm -f "$exports"
