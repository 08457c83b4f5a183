// REQUIRES: ptxas
// RUN: fp8-opt %s --fp8-lower-to-nvvm -o %t.mlir
// RUN: %python %fp8_src_root/scripts/extract-ptx.py %t.mlir %t
// ptxas accepts every kernel for sm_90a and says nothing (no warning).
// RUN: %ptxas -arch=sm_90a %t.fp8_kernels.ptx -o %t.cubin 2>&1 | count 0
// RUN: %ptxas -arch=sm_90a -v %t.fp8_kernels.ptx -o %t.cubin 2>&1 | FileCheck %s
// The pipeline itself makes a cubin when given the toolkit.
// RUN: fp8-opt %s --fp8-lower-to-nvvm="format=bin toolkit=%cuda_toolkit" | FileCheck %s --check-prefix=BIN
// A toolkit that is ptxas alone, without libdevice (as CI machines have it):
// these kernels call no libdevice function, so that is no error.
// RUN: rm -rf %t.bare && mkdir -p %t.bare/bin && ln -s %ptxas %t.bare/bin/ptxas
// RUN: fp8-opt %s --fp8-lower-to-nvvm="format=bin toolkit=%t.bare" 2>&1 | FileCheck %s --check-prefix=BIN

// Every kernel variant the lowering can emit: no spills, no stack.
// CHECK-NOT: warning
// CHECK-DAG: Compiling entry function 'amax_f32' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_f32_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_amax_f32_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_f32_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_f32_e4m3_amax' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_f32_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_amax_f32_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_f32_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_f32_e5m2_amax' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'amax_bf16' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_bf16_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_amax_bf16_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_bf16_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_bf16_e4m3_amax' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_bf16_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_amax_bf16_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_bf16_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_bf16_e5m2_amax' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'amax_f16' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_f16_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_amax_f16_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_f16_e4m3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_f16_e4m3_amax' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_f16_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'quantize_amax_f16_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_f16_e5m2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'cast_transpose_f16_e5m2_amax' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'dequantize_e4m3_f32' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'dequantize_e4m3_bf16' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'dequantize_e4m3_f16' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'dequantize_e5m2_f32' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'dequantize_e5m2_bf16' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'dequantize_e5m2_f16' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'record_amax' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'compute_scale' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'roll_history' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f32_e4m3_1x128_pow2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f32_e4m3_128x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f32_e5m2_1x128_pow2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f32_e5m2_128x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f32_e4m3_1x32_mx' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_amax_f32_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_quantize_f32_e4m3_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_dequantize_e4m3_f32_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_dequantize_e4m3_f32_1x32_mx' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_bf16_e4m3_1x128_pow2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_bf16_e4m3_128x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_bf16_e5m2_1x128_pow2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_bf16_e5m2_128x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_bf16_e4m3_1x32_mx' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_amax_bf16_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_quantize_bf16_e4m3_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_dequantize_e4m3_bf16_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_dequantize_e4m3_bf16_1x32_mx' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f16_e4m3_1x128_pow2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f16_e4m3_128x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f16_e5m2_1x128_pow2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f16_e5m2_128x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_cast_f16_e4m3_1x32_mx' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_amax_f16_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_quantize_f16_e4m3_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_dequantize_e4m3_f16_1x128' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_dequantize_e4m3_f16_1x32_mx' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_scales_e4m3_pow2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'block_scales_e5m2_mx' for 'sm_90a'
// CHECK-NOT: bytes spill stores, {{[1-9]}}
// CHECK-NOT: {{[1-9][0-9]*}} bytes stack frame
// BIN: gpu.binary @fp8_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, {{.*}}bin = "\7FELF
// BIN-NOT: assembly =

