// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma -split-input-file | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma=promote=1 -split-input-file | FileCheck %s --check-prefix=PROMOTE
// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma=tma-store=1 -split-input-file | FileCheck %s --check-prefix=TMA

// The forward GEMM (rhs [N, K], transpose_rhs) is the natural layout: the op
// stays and names its kernel; 128x256 tiles for a large N.
// CHECK: gpu.module @fp8_gemm_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]
// CHECK: llvm.mlir.global external @fp8_gemm_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.func @scaled_matmul_e4m3_e4m3_bf16_128x256x128_s4(%{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier0
// Producer: fewer registers, TMA into the ring.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// Consumers: 4 x m64n256k32 per stage, one group in flight.
// CHECK: nvvm.setmaxregister increase 232
// K = 0 (dynamic, at run time): no K block; the epilogue gets a zero sum
// (the 128 f32 of a 64 x 256 accumulator).
// CHECK: %[[HASK:.+]] = arith.cmpi ugt, %{{.+}}, %c0_i32{{.*}} : i32
// CHECK-NEXT: scf.if %[[HASK]] -> (!llvm.struct<(f32, {{.*}})>, i32, i32) {
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: } else {
// CHECK-NEXT: llvm.mlir.undef
// CHECK-COUNT-128: llvm.insertvalue %{{.*}}[{{[0-9]+}}]
// CHECK-NEXT: scf.yield
// CHECK-NOT: llvm.intr.trap
// CHECK-LABEL: func.func @forward
// CHECK: fp8.scaled_matmul {{.*}} {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_bf16_128x256x128_s4, fp8.wgmma_tile = array<i64: 128, 256, 384, 197696>, transpose_rhs}
// Promotion: each stage's 4 wgmma start from zero, then add into f32.
// PROMOTE: llvm.func @scaled_matmul_e4m3_e4m3_bf16_promote_128x128x128_s7
// PROMOTE: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <zero>]
// PROMOTE-COUNT-3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <one>]
// PROMOTE: nvvm.wgmma.wait.group.sync.aligned 0
// PROMOTE: arith.addf
// TMA-store epilogue: the staged tile is written, fenced for the async
// proxy, and stored by one thread; fewer stages make room for it (3 x 48 KiB
// of operand tiles, then 2 x 64 x 256 bf16 of staging: barriers at 212992).
// TMA: llvm.func @scaled_matmul_e4m3_e4m3_bf16_tmastore_128x256x128_s3(
// TMA: arith.constant 212992 : i32
// TMA: nvvm.cp.async.bulk.wait_group 0 {read}
// TMA: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// Four 8x8 bf16 matrices per stmatrix (256 / 8 column blocks x 2 row halves
// / 4 = 16 per warp), each lane's row at a 128-byte swizzled offset within
// its 8 KiB panel: 16-byte chunk (col % 64) * 2 / 16 xor row % 8.
// TMA: %[[CHUNK:.+]] = arith.divui %{{.+}}, %c16_i32
// TMA: %[[ROW8:.+]] = arith.remui %{{.+}}, %c8_i32
// TMA: arith.xori %[[CHUNK]], %[[ROW8]] : i32
// TMA-COUNT-16: nvvm.stmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// TMA-NOT: nvvm.stmatrix
// TMA-NOT: llvm.store {{.*}} !llvm.ptr<3>
// TMA: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// TMA: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// One TMA store per 64-column panel that starts inside N.
// TMA: llvm.getelementptr %[[STAGING:.+]][%c0_i32{{[_0-9]*}}]
// TMA-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %arg12, %{{.*}}, box[
// TMA: arith.constant 64 : i32
// TMA: llvm.getelementptr %[[STAGING]][%c8192_i32{{[_0-9]*}}]
// TMA-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta
// TMA: arith.constant 128 : i32
// TMA: llvm.getelementptr %[[STAGING]][%c16384_i32{{[_0-9]*}}]
// TMA-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta
// TMA: arith.constant 192 : i32
// TMA: llvm.getelementptr %[[STAGING]][%c24576_i32{{[_0-9]*}}]
// TMA-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta
// TMA-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// TMA: nvvm.cp.async.bulk.commit.group
// TMA: nvvm.cp.async.bulk.wait_group 0
// TMA-NOT: {read}
// TMA-LABEL: func.func @forward
func.func @forward(%x: tensor<4096x4096xf8E4M3FN>, %w: tensor<14336x4096xf8E4M3FN>, %sx: f32, %sw: f32) -> tensor<4096x14336xbf16> {
  %y = fp8.scaled_matmul %x, %w scales %sx, %sw {transpose_rhs} : tensor<4096x4096xf8E4M3FN>, tensor<14336x4096xf8E4M3FN> -> tensor<4096x14336xbf16>
  return %y : tensor<4096x14336xbf16>
}

// -----

// Backward (dgrad): rhs W is [K, N] here; the GEMM reads the transposed copy
// that the same cast_transpose already writes.
// CHECK-LABEL: func.func @dgrad
// CHECK: %[[Q:.+]], %[[QT:.+]] = fp8.cast_transpose %arg1
// CHECK: fp8.scaled_matmul %arg0, %[[QT]] {{.*}} {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e5m2_e4m3_f32_128x128x128_s7, fp8.wgmma_tile = array<i64: 128, 128, 384, 230512>, transpose_rhs}
func.func @dgrad(%dy: tensor<256x512xf8E5M2>, %w: tensor<512x1024xf32>, %s: f32) -> (tensor<256x1024xf32>, tensor<1024x512xf8E4M3FN>) {
  %q, %qt = fp8.cast_transpose %w, %s : tensor<512x1024xf32> -> tensor<512x1024xf8E4M3FN>, tensor<1024x512xf8E4M3FN>
  %y = fp8.scaled_matmul %dy, %q scales %s, %s : tensor<256x512xf8E5M2>, tensor<512x1024xf8E4M3FN> -> tensor<256x1024xf32>
  return %y, %qt : tensor<256x1024xf32>, tensor<1024x512xf8E4M3FN>
}

// -----

// wgrad: lhs is [K, M] (transpose_lhs) from a quantize, which becomes a
// cast_transpose; small M (64 rows) gets 64x128 tiles and one consumer;
// K = 40 is padded to 48-byte rows.
// CHECK-LABEL: func.func @wgrad
// CHECK: %[[Q:.+]], %[[QT:.+]] = fp8.cast_transpose %arg0
// CHECK-NOT: fp8.quantize
// CHECK: fp8.scaled_matmul %[[QT]], %arg1 {{.*}} {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e5m2_e4m3_bf16_bias_f32_amax_64x128x128_s8, fp8.wgmma_pad_k = 48 : i64, fp8.wgmma_tile = array<i64: 64, 128, 256, 197760>, transpose_rhs}
func.func @wgrad(%x: tensor<40x64xf32>, %w: tensor<200x40xf8E4M3FN>, %s: f32, %b: tensor<200xf32>) -> (tensor<64x200xbf16>, f32) {
  %q = fp8.quantize %x, %s : tensor<40x64xf32> -> tensor<40x64xf8E5M2>
  %y, %a = fp8.scaled_matmul %q, %w scales %s, %s bias %b : tensor<200xf32> {transpose_lhs, transpose_rhs} : tensor<40x64xf8E5M2>, tensor<200x40xf8E4M3FN> -> tensor<64x200xbf16>, f32
  return %y, %a : tensor<64x200xbf16>, f32
}

// -----

// Batched lhs, shared weight, dynamic shapes: one generic kernel.
// CHECK-LABEL: func.func @batched
// CHECK: fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_f16_128x256x128_s4
// A dynamic N cannot promise 16-byte result rows: registers store it.
// TMA-LABEL: func.func @batched
// TMA: fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_f16_128x256x128_s4
func.func @batched(%x: tensor<?x?x1024xf8E4M3FN>, %w: tensor<?x1024xf8E4M3FN>, %s: f32) -> tensor<?x?x?xf16> {
  %y = fp8.scaled_matmul %x, %w scales %s, %s {transpose_rhs} : tensor<?x?x1024xf8E4M3FN>, tensor<?x1024xf8E4M3FN> -> tensor<?x?x?xf16>
  return %y : tensor<?x?x?xf16>
}

// -----

// Per-block scales (1x128 lhs, 128x128 rhs): the promotion kernel whatever
// the option, 128x128 tiles. Each K block's partial sum starts from zero;
// while its wgmma runs the thread reads rhs_scale[col / 128, kb] and
// lhs_scale[row, kb] for its two rows (rows past M clamped to M - 1), and
// promotes acc = fma(p, lhs * rhs, acc), the first block onto +0. The
// epilogue applies no per-tensor scale.
// CHECK-LABEL: llvm.func @scaled_matmul_e4m3_e4m3_f32_promote_blocks_128x128x128_s7(
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: arith.minui
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: arith.mulf
// CHECK: arith.minui
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: arith.mulf
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-64: math.fma
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-64: math.fma
// CHECK-NOT: math.fma
// CHECK: scf.yield
// CHECK-LABEL: func.func @blocks
// CHECK: fp8.scaled_matmul {{.*}} blocks [1, 128], [128, 128] {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_f32_promote_blocks_128x128x128_s7, fp8.wgmma_tile = array<i64: 128, 128, 384, 230512>, transpose_rhs}
// PROMOTE-LABEL: func.func @blocks
// PROMOTE: @scaled_matmul_e4m3_e4m3_f32_promote_blocks_128x128x128_s7
func.func @blocks(%a: tensor<256x1024xf8E4M3FN>, %b: tensor<512x1024xf8E4M3FN>,
                  %sa: tensor<256x8xf32>, %sb: tensor<4x8xf32>) -> tensor<256x512xf32> {
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 128], [128, 128] {transpose_rhs}
      : tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>
      scales tensor<256x8xf32>, tensor<4x8xf32> -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}

