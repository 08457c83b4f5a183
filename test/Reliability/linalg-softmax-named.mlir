// Issue 36, item 21: the named linalg.softmax of a Stable Diffusion UNet
// export (32 of them, around 216 FP8 GEMMs): after fp8-pipeline both
// lowerings failed with "'linalg.softmax' op is left after the lowering".
// fp8-lower-to-cpu-and-gpu-named-ops.mlir runs it and the other named op
// families against hand-derived values.
//
// RUN: fp8-opt %s --fp8-pipeline --fp8-lower-to-cpu | FileCheck %s
// RUN: fp8-opt %s --fp8-pipeline --fp8-lower-to-gpu | FileCheck %s

// CHECK-LABEL: llvm.func @f(
// CHECK-NOT: linalg.
func.func @f(%q: tensor<2x64x32xf32>, %k: tensor<2x32x64xf32>) -> tensor<2x64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x64x32xf32>, tensor<2x32x64xf32>) outs(%c : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %e2 = tensor.empty() : tensor<2x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x64x64xf32>) outs(%e2 : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  return %p : tensor<2x64x64xf32>
}
