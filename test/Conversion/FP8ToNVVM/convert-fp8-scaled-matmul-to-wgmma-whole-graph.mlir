// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma=whole-graph -split-input-file | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma="whole-graph f32-contractions=tf32" -split-input-file | FileCheck %s --check-prefix=TF32
// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma="whole-graph f32-contractions=none" -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: not fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma="whole-graph f32-contractions=fp32" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: f32-contractions='fp32' is none of 3xtf32, tf32, none

// whole-graph (fp8-lower-to-gpu): what wgmma-invalid.mlir refuses in a
// GEMM-only program is planned in a whole one. An operand in the wrong
// orientation with no cast_transpose copy gets a transposed copy of its
// bytes (exact for FP8); the GEMM then names its kernel.

// CHECK-LABEL: func.func @rhs_n_major
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x32xf8E4M3FN>
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg1 : tensor<32x64xf8E4M3FN>) outs(%[[E]] : tensor<64x32xf8E4M3FN>) permutation = [1, 0]
// CHECK: fp8.scaled_matmul %arg0, %[[T]] {{.*}} {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_f32_64x128x128_s8, {{.*}}transpose_rhs}
func.func @rhs_n_major(%a: tensor<64x32xf8E4M3FN>, %b: tensor<32x64xf8E4M3FN>, %s: f32) -> tensor<64x64xf32> {
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A batched lhs in [B, K, M]: the last two dimensions swapped, dynamic
// sizes carried.
// CHECK-LABEL: func.func @batched_lhs_m_major
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[M:.*]] = tensor.dim %arg0, %[[C2]]
// CHECK-DAG: %[[B:.*]] = tensor.dim %arg0, %{{.*}}
// CHECK-DAG: %[[K:.*]] = tensor.dim %arg0, %[[C1]]
// CHECK: %[[E:.*]] = tensor.empty(%[[B]], %[[M]], %[[K]]) : tensor<?x?x?xf8E4M3FN>
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<?x?x?xf8E4M3FN>) outs(%[[E]] : tensor<?x?x?xf8E4M3FN>) permutation = [0, 2, 1]
// CHECK: fp8.scaled_matmul %[[T]], %arg1 {{.*}}fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_bf16_128x128x128_s7
// CHECK-NOT: transpose_lhs
func.func @batched_lhs_m_major(%a: tensor<?x?x?xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %s: f32) -> tensor<?x?x64xbf16> {
  %0 = fp8.scaled_matmul %a, %b scales %s, %s {transpose_lhs, transpose_rhs}
      : tensor<?x?x?xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<?x?x64xbf16>
  return %0 : tensor<?x?x64xbf16>
}

// -----

// A block form no kernel applies is left as it is (it lowers with the rest
// of the program), without a diagnostic.
// CHECK-LABEL: func.func @k64_blocks
// CHECK: fp8.scaled_matmul {{.*}} blocks [1, 64], [1, 64] {transpose_rhs}
func.func @k64_blocks(%a: tensor<64x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                      %sa: tensor<64x4xf32>, %sb: tensor<128x4xf32>) -> tensor<64x128xf32> {
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 64], [1, 64] {transpose_rhs}
      : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>
      scales tensor<64x4xf32>, tensor<128x4xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// High-precision contractions get the 16-bit wgmma kernel (BK = 64, k16
// instructions, f32 accumulation, no scales). Attention's P x V: V is
// [b, K, N], copied to [b, N, K]; 16 rows per batch: 64-row tiles, 8
// stages of (64 + 128) x 128 bytes: 1024 + 8 x 24576 + 8 x 16 = 197760
// bytes of shared memory.
// CHECK-LABEL: func.func @attention_pv
// CHECK: %[[VT:.*]] = linalg.transpose ins(%arg1 : tensor<4x32x16xbf16>) outs(%{{.*}} : tensor<4x16x32xbf16>) permutation = [0, 2, 1]
// CHECK: linalg.generic {indexing_maps = [#[[A:.*]], #[[B:.*]], #[[C:.*]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %[[VT]] : tensor<4x16x32xbf16>, tensor<4x16x32xbf16>)
// CHECK-SAME: fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_bf16_bf16_bf16_64x128x64_s8, fp8.wgmma_tile = array<i64: 64, 128, 256, 197760>
// CHECK-NOT: linalg.batch_matmul
func.func @attention_pv(%p: tensor<4x16x32xbf16>, %v: tensor<4x32x16xbf16>) -> tensor<4x16x16xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x16x16xbf16>
  %i = linalg.fill ins(%z : bf16) outs(%e : tensor<4x16x16xbf16>) -> tensor<4x16x16xbf16>
  %y = linalg.batch_matmul ins(%p, %v : tensor<4x16x32xbf16>, tensor<4x32x16xbf16>)
                           outs(%i : tensor<4x16x16xbf16>) -> tensor<4x16x16xbf16>
  return %y : tensor<4x16x16xbf16>
}

