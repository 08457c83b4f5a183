// RUN: fp8-opt %s --convert-fp8-attention-to-wgmma=remarks=1 -split-input-file -verify-diagnostics | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-attention-to-wgmma -split-input-file 2>/dev/null | FileCheck %s --check-prefix=KERNEL

// Llama-style causal prefill, GQA: the bf16 flash kernel, named on the op
// with its launch shape [BM, BN, threads, dynamic shared bytes]: 1024 +
// 32 KiB of queries + 3 stages x (32 KiB keys + 32 KiB values) + 104 bytes
// of mbarriers (1 + 4 x 3 of 8 bytes) = 230504.
// CHECK-LABEL: func.func @bf16_causal
// CHECK: fp8.attention
// CHECK-SAME: fp8.wgmma_kernel = @fp8_gemm_kernels::@flash_attention_bf16_bf16_bf16_causal_d128_128x128_s3
// CHECK-SAME: fp8.wgmma_tile = array<i64: 128, 128, 384, 230504>
func.func @bf16_causal(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>) -> tensor<1x32x4096x128xbf16> {
  // expected-remark @+1 {{attention on the flash kernel flash_attention_bf16_bf16_bf16_causal_d128_128x128_s3}}
  %o = fp8.attention %q, %k, %v scale 0.0883883461 {causal} : tensor<1x32x4096x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// The kernel: producer and consumers after setmaxnreg, the query loaded
// once (two 128-byte panels of 64 bf16), keys and transposed values per
// stage (two panels each), Q K^T as 8 wgmma m64n128k16 from shared memory,
// P V as 8 register-A wgmma (inline PTX), exponentials on ex2.approx.
// KERNEL-LABEL: llvm.func @flash_attention_bf16_bf16_bf16_causal_d128_128x128_s3(
// KERNEL-SAME: nvvm.grid_constant
// KERNEL-SAME: nvvm.maxntid = array<i32: 384, 1, 1>
// KERNEL: nvvm.setmaxregister  decrease 40
// KERNEL-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} : !llvm.ptr<7>, !llvm.ptr
// KERNEL: scf.for
// KERNEL-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
// KERNEL: nvvm.setmaxregister  increase 232
// KERNEL: scf.for
// KERNEL-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// KERNEL: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// KERNEL: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// KERNEL-SAME: p, 1, 1, 0;

// -----

// f16, D = 64, an f32 output and the log-sum-exp, dynamic lengths.
// CHECK-LABEL: func.func @f16_lse
// CHECK: fp8.wgmma_kernel = @fp8_gemm_kernels::@flash_attention_f16_f16_f32_lse_d64_128x128_s4
// KERNEL-LABEL: llvm.func @flash_attention_f16_f16_f32_lse_d64_128x128_s4(
// KERNEL: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
func.func @f16_lse(%q: tensor<2x12x?x64xf16>, %k: tensor<2x12x?x64xf16>, %v: tensor<2x12x?x64xf16>) -> (tensor<2x12x?x64xf32>, tensor<2x12x?xf32>) {
  // expected-remark @+1 {{flash_attention_f16_f16_f32_lse_d64_128x128_s4}}
  %o, %l = fp8.attention %q, %k, %v scale 0.125 : tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16>, tensor<2x12x?x64xf16> -> tensor<2x12x?x64xf32>, tensor<2x12x?xf32>
  return %o, %l : tensor<2x12x?x64xf32>, tensor<2x12x?xf32>
}

// -----

// Everything FP8 (fp8-quantize's fp8-attention): E4M3 P of 128-key tiles,
// P V as 4 wgmma m64n128k32 e4m3 x e4m3 with P in registers; 4 stages.
// CHECK-LABEL: func.func @fp8_values
// CHECK: fp8.wgmma_kernel = @fp8_gemm_kernels::@flash_attention_e4m3_e4m3_bf16_causal_d128_128x128_s4
// KERNEL-LABEL: llvm.func @flash_attention_e4m3_e4m3_bf16_causal_d128_128x128_s4(
// KERNEL-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>
// KERNEL: nvvm.convert.f32x2.to.f8x2
// KERNEL: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// KERNEL-SAME: p, 1, 1;
func.func @fp8_values(%q: tensor<1x32x4096x128xf8E4M3FN>, %k: tensor<1x8x4096x128xf8E4M3FN>, %v: tensor<1x8x4096x128xf8E4M3FN>, %qs: tensor<1x32x4096xf32>, %ks: tensor<1x8x4096xf32>, %vs: tensor<1x8xf32>) -> tensor<1x32x4096x128xbf16> {
  // expected-remark @+1 {{flash_attention_e4m3_e4m3_bf16_causal_d128_128x128_s4}}
  %o = fp8.attention %q, %k, %v scales %qs, %ks : tensor<1x32x4096xf32>, tensor<1x8x4096xf32> value_scale %vs : tensor<1x8xf32> scale 0.0883883461 {block_k = 128, causal, probability_scale = 2.560000e+02 : f32} : tensor<1x32x4096x128xf8E4M3FN>, tensor<1x8x4096x128xf8E4M3FN>, tensor<1x8x4096x128xf8E4M3FN> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// -----

// FP8 scores with a bf16 value (a KV-cache prefix of 5 tokens): P V in bf16.
// CHECK-LABEL: func.func @fp8_scores
// CHECK: fp8.wgmma_kernel = @fp8_gemm_kernels::@flash_attention_e5m2_bf16_bf16_causal_d128_128x128_s4
func.func @fp8_scores(%q: tensor<1x32x4096x128xf8E5M2>, %k: tensor<1x8x4101x128xf8E5M2>, %v: tensor<1x8x4101x128xbf16>, %qs: tensor<1x32x4096xf32>, %ks: tensor<1x8x4101xf32>) -> tensor<1x32x4096x128xbf16> {
  // expected-remark @+1 {{flash_attention_e5m2_bf16_bf16_causal_d128_128x128_s4}}
  %o = fp8.attention %q, %k, %v scales %qs, %ks : tensor<1x32x4096xf32>, tensor<1x8x4101xf32> scale 0.0883883461 {causal, causal_offset = 5} : tensor<1x32x4096x128xf8E5M2>, tensor<1x8x4101x128xf8E5M2>, tensor<1x8x4101x128xbf16> -> tensor<1x32x4096x128xbf16>
  return %o : tensor<1x32x4096x128xbf16>
}

// -----

// A mask that changes no score (an exporter's all-zero additive mask) is
// not read: the kernel takes the op.
// CHECK-LABEL: func.func @neutral_mask
// CHECK: fp8.wgmma_kernel = @fp8_gemm_kernels::@flash_attention_bf16_bf16_bf16_d128_128x128_s3
func.func @neutral_mask(%q: tensor<1x4x64x128xbf16>) -> tensor<1x4x64x128xbf16> {
  %zero = arith.constant dense<0.0> : tensor<1x1x64x64xbf16>
  // expected-remark @+1 {{flash_attention_bf16_bf16_bf16_d128_128x128_s3}}
  %o = fp8.attention %q, %q, %q mask %zero : tensor<1x1x64x64xbf16> scale 0.125 : tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16> -> tensor<1x4x64x128xbf16>
  return %o : tensor<1x4x64x128xbf16>
}

// -----

// A mask operand: the kernel `_mask<type>` reads it on every tile, added
// (f32, bf16, f16) or as a boolean (one byte per element); its strides are
// launch parameters, so one kernel takes every broadcast.
// CHECK-LABEL: func.func @masked
// CHECK: fp8.wgmma_kernel = @fp8_gemm_kernels::@flash_attention_bf16_bf16_bf16_maski1_d128_128x128_s3
// CHECK: fp8.wgmma_kernel = @fp8_gemm_kernels::@flash_attention_bf16_bf16_f32_causal_maskbf16_d128_128x128_s3
// The boolean kernel loads one byte per score and selects -inf where it is
// zero; its last five parameters are the mask and four i64 strides.
// KERNEL-LABEL: llvm.func @flash_attention_bf16_bf16_bf16_maski1_d128_128x128_s3(
// KERNEL-SAME: %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: !llvm.ptr<1>, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64)
// KERNEL: llvm.load %{{.+}} : !llvm.ptr<1> -> i8
// KERNEL: arith.cmpi ne
// KERNEL-LABEL: llvm.func @flash_attention_bf16_bf16_f32_causal_maskbf16_d128_128x128_s3(
// KERNEL: llvm.load %{{.+}} : !llvm.ptr<1> -> bf16
func.func @masked(%q: tensor<1x4x64x128xbf16>, %k: tensor<1x4x64x128xbf16>, %v: tensor<1x4x64x128xbf16>,
                  %keep: tensor<1x1x64x64xi1>, %bias: tensor<1x4x1x64xbf16>) -> (tensor<1x4x64x128xbf16>, tensor<1x4x64x128xf32>) {
  // expected-remark @+1 {{attention on the flash kernel flash_attention_bf16_bf16_bf16_maski1_d128_128x128_s3}}
  %0 = fp8.attention %q, %k, %v mask %keep : tensor<1x1x64x64xi1> scale 0.125 : tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16> -> tensor<1x4x64x128xbf16>
  // expected-remark @+1 {{attention on the flash kernel flash_attention_bf16_bf16_f32_causal_maskbf16_d128_128x128_s3}}
  %1 = fp8.attention %q, %k, %v mask %bias : tensor<1x4x1x64xbf16> scale 0.125 {causal} : tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16> -> tensor<1x4x64x128xf32>
  return %0, %1 : tensor<1x4x64x128xbf16>, tensor<1x4x64x128xf32>
}

// -----

// What no kernel takes stays as it is, with the reason.
// CHECK-LABEL: func.func @left
// CHECK-NOT: fp8.wgmma_kernel
// CHECK-NOT: gpu.module
// CHECK: {{^}}// -----
func.func @left(%q: tensor<1x4x64x128xbf16>, %k: tensor<1x4x64x128xbf16>, %v: tensor<1x4x64x128xbf16>, %mask: tensor<1x1x64x64xi1>,
                %q8: tensor<1x4x64x128xf8E4M3FN>, %k8: tensor<1x4x64x128xf8E4M3FN>, %v8: tensor<1x4x64x128xf8E4M3FN>,
                %qs: tensor<1x4x64xf32>, %ks: tensor<1x4x64xf32>, %vs: tensor<1x4xf32>,
                %q96: tensor<1x4x64x96xbf16>, %qf: tensor<1x4x64x128xf32>, %vd: tensor<1x4x64x64xbf16>) {
  // expected-remark @+1 {{its FP8 value has key tiles of 64 (the kernel's are 128)}}
  %1 = fp8.attention %q8, %k8, %v8 scales %qs, %ks : tensor<1x4x64xf32>, tensor<1x4x64xf32> value_scale %vs : tensor<1x4xf32> scale 0.125 {block_k = 64, probability_scale = 2.560000e+02 : f32} : tensor<1x4x64x128xf8E4M3FN>, tensor<1x4x64x128xf8E4M3FN>, tensor<1x4x64x128xf8E4M3FN> -> tensor<1x4x64x128xbf16>
  // expected-remark @+1 {{no kernel takes its element types and head dimension}}
  %2 = fp8.attention %q96, %q96, %q96 scale 0.125 : tensor<1x4x64x96xbf16>, tensor<1x4x64x96xbf16>, tensor<1x4x64x96xbf16> -> tensor<1x4x64x96xbf16>
  // expected-remark @+1 {{no kernel takes its element types and head dimension}}
  %3 = fp8.attention %qf, %qf, %qf scale 0.125 : tensor<1x4x64x128xf32>, tensor<1x4x64x128xf32>, tensor<1x4x64x128xf32> -> tensor<1x4x64x128xf32>
  // expected-remark @+1 {{its head dimensions are not one static extent}}
  %4 = fp8.attention %q, %k, %vd scale 0.125 : tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16>, tensor<1x4x64x64xbf16> -> tensor<1x4x64x64xbf16>
  return
}

// -----

// The backward of a training step: one block of 256 threads per 64 keys;
// 1024 + K, V and K^T (3 x 16 KiB) + dS (8 KiB) + 2 stages of Q, dO, Q^T
// and dO^T (4 x 16 KiB) + 5 x 8 bytes of mbarriers = 189480.
// CHECK-LABEL: func.func @backward
// CHECK: fp8.attention_grad
// CHECK-SAME: fp8.wgmma_kernel = @fp8_gemm_kernels::@flash_attention_grad_bf16_causal_d128_64x64_s2
// CHECK-SAME: fp8.wgmma_tile = array<i64: 64, 64, 256, 189480>
// The kernel: K and V (two panels each) and K^T loaded once, then per
// step Q and dO (two panels each), Q^T and dO^T; the consumer's dP^T and
// S^T (m64n64k16 over D), dS into shared memory, dV and dK on register-A
// wgmma (N = D), dQ as two halves of 64 columns from shared dS, added with
// red.global.add.f32.
// KERNEL-LABEL: llvm.func @flash_attention_grad_bf16_causal_d128_64x64_s2(
// KERNEL-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// KERNEL: nvvm.setmaxregister  decrease 40
// KERNEL-COUNT-5: nvvm.cp.async.bulk.tensor.shared.cluster.global
// KERNEL: scf.for
// KERNEL-COUNT-6: nvvm.cp.async.bulk.tensor.shared.cluster.global
// KERNEL: nvvm.setmaxregister  increase 256
// KERNEL: scf.for
// KERNEL-COUNT-16: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// dS goes to shared memory before its registers are a wgmma's A operand
// (reading an in-flight wgmma's registers is undefined).
// KERNEL: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// KERNEL: nvvm.fence.proxy
// KERNEL: nvvm.barrier id =
// KERNEL-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// KERNEL-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// KERNEL: red.global.add.f32 [$0+0], $1;
func.func @backward(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>, %v: tensor<1x8x?x128xbf16>, %o: tensor<1x32x?x128xbf16>, %do: tensor<1x32x?x128xbf16>, %lse: tensor<1x32x?xf32>) -> (tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>) {
  // expected-remark @+1 {{attention backward on the flash kernel flash_attention_grad_bf16_causal_d128_64x64_s2}}
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.0883883461 {causal} : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
  return %dq, %dk, %dv : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
}

// -----

// A backward the kernel does not take stays, with the reason.
// CHECK-LABEL: func.func @backward_left
// CHECK-NOT: fp8.wgmma_kernel
func.func @backward_left(%q: tensor<1x4x64x128xbf16>, %o: tensor<1x4x64x128xbf16>, %lse: tensor<1x4x64xf32>, %mask: tensor<1x1x64x64xi1>, %qf: tensor<1x4x64x128xf32>, %lsef: tensor<1x4x64xf32>) {
  // expected-remark @+1 {{attention backward without a flash kernel (decomposed on the GPU): it has a mask operand (the backward kernel masks causally and by length only)}}
  %0:3 = fp8.attention_grad %q, %q, %q, %o, %o, %lse mask %mask : tensor<1x1x64x64xi1> scale 0.125 : tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16>, tensor<1x4x64x128xbf16>, tensor<1x4x64xf32>
  // expected-remark @+1 {{no backward kernel takes its element types and head dimension}}
  %1:3 = fp8.attention_grad %qf, %qf, %qf, %qf, %qf, %lsef scale 0.125 : tensor<1x4x64x128xf32>, tensor<1x4x64x128xf32>, tensor<1x4x64x128xf32>, tensor<1x4x64x128xf32>, tensor<1x4x64xf32>
  return
}
