// RUN: fp8-opt %s --convert-fp8-to-nvvm -split-input-file | FileCheck %s

// Per-block scaling on the GPU (KernelABI.h). What fp8-quantize emits for
// one operand -- block_amax, compute_block_scales, quantize of the same
// tensor and blocks -- is one pass of block_cast: each 1x128 row segment is
// one warp (32 lanes x 4 elements), reduced with five butterfly shuffles;
// the scale is TE's compute_scale_from_amax (epsilon, 0/Inf/NaN -> 1,
// fp8_max / amax rounded, FLT_MAX for Inf, power of two kept by masking
// the mantissa), cast with cvt.rn.satfinite, four bytes per lane.

// CHECK-LABEL: gpu.module @fp8_kernels
// CHECK: llvm.func @block_cast_bf16_e4m3_1x128_pow2(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<4xbf16>
// CHECK-COUNT-5: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: arith.constant 4.480000e+02 : f32
// CHECK: arith.divf
// CHECK: arith.constant 3.40282347E+38 : f32
// CHECK: arith.constant -8388608 : i32
// CHECK: arith.andi
// CHECK: arith.divf
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// Blocks at the edge or misaligned: element by element.
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: llvm.store %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr<1>

// The host: one launch; 96 rows x 3 segments (the last one 44 wide) are
// 288 blocks, 8 per thread block of 256 threads: a grid of 36.
// CHECK-LABEL: func.func @activation(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<96x300xbf16>,
// CHECK-SAME: %[[Q:[a-z0-9_]+]]: memref<96x300xf8E4M3FN>, %[[SI:[a-z0-9_]+]]: memref<96x3xf32>)
// CHECK-DAG: %[[AMAX:.*]] = gpu.alloc () : memref<96x3xf32>
// CHECK-DAG: %[[S:.*]] = gpu.alloc () : memref<96x3xf32>
// CHECK-DAG: %[[C36:.*]] = arith.constant 36 : index
// CHECK-DAG: %[[B:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[R:.*]] = arith.constant 96 : i64
// CHECK-DAG: %[[C:.*]] = arith.constant 300 : i64
// CHECK: gpu.launch_func @fp8_kernels::@block_cast_bf16_e4m3_1x128_pow2 blocks in (%[[C36]], %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %[[B]] : i64, %[[R]] : i64, %[[C]] : i64)
// CHECK-NOT: gpu.launch_func
// CHECK: return
func.func @activation(%x: tensor<96x300xbf16>) -> (tensor<96x300xf8E4M3FN>, tensor<96x3xf32>) {
  %a = fp8.block_amax %x block [1, 128] : tensor<96x300xbf16> -> tensor<96x3xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two}
      : tensor<96x3xf32> -> tensor<96x3xf32>, tensor<96x3xf32>
  %q = fp8.quantize %x, %s block [1, 128]
      : tensor<96x300xbf16> scales tensor<96x3xf32> -> tensor<96x300xf8E4M3FN>
  return %q, %si : tensor<96x300xf8E4M3FN>, tensor<96x3xf32>
}

// -----

// 128x128 weight blocks: the whole thread block on one block, 16 runs of
// 4 elements per thread kept in registers, the warps' maxima meeting in
// shared memory between two barriers. Exact f32 scales (no mask) and a
// non-zero epsilon, named in the kernel.

