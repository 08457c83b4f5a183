// fp8-lower-to-gpu on weight gradients under per-block scaling: an operand
// quantized in blocks along the tokens ([128, 1], MX [32, 1]) for one GEMM
// becomes one block_cast_transpose launch that reads the high-precision
// tensor and writes the K-major copy the wgmma kernel takes: no upstream
// kernel casts, transposes bytes or computes scales. Every variant (bf16,
// f16, f32 in; E4M3, E5M2; power-of-two, plain f32 and E8M0 scales; blocks
// of 128, 64, 32) assembles for sm_90a without a word.
//
// RUN: env -u CUDA_HOME -u CUDA_PATH fp8-opt %s --fp8-lower-to-gpu -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: %if ptxas %{ %python %fp8_src_root/scripts/extract-ptx.py %t.mlir %t --ptxas %ptxas sm_90a %}

// CHECK-LABEL: llvm.func @wgrad(
// CHECK-NOT: gpu.launch_func
// CHECK-DAG: gpu.launch_func <%{{.*}} : !llvm.ptr> @fp8_kernels::@block_cast_transpose_f16_e5m2_128x1 blocks in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-DAG: gpu.launch_func <%{{.*}} : !llvm.ptr> @fp8_kernels::@block_cast_transpose_bf16_e4m3_128x1_pow2
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @fp8_gemm_kernels::@scaled_matmul_e5m2_e4m3_f32_promote_blocks1d1d_
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
func.func @wgrad(%x: tensor<256x192xbf16>, %dy: tensor<256x64xf16>) -> tensor<64x192xf32> {
  %ax = fp8.block_amax %x block [128, 1] : tensor<256x192xbf16> -> tensor<2x192xf32>
  %sx, %six = fp8.compute_block_scales %ax for f8E4M3FN {power_of_two}
      : tensor<2x192xf32> -> tensor<2x192xf32>, tensor<2x192xf32>
  %qx = fp8.quantize %x, %sx block [128, 1] : tensor<256x192xbf16> scales tensor<2x192xf32> -> tensor<256x192xf8E4M3FN>
  %ad = fp8.block_amax %dy block [128, 1] : tensor<256x64xf16> -> tensor<2x64xf32>
  %sd, %sid = fp8.compute_block_scales %ad for f8E5M2
      : tensor<2x64xf32> -> tensor<2x64xf32>, tensor<2x64xf32>
  %qd = fp8.quantize %dy, %sd block [128, 1] : tensor<256x64xf16> scales tensor<2x64xf32> -> tensor<256x64xf8E5M2>
  %dw = fp8.scaled_matmul %qd, %qx scales %sid, %six blocks [128, 1], [128, 1] {transpose_lhs}
      : tensor<256x64xf8E5M2>, tensor<256x192xf8E4M3FN>
      scales tensor<2x64xf32>, tensor<2x192xf32> -> tensor<64x192xf32>
  return %dw : tensor<64x192xf32>
}

// MX: E8M0 scales, 32-row blocks (100 tokens: a partial last block).
// CHECK-LABEL: llvm.func @wgrad_mx(
// CHECK-COUNT-2: gpu.launch_func <%{{.*}} : !llvm.ptr> @fp8_kernels::@block_cast_transpose_f32_e4m3_32x1_mx
// K = 100 bytes: the operands are copied into 112-byte rows (upstream
// kernels), then the emulated MX GEMM.
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_f32_promote_mx_
func.func @wgrad_mx(%x: tensor<100x96xf32>, %dy: tensor<100x48xf32>) -> tensor<48x96xf32> {
  %ax = fp8.block_amax %x block [32, 1] : tensor<100x96xf32> -> tensor<4x96xf32>
  %sx, %six = fp8.compute_block_scales %ax for f8E4M3FN
      : tensor<4x96xf32> -> tensor<4x96xf32>, tensor<4x96xf8E8M0FNU>
  %qx = fp8.quantize %x, %sx block [32, 1] : tensor<100x96xf32> scales tensor<4x96xf32> -> tensor<100x96xf8E4M3FN>
  %ad = fp8.block_amax %dy block [32, 1] : tensor<100x48xf32> -> tensor<4x48xf32>
  %sd, %sid = fp8.compute_block_scales %ad for f8E4M3FN
      : tensor<4x48xf32> -> tensor<4x48xf32>, tensor<4x48xf8E8M0FNU>
  %qd = fp8.quantize %dy, %sd block [32, 1] : tensor<100x48xf32> scales tensor<4x48xf32> -> tensor<100x48xf8E4M3FN>
  %dw = fp8.scaled_matmul %qd, %qx scales %sid, %six blocks [32, 1], [32, 1] {transpose_lhs}
      : tensor<100x48xf8E4M3FN>, tensor<100x96xf8E4M3FN>
      scales tensor<4x48xf8E8M0FNU>, tensor<4x96xf8E8M0FNU> -> tensor<48x96xf32>
  return %dw : tensor<48x96xf32>
}

// The kernel also takes 64-row blocks (no GEMM form does yet: a cast of a
// transposed tensor made by hand).
// CHECK-LABEL: llvm.func @cast_64(
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @fp8_kernels::@block_cast_transpose_f16_e4m3_64x1_eps
func.func @cast_64(%x: tensor<130x40xf16>) -> (tensor<40x130xf8E4M3FN>, tensor<40x3xf32>) {
  %e = tensor.empty() : tensor<40x130xf16>
  %xt = linalg.transpose ins(%x : tensor<130x40xf16>) outs(%e : tensor<40x130xf16>) permutation = [1, 0]
  %a = fp8.block_amax %xt block [1, 64] : tensor<40x130xf16> -> tensor<40x3xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {epsilon = 1.0e-12 : f32}
      : tensor<40x3xf32> -> tensor<40x3xf32>, tensor<40x3xf32>
  %q = fp8.quantize %xt, %s block [1, 64] : tensor<40x130xf16> scales tensor<40x3xf32> -> tensor<40x130xf8E4M3FN>
  return %q, %si : tensor<40x130xf8E4M3FN>, tensor<40x3xf32>
}
