#!/usr/bin/env bash
# Builds the GPU kit: everything a Hopper machine without LLVM/MLIR (and
# without a network) needs to produce every GPU figure of the project with
# one command, `bash build/gpu-kit/run.sh` (docs/gpu-kit.md).
#
#   scripts/gpu-kit.sh            # kit in $KIT_DIR, default build/gpu-kit
#
# On this machine: builds fp8-opt (scripts/build.sh) unless $FP8_OPT names
# one, lowers the cast kernels (fp8-lower-to-nvvm) and the wgmma GEMM in its
# three variants (fp8-lower-gemm-to-nvvm: plain, promote=1, tma-store=1) to
# PTX, assembles them with ptxas when it is here (any warning or C75xx
# advisory fails the build), builds the host drivers from the kit's own
# sources with only the C library as a run-time dependency, and writes a
# MANIFEST of every file. Fails when the kit is over 48 MiB or a driver
# needs LLVM/MLIR at run time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kit="${KIT_DIR:-$root/build/gpu-kit}"
if [ -z "${FP8_OPT:-}" ]; then
  "$root/scripts/build.sh" fp8-opt fp8-gen fp8-compile FP8GpuRuntime
  FP8_OPT="${BUILD_DIR:-$root/build}/bin/fp8-opt"
fi
bindir="$(dirname "$FP8_OPT")"

rm -rf "$kit"
mkdir -p "$kit/kernels" "$kit/bin" "$kit/src" "$kit/programs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Kernels: the project's own lowerings, extracted as PTX.
lower() { # name input pipeline
  "$FP8_OPT" "$2" "$3" -o "$work/$1.mlir"
  python3 "$root/scripts/extract-ptx.py" "$work/$1.mlir" "$work/$1" > /dev/null
  mv "$work/$1".*.ptx "$kit/kernels/$1.ptx"
}
lower casts "$root/bench/gpu/hopper-casts.mlir" --fp8-lower-to-nvvm
lower gemm-plain "$root/bench/gpu/hopper-gemm.mlir" --fp8-lower-gemm-to-nvvm
lower gemm-promote "$root/bench/gpu/hopper-gemm.mlir" --fp8-lower-gemm-to-nvvm=promote=1
lower gemm-tmastore "$root/bench/gpu/hopper-gemm.mlir" --fp8-lower-gemm-to-nvvm=tma-store=1
# The flash attention kernels (convert-fp8-attention-to-wgmma), one per
# variant of bench/gpu/hopper-attention.mlir.
lower attention "$root/bench/gpu/hopper-attention.mlir" --fp8-lower-gemm-to-nvvm
# The transposing block casts are gpu.func kernels of the whole-program
# lowering: their gpu.module, from fp8-lower-to-gpu.
"$FP8_OPT" "$root/bench/gpu/hopper-block-transpose.mlir" --fp8-lower-to-gpu \
  -o "$work/block-transpose.mlir"
python3 "$root/scripts/extract-ptx.py" "$work/block-transpose.mlir" \
  "$work/block-transpose" > /dev/null
mv "$work/block-transpose.fp8_kernels.ptx" "$kit/kernels/block-transpose.ptx"

# Part 4: a Llama-3-8B-shaped block (one layer: hidden 4096, 32 query and
# 8 key/value heads, FFN 14336) at 4096 tokens, compiled whole by
# fp8-compile --target=cuda twice: after fp8-pipeline (FP8, delayed
# scaling) and in BF16 (fp8-pipeline quantizing nothing: the same fused
# attention on the flash kernel). Their kernels are PTX inside
# the libraries (the driver JIT-compiles them); the libraries need libc and
# libfp8_gpu_runtime.so (rebuilt from src/ with the drivers).
# The same layer at 1024 tokens too (block1k): the GEMMs' share grows as
# attention's shrinks (4x fewer GEMM flops, 16x fewer score elements).
for tokens in 4096 1024; do
  suffix="$([ "$tokens" = 4096 ] || echo 1k)"
  "$bindir/fp8-gen" --arch=llama --hidden=4096 --heads=32 --kv-heads=8 \
    --ffn=14336 --layers=1 --seq="$tokens" --batch=1 --dtype=bf16 \
    --weights=args --mode=forward -o "$work/block$suffix.mlir"
  "$bindir/fp8-compile" "$work/block$suffix.mlir" --fp8-pipeline \
    --target=cuda -o "$kit/programs/libfp8block$suffix.so"
  # The BF16 program fuses its attention too (fp8-pipeline quantizing
  # nothing: every GEMM under min-flops), so that FP8 against BF16 is the
  # GEMMs' difference, not the flash kernel's.
  "$bindir/fp8-compile" "$work/block$suffix.mlir" \
    --fp8-pipeline="min-flops=1000000000000000" --target=cuda \
    -o "$kit/programs/libbf16block$suffix.so"
  python3 "$root/bench/gpu/kit/signature.py" "$work/block$suffix.mlir" \
    forward > "$kit/programs/block$suffix.sig"