func.func @all_kernels(%s: f32, %h: tensor<1024xf32>, %x_f32: tensor<1000x96xf32>, %m_f32: tensor<200x136xf32>, %x_bf16: tensor<1000x96xbf16>, %m_bf16: tensor<200x136xbf16>, %x_f16: tensor<1000x96xf16>, %m_f16: tensor<200x136xf16>)
    -> (f32, tensor<1000x96xf8E4M3FN>, tensor<1000x96xf8E4M3FN>, f32, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32, tensor<1000x96xf8E5M2>, tensor<1000x96xf8E5M2>, f32, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32, f32, tensor<1000x96xf8E4M3FN>, tensor<1000x96xf8E4M3FN>, f32, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32, tensor<1000x96xf8E5M2>, tensor<1000x96xf8E5M2>, f32, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32, f32, tensor<1000x96xf8E4M3FN>, tensor<1000x96xf8E4M3FN>, f32, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32, tensor<1000x96xf8E5M2>, tensor<1000x96xf8E5M2>, f32, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32, tensor<1000x96xf32>, tensor<1000x96xbf16>, tensor<1000x96xf16>, tensor<1000x96xf32>, tensor<1000x96xbf16>, tensor<1000x96xf16>, f32, tensor<1024xf32>) {
  %a_f32 = fp8.amax %x_f32 : tensor<1000x96xf32>
  %q_f32_e4m3 = fp8.quantize %x_f32, %s : tensor<1000x96xf32> -> tensor<1000x96xf8E4M3FN>
  %qa_f32_e4m3, %qm_f32_e4m3 = fp8.quantize %x_f32, %s : tensor<1000x96xf32> -> tensor<1000x96xf8E4M3FN>, f32
  %c_f32_e4m3, %ct_f32_e4m3 = fp8.cast_transpose %m_f32, %s : tensor<200x136xf32> -> tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>
  %ca_f32_e4m3, %cta_f32_e4m3, %cm_f32_e4m3 = fp8.cast_transpose %m_f32, %s : tensor<200x136xf32> -> tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32
  %q_f32_e5m2 = fp8.quantize %x_f32, %s : tensor<1000x96xf32> -> tensor<1000x96xf8E5M2>
  %qa_f32_e5m2, %qm_f32_e5m2 = fp8.quantize %x_f32, %s : tensor<1000x96xf32> -> tensor<1000x96xf8E5M2>, f32
  %c_f32_e5m2, %ct_f32_e5m2 = fp8.cast_transpose %m_f32, %s : tensor<200x136xf32> -> tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>
  %ca_f32_e5m2, %cta_f32_e5m2, %cm_f32_e5m2 = fp8.cast_transpose %m_f32, %s : tensor<200x136xf32> -> tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32
  %a_bf16 = fp8.amax %x_bf16 : tensor<1000x96xbf16>
  %q_bf16_e4m3 = fp8.quantize %x_bf16, %s : tensor<1000x96xbf16> -> tensor<1000x96xf8E4M3FN>
  %qa_bf16_e4m3, %qm_bf16_e4m3 = fp8.quantize %x_bf16, %s : tensor<1000x96xbf16> -> tensor<1000x96xf8E4M3FN>, f32
  %c_bf16_e4m3, %ct_bf16_e4m3 = fp8.cast_transpose %m_bf16, %s : tensor<200x136xbf16> -> tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>
  %ca_bf16_e4m3, %cta_bf16_e4m3, %cm_bf16_e4m3 = fp8.cast_transpose %m_bf16, %s : tensor<200x136xbf16> -> tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32
  %q_bf16_e5m2 = fp8.quantize %x_bf16, %s : tensor<1000x96xbf16> -> tensor<1000x96xf8E5M2>
  %qa_bf16_e5m2, %qm_bf16_e5m2 = fp8.quantize %x_bf16, %s : tensor<1000x96xbf16> -> tensor<1000x96xf8E5M2>, f32
  %c_bf16_e5m2, %ct_bf16_e5m2 = fp8.cast_transpose %m_bf16, %s : tensor<200x136xbf16> -> tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>
  %ca_bf16_e5m2, %cta_bf16_e5m2, %cm_bf16_e5m2 = fp8.cast_transpose %m_bf16, %s : tensor<200x136xbf16> -> tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32
  %a_f16 = fp8.amax %x_f16 : tensor<1000x96xf16>
  %q_f16_e4m3 = fp8.quantize %x_f16, %s : tensor<1000x96xf16> -> tensor<1000x96xf8E4M3FN>
  %qa_f16_e4m3, %qm_f16_e4m3 = fp8.quantize %x_f16, %s : tensor<1000x96xf16> -> tensor<1000x96xf8E4M3FN>, f32
  %c_f16_e4m3, %ct_f16_e4m3 = fp8.cast_transpose %m_f16, %s : tensor<200x136xf16> -> tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>
  %ca_f16_e4m3, %cta_f16_e4m3, %cm_f16_e4m3 = fp8.cast_transpose %m_f16, %s : tensor<200x136xf16> -> tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32
  %q_f16_e5m2 = fp8.quantize %x_f16, %s : tensor<1000x96xf16> -> tensor<1000x96xf8E5M2>
  %qa_f16_e5m2, %qm_f16_e5m2 = fp8.quantize %x_f16, %s : tensor<1000x96xf16> -> tensor<1000x96xf8E5M2>, f32
  %c_f16_e5m2, %ct_f16_e5m2 = fp8.cast_transpose %m_f16, %s : tensor<200x136xf16> -> tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>
  %ca_f16_e5m2, %cta_f16_e5m2, %cm_f16_e5m2 = fp8.cast_transpose %m_f16, %s : tensor<200x136xf16> -> tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32
  %d_e4m3_f32 = fp8.dequantize %q_f32_e4m3, %s : tensor<1000x96xf8E4M3FN> -> tensor<1000x96xf32>
  %d_e4m3_bf16 = fp8.dequantize %q_f32_e4m3, %s : tensor<1000x96xf8E4M3FN> -> tensor<1000x96xbf16>
  %d_e4m3_f16 = fp8.dequantize %q_f32_e4m3, %s : tensor<1000x96xf8E4M3FN> -> tensor<1000x96xf16>
  %d_e5m2_f32 = fp8.dequantize %q_f32_e5m2, %s : tensor<1000x96xf8E5M2> -> tensor<1000x96xf32>
  %d_e5m2_bf16 = fp8.dequantize %q_f32_e5m2, %s : tensor<1000x96xf8E5M2> -> tensor<1000x96xbf16>
  %d_e5m2_f16 = fp8.dequantize %q_f32_e5m2, %s : tensor<1000x96xf8E5M2> -> tensor<1000x96xf16>
  %h1 = fp8.record_amax %h, %a_f32 : tensor<1024xf32>
  %ns = fp8.compute_scale %h1, %s for f8E4M3FN {margin = 1 : i32, power_of_two} : tensor<1024xf32>
  %h2 = fp8.roll_history %h1 : tensor<1024xf32>
  return %a_f32, %q_f32_e4m3, %qa_f32_e4m3, %qm_f32_e4m3, %c_f32_e4m3, %ct_f32_e4m3, %ca_f32_e4m3, %cta_f32_e4m3, %cm_f32_e4m3, %q_f32_e5m2, %qa_f32_e5m2, %qm_f32_e5m2, %c_f32_e5m2, %ct_f32_e5m2, %ca_f32_e5m2, %cta_f32_e5m2, %cm_f32_e5m2, %a_bf16, %q_bf16_e4m3, %qa_bf16_e4m3, %qm_bf16_e4m3, %c_bf16_e4m3, %ct_bf16_e4m3, %ca_bf16_e4m3, %cta_bf16_e4m3, %cm_bf16_e4m3, %q_bf16_e5m2, %qa_bf16_e5m2, %qm_bf16_e5m2, %c_bf16_e5m2, %ct_bf16_e5m2, %ca_bf16_e5m2, %cta_bf16_e5m2, %cm_bf16_e5m2, %a_f16, %q_f16_e4m3, %qa_f16_e4m3, %qm_f16_e4m3, %c_f16_e4m3, %ct_f16_e4m3, %ca_f16_e4m3, %cta_f16_e4m3, %cm_f16_e4m3, %q_f16_e5m2, %qa_f16_e5m2, %qm_f16_e5m2, %c_f16_e5m2, %ct_f16_e5m2, %ca_f16_e5m2, %cta_f16_e5m2, %cm_f16_e5m2, %d_e4m3_f32, %d_e4m3_bf16, %d_e4m3_f16, %d_e5m2_f32, %d_e5m2_bf16, %d_e5m2_f16, %ns, %h2
      : f32, tensor<1000x96xf8E4M3FN>, tensor<1000x96xf8E4M3FN>, f32, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32, tensor<1000x96xf8E5M2>, tensor<1000x96xf8E5M2>, f32, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32, f32, tensor<1000x96xf8E4M3FN>, tensor<1000x96xf8E4M3FN>, f32, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32, tensor<1000x96xf8E5M2>, tensor<1000x96xf8E5M2>, f32, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32, f32, tensor<1000x96xf8E4M3FN>, tensor<1000x96xf8E4M3FN>, f32, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, tensor<200x136xf8E4M3FN>, tensor<136x200xf8E4M3FN>, f32, tensor<1000x96xf8E5M2>, tensor<1000x96xf8E5M2>, f32, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, tensor<200x136xf8E5M2>, tensor<136x200xf8E5M2>, f32, tensor<1000x96xf32>, tensor<1000x96xbf16>, tensor<1000x96xf16>, tensor<1000x96xf32>, tensor<1000x96xbf16>, tensor<1000x96xf16>, f32, tensor<1024xf32>
}

