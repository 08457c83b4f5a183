// REQUIRES: ptxas
// RUN: fp8-opt %s --fp8-lower-gemm-to-nvvm -o %t.mlir
// RUN: %python %fp8_src_root/scripts/extract-ptx.py %t.mlir %t
// ptxas accepts every flash attention kernel for sm_90a and says nothing:
// no warning, in particular no C7514/C7517 (wgmma serialized).
// RUN: %ptxas -arch=sm_90a %t.fp8_gemm_kernels.ptx -o %t.cubin 2>&1 | count 0
// RUN: %ptxas -arch=sm_90a -v %t.fp8_gemm_kernels.ptx -o %t.cubin 2>&1 | tee %t.ptxas.txt | FileCheck %s
// RUN: not grep -E "[1-9][0-9]* bytes (stack frame|spill)" %t.ptxas.txt
// The register-A wgmma of P V, as PTX spells it.
// RUN: FileCheck %s --check-prefix=PTX < %t.fp8_gemm_kernels.ptx

// CHECK-NOT: warning
// CHECK-NOT: {{C75[0-9][0-9]}}
// CHECK-DAG: Compiling entry function 'flash_attention_bf16_bf16_bf16_causal_d128_128x128_s3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_f16_f16_f32_lse_d64_128x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_bf16_bf16_f32_lse_d128_128x128_s3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_e4m3_e4m3_bf16_causal_d128_128x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_e4m3_e5m2_f16_lse_d128_128x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_e5m2_bf16_bf16_causal_d128_128x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_bf16_bf16_bf16_causal_maskf32_d128_128x128_s3' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_e4m3_bf16_bf16_maski1_d128_128x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_f16_f16_f16_maskf16_d64_128x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_grad_bf16_causal_d128_64x64_s2' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'flash_attention_grad_f16_d64_64x64_s4' for 'sm_90a'
// CHECK-NOT: warning
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, p, 1, 1;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2 {{.*}}, p, 1, 1;
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: lg2.approx.ftz.f32
// PTX-DAG: cvt.rn.satfinite.e4m3x2.f32
// PTX-DAG: red.global.add.f32

// Masked: an additive f32 bias per head, query row and key, a
// boolean padding mask per batch and key, an f16 mask shared by all.
func.func @bf16_causal_bias(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>, %m: tensor<1x32x4096x4096xf32>) -> tensor<1x32x4096x128xbf16> {
  %o = fp8.attention %q, %k, %v mask %m : tensor<1x32x4096x4096xf32> scale 0.0883883461 {causal} : tensor<1x32x4096x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}