// -----

// A shared weight [K, N] (no batch dimensions on the rhs), f32 result,
// K = 20: 40-byte rows padded to 24 elements (48 bytes); 256 rows: 128x128
// tiles, 7 stages of 256 x 128 bytes: 1024 + 7 x 32768 + 7 x 16 = 230512.
// CHECK-LABEL: func.func @projection
// CHECK: linalg.transpose ins(%arg1 : tensor<20x512xf16>) outs(%{{.*}} : tensor<512x20xf16>) permutation = [1, 0]
// CHECK: linalg.generic
// CHECK-SAME: fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_f16_f16_f32_128x128x64_s7, fp8.wgmma_pad_k = 24 : i64, fp8.wgmma_tile = array<i64: 128, 128, 384, 230512>
func.func @projection(%x: tensor<256x20xf16>, %w: tensor<20x512xf16>) -> tensor<256x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %y = linalg.matmul ins(%x, %w : tensor<256x20xf16>, tensor<20x512xf16>)
                     outs(%i : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}

// -----

// A [B, S, K] activation times an unbatched [K, N] weight:
// inferContractionDims counts B as a second M dimension; B and S are
// collapsed into one M = 128 ([128, 32] x [48, 32] -> [128, 48]) and the
// result expanded back. 128 rows: 128x128 tiles, 7 stages (230512 bytes,
// as in @projection), 384 threads; K = 32: 64-byte rows, no pad.
// CHECK-LABEL: func.func @unbatched_weight
// CHECK: %[[X2:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x64x32xbf16> into tensor<128x32xbf16>
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<32x48xbf16>) outs(%{{.*}} : tensor<48x32xbf16>) permutation = [1, 0]
// CHECK: %[[Z2:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x64x48xf32> into tensor<128x48xf32>
// CHECK: %[[Y2:.*]] = linalg.generic {{.*}} ins(%[[X2]], %[[WT]] : tensor<128x32xbf16>, tensor<48x32xbf16>) outs(%[[Z2]] : tensor<128x48xf32>)
// CHECK-SAME: fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_bf16_bf16_f32_128x128x64_s7, fp8.wgmma_tile = array<i64: 128, 128, 384, 230512>
// CHECK: %[[Y:.*]] = tensor.expand_shape %[[Y2]] {{\[\[}}0, 1], [2]] output_shape [2, 64, 48] : tensor<128x48xf32> into tensor<2x64x48xf32>
// CHECK: return %[[Y]]
#lhs3 = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs2 = affine_map<(b, m, n, k) -> (k, n)>
#out3 = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @unbatched_weight(%x: tensor<2x64x32xbf16>, %w: tensor<32x48xbf16>) -> tensor<2x64x48xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x48xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<2x64x48xf32>) -> tensor<2x64x48xf32>
  %y = linalg.generic {indexing_maps = [#lhs3, #rhs2, #out3],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x64x32xbf16>, tensor<32x48xbf16>) outs(%i : tensor<2x64x48xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %p = arith.mulf %a32, %b32 : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x64x48xf32>
  return %y : tensor<2x64x48xf32>
}

// -----

// A contraction into a non-zero init (the kernel stores, it does not
// accumulate): the product into a zero f32 result on the kernel, then
// init + product in f32, rounded once to bf16. 64 rows: 64x128 tiles, 8
// stages, 197760 bytes as in @attention_pv; K = 32: 64-byte rows, no pad.
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x64xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<64x64xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<64x32xbf16>, tensor<64x32xbf16>) outs(%[[F]] : tensor<64x64xf32>)
// CHECK-SAME: fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_bf16_bf16_f32_64x128x64_s8, fp8.wgmma_tile = array<i64: 64, 128, 256, 197760>
// CHECK: ^bb0(%[[PA:.*]]: bf16, %[[PB:.*]]: bf16, %[[PC:.*]]: f32):
// CHECK: %[[WA:.*]] = arith.extf %[[PA]] : bf16 to f32
// CHECK: %[[WB:.*]] = arith.extf %[[PB]] : bf16 to f32
// CHECK: %[[PR:.*]] = arith.mulf %[[WA]], %[[WB]] : f32
// CHECK: %[[PS:.*]] = arith.addf %[[PC]], %[[PR]] : f32
// CHECK: linalg.yield %[[PS]] : f32
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%arg2, %[[P]] : tensor<64x64xbf16>, tensor<64x64xf32>)
// CHECK: ^bb0(%[[C:.*]]: bf16, %[[Q:.*]]: f32, %{{.*}}: bf16):
// CHECK: %[[CW:.*]] = arith.extf %[[C]] : bf16 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[CW]], %[[Q]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK: linalg.yield %[[R]] : bf16
// CHECK: return %[[S]]
// CHECK-NOT: linalg.matmul
func.func @accumulate(%x: tensor<64x32xbf16>, %w: tensor<32x64xbf16>, %acc: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %y = linalg.matmul ins(%x, %w : tensor<64x32xbf16>, tensor<32x64xbf16>)
                     outs(%acc : tensor<64x64xbf16>) -> tensor<64x64xbf16>
  return %y : tensor<64x64xbf16>
}

