// REQUIRES: ptxas
// RUN: fp8-opt %s --fp8-lower-to-nvvm -o %t.mlir
// RUN: %python %fp8_src_root/scripts/extract-ptx.py %t.mlir %t
// ptxas accepts every kernel for sm_90a and says nothing (no warning).
// RUN: %ptxas -arch=sm_90a %t.fp8_kernels.ptx -o %t.cubin 2>&1 | count 0
// RUN: %ptxas -arch=sm_90a -v %t.fp8_kernels.ptx -o %t.cubin 2>&1 | FileCheck %s
// The pipeline itself makes a cubin when given the toolkit.
// RUN: fp8-opt %s --fp8-lower-to-nvvm="format=bin toolkit=%cuda_toolkit" | FileCheck %s --check-prefix=BIN

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
