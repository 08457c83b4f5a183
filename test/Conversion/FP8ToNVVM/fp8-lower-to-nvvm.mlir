// RUN: fp8-opt %s --fp8-lower-to-nvvm -o %t.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.mlir
// RUN: %python %fp8_src_root/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s < %t.fp8_kernels.ptx
// RUN: fp8-opt %s --fp8-lower-to-nvvm="format=llvm" | FileCheck %s --check-prefix=LLVM

// The PTX (gpu-module-to-binary format=isa, no CUDA needed) contains the
// intended instructions: two values per cvt.rn.satfinite, 16-byte global
// loads and stores, the warp butterfly and the u32 atomic max for amax.

// HOST: gpu.binary @fp8_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
// HOST-LABEL: func.func @graph(
// HOST: gpu.launch_func @fp8_kernels::@quantize_amax_f32_e4m3
// HOST: gpu.launch_func @fp8_kernels::@amax_bf16
// HOST: gpu.launch_func @fp8_kernels::@compute_scale
// HOST: gpu.launch_func @fp8_kernels::@quantize_bf16_e5m2
// HOST: gpu.launch_func @fp8_kernels::@dequantize_e4m3_f32
// HOST: gpu.launch_func @fp8_kernels::@cast_transpose_f32_e4m3_amax
// HOST-NOT: fp8.

// LLVM: gpu.module @fp8_kernels
// LLVM-NOT: scf.
// LLVM-NOT: arith.
// LLVM-NOT: math.
// LLVM-NOT: cf.
// LLVM: func.func @graph

// CHECK: .target sm_90a
// CHECK-LABEL: .entry quantize_amax_f32_e4m3(
// CHECK: ld.global.b32
// CHECK: ld.global.v4.b32
// CHECK: ld.global.v4.b32
// CHECK: ld.global.v4.b32
// CHECK: ld.global.v4.b32
// CHECK-COUNT-8: cvt.rn.satfinite.e4m3x2.f32
// CHECK: st.global.v4.b32
// CHECK: cvt.rn.satfinite.e4m3x2.f32
// CHECK: st.global.b8
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK: atom.global.max.u32
// CHECK-NOT: cvt.rn.satfinite.e5m2x2.f32

// CHECK-LABEL: .entry amax_bf16(
// CHECK: ld.global.v4.b32
// CHECK: ld.global.v4.b32
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK: atom.global.max.u32
// CHECK-NOT: cvt.rn.satfinite

// CHECK-LABEL: .entry compute_scale(
// CHECK: shfl.sync.bfly.b32
// CHECK: div.rn.f32

// CHECK-LABEL: .entry quantize_bf16_e5m2(
// CHECK: ld.global.v4.b32
// CHECK-COUNT-8: cvt.rn.satfinite.e5m2x2.f32
// CHECK: st.global.v4.b32
// CHECK-NOT: atom.global

// CHECK-LABEL: .entry dequantize_e4m3_f32(
// CHECK: ld.global.v4.b32
// CHECK: cvt.rn.f16x2.e4m3x2
// CHECK: st.global.v4.b32
// CHECK: st.global.v4.b32
// CHECK: st.global.v4.b32
// CHECK: st.global.v4.b32

// The block layout interleaves the fast and edge-tile paths: check that the
// pieces are there, not their order.
// CHECK-LABEL: .entry cast_transpose_f32_e4m3_amax(
// CHECK-DAG: ld.global.v4.b32
// CHECK-DAG: cvt.rn.satfinite.e4m3x2.f32
// CHECK-DAG: st.shared.b8
// CHECK-DAG: bar.sync 0
// CHECK-DAG: ld.shared.v4.b32
// CHECK-DAG: st.global.v4.b32
// CHECK-DAG: atom.global.max.u32
func.func @graph(%x: tensor<1024x512xf32>, %scale: f32, %y: tensor<4099xbf16>)
    -> (tensor<1024x512xf8E4M3FN>, f32, tensor<4099xf8E5M2>,
        tensor<1024x512xf32>, tensor<1024x512xf8E4M3FN>,
        tensor<512x1024xf8E4M3FN>, f32) {
  %q, %amax = fp8.quantize %x, %scale
      : tensor<1024x512xf32> -> tensor<1024x512xf8E4M3FN>, f32
  %ya = fp8.amax %y : tensor<4099xbf16>
  %ys = fp8.compute_scale %ya for f8E5M2 : f32
  %yq = fp8.quantize %y, %ys : tensor<4099xbf16> -> tensor<4099xf8E5M2>
  %d = fp8.dequantize %q, %scale : tensor<1024x512xf8E4M3FN> -> tensor<1024x512xf32>
  %c, %ct, %ca = fp8.cast_transpose %x, %scale
      : tensor<1024x512xf32> -> tensor<1024x512xf8E4M3FN>,
        tensor<512x1024xf8E4M3FN>, f32
  return %q, %amax, %yq, %d, %c, %ct, %ca
      : tensor<1024x512xf8E4M3FN>, f32, tensor<4099xf8E5M2>,
        tensor<1024x512xf32>, tensor<1024x512xf8E4M3FN>,
        tensor<512x1024xf8E4M3FN>, f32
}