// -----

// An f32 contraction: by default each operand split into tf32 terms along
// a tripled K (lhs lo, hi, hi; rhs hi, lo, hi: the small terms first). hi
// is x rounded to 10 mantissa bits: (bits + 0x1000) & 0xFFFFE000 (4096,
// -8192), or bits & 0xFFFFE000 where x or that is Inf / NaN (exponent bits
// 0x7F800000 = 2139095040 all ones), the quiet NaN 0x7FC00000 for a NaN;
// lo = x - hi for finite x, else 0. Then the tf32 kernel: BK = 128 / 4 =
// 32, 8 rows: 64x128 tiles, 8 stages (197760 bytes); K = 3 x 8 = 24:
// 96-byte rows, no pad. With f32-contractions=tf32 the operands go as they
// are (K = 8); with none the contraction stays.
// CHECK-LABEL: func.func @f32_contraction
// CHECK: %[[BT:.*]] = linalg.transpose ins(%arg1 : tensor<8x8xf32>)
// CHECK: %[[AE:.*]] = tensor.empty() : tensor<8x3x8xf32>
// CHECK: %[[AS:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x8xf32>) outs(%[[AE]] : tensor<8x3x8xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[MASK:.*]] = arith.constant -8192 : i32
// CHECK-DAG: %[[EXP:.*]] = arith.constant 2139095040 : i32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-DAG: %[[LOC:.*]] = arith.constant 0 : index
// CHECK: %[[XB:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[HALF:.*]] = arith.constant 4096 : i32
// CHECK: %[[UP:.*]] = arith.addi %[[XB]], %[[HALF]] : i32
// CHECK: %[[RB:.*]] = arith.andi %[[UP]], %[[MASK]] : i32
// CHECK: %[[TB:.*]] = arith.andi %[[XB]], %[[MASK]] : i32
// CHECK: %[[XE:.*]] = arith.andi %[[XB]], %[[EXP]] : i32
// CHECK: %[[FIN:.*]] = arith.cmpi ne, %[[XE]], %[[EXP]] : i32
// CHECK: %[[RE:.*]] = arith.andi %[[RB]], %[[EXP]] : i32
// CHECK: %[[RFIN:.*]] = arith.cmpi ne, %[[RE]], %[[EXP]] : i32
// CHECK: %[[USE:.*]] = arith.andi %[[FIN]], %[[RFIN]] : i1
// CHECK: %[[ISNAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[HB:.*]] = arith.select %[[USE]], %[[RB]], %[[TB]] : i32
// CHECK: %[[HF:.*]] = arith.bitcast %[[HB]] : i32 to f32
// CHECK: %[[HI:.*]] = arith.select %[[ISNAN]], %[[NAN]], %[[HF]] : f32
// CHECK: %[[DIFF:.*]] = arith.subf %[[X]], %[[HI]] : f32
// CHECK: %[[LO:.*]] = arith.select %[[FIN]], %[[DIFF]], %[[ZERO]] : f32
// CHECK: %[[COPY:.*]] = linalg.index 1 : index
// CHECK: %[[ISLO:.*]] = arith.cmpi eq, %[[COPY]], %[[LOC]] : index
// CHECK: arith.select %[[ISLO]], %[[LO]], %[[HI]] : f32
// CHECK: %[[A3:.*]] = tensor.collapse_shape %[[AS]] {{\[\[}}0], [1, 2]] : tensor<8x3x8xf32> into tensor<8x24xf32>
// CHECK: linalg.generic {{.*}} ins(%[[BT]] : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x3x8xf32>)
// CHECK: arith.constant 1 : index
// CHECK: linalg.index 1 : index
// CHECK: %[[B3:.*]] = tensor.collapse_shape
// CHECK: linalg.generic {{.*}} ins(%[[A3]], %[[B3]] : tensor<8x24xf32>, tensor<8x24xf32>)
// CHECK-SAME: fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_f32_f32_f32_64x128x32_s8, fp8.wgmma_tile = array<i64: 64, 128, 256, 197760>
// CHECK-NOT: fp8.wgmma_pad_k
// TF32-LABEL: func.func @f32_contraction
// TF32-NOT: tensor.collapse_shape
// TF32: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)
// TF32-SAME: fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_f32_f32_f32_64x128x32_s8
// NONE-LABEL: func.func @f32_contraction
// NONE: linalg.matmul ins(%arg0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>)
// NONE-NEXT: return
func.func @f32_contraction(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %z = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<8x8xf32>
  %i8 = linalg.fill ins(%z : f32) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %f = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>)
                     outs(%i8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %f : tensor<8x8xf32>
}

