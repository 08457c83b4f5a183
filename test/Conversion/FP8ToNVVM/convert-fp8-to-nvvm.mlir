// RUN: fp8-opt %s --convert-fp8-to-nvvm -split-input-file | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-to-nvvm="chip=sm_100a features=+ptx86" -split-input-file | FileCheck %s --check-prefix=CHIP

// Delayed scaling: one quantize with its fused amax, then the scale and
// history update as tiny kernels, launched in program order. Results become
// out-parameters that the kernels write in place; f32 scalars live on the
// device as memref<f32>.

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @fp8_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK: llvm.func @quantize_amax_f32_e4m3(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK-SAME: gpu.kernel
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK-COUNT-8: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK-COUNT-5: nvvm.shfl.sync bfly
// CHECK: llvm.atomicrmw umax
// CHECK: llvm.func @record_amax
// CHECK: llvm.func @compute_scale
// CHECK: llvm.func @roll_history

// CHECK-LABEL: func.func @delayed(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<?xf32>, %[[SCALE:[a-z0-9_]+]]: memref<f32>, %[[H:[a-z0-9_]+]]: memref<16xf32>,
// CHECK-SAME: %[[Q:[a-z0-9_]+]]: memref<?xf8E4M3FN>, %[[HOUT:[a-z0-9_]+]]: memref<16xf32>, %[[SOUT:[a-z0-9_]+]]: memref<f32>)
// CHECK: %[[N:[a-z0-9_]+]] = memref.dim %[[X]]
// CHECK: %[[AMAX:[a-z0-9_]+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.memset %[[AMAX]]
// CHECK: gpu.launch_func @fp8_kernels::@quantize_amax_f32_e4m3
// CHECK: %[[H1:[a-z0-9_]+]] = gpu.alloc () : memref<16xf32>
// CHECK: gpu.launch_func @fp8_kernels::@record_amax
// CHECK: gpu.launch_func @fp8_kernels::@compute_scale
// CHECK: gpu.launch_func @fp8_kernels::@roll_history
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
// CHECK: llvm.mlir.global internal @fp8_transpose_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<5120 x i8>
// CHECK: llvm.func @amax_bf16(
// CHECK: llvm.func @compute_scale(
// CHECK: llvm.func @cast_transpose_bf16_e5m2(
// CHECK: llvm.mlir.addressof @fp8_transpose_tile : !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: nvvm.barrier0
// CHECK: llvm.func @dequantize_e5m2_bf16(
// CHECK: nvvm.convert.f8x2.to.f16x2 {{.*}} : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK-LABEL: func.func @current(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<?x512xbf16>, %[[Q:[a-z0-9_]+]]: memref<?x512xf8E5M2>, %[[QT:[a-z0-9_]+]]: memref<512x?xf8E5M2>, %[[D:[a-z0-9_]+]]: memref<?x512xbf16>)
// CHECK: gpu.launch_func @fp8_kernels::@amax_bf16
// CHECK: %[[SCALE:[a-z0-9_]+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.launch_func @fp8_kernels::@compute_scale
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
// CHECK-COUNT-1: llvm.func @quantize_f16_e4m3(
// CHECK-NOT: llvm.func @quantize_f16_e4m3(
// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<8x8xf16>, %[[S:[a-z0-9_]+]]: memref<f32>, %[[A:[a-z0-9_]+]]: memref<8x8xf8E4M3FN>, %[[B:[a-z0-9_]+]]: memref<8x8xf8E4M3FN>, %[[XOUT:[a-z0-9_]+]]: memref<8x8xf16>)
// CHECK: gpu.launch_func @fp8_kernels::@quantize_f16_e4m3 {{.*}} args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : i64)
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
