// gpu-runtime-abi.mlir's program on a real GPU: the kernel runs (b = a + b).
//
// REQUIRES: cuda-gpu
// UNSUPPORTED: sanitizer
// (The runtime library is instrumented in the ASan build; the uninstrumented
// mlir-runner cannot load it. Stage 1 of CI runs this test.)
// RUN: mlir-opt %S/gpu-runtime-abi.mlir --pass-pipeline='builtin.module(convert-linalg-to-loops,convert-scf-to-cf,gpu.module(convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa},expand-strided-metadata,gpu-to-llvm,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%fp8_gpu_runtime,%mlir_runner_libs 2>&1 | FileCheck %s
// CHECK-NOT: fp8-gpu-runtime
// CHECK: [3, 3, 3, 3]