// -----

// Block-scaled operands in the wrong orientation (what wgmma-invalid.mlir
// refuses in a GEMM-only program): the data gradient's weight [K, N] in
// 128x128 blocks becomes a copy [N, K] of its bytes with its scales
// transposed alike ([2, 1] -> [1, 2]), blocks [128, 128]; the weight
// gradient's [K, M] and [K, N] operands (K = tokens, blocks [128, 1]
// along it) become [M, K] and [N, K] in [1, 128] blocks: DeepGEMM's 1d1d.
// CHECK-LABEL: func.func @dgrad_blocks
// CHECK: %[[BT:.*]] = linalg.transpose ins(%arg1 : tensor<256x128xf8E4M3FN>) outs(%{{.*}} : tensor<128x256xf8E4M3FN>) permutation = [1, 0]
// CHECK: %[[ST:.*]] = linalg.transpose ins(%arg3 : tensor<2x1xf32>) outs(%{{.*}} : tensor<1x2xf32>) permutation = [1, 0]
// CHECK: fp8.scaled_matmul %arg0, %[[BT]] scales %arg2, %[[ST]] blocks [1, 128], [128, 128] {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_f32_promote_blocks_64x128x128_s8, {{.*}}transpose_rhs}
func.func @dgrad_blocks(%a: tensor<64x256xf8E4M3FN>, %b: tensor<256x128xf8E4M3FN>,
                        %sa: tensor<64x2xf32>, %sb: tensor<2x1xf32>) -> tensor<64x128xf32> {
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 128], [128, 128]
      : tensor<64x256xf8E4M3FN>, tensor<256x128xf8E4M3FN>
      scales tensor<64x2xf32>, tensor<2x1xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// CHECK-LABEL: func.func @wgrad_blocks
// CHECK: %[[AT:.*]] = linalg.transpose ins(%arg0 : tensor<256x64xf8E4M3FN>) outs(%{{.*}} : tensor<64x256xf8E4M3FN>) permutation = [1, 0]
// CHECK: %[[SAT:.*]] = linalg.transpose ins(%arg2 : tensor<2x64xf32>) outs(%{{.*}} : tensor<64x2xf32>) permutation = [1, 0]
// CHECK: %[[BT:.*]] = linalg.transpose ins(%arg1 : tensor<256x96xf8E5M2>) outs(%{{.*}} : tensor<96x256xf8E5M2>) permutation = [1, 0]
// CHECK: %[[SBT:.*]] = linalg.transpose ins(%arg3 : tensor<2x96xf32>) outs(%{{.*}} : tensor<96x2xf32>) permutation = [1, 0]
// CHECK: fp8.scaled_matmul %[[AT]], %[[BT]] scales %[[SAT]], %[[SBT]] blocks [1, 128], [1, 128] {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e5m2_f32_promote_blocks1d1d_64x64x128_s8,
// CHECK-NOT: transpose_lhs
func.func @wgrad_blocks(%x: tensor<256x64xf8E4M3FN>, %dy: tensor<256x96xf8E5M2>,
                        %sx: tensor<2x64xf32>, %sdy: tensor<2x96xf32>) -> tensor<64x96xf32> {
  %y = fp8.scaled_matmul %x, %dy scales %sx, %sdy blocks [128, 1], [128, 1] {transpose_lhs}
      : tensor<256x64xf8E4M3FN>, tensor<256x96xf8E5M2>
      scales tensor<2x64xf32>, tensor<2x96xf32> -> tensor<64x96xf32>
  return %y : tensor<64x96xf32>
}