func.func @fp8_padding(%q: tensor<2x32x?x128xf8E4M3FN>, %k: tensor<2x8x?x128xf8E4M3FN>, %v: tensor<2x8x?x128xbf16>, %qs: tensor<2x32x?xf32>, %ks: tensor<2x8x?xf32>, %keep: tensor<2x1x1x?xi1>) -> tensor<2x32x?x128xbf16> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks : tensor<2x32x?xf32>, tensor<2x8x?xf32> mask %keep : tensor<2x1x1x?xi1> scale 0.0883883461 : tensor<2x32x?x128xf8E4M3FN>, tensor<2x8x?x128xf8E4M3FN>, tensor<2x8x?x128xbf16> -> tensor<2x32x?x128xbf16>
  return %o : tensor<2x32x?x128xbf16>
}
func.func @f16_d64_shared_mask(%q: tensor<2x12x?x64xf16>, %k: tensor<2x12x?x64xf16>, %v: tensor<2x12x?x64xf16>, %m: tensor<1x1x?x?xf16>) -> tensor<2x12x?x64xf16> {
  %o = fp8.attention %q, %k, %v mask %m : tensor<1x1x?x?xf16> scale 0.125 : tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16> -> tensor<2x12x?x64xf16>
  return %o : tensor<2x12x?x64xf16>
}
func.func @bf16_causal(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  %o = fp8.attention %q, %k, %v scale 0.0883883461 {causal} : tensor<1x32x4096x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}
func.func @f16_d64_lse(%q: tensor<2x12x?x64xf16>, %k: tensor<2x12x?x64xf16>, %v: tensor<2x12x?x64xf16>) -> (tensor<2x12x?x64xf32>, tensor<2x12x?xf32>) {
  %o, %l = fp8.attention %q, %k, %v scale 0.125 : tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16> -> tensor<2x12x?x64xf32>, tensor<2x12x?xf32>
  return %o, %l : tensor<2x12x?x64xf32>, tensor<2x12x?xf32>
}
func.func @training_forward(%q: tensor<8x4x64x128xbf16>, %k: tensor<8x4x64x128xbf16>, %v: tensor<8x4x64x128xbf16>) -> (tensor<8x4x64x128xf32>, tensor<8x4x64xf32>) {
  %o, %l = fp8.attention %q, %k, %v scale 0.0883883461 : tensor<8x4x64x128xbf16>, tensor<8x4x64x128xbf16>, tensor<8x4x64x128xbf16> -> tensor<8x4x64x128xf32>, tensor<8x4x64xf32>
  return %o, %l : tensor<8x4x64x128xf32>, tensor<8x4x64xf32>
}
func.func @fp8_values(%q: tensor<1x32x4096x128xf8E4M3FN>, %k: tensor<1x8x4096x128xf8E4M3FN>, %v: tensor<1x8x4096x128xf8E4M3FN>, %qs: tensor<1x32x4096xf32>, %ks: tensor<1x8x4096xf32>, %vs: tensor<1x8xf32>) -> tensor<1x32x4096x128xbf16> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks : tensor<1x32x4096xf32>, tensor<1x8x4096xf32> value_scale %vs : tensor<1x8xf32> scale 0.0883883461 {block_k = 128, causal, probability_scale = 2.560000e+02 : f32} : tensor<1x32x4096x128xf8E4M3FN>, tensor<1x8x4096x128xf8E4M3FN>, tensor<1x8x4096x128xf8E4M3FN> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}
func.func @fp8_e5m2_values(%q: tensor<1x8x?x128xf8E4M3FN>, %k: tensor<1x8x?x128xf8E4M3FN>, %v: tensor<1x8x?x128xf8E5M2>, %qs: tensor<1x8x?xf32>, %ks: tensor<1x8x?xf32>, %vs: tensor<1x8xf32>) -> (tensor<1x8x?x128xf16>, tensor<1x8x?xf32>) {
  %o, %l = fp8.attention %q, %k, %v scales %qs, %ks : tensor<1x8x?xf32>, tensor<1x8x?xf32> value_scale %vs : tensor<1x8xf32> scale 0.0883883461 {block_k = 128, probability_scale = 4.480000e+02 : f32} : tensor<1x8x?x128xf8E4M3FN>, tensor<1x8x?x128xf8E4M3FN>, tensor<1x8x?x128xf8E5M2> -> tensor<1x8x?x128xf16>, tensor<1x8x?xf32>
  return %o, %l : tensor<1x8x?x128xf16>, tensor<1x8x?xf32>
}
func.func @fp8_scores(%q: tensor<1x32x4096x128xf8E5M2>, %k: tensor<1x8x4101x128xf8E5M2>, %v: tensor<1x8x4101x128xbf16>, %qs: tensor<1x32x4096xf32>, %ks: tensor<1x8x4101xf32>) -> tensor<1x32x4096x128xbf16> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks : tensor<1x32x4096xf32>, tensor<1x8x4101xf32> scale 0.0883883461 {causal, causal_offset = 5} : tensor<1x32x4096x128xf8E5M2>, tensor<1x8x4101x128xf8E5M2>, tensor<1x8x4101x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}
func.func @backward(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>, %v: tensor<1x8x?x128xbf16>, %o: tensor<1x32x?x128xbf16>, %do: tensor<1x32x?x128xbf16>, %lse: tensor<1x32x?xf32>) -> (tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.0883883461 {causal} : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
  return %dq, %dk, %dv : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
}
func.func @backward_d64(%q: tensor<2x12x?x64xf16>, %k: tensor<2x12x?x64xf16>, %v: tensor<2x12x?x64xf16>, %o: tensor<2x12x?x64xf16>, %do: tensor<2x12x?x64xf16>, %lse: tensor<2x12x?xf32>) -> (tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.125 : tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>, tensor<2x12x?xf32>
  return %dq, %dk, %dv : tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>
}
