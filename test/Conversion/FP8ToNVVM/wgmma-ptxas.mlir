// REQUIRES: ptxas
// RUN: fp8-opt %s --fp8-lower-gemm-to-nvvm -o %t.mlir
// RUN: %python %fp8_src_root/scripts/extract-ptx.py %t.mlir %t
// RUN: FileCheck %s --check-prefix=PTX < %t.fp8_gemm_kernels.ptx
// RUN: FileCheck %s --check-prefix=PTX-FIRST < %t.fp8_gemm_kernels.ptx
// ptxas accepts every kernel for sm_90a and says nothing: no warning, in
// particular no C7514/C7517 (wgmma serialized).
// RUN: %ptxas -arch=sm_90a %t.fp8_gemm_kernels.ptx -o %t.cubin 2>&1 | count 0
// RUN: %ptxas -arch=sm_90a -v %t.fp8_gemm_kernels.ptx -o %t.cubin 2>&1 | tee %t.ptxas.txt | FileCheck %s
// The same with promotion of the partial sums every 4 wgmma.
// RUN: fp8-opt %s --fp8-lower-gemm-to-nvvm=promote=1 -o %t.p.mlir
// RUN: %python %fp8_src_root/scripts/extract-ptx.py %t.p.mlir %t.p
// RUN: %ptxas -arch=sm_90a %t.p.fp8_gemm_kernels.ptx -o %t.p.cubin 2>&1 | count 0
// RUN: %ptxas -arch=sm_90a -v %t.p.fp8_gemm_kernels.ptx -o %t.p.cubin 2>&1 | tee %t.p.ptxas.txt | FileCheck %s --check-prefix=PROMOTE
// The same with the TMA-store epilogue.
// RUN: fp8-opt %s --fp8-lower-gemm-to-nvvm=tma-store=1 -o %t.t.mlir
// RUN: %python %fp8_src_root/scripts/extract-ptx.py %t.t.mlir %t.t
// RUN: FileCheck %s --check-prefix=PTX-TMA < %t.t.fp8_gemm_kernels.ptx
// RUN: %ptxas -arch=sm_90a %t.t.fp8_gemm_kernels.ptx -o %t.t.cubin 2>&1 | count 0
// RUN: %ptxas -arch=sm_90a -v %t.t.fp8_gemm_kernels.ptx -o %t.t.cubin 2>&1 | tee %t.t.ptxas.txt | FileCheck %s --check-prefix=TMASTORE
// The pipeline itself makes a cubin when given the toolkit.
// RUN: fp8-opt %s --fp8-lower-gemm-to-nvvm="format=bin toolkit=%cuda_toolkit" | FileCheck %s --check-prefix=BIN
// A toolkit that is ptxas alone, without libdevice (as CI machines have it):
// these kernels call no libdevice function, so that is no error.
// RUN: rm -rf %t.bare && mkdir -p %t.bare/bin && ln -s %ptxas %t.bare/bin/ptxas
// RUN: fp8-opt %s --fp8-lower-gemm-to-nvvm="format=bin toolkit=%t.bare" 2>&1 | FileCheck %s --check-prefix=BIN
// ptxas -v, for the record (registers at launch; setmaxnreg then gives the
// producer 40 and the consumers 232):
// No kernel of any variant spills or has a stack (the CHECK-NOTs below only
// look between their neighbours' matches).
// RUN: not grep -E "[1-9][0-9]* bytes (stack frame|spill)" %t.ptxas.txt %t.p.ptxas.txt %t.t.ptxas.txt
// RUN: cat %t.ptxas.txt %t.p.ptxas.txt %t.t.ptxas.txt

// No spills, no stack, in any variant (wgmma accumulators live in registers),
// and no ptxas performance advisory of the C75xx family (wgmma serialized,
// warpgroup.arrive injected), which -v may print without saying "warning".
// CHECK-NOT: warning
// CHECK-NOT: {{C75[0-9][0-9]}}
// CHECK-DAG: Compiling entry function 'scaled_matmul_e4m3_e4m3_bf16_128x256x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'scaled_matmul_e4m3_e5m2_f32_128x128x128_s7' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'scaled_matmul_e5m2_e4m3_f16_bias_f16_amax_64x128x128_s8' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'scaled_matmul_e5m2_e5m2_bf16_bias_f32_128x256x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'scaled_matmul_e4m3_e4m3_bf16_bias_bf16_promote_blocks_128x128x128_s7' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'scaled_matmul_e4m3_e4m3_f16_amax_rows_128x256x128_s4' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'scaled_matmul_e5m2_e4m3_bf16_promote_blocks1d1d_128x64x128_s{{[0-9]}}' for 'sm_90a'
// CHECK-DAG: Compiling entry function 'scaled_matmul_e4m3_e4m3_f32_promote_mx_128x64x128_s{{[0-9]}}' for 'sm_90a'
// CHECK-NOT: bytes spill stores
// CHECK-NOT: warning
// CHECK: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-NEXT: Used {{[0-9]+}} registers
// CHECK-NOT: warning
// CHECK-NOT: {{[1-9][0-9]* bytes spill}}

