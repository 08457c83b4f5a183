// RUN: fp8-opt %s --convert-fp8-to-nvvm -split-input-file | FileCheck %s

// Per-block scaling on the GPU (KernelABI.h). What fp8-quantize emits for
// one operand -- block_amax, compute_block_scales, quantize of the same
// tensor and blocks -- is one pass of block_cast: each 1x128 row segment is
// one warp (32 lanes x 4 elements), reduced with five butterfly shuffles;
// the scale is TE's compute_scale_from_amax (epsilon, 0/Inf/NaN -> 1,
// fp8_max / amax rounded, FLT_MAX for Inf, power of two kept by masking
// the mantissa), cast with cvt.rn.satfinite, four bytes per lane. The
// kernel is a gpu.func on flat memrefs (FP8 as bytes) and the [batch, rows,
// cols] geometry.

// CHECK-LABEL: gpu.module @fp8_kernels
// CHECK: gpu.func @block_cast_bf16_e4m3_1x128_pow2(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xi8>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: scf.for
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<?xbf16>, vector<4xbf16>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: arith.constant 4.480000e+02 : f32
// CHECK: arith.divf
// CHECK: arith.constant 3.40282347E+38 : f32
// CHECK: arith.constant -8388608 : i32
// CHECK: arith.andi
// CHECK: arith.divf
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: vector.store %{{.*}} {alignment = 4 : i64} : memref<?xi8>, vector<4xi8>
// Blocks at the edge or misaligned: element by element.
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK: memref.store %{{.*}} : memref<?xi8>

// The host: one launch; 96 rows x 3 segments (the last one 44 wide) are
// 288 blocks, 8 per thread block of 256 threads: a grid of 36.
// CHECK-LABEL: func.func @activation(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<96x300xbf16>,
// CHECK-SAME: %[[Q:[a-z0-9_]+]]: memref<96x300xf8E4M3FN>, %[[SI:[a-z0-9_]+]]: memref<96x3xf32>)
// CHECK-DAG: %[[AMAX:.*]] = gpu.alloc () : memref<96x3xf32>
// CHECK-DAG: %[[S:.*]] = gpu.alloc () : memref<96x3xf32>
// CHECK-DAG: %[[C36:.*]] = arith.constant 36 : index
// CHECK-DAG: %[[B:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[R:.*]] = arith.constant 96 : index
// CHECK-DAG: %[[C:.*]] = arith.constant 300 : index
// CHECK-DAG: %[[XF:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1]] : memref<96x300xbf16> into memref<28800xbf16>
// CHECK-DAG: %[[XV:.*]] = memref.cast %[[XF]] : memref<28800xbf16> to memref<?xbf16>
// CHECK-DAG: %[[QF:.*]] = memref.collapse_shape %[[Q]] {{\[\[}}0, 1]] : memref<96x300xf8E4M3FN> into memref<28800xf8E4M3FN>
// CHECK-DAG: %[[QV:.*]] = memref.cast %[[QF]] : memref<28800xf8E4M3FN> to memref<?xf8E4M3FN>
// CHECK-DAG: %[[QB:.*]] = builtin.unrealized_conversion_cast %[[QV]] : memref<?xf8E4M3FN> to memref<?xi8>
// CHECK: gpu.launch_func @fp8_kernels::@block_cast_bf16_e4m3_1x128_pow2 blocks in (%[[C36]], %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%[[XV]] : memref<?xbf16>, %[[QB]] : memref<?xi8>, %{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %[[B]] : index, %[[R]] : index, %[[C]] : index)
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

// CHECK: gpu.func @block_cast_f32_e4m3_128x128_eps358637bd({{.*}}) workgroup(%[[SLOTS:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-16: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[SLOTS]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[SLOTS]]
// CHECK: gpu.barrier
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

// CHECK: gpu.func @block_cast_f16_e4m3_1x32_mx(
// CHECK-COUNT-3: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: arith.constant 0.00223214296 : f32
// CHECK: arith.constant 254 : i32
// CHECK: arith.trunci %{{.*}} : i32 to i8
// CHECK: gpu.func @block_dequantize_e4m3_bf16_1x32_mx(%{{.*}}: memref<?xi8>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xi8>,
// CHECK: memref.load %arg2[%{{.*}}] : memref<?xi8>
// CHECK: arith.constant 4194304 : i32
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK: vector.store %{{.*}} {alignment = 8 : i64} : memref<?xbf16>, vector<4xbf16>
// CHECK-LABEL: func.func @mx(
// CHECK-SAME: memref<2x8x64xf16>
// CHECK: %[[B2:.*]] = arith.constant 2 : index
// CHECK: %[[R8:.*]] = arith.constant 8 : index
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: gpu.launch_func @fp8_kernels::@block_cast_f16_e4m3_1x32_mx {{.*}}, %[[B2]] : index, %[[R8]] : index, %[[C64]] : index)
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

// CHECK-DAG: gpu.func @block_amax_f32_1x128(
// CHECK-DAG: gpu.func @block_scales_e5m2(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>)
// CHECK-DAG: gpu.func @block_quantize_f32_e5m2_1x128(
// CHECK-DAG: gpu.func @block_dequantize_e5m2_f32_1x128(
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