// -----

// A weight-gradient operand that a block cast of x made for this GEMM only
// (what fp8-quantize emits for granularity=block): the same cast of x^T
// with the blocks swapped, so that fp8-lower-to-gpu reads x once and writes
// the K-major copy (block_cast_transpose); the [128, 1] cast is gone. dY's
// cast also feeds another GEMM: its bytes and scales are transposed.
// CHECK-LABEL: func.func @wgrad_recast
// CHECK-SAME: (%[[X:.*]]: tensor<256x64xbf16>, %[[DY:.*]]: tensor<256x96xf8E5M2>, %[[SDY:.*]]: tensor<2x96xf32>
// CHECK-NOT: fp8.block_amax %[[X]]
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]] : tensor<256x64xbf16>) outs(%{{.*}} : tensor<64x256xbf16>) permutation = [1, 0]
// CHECK: %[[A:.*]] = fp8.block_amax %[[XT]] block [1, 128] : tensor<64x256xbf16> -> tensor<64x2xf32>
// CHECK: %[[S:.*]], %[[SI:.*]] = fp8.compute_block_scales %[[A]] for f8E4M3FN {power_of_two} : tensor<64x2xf32> -> tensor<64x2xf32>, tensor<64x2xf32>
// CHECK: %[[Q:.*]] = fp8.quantize %[[XT]], %[[S]] block [1, 128] : tensor<64x256xbf16> scales tensor<64x2xf32> -> tensor<64x256xf8E4M3FN>
// CHECK: %[[DYT:.*]] = linalg.transpose ins(%[[DY]] : tensor<256x96xf8E5M2>)
// CHECK: %[[SDYT:.*]] = linalg.transpose ins(%[[SDY]] : tensor<2x96xf32>)
// CHECK: fp8.scaled_matmul %[[Q]], %[[DYT]] scales %[[SI]], %[[SDYT]] blocks [1, 128], [1, 128] {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e5m2_f32_promote_blocks1d1d_
// CHECK-NOT: fp8.block_amax %[[X]]
func.func @wgrad_recast(%x: tensor<256x64xbf16>, %dy: tensor<256x96xf8E5M2>,
                        %sdy: tensor<2x96xf32>) -> (tensor<64x96xf32>, tensor<96x96xf32>) {
  %a = fp8.block_amax %x block [128, 1] : tensor<256x64xbf16> -> tensor<2x64xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two}
      : tensor<2x64xf32> -> tensor<2x64xf32>, tensor<2x64xf32>
  %q = fp8.quantize %x, %s block [128, 1] : tensor<256x64xbf16> scales tensor<2x64xf32> -> tensor<256x64xf8E4M3FN>
  %y = fp8.scaled_matmul %q, %dy scales %si, %sdy blocks [128, 1], [128, 1] {transpose_lhs}
      : tensor<256x64xf8E4M3FN>, tensor<256x96xf8E5M2>
      scales tensor<2x64xf32>, tensor<2x96xf32> -> tensor<64x96xf32>
  %z = fp8.scaled_matmul %dy, %dy scales %sdy, %sdy blocks [128, 1], [128, 1] {transpose_lhs}
      : tensor<256x96xf8E5M2>, tensor<256x96xf8E5M2>
      scales tensor<2x96xf32>, tensor<2x96xf32> -> tensor<96x96xf32>
  return %y, %z : tensor<64x96xf32>, tensor<96x96xf32>
}

// -----