// CHECK: llvm.mlir.global internal @fp8_block_reduce() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x f32>
// CHECK: llvm.func @block_cast_f32_e4m3_128x128_eps358637bd(
// CHECK-COUNT-16: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-COUNT-5: nvvm.shfl.sync bfly
// CHECK: nvvm.barrier0
// CHECK: nvvm.barrier0
// CHECK-NOT: arith.constant -8388608 : i32
// CHECK: arith.constant 9.99999997E-7 : f32
// CHECK-LABEL: func.func @weight(
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: gpu.launch_func @fp8_kernels::@block_cast_f32_e4m3_128x128_eps358637bd blocks in (%[[C2]],
func.func @weight(%w: tensor<256x128xf32>) -> (tensor<256x128xf8E4M3FN>, tensor<2x1xf32>) {
  %a = fp8.block_amax %w block [128, 128] : tensor<256x128xf32> -> tensor<2x1xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {epsilon = 1.0e-6 : f32}
      : tensor<2x1xf32> -> tensor<2x1xf32>, tensor<2x1xf32>
  %q = fp8.quantize %w, %s block [128, 128]
      : tensor<256x128xf32> scales tensor<2x1xf32> -> tensor<256x128xf8E4M3FN>
  return %q, %si : tensor<256x128xf8E4M3FN>, tensor<2x1xf32>
}

// -----

// MXFP8: 1x32 blocks are eight lanes each (three shuffles), four blocks
// per warp; the E8M0 code is the amax / 448 exponent rounded up, stored as
// one byte, the scale 2^(127 - code). Dequantizing with it decodes the code
// (0 -> 2^-127, 0xFF -> NaN). Batch dimensions are rows of blocks.

// CHECK: llvm.func @block_cast_f16_e4m3_1x32_mx(
// CHECK-COUNT-3: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.shfl.sync
// CHECK: arith.constant 0.00223214296 : f32
// CHECK: arith.constant 254 : i32
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: llvm.func @block_dequantize_e4m3_bf16_1x32_mx(
// CHECK: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// CHECK: arith.constant 4194304 : i32
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<4xbf16>, !llvm.ptr<1>
// CHECK-LABEL: func.func @mx(
// CHECK-SAME: memref<2x8x64xf16>
// CHECK: %[[B2:.*]] = arith.constant 2 : i64
// CHECK: %[[R8:.*]] = arith.constant 8 : i64
// CHECK: %[[C64:.*]] = arith.constant 64 : i64
// CHECK: gpu.launch_func @fp8_kernels::@block_cast_f16_e4m3_1x32_mx {{.*}}, %[[B2]] : i64, %[[R8]] : i64, %[[C64]] : i64)
// CHECK: gpu.launch_func @fp8_kernels::@block_dequantize_e4m3_bf16_1x32_mx
func.func @mx(%x: tensor<2x8x64xf16>) -> tensor<2x8x64xbf16> {
  %a = fp8.block_amax %x block [1, 1, 32] : tensor<2x8x64xf16> -> tensor<2x8x2xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN
      : tensor<2x8x2xf32> -> tensor<2x8x2xf32>, tensor<2x8x2xf8E8M0FNU>
  %q = fp8.quantize %x, %s block [1, 1, 32]
      : tensor<2x8x64xf16> scales tensor<2x8x2xf32> -> tensor<2x8x64xf8E4M3FN>
  %y = fp8.dequantize %q, %si block [1, 1, 32]
      : tensor<2x8x64xf8E4M3FN> scales tensor<2x8x2xf8E8M0FNU> -> tensor<2x8x64xbf16>
  return %y : tensor<2x8x64xbf16>
}

// -----

// Not the fused pattern (the scales come in, the amax goes out): one kernel
// per op, each the same walk over the blocks.

// CHECK-DAG: llvm.func @block_amax_f32_1x128(
// CHECK-DAG: llvm.func @block_scales_e5m2(
// CHECK-DAG: llvm.func @block_quantize_f32_e5m2_1x128(
// CHECK-DAG: llvm.func @block_dequantize_e5m2_f32_1x128(
// CHECK-LABEL: func.func @separate(
// CHECK: gpu.launch_func @fp8_kernels::@block_amax_f32_1x128
// CHECK: gpu.launch_func @fp8_kernels::@block_scales_e5m2
// CHECK: gpu.launch_func @fp8_kernels::@block_quantize_f32_e5m2_1x128
// CHECK: gpu.launch_func @fp8_kernels::@block_dequantize_e5m2_f32_1x128
// CHECK-NOT: gpu.launch_func
func.func @separate(%x: tensor<4x256xf32>, %s: tensor<4x2xf32>, %si: tensor<4x2xf32>)
    -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x256xf32>) {
  %a = fp8.block_amax %x block [1, 128] : tensor<4x256xf32> -> tensor<4x2xf32>
  %s2, %si2 = fp8.compute_block_scales %a for f8E5M2
      : tensor<4x2xf32> -> tensor<4x2xf32>, tensor<4x2xf32>
  %q = fp8.quantize %x, %s block [1, 128]
      : tensor<4x256xf32> scales tensor<4x2xf32> -> tensor<4x256xf8E5M2>
  %y = fp8.dequantize %q, %si block [1, 128]
      : tensor<4x256xf8E5M2> scales tensor<4x2xf32> -> tensor<4x256xf32>
  return %a, %s2, %y : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x256xf32>
}

// -----

// Scales computed for E4M3 but cast to E5M2: a fused kernel would compute
// them for the format it casts to, so the ops stay separate.
// CHECK-LABEL: func.func @other_format(
// CHECK: gpu.launch_func @fp8_kernels::@block_amax_f32_1x128
// CHECK: gpu.launch_func @fp8_kernels::@block_scales_e4m3 blocks
// CHECK: gpu.launch_func @fp8_kernels::@block_quantize_f32_e5m2_1x128
func.func @other_format(%x: tensor<4x256xf32>) -> tensor<4x256xf8E5M2> {
  %a = fp8.block_amax %x block [1, 128] : tensor<4x256xf32> -> tensor<4x2xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN
      : tensor<4x2xf32> -> tensor<4x2xf32>, tensor<4x2xf32>
  %q = fp8.quantize %x, %s block [1, 128]
      : tensor<4x256xf32> scales tensor<4x2xf32> -> tensor<4x256xf8E5M2>
  return %q : tensor<4x256xf8E5M2>
}