// -----

// Row-wise scales (one per row along all of K, torchao's rowwise): the
// plain kernel; the epilogue reads lhs_scale of the thread's two rows
// (clamped to M - 1) and rhs_scale of each column (clamped to N - 1), and
// stores fma(acc, f32(lhs * rhs), +0).
// CHECK-LABEL: llvm.func @scaled_matmul_e4m3_e4m3_bf16_rows_128x128x128_s7(
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: arith.minui
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: arith.minui
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: arith.minui
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: arith.minui
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: %[[F:.*]] = arith.mulf
// CHECK: math.fma %{{.*}}, %[[F]], %{{.*}} : f32
// CHECK-LABEL: func.func @rows
// CHECK: fp8.scaled_matmul {{.*}} blocks [1, 256], [1, 256] {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_bf16_rows_128x128x128_s7, fp8.wgmma_tile = array<i64: 128, 128, 384, 230512>, transpose_rhs}
func.func @rows(%a: tensor<256x256xf8E4M3FN>, %b: tensor<384x256xf8E4M3FN>,
                %sa: tensor<256x1xf32>, %sb: tensor<384x1xf32>) -> tensor<256x384xbf16> {
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 256], [1, 256] {transpose_rhs}
      : tensor<256x256xf8E4M3FN>, tensor<384x256xf8E4M3FN>
      scales tensor<256x1xf32>, tensor<384x1xf32> -> tensor<256x384xbf16>
  return %y : tensor<256x384xbf16>
}

