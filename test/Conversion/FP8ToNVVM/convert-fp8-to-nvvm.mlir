// RUN: fp8-opt %s --convert-fp8-to-nvvm -split-input-file | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-to-nvvm="chip=sm_100a features=+ptx86" -split-input-file | FileCheck %s --check-prefix=CHIP

// Delayed scaling: one quantize with its fused amax, then the scale and
// history update as tiny kernels, launched in program order. Results become
// out-parameters that the kernels write in place; f32 scalars live on the
// device as memref<f32>.

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @fp8_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// The kernels are gpu.funcs on memrefs (convert-gpu-to-nvvm lowers them):
// tensors as flat memref<?xT>, FP8 as bytes, scalars memref<f32>.
// CHECK: gpu.func @quantize_amax_f32_e4m3(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xi8>, %{{.*}}: memref<f32>, %{{.*}}: memref<f32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// Chunks of 16 when both buffers are 16-byte aligned: four 16-byte loads,
// eight satfinite pair conversions, one 16-byte store; a scalar tail.
// CHECK: arith.remui %{{.*}}, %c16
// CHECK: scf.for
// CHECK-COUNT-4: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-8: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: vector.bitcast %{{.*}} : vector<8xi16> to vector<16xi8>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<?xi8>, vector<16xi8>
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<?xf32>
// CHECK: memref.store %{{.*}} : memref<?xi8>
// The amax: five xor shuffles, one unsigned max on the f32 bits per warp.
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: llvm.atomicrmw umax %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK: gpu.func @record_amax(%{{.*}}: memref<?xf32>, %{{.*}}: memref<f32>, %{{.*}}: memref<?xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: scf.for %[[I:.*]] = %thread_id_x to %{{.*}} step %c256
// CHECK: arith.cmpi eq, %[[I]], %c0
// CHECK: gpu.func @compute_scale(%{{.*}}: memref<?xf32>, %{{.*}}: memref<f32>, %{{.*}}: memref<f32>, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i32) kernel attributes {known_block_size = array<i32: 32, 1, 1>}
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: scf.for {{.*}} step %c32 iter_args(%{{.*}} = %[[NAN]])
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: gpu.func @roll_history(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}

// CHECK-LABEL: func.func @delayed(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<?xf32>, %[[SCALE:[a-z0-9_]+]]: memref<f32>, %[[H:[a-z0-9_]+]]: memref<16xf32>,
// CHECK-SAME: %[[Q:[a-z0-9_]+]]: memref<?xf8E4M3FN>, %[[HOUT:[a-z0-9_]+]]: memref<16xf32>, %[[SOUT:[a-z0-9_]+]]: memref<f32>)
// CHECK: %[[N:[a-z0-9_]+]] = memref.dim %[[X]]
// CHECK: %[[QB:[a-z0-9_]+]] = builtin.unrealized_conversion_cast %[[Q]] : memref<?xf8E4M3FN> to memref<?xi8>
// CHECK: %[[AMAX:[a-z0-9_]+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.memset %[[AMAX]]
// CHECK: gpu.launch_func @fp8_kernels::@quantize_amax_f32_e4m3 {{.*}} args(%[[X]] : memref<?xf32>, %[[QB]] : memref<?xi8>, %[[SCALE]] : memref<f32>, %[[AMAX]] : memref<f32>)
// CHECK: %[[H1:[a-z0-9_]+]] = gpu.alloc () : memref<16xf32>
// CHECK: %[[HV:[a-z0-9_]+]] = memref.cast %[[H]] : memref<16xf32> to memref<?xf32>
// CHECK: %[[H1V:[a-z0-9_]+]] = memref.cast %[[H1]] : memref<16xf32> to memref<?xf32>
// CHECK: gpu.launch_func @fp8_kernels::@record_amax {{.*}} args(%[[HV]] : memref<?xf32>, %[[AMAX]] : memref<f32>, %[[H1V]] : memref<?xf32>)
// Delayed (flags 1): the previous scale is read.
// CHECK: %[[H1S:[a-z0-9_]+]] = memref.cast %[[H1]] : memref<16xf32> to memref<?xf32>
// CHECK: gpu.launch_func @fp8_kernels::@compute_scale {{.*}} threads in (%c32, {{.*}} args(%[[H1S]] : memref<?xf32>, %[[SCALE]] : memref<f32>, %[[SOUT]] : memref<f32>, %{{.*}} : f32, %{{.*}} : f32, %c1_i32 : i32)
// CHECK: gpu.launch_func @fp8_kernels::@roll_history {{.*}} args(%{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>)
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.dealloc %[[AMAX]]
// CHECK: gpu.dealloc %[[H1]]
// CHECK-NEXT: return
// CHECK-NOT: fp8.

// CHIP: gpu.module @fp8_kernels [#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">]
func.func @delayed(%x: tensor<?xf32>, %scale: f32, %h: tensor<16xf32>)
    -> (tensor<?xf8E4M3FN>, tensor<16xf32>, f32) {
  %q, %amax = fp8.quantize %x, %scale
      : tensor<?xf32> -> tensor<?xf8E4M3FN>, f32
  %h1 = fp8.record_amax %h, %amax : tensor<16xf32>
  %s = fp8.compute_scale %h1, %scale for f8E4M3FN : tensor<16xf32>
  %h2 = fp8.roll_history %h1 : tensor<16xf32>
  return %q, %h2, %s : tensor<?xf8E4M3FN>, tensor<16xf32>, f32
}

// -----

// Current scaling: the amax pass, the scale, then the cast (two passes over
// the input). cast_transpose of a bf16 matrix with dynamic rows, and a
// dequantize whose scale is a constant.

// CHECK-LABEL: gpu.module @fp8_kernels
// CHECK: gpu.func @amax_bf16(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<f32>)
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK-NOT: nvvm.convert
// CHECK: llvm.atomicrmw umax
// CHECK: gpu.func @compute_scale(
// cast_transpose: flat views and the shape; a 64-row tile of 80-byte rows
// in shared memory, 16-byte aligned; a 16-byte store of q, the bytes into
// the tile, a barrier, a 16-byte shared load stored to qt, a barrier.
// CHECK: gpu.func @cast_transpose_bf16_e5m2(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xi8>, %{{.*}}: memref<?xi8>, %{{.*}}: memref<f32>, %{{.*}}: index, %{{.*}}: index) workgroup(%[[TILE:.*]] : memref<5120xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: vector.store %{{.*}}, %arg1[%{{.*}}] {alignment = 16 : i64} : memref<?xi8>, vector<16xi8>
// CHECK-COUNT-16: memref.store %{{.*}}, %[[TILE]]
// CHECK: gpu.barrier
// CHECK: vector.load %[[TILE]][%{{.*}}] {alignment = 16 : i64} : memref<5120xi8, #gpu.address_space<workgroup>>, vector<16xi8>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}] {alignment = 16 : i64} : memref<?xi8>, vector<16xi8>
// CHECK: gpu.barrier
// CHECK: gpu.func @dequantize_e5m2_bf16(%{{.*}}: memref<?xi8>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<f32>)
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xi8>, vector<16xi8>
// CHECK-COUNT-8: nvvm.convert.f8x2.to.f16x2 {{.*}} : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK-COUNT-2: vector.store %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK-LABEL: func.func @current(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<?x512xbf16>, %[[Q:[a-z0-9_]+]]: memref<?x512xf8E5M2>, %[[QT:[a-z0-9_]+]]: memref<512x?xf8E5M2>, %[[D:[a-z0-9_]+]]: memref<?x512xbf16>)
// CHECK: %[[A:[a-z0-9_]+]] = gpu.alloc () : memref<f32>
// CHECK: %[[XF:[a-z0-9_]+]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1]] : memref<?x512xbf16> into memref<?xbf16>
// CHECK: gpu.launch_func @fp8_kernels::@amax_bf16 {{.*}} args(%[[XF]] : memref<?xbf16>, %[[A]] : memref<f32>)
// CHECK: %[[SCALE:[a-z0-9_]+]] = gpu.alloc () : memref<f32>
// The amax as a history of one; current scaling (flags 4: the newest
// amax) never reads `previous`, the scale itself stands in.
// CHECK: %[[A1:[a-z0-9_]+]] = memref.expand_shape %[[A]] [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: %[[AV:[a-z0-9_]+]] = memref.cast %[[A1]] : memref<1xf32> to memref<?xf32>
// CHECK: gpu.launch_func @fp8_kernels::@compute_scale {{.*}} args(%[[AV]] : memref<?xf32>, %[[SCALE]] : memref<f32>, %[[SCALE]] : memref<f32>, %{{.*}} : f32, %{{.*}} : f32, %c4_i32 : i32)
// CHECK: gpu.launch_func @fp8_kernels::@cast_transpose_bf16_e5m2
// CHECK: %[[CST:[a-z0-9_]+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.memset %[[CST]], %{{.*}} : memref<f32>, f32
// CHECK: gpu.launch_func @fp8_kernels::@dequantize_e5m2_bf16
// CHECK-NOT: gpu.launch_func
func.func @current(%x: tensor<?x512xbf16>)
    -> (tensor<?x512xf8E5M2>, tensor<512x?xf8E5M2>, tensor<?x512xbf16>) {
  %a = fp8.amax %x : tensor<?x512xbf16>
  %s = fp8.compute_scale %a for f8E5M2 : f32
  %q, %qt = fp8.cast_transpose %x, %s
      : tensor<?x512xbf16> -> tensor<?x512xf8E5M2>, tensor<512x?xf8E5M2>
  %c = arith.constant 0.5 : f32
  %d = fp8.dequantize %q, %c : tensor<?x512xf8E5M2> -> tensor<?x512xbf16>
  return %q, %qt, %d
      : tensor<?x512xf8E5M2>, tensor<512x?xf8E5M2>, tensor<?x512xbf16>
}

// -----

// A kernel used twice is emitted once; an argument returned as it is gets
// copied into its out-parameter; functions without fp8 ops are untouched.

// CHECK-LABEL: gpu.module @fp8_kernels
// CHECK-COUNT-1: gpu.func @quantize_f16_e4m3(
// CHECK-NOT: gpu.func @quantize_f16_e4m3(
// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<8x8xf16>, %[[S:[a-z0-9_]+]]: memref<f32>, %[[A:[a-z0-9_]+]]: memref<8x8xf8E4M3FN>, %[[B:[a-z0-9_]+]]: memref<8x8xf8E4M3FN>, %[[XOUT:[a-z0-9_]+]]: memref<8x8xf16>)
// CHECK: %[[XF:[a-z0-9_]+]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1]] : memref<8x8xf16> into memref<64xf16>
// CHECK: %[[XV:[a-z0-9_]+]] = memref.cast %[[XF]] : memref<64xf16> to memref<?xf16>
// CHECK: %[[AF:[a-z0-9_]+]] = memref.collapse_shape %[[A]] {{\[\[}}0, 1]] : memref<8x8xf8E4M3FN> into memref<64xf8E4M3FN>
// CHECK: %[[AV:[a-z0-9_]+]] = memref.cast %[[AF]] : memref<64xf8E4M3FN> to memref<?xf8E4M3FN>
// CHECK: %[[AB:[a-z0-9_]+]] = builtin.unrealized_conversion_cast %[[AV]] : memref<?xf8E4M3FN> to memref<?xi8>
// CHECK: gpu.launch_func @fp8_kernels::@quantize_f16_e4m3 {{.*}} args(%[[XV]] : memref<?xf16>, %[[AB]] : memref<?xi8>, %[[S]] : memref<f32>)
// CHECK: gpu.launch_func @fp8_kernels::@quantize_f16_e4m3
// CHECK: gpu.memcpy %[[XOUT]], %[[X]]
// CHECK-LABEL: func.func @untouched(
// CHECK-NEXT: arith.addf
func.func @twice(%x: tensor<8x8xf16>, %s: f32)
    -> (tensor<8x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<8x8xf16>) {
  %a = fp8.quantize %x, %s : tensor<8x8xf16> -> tensor<8x8xf8E4M3FN>
  %b = fp8.quantize %x, %s : tensor<8x8xf16> -> tensor<8x8xf8E4M3FN>
  return %a, %b, %x : tensor<8x8xf8E4M3FN>, tensor<8x8xf8E4M3FN>, tensor<8x8xf16>
}
func.func @untouched(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  return %0 : f32
}
