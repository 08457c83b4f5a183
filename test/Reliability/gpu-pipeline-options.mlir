// Issue 36, N13, N14 and item 6: unclear errors of the GPU pipelines.
// N13: threads= out of range printed its value as one raw byte
// ("threads=\320" for 2000). N14: a toolkit= that is not a directory
// printed upstream's "CUDA path: ... does not exist" with a 3,000-line IR
// dump, then exited 0 with a cubin from another ptxas. toolkit= is now
// checked with the other NVVM options (an option error, no IR printed);
// fp8-gpu-module-to-binary.mlir tests that a serializer error fails.
// Item 6: fp8-lower-to-nvvm (the fp8 kernels alone) on a whole graph
// stopped at its first other op without naming the whole-program pipeline.
//
// RUN: not fp8-opt %s --fp8-lower-to-gpu=threads=2000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not fp8-opt %s --fp8-lower-to-gpu=threads=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not fp8-opt %s "--fp8-lower-to-gpu=format=bin toolkit=/nonexistent" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// RUN: not fp8-opt %s "--fp8-lower-to-nvvm=format=isa toolkit=/nonexistent" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// RUN: not fp8-opt %s --fp8-pipeline --fp8-lower-to-nvvm -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: rm -rf %t && mkdir -p %t/bin
// RUN: not fp8-opt %s "--fp8-lower-to-gpu=format=bin toolkit=%t" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-PTXAS -DDIR=%t

// THREADS: error: fp8-tile-parallel-loops-for-gpu: threads=2000 is not a CUDA block size (1 to 1024)
// ZERO: error: fp8-tile-parallel-loops-for-gpu: threads=0 is not a CUDA block size (1 to 1024)
// TOOLKIT: toolkit=/nonexistent is not a directory (the CUDA toolkit's root, holding bin/ptxas)
// TOOLKIT-NOT: gpu.module
// NVVM: error: 'ml_program.global_load' op cannot run in a function lowered by fp8-lower-to-nvvm: only fp8 ops and f32 constants become GPU kernels; --fp8-lower-to-gpu lowers a whole program (every op) to the GPU
// NO-PTXAS: toolkit=[[DIR]] has no ptxas ([[DIR]]/bin/ptxas) for format=bin

func.func @f(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
