// fp8-lower-to-gpu takes the fp8.attention no flash kernel computes (a
// head dimension of 4, f32, FP8 key tiles of 64) as
// fp8-decompose-attention's whole-tensor linalg, which the linalg -> gpu
// route turns into kernels, and the rest on the flash kernel
// (convert-fp8-attention-to-wgmma): the program completes with no
// attention left.
// The decomposition's numbers are checked on the CPU against an f64 graph
// in test/Integration/fp8-attention-cpu.mlir.
//
// RUN: fp8-opt %s --fp8-lower-to-gpu | FileCheck %s
// CHECK-NOT: fp8.attention
// CHECK-LABEL: llvm.func @causal_gqa(
// CHECK-NOT: fp8.attention
// CHECK: gpu.launch_func
// CHECK-NOT: fp8.attention
// CHECK-LABEL: llvm.func @dynamic_heads(
// CHECK-NOT: fp8.attention
// CHECK: gpu.launch_func
// CHECK-NOT: fp8.attention
// CHECK-LABEL: llvm.func @fp8_values(
// CHECK-NOT: fp8.attention
// CHECK: gpu.launch_func
// CHECK-NOT: fp8.attention
// CHECK-LABEL: llvm.func @flash(
// CHECK-COUNT-3: llvm.call @fp8GpuEncodeTensorMap
// CHECK: gpu.launch_func <{{.*}}> @fp8_gemm_kernels::@flash_attention_bf16_bf16_bf16_causal_d128_128x128_s3
// CHECK-NOT: fp8.attention
// A boolean padding mask: the flash kernel `_maski1`, the mask a buffer
// of one byte per key.
// CHECK-LABEL: llvm.func @padded(
// CHECK-COUNT-3: llvm.call @fp8GpuEncodeTensorMap
// CHECK: gpu.launch_func <{{.*}}> @fp8_gemm_kernels::@flash_attention_bf16_bf16_bf16_maski1_d128_128x128_s3
// CHECK-NOT: fp8.attention
// CHECK-LABEL: llvm.func @training_step(
// CHECK: gpu.launch_func <{{.*}}> @fp8_gemm_kernels::@flash_attention_bf16_bf16_f32_causal_lse_d128_128x128_s3
// CHECK-COUNT-7: llvm.call @fp8GpuEncodeTensorMap
// CHECK: gpu.launch_func <{{.*}}> @fp8_gemm_kernels::@flash_attention_grad_bf16_causal_d128_64x64_s2
// CHECK-NOT: fp8.attention

func.func @causal_gqa(%q: tensor<1x4x70x4xbf16>, %k: tensor<1x2x133x4xbf16>,
                      %v: tensor<1x2x133x3xbf16>)
    -> (tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>
      -> tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>
  return %o, %lse : tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>
}

func.func @dynamic_heads(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                         %v: tensor<?x?x?x?xf32>, %m: tensor<1x1x?x?xi1>)
    -> tensor<?x?x?x?xf32> {
  %o = fp8.attention %q, %k, %v mask %m : tensor<1x1x?x?xi1> scale 0.5
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
      -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}

/// FP8 probabilities and values: the decomposition's tile maxima, prefix
/// max and E4M3 weights become kernels too.
func.func @fp8_values(%q: tensor<1x4x70x4xf8E4M3FN>, %k: tensor<1x2x133x4xf8E4M3FN>,
                      %v: tensor<1x2x133x3xf8E4M3FN>, %qs: tensor<1x4x70xf32>,
                      %ks: tensor<1x2x133xf32>, %vs: tensor<1x2xf32>)
    -> tensor<1x4x70x3xbf16> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks
      : tensor<1x4x70xf32>, tensor<1x2x133xf32> value_scale %vs : tensor<1x2xf32>
      scale 0.5 {block_k = 32, causal, causal_offset = 63, probability_scale = 256.0 : f32}
      : tensor<1x4x70x4xf8E4M3FN>, tensor<1x2x133x4xf8E4M3FN>, tensor<1x2x133x3xf8E4M3FN>
      -> tensor<1x4x70x3xbf16>
  return %o : tensor<1x4x70x3xbf16>
}

// Llama-3-8B-shaped heads (32 query on 8 key/value heads, D = 128), any
// number of tokens: the flash kernel.
func.func @flash(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                 %v: tensor<1x8x?x128xbf16>) -> tensor<1x32x?x128xbf16> {
  %o = fp8.attention %q, %k, %v scale 0.0883883461 {causal}
      : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>,
        tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  return %o : tensor<1x32x?x128xbf16>
}

func.func @padded(%q: tensor<2x4x96x128xbf16>, %k: tensor<2x4x96x128xbf16>,
                  %v: tensor<2x4x96x128xbf16>, %keep: tensor<2x1x1x96xi1>)
    -> tensor<2x4x96x128xbf16> {
  %o = fp8.attention %q, %k, %v mask %keep : tensor<2x1x1x96xi1> scale 0.125
      : tensor<2x4x96x128xbf16>, tensor<2x4x96x128xbf16>, tensor<2x4x96x128xbf16>
      -> tensor<2x4x96x128xbf16>
  return %o : tensor<2x4x96x128xbf16>
}

// A training step's attention (the forward keeps its f32 output and lse)
// and its backward: both on their flash kernels.
func.func @training_step(%q: tensor<2x2x?x128xbf16>, %k: tensor<2x1x?x128xbf16>,
                         %v: tensor<2x1x?x128xbf16>, %do: tensor<2x2x?x128xbf16>)
    -> (tensor<2x2x?x128xbf16>, tensor<2x1x?x128xbf16>, tensor<2x1x?x128xbf16>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.0883883461 {causal}
      : tensor<2x2x?x128xbf16>, tensor<2x1x?x128xbf16>, tensor<2x1x?x128xbf16>
      -> tensor<2x2x?x128xf32>, tensor<2x2x?xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse
      scale 0.0883883461 {causal}
      : tensor<2x2x?x128xbf16>, tensor<2x1x?x128xbf16>, tensor<2x1x?x128xbf16>,
        tensor<2x2x?x128xf32>, tensor<2x2x?xf32>
  return %dq, %dk, %dv : tensor<2x2x?x128xbf16>, tensor<2x1x?x128xbf16>, tensor<2x1x?x128xbf16>
}