// A 128x128 weight cast the forward GEMM reads too keeps its one cast; the
// data gradient gets a transpose of its bytes and scales.
// CHECK-LABEL: func.func @dgrad_shared_weight
// CHECK-COUNT-1: fp8.block_amax
// CHECK: linalg.transpose ins(%{{.*}} : tensor<256x128xf8E4M3FN>)
func.func @dgrad_shared_weight(%w: tensor<256x128xf32>, %x: tensor<64x128xf8E4M3FN>, %sx: tensor<64x1xf32>,
                               %dy: tensor<64x256xf8E4M3FN>, %sdy: tensor<64x2xf32>)
    -> (tensor<64x256xf32>, tensor<64x128xf32>) {
  %a = fp8.block_amax %w block [128, 128] : tensor<256x128xf32> -> tensor<2x1xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two}
      : tensor<2x1xf32> -> tensor<2x1xf32>, tensor<2x1xf32>
  %q = fp8.quantize %w, %s block [128, 128] : tensor<256x128xf32> scales tensor<2x1xf32> -> tensor<256x128xf8E4M3FN>
  %y = fp8.scaled_matmul %x, %q scales %sx, %si blocks [1, 128], [128, 128] {transpose_rhs}
      : tensor<64x128xf8E4M3FN>, tensor<256x128xf8E4M3FN>
      scales tensor<64x1xf32>, tensor<2x1xf32> -> tensor<64x256xf32>
  %dx = fp8.scaled_matmul %dy, %q scales %sdy, %si blocks [1, 128], [128, 128]
      : tensor<64x256xf8E4M3FN>, tensor<256x128xf8E4M3FN>
      scales tensor<64x2xf32>, tensor<2x1xf32> -> tensor<64x128xf32>
  return %y, %dx : tensor<64x256xf32>, tensor<64x128xf32>
}

// -----

// A 128x128 cast only the data gradient reads is not recast either: the
// transposing kernel takes blocks down the columns only, and transposing
// its bytes moves one byte per element where x^T would move four.
// CHECK-LABEL: func.func @dgrad_only_weight
// CHECK-NOT: linalg.transpose ins(%{{.*}} : tensor<256x128xf32>)
// CHECK: fp8.block_amax %arg0 block [128, 128]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<256x128xf8E4M3FN>)
func.func @dgrad_only_weight(%w: tensor<256x128xf32>, %dy: tensor<64x256xf8E4M3FN>, %sdy: tensor<64x2xf32>)
    -> tensor<64x128xf32> {
  %a = fp8.block_amax %w block [128, 128] : tensor<256x128xf32> -> tensor<2x1xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two}
      : tensor<2x1xf32> -> tensor<2x1xf32>, tensor<2x1xf32>
  %q = fp8.quantize %w, %s block [128, 128] : tensor<256x128xf32> scales tensor<2x1xf32> -> tensor<256x128xf8E4M3FN>
  %dx = fp8.scaled_matmul %dy, %q scales %sdy, %si blocks [1, 128], [128, 128]
      : tensor<64x256xf8E4M3FN>, tensor<256x128xf8E4M3FN>
      scales tensor<64x2xf32>, tensor<2x1xf32> -> tensor<64x128xf32>
  return %dx : tensor<64x128xf32>
}

// -----

// RoPE's outer product (buddy-mlir's DeepSeek-R1 export): K = 1, split
// into 3xTF32's K = 3 (hi, lo and hi parts), padded to 4 elements: 16-byte
// rows of f32 (not 8 elements, as for 16-bit types). The module as
// fp8-pipeline leaves it: with the fp8 dialect loaded, its verifier checks
// the padding.
// CHECK-LABEL: func.func @rope_outer_product
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x64x3xf32>, tensor<1x40x3xf32>)
// CHECK-SAME: fp8.wgmma_pad_k = 4 : i64
// TF32-LABEL: func.func @rope_outer_product
// TF32: linalg.generic {{.*}} ins(%arg0, %{{.+}} : tensor<1x64x1xf32>, tensor<1x40x1xf32>)
// TF32-SAME: fp8.wgmma_pad_k = 4 : i64
module attributes {fp8.recipe = #fp8.recipe<>} {
  func.func @rope_outer_product(%f: tensor<1x64x1xf32>, %t: tensor<1x1x40xf32>) -> tensor<1x64x40xf32> {
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x64x40xf32>
    %i = linalg.fill ins(%z : f32) outs(%e : tensor<1x64x40xf32>) -> tensor<1x64x40xf32>
    %y = linalg.batch_matmul ins(%f, %t : tensor<1x64x1xf32>, tensor<1x1x40xf32>)
                             outs(%i : tensor<1x64x40xf32>) -> tensor<1x64x40xf32>
    return %y : tensor<1x64x40xf32>
  }
}