done
# Part 6: the FP8 FFN block of examples/aot (RMSNorm, SwiGLU, residual;
# delayed scaling) compiled for the GPU, called by examples/aot/llama-ffn.cpp
# (built below with the drivers): outputs against float64, TE's scales
# read from the GPU's state, a checkpoint restored bit for bit.
"$bindir/fp8-compile" "$root/examples/llama-ffn-block.mlir" \
  --fp8-pipeline="history=16" --target=cuda -o "$kit/programs/libffn.so"
for lib in "$kit"/programs/*.so; do
  if ldd "$lib" | grep -E 'libMLIR|libLLVM'; then
    echo "gpu-kit: $lib needs LLVM/MLIR (above)" >&2
    exit 1
  fi
done

ptxas="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
if [ -x "$ptxas" ]; then
  for ptx in "$kit"/kernels/*.ptx; do
    name="$(basename "$ptx" .ptx)"
    "$ptxas" -arch=sm_90a -v "$ptx" -o "$kit/kernels/$name.cubin" \
      > "$kit/kernels/$name.ptxas.txt" 2>&1
    if grep -E 'C75[0-9][0-9]|warning' "$kit/kernels/$name.ptxas.txt"; then
      echo "gpu-kit: ptxas advisory for $name (above)" >&2
      exit 1
    fi
  done
else
  echo "gpu-kit: no ptxas here; the kit carries PTX only (run.sh assembles it)"
fi

# The drivers' sources, exactly what they include, and their build script.
sources=(
  bench/gpu/BenchSupport.h bench/gpu/hopper-casts.cpp bench/gpu/hopper-gemm.cpp
  bench/gpu/hopper-attention.cpp bench/gpu/block-bench.cpp
  lib/Runtime/MgpuRuntime.cpp
  include/fp8/Conversion/FP8ToNVVM/KernelABI.h
  include/fp8/Conversion/FP8ToNVVM/GemmKernelABI.h
  include/fp8/Conversion/FP8ToNVVM/AttentionKernelABI.h
  include/fp8/Numerics/Float8.h include/fp8/Numerics/Scaling.h
  include/fp8/Runtime/CudaRuntime.h include/fp8/Runtime/Status.h
  lib/Numerics/Float8.cpp lib/Numerics/Scaling.cpp lib/Runtime/CudaRuntime.cpp
)
for file in "${sources[@]}"; do
  mkdir -p "$kit/src/$(dirname "$file")"
  cp "$root/$file" "$kit/src/$file"
done
for file in run.sh build-drivers.sh timing.py torch_gemm.py \
  torch_attention.py torch_layer.py summarize.py; do
  cp "$root/bench/gpu/kit/$file" "$kit/$file"
done
cp "$root/docs/gpu-kit.md" "$kit/README.md"

# Built from the kit's copy: what runs here is what would be rebuilt there.
bash "$kit/build-drivers.sh" "$kit/src" "$kit/bin"
"${CXX:-c++}" -std=c++17 -O2 -Wno-psabi -I"$kit/programs" \
  "$root/examples/aot/llama-ffn.cpp" -L"$kit/programs" -lffn \
  -L"$kit/bin" -lfp8_gpu_runtime -static-libstdc++ -static-libgcc \
  -Wl,-rpath,'$ORIGIN:$ORIGIN/../bin' -o "$kit/programs/llama-ffn"
rm -f "$kit/programs/libffn.h"
for driver in "$kit"/bin/fp8-* "$kit/programs/llama-ffn"; do
  if ldd "$driver" | grep -E 'libMLIR|libLLVM|libstdc\+\+|libgcc_s'; then
    echo "gpu-kit: $driver needs more than the C library (above)" >&2
    exit 1
  fi
done

(cd "$kit" && find . -type f ! -name MANIFEST | LC_ALL=C sort \
  | xargs sha256sum > MANIFEST)
size=$(du -sb "$kit" | cut -f1)
if [ "$size" -gt $((48 << 20)) ]; then
  echo "gpu-kit: $size bytes, over the 48 MiB limit" >&2
  exit 1
fi
echo "gpu-kit: $kit ($(wc -l < "$kit/MANIFEST") files, $((size >> 10)) KiB)"
echo "run it on the GPU machine from the checkout: bash ${kit#$root/}/run.sh"
