// Issue 36, item 7: with threads (the default) fp8-lower-to-cpu's output
// calls LLVM's OpenMP runtime, so a JIT other than fp8-run's (upstream
// mlir-runner here) must be given libomp.so; without it the program does
// not load ("Symbols not found: [ __kmpc_fork_call ..."). threads=false
// needs no OpenMP runtime. The pipeline's description says so.
//
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | not mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils 2>&1 \
// RUN: | FileCheck %s --check-prefix=NO-OMP
// RUN: fp8-opt %s --fp8-lower-to-cpu=threads=false \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils \
// RUN: | FileCheck %s
// RUN: fp8-opt --help | FileCheck %s --check-prefix=HELP

// NO-OMP: Symbols not found: {{.*}}__kmpc_fork_call
// HELP: --fp8-lower-to-cpu {{.*}}LLVM's OpenMP runtime: a JIT other than fp8-run's must load it (mlir-runner -shared-libs=.../libomp.so, or 'Symbols not found: __kmpc_fork_call'); threads=false needs none

func.func private @printMemrefF32(memref<*xf32>)

// Public: no pass sees the constants, the loop runs; large enough to be
// run in parallel.
func.func @double(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %y = arith.addf %x, %x : tensor<256x256xf32>
  return %y : tensor<256x256xf32>
}

func.func @main() {
  %x = arith.constant dense<1.5> : tensor<256x256xf32>
  %y = call @double(%x) : (tensor<256x256xf32>) -> tensor<256x256xf32>
  %row = tensor.extract_slice %y[0, 0] [1, 4] [1, 1] : tensor<256x256xf32> to tensor<4xf32>
  %u = tensor.cast %row : tensor<4xf32> to tensor<*xf32>
  %m = bufferization.to_buffer %u : tensor<*xf32> to memref<*xf32>
  // CHECK: [3, 3, 3, 3]
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}