// -----

// MXFP8 (1x32 blocks, E8M0 scales on both operands): the promotion kernel
// with every wgmma k32 step its own commit group from zero, waited for and
// promoted before the next: the row and column codes (bytes, the columns'
// packed four to a register, decoded: 0 -> 2^-127, 0xFF -> NaN) multiply
// into one factor per element, 0 for a 32-deep block past K. 64-column
// tiles: 32 accumulators per thread.
// CHECK-LABEL: llvm.func @scaled_matmul_e4m3_e4m3_bf16_promote_mx_128x64x128_s{{[0-9]}}(
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// CHECK: arith.constant 4194304 : i32
// CHECK: arith.select
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-32: math.fma
// CHECK-NOT: math.fma
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-LABEL: func.func @mx
// CHECK: fp8.scaled_matmul {{.*}} blocks [1, 32], [1, 32] {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_bf16_promote_mx_128x64x128_s8, fp8.wgmma_tile = array<i64: 128, 64, 384, 197760>, transpose_rhs}
func.func @mx(%a: tensor<256x256xf8E4M3FN>, %b: tensor<384x256xf8E4M3FN>,
              %sa: tensor<256x8xf8E8M0FNU>, %sb: tensor<384x8xf8E8M0FNU>) -> tensor<256x384xbf16> {
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 32], [1, 32] {transpose_rhs}
      : tensor<256x256xf8E4M3FN>, tensor<384x256xf8E4M3FN>
      scales tensor<256x8xf8E8M0FNU>, tensor<384x8xf8E8M0FNU> -> tensor<256x384xbf16>
  return %y : tensor<256x384xbf16>
}

// -----

// 1x128 blocks on both operands (the weight gradient dY^T X, K = tokens;
// DeepGEMM's 1d1d): per K block the thread reads its two rows' and its 16
// columns' scales (64-column tiles) while the wgmma runs, and promotes each
// element with f32(row * column).
// CHECK-LABEL: llvm.func @scaled_matmul_e4m3_e4m3_f32_promote_blocks1d1d_128x64x128_s{{[0-9]}}(
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-18: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-32: math.fma
// CHECK-LABEL: func.func @wgrad
// CHECK: fp8.scaled_matmul {{.*}} blocks [1, 128], [1, 128] {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_f32_promote_blocks1d1d_128x64x128_s8, fp8.wgmma_tile = array<i64: 128, 64, 384, 197760>, transpose_rhs}
func.func @wgrad(%dyt: tensor<256x1024xf8E4M3FN>, %xt: tensor<512x1024xf8E4M3FN>,
                 %sa: tensor<256x8xf32>, %sb: tensor<512x8xf32>) -> tensor<256x512xf32> {
  %y = fp8.scaled_matmul %dyt, %xt scales %sa, %sb blocks [1, 128], [1, 128] {transpose_rhs}
      : tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>
      scales tensor<256x8xf32>, tensor<512x8xf32> -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}