// PROMOTE-NOT: warning
// PROMOTE-NOT: {{C75[0-9][0-9]}}
// PROMOTE-DAG: Compiling entry function 'scaled_matmul_e4m3_e4m3_bf16_promote_128x128x128_s7' for 'sm_90a'
// PROMOTE-DAG: Compiling entry function 'scaled_matmul_e5m2_e4m3_f16_bias_f16_amax_promote_64x128x128_s8' for 'sm_90a'
// PROMOTE-DAG: Compiling entry function 'scaled_matmul_e4m3_e4m3_bf16_bias_bf16_promote_blocks_128x128x128_s7' for 'sm_90a'
// PROMOTE-NOT: {{[1-9][0-9]* bytes spill}}

// TMASTORE-NOT: warning
// TMASTORE-NOT: {{C75[0-9][0-9]}}
// TMASTORE-DAG: Compiling entry function 'scaled_matmul_e4m3_e4m3_bf16_tmastore_128x256x128_s3' for 'sm_90a'
// TMASTORE-DAG: Compiling entry function 'scaled_matmul_e4m3_e5m2_f32_tmastore_128x128x128_s5' for 'sm_90a'
// TMASTORE-DAG: Compiling entry function 'scaled_matmul_e5m2_e4m3_f16_bias_f16_amax_tmastore_64x128x128_s8' for 'sm_90a'
// TMASTORE-DAG: Compiling entry function 'scaled_matmul_e4m3_e4m3_bf16_bias_bf16_promote_blocks_tmastore_128x128x128_s{{[0-9]}}' for 'sm_90a'
// TMASTORE-NOT: {{[1-9][0-9]* bytes spill}}

// The result tile goes registers -> shared memory -> TMA store, guarded by
// the warpgroup's named barrier and the bulk-group waits.
// PTX-TMA: .param .align 64 .b8 scaled_matmul_{{.*}}_param_12[128]
// PTX-TMA-DAG: cp.async.bulk.wait_group.read 0;
// PTX-TMA-DAG: bar.sync {{%r[0-9]+|1}}, 128;
// PTX-TMA-DAG: stmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-TMA-DAG: st.shared.b64
// PTX-TMA-NOT: st.shared.b32
// PTX-TMA-DAG: fence.proxy.async.shared::cta;
// PTX-TMA-DAG: cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group
// PTX-TMA-DAG: cp.async.bulk.commit_group;
// PTX-TMA-DAG: cp.async.bulk.wait_group 0;
// PTX-TMA-NOT: st.global.b32

// The base is aligned to 1024 at run time: (-base) & 1023, which LLVM
// reduces to & 1008 knowing the 16-byte alignment.
// PTX-FIRST: and.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 1008;
// The first K block (peeled off the K loop) starts the accumulator with
// scale-d = 0 (predicate p false) right after the fence: nothing writes
// the accumulator registers in between.
// PTX-FIRST: wgmma.fence.sync.aligned;
// PTX-FIRST-NEXT: // begin inline asm
// PTX-FIRST-NEXT: {
// PTX-FIRST-NEXT: .reg .pred p;
// PTX-FIRST-NEXT: setp.ne.b32 p, 0, 0;
// PTX-FIRST-NEXT: wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
// K = 0 takes the epilogue with a zero sum; nothing traps.
// PTX-FIRST-NOT: trap;

// BIN: gpu.binary @fp8_gemm_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, {{.*}}bin = "\7FELF

// The instructions the design needs, all present: the dynamic shared
// memory, the kernel parameters that are tensor maps, mbarrier setup,
// warp specialization, TMA loads into the ring, the wgmma of each type mix,
// the waits, and the amax reduction.
// PTX: .extern .shared .align 16 .b8 fp8_gemm_smem[];
// PTX: .param .align 64 .b8 scaled_matmul_{{.*}}_param_0[128]
// PTX: .param .align 64 .b8 scaled_matmul_{{.*}}_param_1[128]
// PTX: .maxntid {{384|256}}, 1, 1
// PTX: .minnctapersm 1
// PTX: cvta.param.u64
// PTX: mbarrier.init.shared.b64
// PTX: fence.mbarrier_init.release.cluster;
// PTX: fence.proxy.async.shared::cta;
// PTX: bar.sync 0;
// PTX-DAG: .maxntid 384, 1, 1
// PTX-DAG: .maxntid 256, 1, 1
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 232;
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 40;
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 1;
// PTX-DAG: mbarrier.arrive.shared.b64
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e4m3
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: atom.global.max.u32
// PTX-DAG: cvt.rn.bf16.f32
// PTX-DAG: cvt.rn.f16.f32
// PTX-NOT: mma.sync.aligned.m16n8k32

