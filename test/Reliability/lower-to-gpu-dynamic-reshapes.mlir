// Issue 36, N18: F3 on the GPU path. fp8-lower-to-gpu ran
// fp8-reshape-dynamic-expands before linalg-fuse-elementwise-ops, and the
// fusion expands a transpose of a collapsed tensor by making new
// expand_shapes, here tensor<16x?xf32> into tensor<1x16x?x?xf32>: two
// dynamic sizes in one group, which crash upstream expand-strided-metadata
// (llvm#186830, SIGSEGV in memref::ReinterpretCastOp::build). Every `?` x
// `?` llama TOSA training graph crashed the GPU lowering (the CPU lowering
// was fine). The reshapes are now turned into tensor.reshape again after
// the fusion. lower-to-cpu-dynamic-reshapes.mlir is the CPU side.
//
// RUN: fp8-opt %s --fp8-lower-to-gpu | FileCheck %s
// RUN: fp8-gen --arch=llama --form=tosa --dtype=f32 --mode=train --weights=globals --seq=? --batch=? --layers=1 --hidden=32 --heads=2 --kv-heads=1 --vocab=16 \
// RUN: | fp8-opt --fp8-lower-to-gpu -o /dev/null

// CHECK-LABEL: llvm.func @transpose_collapsed
//   CHECK-NOT: unrealized_conversion_cast
//       CHECK: gpu.launch_func
func.func @transpose_collapsed(%x: tensor<?x?x1x16xf32>) -> tensor<16x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x1x16xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x1x16xf32>
  %rows = arith.muli %b, %s : index
  %c = tensor.collapse_shape %x [[0, 1], [2, 3]] : tensor<?x?x1x16xf32> into tensor<?x16xf32>
  %e = tensor.empty(%rows) : tensor<16x?xf32>
  %t = linalg.transpose ins(%c : tensor<?x16xf32>) outs(%e : tensor<16x?xf32>) permutation = [1, 0]
  return %t : tensor<16x?xf32>
}