// Every per-block kernel variant: 1x128 (f32 power-of-two scales), 128x128
// (exact scales) and MX 1x32 for each input type, fused and one op each;
// 300 columns leave a partial last block.
func.func @block_kernels(%x_f32: tensor<256x300xf32>, %w_f32: tensor<256x256xf32>, %x_bf16: tensor<256x300xbf16>, %w_bf16: tensor<256x256xbf16>, %x_f16: tensor<256x300xf16>, %w_f16: tensor<256x256xf16>, %amax: tensor<64x2xf32>, %scales: tensor<256x3xf32>)
    -> (tensor<256x300xf8E4M3FN>, tensor<256x3xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>, tensor<256x300xf8E5M2>, tensor<256x3xf32>, tensor<256x256xf8E5M2>, tensor<2x2xf32>, tensor<256x3xf32>, tensor<256x300xf8E4M3FN>, tensor<256x300xf32>, tensor<256x300xf32>, tensor<256x300xf8E4M3FN>, tensor<256x3xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>, tensor<256x300xf8E5M2>, tensor<256x3xf32>, tensor<256x256xf8E5M2>, tensor<2x2xf32>, tensor<256x3xf32>, tensor<256x300xf8E4M3FN>, tensor<256x300xbf16>, tensor<256x300xbf16>, tensor<256x300xf8E4M3FN>, tensor<256x3xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>, tensor<256x300xf8E5M2>, tensor<256x3xf32>, tensor<256x256xf8E5M2>, tensor<2x2xf32>, tensor<256x3xf32>, tensor<256x300xf8E4M3FN>, tensor<256x300xf16>, tensor<256x300xf16>, tensor<64x2xf32>, tensor<64x2xf8E8M0FNU>) {
  %ra_f32_e4m3 = fp8.block_amax %x_f32 block [1, 128] : tensor<256x300xf32> -> tensor<256x3xf32>
  %rs_f32_e4m3, %rsi_f32_e4m3 = fp8.compute_block_scales %ra_f32_e4m3 for f8E4M3FN {power_of_two} : tensor<256x3xf32> -> tensor<256x3xf32>, tensor<256x3xf32>
  %rq_f32_e4m3 = fp8.quantize %x_f32, %rs_f32_e4m3 block [1, 128] : tensor<256x300xf32> scales tensor<256x3xf32> -> tensor<256x300xf8E4M3FN>
  %wa_f32_e4m3 = fp8.block_amax %w_f32 block [128, 128] : tensor<256x256xf32> -> tensor<2x2xf32>
  %ws_f32_e4m3, %wsi_f32_e4m3 = fp8.compute_block_scales %wa_f32_e4m3 for f8E4M3FN : tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  %wq_f32_e4m3 = fp8.quantize %w_f32, %ws_f32_e4m3 block [128, 128] : tensor<256x256xf32> scales tensor<2x2xf32> -> tensor<256x256xf8E4M3FN>
  %ra_f32_e5m2 = fp8.block_amax %x_f32 block [1, 128] : tensor<256x300xf32> -> tensor<256x3xf32>
  %rs_f32_e5m2, %rsi_f32_e5m2 = fp8.compute_block_scales %ra_f32_e5m2 for f8E5M2 {power_of_two} : tensor<256x3xf32> -> tensor<256x3xf32>, tensor<256x3xf32>
  %rq_f32_e5m2 = fp8.quantize %x_f32, %rs_f32_e5m2 block [1, 128] : tensor<256x300xf32> scales tensor<256x3xf32> -> tensor<256x300xf8E5M2>
  %wa_f32_e5m2 = fp8.block_amax %w_f32 block [128, 128] : tensor<256x256xf32> -> tensor<2x2xf32>
  %ws_f32_e5m2, %wsi_f32_e5m2 = fp8.compute_block_scales %wa_f32_e5m2 for f8E5M2 : tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  %wq_f32_e5m2 = fp8.quantize %w_f32, %ws_f32_e5m2 block [128, 128] : tensor<256x256xf32> scales tensor<2x2xf32> -> tensor<256x256xf8E5M2>
  %ma_f32 = fp8.block_amax %x_f32 block [1, 32] : tensor<256x300xf32> -> tensor<256x10xf32>
  %ms_f32, %msi_f32 = fp8.compute_block_scales %ma_f32 for f8E4M3FN : tensor<256x10xf32> -> tensor<256x10xf32>, tensor<256x10xf8E8M0FNU>
  %mq_f32 = fp8.quantize %x_f32, %ms_f32 block [1, 32] : tensor<256x300xf32> scales tensor<256x10xf32> -> tensor<256x300xf8E4M3FN>
  %sa_f32 = fp8.block_amax %x_f32 block [1, 128] : tensor<256x300xf32> -> tensor<256x3xf32>
  %sq_f32 = fp8.quantize %x_f32, %scales block [1, 128] : tensor<256x300xf32> scales tensor<256x3xf32> -> tensor<256x300xf8E4M3FN>
  %d_f32 = fp8.dequantize %rq_f32_e4m3, %rsi_f32_e4m3 block [1, 128] : tensor<256x300xf8E4M3FN> scales tensor<256x3xf32> -> tensor<256x300xf32>
  %md_f32 = fp8.dequantize %mq_f32, %msi_f32 block [1, 32] : tensor<256x300xf8E4M3FN> scales tensor<256x10xf8E8M0FNU> -> tensor<256x300xf32>
  %ra_bf16_e4m3 = fp8.block_amax %x_bf16 block [1, 128] : tensor<256x300xbf16> -> tensor<256x3xf32>
  %rs_bf16_e4m3, %rsi_bf16_e4m3 = fp8.compute_block_scales %ra_bf16_e4m3 for f8E4M3FN {power_of_two} : tensor<256x3xf32> -> tensor<256x3xf32>, tensor<256x3xf32>
  %rq_bf16_e4m3 = fp8.quantize %x_bf16, %rs_bf16_e4m3 block [1, 128] : tensor<256x300xbf16> scales tensor<256x3xf32> -> tensor<256x300xf8E4M3FN>
  %wa_bf16_e4m3 = fp8.block_amax %w_bf16 block [128, 128] : tensor<256x256xbf16> -> tensor<2x2xf32>
  %ws_bf16_e4m3, %wsi_bf16_e4m3 = fp8.compute_block_scales %wa_bf16_e4m3 for f8E4M3FN : tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  %wq_bf16_e4m3 = fp8.quantize %w_bf16, %ws_bf16_e4m3 block [128, 128] : tensor<256x256xbf16> scales tensor<2x2xf32> -> tensor<256x256xf8E4M3FN>
  %ra_bf16_e5m2 = fp8.block_amax %x_bf16 block [1, 128] : tensor<256x300xbf16> -> tensor<256x3xf32>
  %rs_bf16_e5m2, %rsi_bf16_e5m2 = fp8.compute_block_scales %ra_bf16_e5m2 for f8E5M2 {power_of_two} : tensor<256x3xf32> -> tensor<256x3xf32>, tensor<256x3xf32>
  %rq_bf16_e5m2 = fp8.quantize %x_bf16, %rs_bf16_e5m2 block [1, 128] : tensor<256x300xbf16> scales tensor<256x3xf32> -> tensor<256x300xf8E5M2>
  %wa_bf16_e5m2 = fp8.block_amax %w_bf16 block [128, 128] : tensor<256x256xbf16> -> tensor<2x2xf32>
  %ws_bf16_e5m2, %wsi_bf16_e5m2 = fp8.compute_block_scales %wa_bf16_e5m2 for f8E5M2 : tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  %wq_bf16_e5m2 = fp8.quantize %w_bf16, %ws_bf16_e5m2 block [128, 128] : tensor<256x256xbf16> scales tensor<2x2xf32> -> tensor<256x256xf8E5M2>
  %ma_bf16 = fp8.block_amax %x_bf16 block [1, 32] : tensor<256x300xbf16> -> tensor<256x10xf32>
  %ms_bf16, %msi_bf16 = fp8.compute_block_scales %ma_bf16 for f8E4M3FN : tensor<256x10xf32> -> tensor<256x10xf32>, tensor<256x10xf8E8M0FNU>
  %mq_bf16 = fp8.quantize %x_bf16, %ms_bf16 block [1, 32] : tensor<256x300xbf16> scales tensor<256x10xf32> -> tensor<256x300xf8E4M3FN>
  %sa_bf16 = fp8.block_amax %x_bf16 block [1, 128] : tensor<256x300xbf16> -> tensor<256x3xf32>
  %sq_bf16 = fp8.quantize %x_bf16, %scales block [1, 128] : tensor<256x300xbf16> scales tensor<256x3xf32> -> tensor<256x300xf8E4M3FN>
  %d_bf16 = fp8.dequantize %rq_bf16_e4m3, %rsi_bf16_e4m3 block [1, 128] : tensor<256x300xf8E4M3FN> scales tensor<256x3xf32> -> tensor<256x300xbf16>
  %md_bf16 = fp8.dequantize %mq_bf16, %msi_bf16 block [1, 32] : tensor<256x300xf8E4M3FN> scales tensor<256x10xf8E8M0FNU> -> tensor<256x300xbf16>
  %ra_f16_e4m3 = fp8.block_amax %x_f16 block [1, 128] : tensor<256x300xf16> -> tensor<256x3xf32>
  %rs_f16_e4m3, %rsi_f16_e4m3 = fp8.compute_block_scales %ra_f16_e4m3 for f8E4M3FN {power_of_two} : tensor<256x3xf32> -> tensor<256x3xf32>, tensor<256x3xf32>
  %rq_f16_e4m3 = fp8.quantize %x_f16, %rs_f16_e4m3 block [1, 128] : tensor<256x300xf16> scales tensor<256x3xf32> -> tensor<256x300xf8E4M3FN>
  %wa_f16_e4m3 = fp8.block_amax %w_f16 block [128, 128] : tensor<256x256xf16> -> tensor<2x2xf32>
  %ws_f16_e4m3, %wsi_f16_e4m3 = fp8.compute_block_scales %wa_f16_e4m3 for f8E4M3FN : tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  %wq_f16_e4m3 = fp8.quantize %w_f16, %ws_f16_e4m3 block [128, 128] : tensor<256x256xf16> scales tensor<2x2xf32> -> tensor<256x256xf8E4M3FN>
  %ra_f16_e5m2 = fp8.block_amax %x_f16 block [1, 128] : tensor<256x300xf16> -> tensor<256x3xf32>
  %rs_f16_e5m2, %rsi_f16_e5m2 = fp8.compute_block_scales %ra_f16_e5m2 for f8E5M2 {power_of_two} : tensor<256x3xf32> -> tensor<256x3xf32>, tensor<256x3xf32>
  %rq_f16_e5m2 = fp8.quantize %x_f16, %rs_f16_e5m2 block [1, 128] : tensor<256x300xf16> scales tensor<256x3xf32> -> tensor<256x300xf8E5M2>
  %wa_f16_e5m2 = fp8.block_amax %w_f16 block [128, 128] : tensor<256x256xf16> -> tensor<2x2xf32>
  %ws_f16_e5m2, %wsi_f16_e5m2 = fp8.compute_block_scales %wa_f16_e5m2 for f8E5M2 : tensor<2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
  %wq_f16_e5m2 = fp8.quantize %w_f16, %ws_f16_e5m2 block [128, 128] : tensor<256x256xf16> scales tensor<2x2xf32> -> tensor<256x256xf8E5M2>
  %ma_f16 = fp8.block_amax %x_f16 block [1, 32] : tensor<256x300xf16> -> tensor<256x10xf32>
  %ms_f16, %msi_f16 = fp8.compute_block_scales %ma_f16 for f8E4M3FN : tensor<256x10xf32> -> tensor<256x10xf32>, tensor<256x10xf8E8M0FNU>
  %mq_f16 = fp8.quantize %x_f16, %ms_f16 block [1, 32] : tensor<256x300xf16> scales tensor<256x10xf32> -> tensor<256x300xf8E4M3FN>
  %sa_f16 = fp8.block_amax %x_f16 block [1, 128] : tensor<256x300xf16> -> tensor<256x3xf32>
  %sq_f16 = fp8.quantize %x_f16, %scales block [1, 128] : tensor<256x300xf16> scales tensor<256x3xf32> -> tensor<256x300xf8E4M3FN>
  %d_f16 = fp8.dequantize %rq_f16_e4m3, %rsi_f16_e4m3 block [1, 128] : tensor<256x300xf8E4M3FN> scales tensor<256x3xf32> -> tensor<256x300xf16>
  %md_f16 = fp8.dequantize %mq_f16, %msi_f16 block [1, 32] : tensor<256x300xf8E4M3FN> scales tensor<256x10xf8E8M0FNU> -> tensor<256x300xf16>
  %bs, %bsi = fp8.compute_block_scales %amax for f8E4M3FN {power_of_two} : tensor<64x2xf32> -> tensor<64x2xf32>, tensor<64x2xf32>
  %bms, %bmsi = fp8.compute_block_scales %amax for f8E5M2 : tensor<64x2xf32> -> tensor<64x2xf32>, tensor<64x2xf8E8M0FNU>
  return %rq_f32_e4m3, %rsi_f32_e4m3, %wq_f32_e4m3, %wsi_f32_e4m3, %rq_f32_e5m2, %rsi_f32_e5m2, %wq_f32_e5m2, %wsi_f32_e5m2, %sa_f32, %sq_f32, %d_f32, %md_f32, %rq_bf16_e4m3, %rsi_bf16_e4m3, %wq_bf16_e4m3, %wsi_bf16_e4m3, %rq_bf16_e5m2, %rsi_bf16_e5m2, %wq_bf16_e5m2, %wsi_bf16_e5m2, %sa_bf16, %sq_bf16, %d_bf16, %md_bf16, %rq_f16_e4m3, %rsi_f16_e4m3, %wq_f16_e4m3, %wsi_f16_e4m3, %rq_f16_e5m2, %rsi_f16_e5m2, %wq_f16_e5m2, %wsi_f16_e5m2, %sa_f16, %sq_f16, %d_f16, %md_f16, %bsi, %bmsi
      : tensor<256x300xf8E4M3FN>, tensor<256x3xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>, tensor<256x300xf8E5M2>, tensor<256x3xf32>, tensor<256x256xf8E5M2>, tensor<2x2xf32>, tensor<256x3xf32>, tensor<256x300xf8E4M3FN>, tensor<256x300xf32>, tensor<256x300xf32>, tensor<256x300xf8E4M3FN>, tensor<256x3xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>, tensor<256x300xf8E5M2>, tensor<256x3xf32>, tensor<256x256xf8E5M2>, tensor<2x2xf32>, tensor<256x3xf32>, tensor<256x300xf8E4M3FN>, tensor<256x300xbf16>, tensor<256x300xbf16>, tensor<256x300xf8E4M3FN>, tensor<256x3xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>, tensor<256x300xf8E5M2>, tensor<256x3xf32>, tensor<256x256xf8E5M2>, tensor<2x2xf32>, tensor<256x3xf32>, tensor<256x300xf8E4M3FN>, tensor<256x300xf16>, tensor<256x300xf16>, tensor<64x2xf32>, tensor<64x2xf8E8M0FNU>
}