func.func @large(%x: tensor<4096x4096xf8E4M3FN>, %w: tensor<14336x4096xf8E4M3FN>, %sx: f32, %sw: f32) -> tensor<4096x14336xbf16> {
  %y = fp8.scaled_matmul %x, %w scales %sx, %sw {transpose_rhs} : tensor<4096x4096xf8E4M3FN>, tensor<14336x4096xf8E4M3FN> -> tensor<4096x14336xbf16>
  return %y : tensor<4096x14336xbf16>
}
func.func @mid_e4m3_e5m2_f32(%x: tensor<1000x512xf8E4M3FN>, %w: tensor<1000x512xf8E5M2>, %sx: f32, %sw: f32) -> tensor<1000x1000xf32> {
  %y = fp8.scaled_matmul %x, %w scales %sx, %sw {transpose_rhs} : tensor<1000x512xf8E4M3FN>, tensor<1000x512xf8E5M2> -> tensor<1000x1000xf32>
  return %y : tensor<1000x1000xf32>
}
func.func @small_e5m2_e4m3_f16_bias_amax(%x: tensor<16x4096xf8E5M2>, %w: tensor<4096x4096xf8E4M3FN>, %sx: f32, %sw: f32, %b: tensor<4096xf16>) -> (tensor<16x4096xf16>, f32) {
  %y, %a = fp8.scaled_matmul %x, %w scales %sx, %sw bias %b : tensor<4096xf16> {transpose_rhs} : tensor<16x4096xf8E5M2>, tensor<4096x4096xf8E4M3FN> -> tensor<16x4096xf16>, f32
  return %y, %a : tensor<16x4096xf16>, f32
}
func.func @batched_e5m2_e5m2_bias_f32(%x: tensor<4x128x1024xf8E5M2>, %w: tensor<4096x1024xf8E5M2>, %sx: f32, %sw: f32, %b: tensor<4096xf32>) -> tensor<4x128x4096xbf16> {
  %y = fp8.scaled_matmul %x, %w scales %sx, %sw bias %b : tensor<4096xf32> {transpose_rhs} : tensor<4x128x1024xf8E5M2>, tensor<4096x1024xf8E5M2> -> tensor<4x128x4096xbf16>
  return %y : tensor<4x128x4096xbf16>
}
// Per-block scales (1x128 x 128x128, DeepGEMM's 1d2d), batched with a bias:
// promotion with the scales in every variant.
func.func @blocks_batched_bias(%x: tensor<2x200x1000xf8E4M3FN>, %w: tensor<304x1000xf8E4M3FN>, %sx: tensor<2x200x8xf32>, %sw: tensor<3x8xf32>, %b: tensor<304xbf16>) -> tensor<2x200x304xbf16> {
  %y = fp8.scaled_matmul %x, %w scales %sx, %sw blocks [1, 1, 128], [128, 128] bias %b : tensor<304xbf16> {transpose_rhs} : tensor<2x200x1000xf8E4M3FN>, tensor<304x1000xf8E4M3FN> scales tensor<2x200x8xf32>, tensor<3x8xf32> -> tensor<2x200x304xbf16>
  return %y : tensor<2x200x304xbf16>
}
// Row-wise scales, f16 out with amax (epilogue scaling).
func.func @rows_amax(%x: tensor<500x640xf8E4M3FN>, %w: tensor<4096x640xf8E4M3FN>, %sx: tensor<500x1xf32>, %sw: tensor<4096x1xf32>) -> (tensor<500x4096xf16>, f32) {
  %y, %a = fp8.scaled_matmul %x, %w scales %sx, %sw blocks [1, 640], [1, 640] {transpose_rhs} : tensor<500x640xf8E4M3FN>, tensor<4096x640xf8E4M3FN> scales tensor<500x1xf32>, tensor<4096x1xf32> -> tensor<500x4096xf16>, f32
  return %y, %a : tensor<500x4096xf16>, f32
}
// MXFP8, K = 200 (the last 32-deep block partial, the last stage's tail
// past K), f32 out.
func.func @mx_f32(%x: tensor<300x208xf8E4M3FN>, %w: tensor<256x208xf8E4M3FN>, %sx: tensor<300x7xf8E8M0FNU>, %sw: tensor<256x7xf8E8M0FNU>) -> tensor<300x256xf32> {
  %y = fp8.scaled_matmul %x, %w scales %sx, %sw blocks [1, 32], [1, 32] {transpose_rhs} : tensor<300x208xf8E4M3FN>, tensor<256x208xf8E4M3FN> scales tensor<300x7xf8E8M0FNU>, tensor<256x7xf8E8M0FNU> -> tensor<300x256xf32>
  return %y : tensor<300x256xf32>
}
// 1x128 x 1x128 (weight gradients), E5M2 gradients, bf16 out.
func.func @wgrad_e5m2(%dyt: tensor<300x1000xf8E5M2>, %xt: tensor<200x1000xf8E4M3FN>, %sa: tensor<300x8xf32>, %sb: tensor<200x8xf32>) -> tensor<300x200xbf16> {
  %y = fp8.scaled_matmul %dyt, %xt scales %sa, %sb blocks [1, 128], [1, 128] {transpose_rhs} : tensor<300x1000xf8E5M2>, tensor<200x1000xf8E4M3FN> scales tensor<300x8xf32>, tensor<200x8xf32> -> tensor<300x200xbf16>
  return %y : tensor<300x200xbf16>
}
