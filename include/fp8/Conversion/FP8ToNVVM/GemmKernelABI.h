//===- GemmKernelABI.h - The FP8 wgmma GEMM kernels' launch contract -*- C++ -*-===//
//
// What convert-fp8-scaled-matmul-to-wgmma generates and what a host that
// launches the GEMM kernels without MLIR (bench/gpu, fp8-run) must agree on:
// kernel names, tile selection, parameters, launch geometry and the tensor
// maps. Header-only, no MLIR dependency (KernelABI.h's conventions).
//
// Kernel `scaled_matmul_<a>_<b>_<out>[_bias_<t>][_amax][_promote]
//         [_blocks|_blocks1d1d|_rows|_mx][_tmastore]_<BM>x<BN>x<BK>_s<S>`
// computes, for every batch b:
//   out[b, m, n] = convert(sum_k f32(A[b, m, k]) * f32(B[b', n, k])
//                          * lhs_scale_inv * rhs_scale_inv + bias[n])
// With bf16 or f16 operands (<a> = <b> = bf16 | f16, BK = 64: a
// high-precision GEMM of the graph, accumulated in f32 as cuBLAS does)
// there are no scales: the scale pointers are not read.
// with b' = rhs_batched ? b : 0. A is [batch, M, K] and B [batch', N, K],
// both K-major (row-major with K innermost), out is [batch, M, N] row-major.
// Parameters, in order:
//   0 tmA   CUtensorMap (128 bytes, 64-byte aligned), __grid_constant__:
//           UINT8 (UINT16 for 16-bit operands), 3-D {K, M, batch}, strides
//           {pitchA, pitchA * M} bytes, box {BK, BM, 1}, SWIZZLE_128B, OOB
//           fill zeros (FLOAT_OOB_FILL_NONE)
//   1 tmB   CUtensorMap likewise: {K, N, batch'}, box {BK, BN, 1}
//   2 out          device pointer
//   3 lhs_scale_inv, 4 rhs_scale_inv   device pointers to one f32 each;
//           for `_blocks` kernels, to the per-block scale_invs (f32) in the
//           dialect's block layout: lhs [batch, M, ceil(K/128)] (1x128
//           blocks), rhs [batch', ceil(N/128), ceil(K/128)] (128x128 blocks),
//           and per 128-deep K block kb the partial sum p is promoted as
//           acc = fma(p, f32(lhs_scale_inv[m, kb] * rhs_scale_inv[n/128, kb]),
//           acc) (fp8.scaled_matmul's block form; no per-tensor scale);
//           `_blocks1d1d`: rhs in 1x128 blocks too, [batch', N, ceil(K/128)],
//           rhs_scale_inv[n, kb];
//           for `_rows` kernels, to one scale_inv per row along K: lhs
//           [batch, M], rhs [batch', N], applied in the epilogue as
//           fma(acc, f32(lhs_scale_inv[m] * rhs_scale_inv[n]), +0);
//           for `_mx` kernels, to E8M0 codes (one byte) per 32 elements of
//           K: lhs [batch, M, ceil(K/32)], rhs [batch', N, ceil(K/32)], each
//           wgmma k32 step's partial sum promoted as fma(p, f32(2^(a-127) *
//           2^(b-127)), acc)
//   5 bias         device pointer (N elements) or 0 when the kernel has none
//   6 amax         device pointer to one f32, zeroed before the launch, or 0
//   7 M, 8 N, 9 K, 10 batch, 11 rhs_batched (0 or 1)      i32; with K = 0
//           (a dynamic K at run time; fp8-quantize keeps a static one out
//           of FP8: zero_sized) nothing is loaded and the result is the
//           epilogue of a zero sum: the bias, or zeros; the tensor maps
//           must still describe one element (TMA's rule)
//  12 tmOut CUtensorMap of the result, read only by `_tmastore` kernels:
//           UINT16 (bf16/f16) or UINT32 (f32), 3-D {N, M, batch}, strides
//           {N, N * M} elements in bytes, box {stagedColumns(out), 64, 1}
//           (one 128-byte panel of the staged tile, stagedByteOffset),
//           SWIZZLE_128B; N times the element size must be a multiple of
//           16 bytes
// Grid: persistentGridSize(); block: threads(); dynamic shared memory:
// sharedBytes() (needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
// which includes kAlignSlack: the kernel aligns its base to 1024 bytes.
// The pitch of A and B rows must be a multiple of 16 bytes (a TMA rule); a
// K that is not is handled by copying the operands into rows padded with
// zeros: the tensor map still says K, so the padding is never read.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TONVVM_GEMMKERNELABI_H
#define FP8_CONVERSION_FP8TONVVM_GEMMKERNELABI_H

#include <algorithm>
#include <cstdint>
#include <string>

namespace mlir::fp8::gemm_abi {

/// Name of the gpu.module that holds the GEMM kernels.
inline constexpr const char *kGemmModuleName = "fp8_gemm_kernels";
/// Name of the dynamic shared memory symbol of the GEMM kernels.
inline constexpr const char *kSharedMemoryName = "fp8_gemm_smem";

/// Parameter indices.
enum Param : unsigned {
  kTensorMapA = 0,
  kTensorMapB,
  kOut,
  kLhsScaleInv,
  kRhsScaleInv,
  kBias,
  kAmax,
  kM,
  kN,
  kK,
  kBatch,
  kRhsBatched,
  kTensorMapOut,
  kNumParams
};

enum class Elem { None, E4M3, E5M2, F32, BF16, F16 };

inline const char *tag(Elem e) {
  switch (e) {
  case Elem::E4M3:
    return "e4m3";
  case Elem::E5M2:
    return "e5m2";
  case Elem::F32:
    return "f32";
  case Elem::BF16:
    return "bf16";
  case Elem::F16:
    return "f16";
  case Elem::None:
    break;
  }
  return "";
}

inline int bytes(Elem e) {
  return e == Elem::F32 ? 4 : e == Elem::None ? 0 : e == Elem::BF16 || e == Elem::F16 ? 2 : 1;
}

/// The K extent of an FP8 stage and of the block-scaled recipes' blocks:
/// 128 elements, one 128-byte swizzle span of FP8.
inline constexpr int kBlockK = 128;
/// Bytes of one shared-memory row of a tile (every operand type): the
/// 128-byte swizzle span; BK = kRowBytes / element bytes.
inline constexpr int kRowBytes = 128;
/// Threads of a warpgroup; one producer warpgroup, BM/64 consumers.
inline constexpr int kWarpgroup = 128;
/// Registers after setmaxnreg: the producer only issues TMA copies.
inline constexpr int kProducerRegisters = 40;
inline constexpr int kConsumerRegisters = 232;
/// Row tiles per band of the persistent tile order: tile t of a batch is
/// row tile first + (t % span) % rows, column tile (t % span) / rows, with
/// span = kRasterGroup * tilesN, first = t / span * kRasterGroup and rows =
/// min(tilesM - first, kRasterGroup).
inline constexpr int kRasterGroup = 8;
/// Usable shared memory of an H100/H200 block (227 KiB).
inline constexpr int kMaxSharedBytes = 227 * 1024;
/// Slack to align the dynamic shared memory base to 1024 bytes (the
/// 128-byte swizzle pattern repeats every 8 rows of 128 bytes).
inline constexpr int kAlignSlack = 1024;

struct GemmConfig {
  Elem lhs = Elem::E4M3, rhs = Elem::E4M3, out = Elem::BF16;
  Elem bias = Elem::None;
  bool amax = false;
  /// Add the wgmma partial sums of every BK block (4 wgmma k32) into a
  /// separate f32 accumulator.
  bool promote = false;
  /// Per-block scales (1x128 lhs, 128x128 rhs): every BK block's partial
  /// sum is promoted with its scales. Implies promote and BN = 128.
  bool blockScaled = false;
  /// With blockScaled: 1x128 rhs blocks too (one scale per column and K
  /// block: the weight gradient's dY^T x X, DeepGEMM's 1d1d). BN = 64.
  bool rhsRowBlocks = false;
  /// Row-wise scales (one per row of A and of B along all of K), applied
  /// in the epilogue.
  bool rowScaled = false;
  /// MXFP8: E8M0 scales per 32 elements of K on both operands, every wgmma
  /// k32 step promoted with them. Implies promote and BN = 64.
  bool mxScaled = false;
  /// Stage each consumer's 64 x BN result tile in shared memory and store
  /// it with TMA (edges clipped by TMA) instead of from the registers.
  bool tmaStore = false;
  int blockM = 128, blockN = 128, stages = 6;

  int consumers() const { return blockM / 64; }
  int threads() const { return kWarpgroup * (1 + consumers()); }
  /// Bytes of an operand element: 1 (FP8, scaled), 2 (bf16 / f16: a
  /// high-precision GEMM, no scales).
  int elementBytes() const { return bytes(lhs); }
  bool isScaled() const { return elementBytes() == 1; }
  /// K elements per stage (128 for FP8, 64 for 16-bit operands) and per
  /// wgmma instruction (32, 16): 4 instructions per stage either way.
  int blockK() const { return kRowBytes / elementBytes(); }
  int instructionK() const { return 32 / elementBytes(); }
  int stageBytes() const { return (blockM + blockN) * kRowBytes; }
  /// Tiles, then with tmaStore one 64 x BN result tile per consumer (both
  /// whole multiples of 1024 bytes: each starts on the swizzle period),
  /// then the full and empty mbarriers (8 bytes each per stage).
  int stagingOffset() const { return stages * stageBytes(); }
  int epilogueBytes() const {
    return tmaStore ? consumers() * stagedTileBytes() : 0;
  }
  int stagedTileBytes() const { return 64 * blockN * bytes(out); }
  int barrierOffset() const { return stagingOffset() + epilogueBytes(); }
  int barrierEnd() const { return barrierOffset() + 16 * stages; }
  int sharedBytes() const { return kAlignSlack + barrierEnd(); }
  std::string name() const {
    std::string s = std::string("scaled_matmul_") + tag(lhs) + "_" + tag(rhs) +
                    "_" + tag(out);
    if (bias != Elem::None)
      s += std::string("_bias_") + tag(bias);
    if (amax)
      s += "_amax";
    if (promote)
      s += "_promote";
    if (blockScaled)
      s += rhsRowBlocks ? "_blocks1d1d" : "_blocks";
    if (rowScaled)
      s += "_rows";
    if (mxScaled)
      s += "_mx";
    if (tmaStore)
      s += "_tmastore";
    s += "_" + std::to_string(blockM) + "x" + std::to_string(blockN) + "x" +
         std::to_string(blockK()) + "_s" + std::to_string(stages);
    return s;
  }
};

/// Tile shape by problem shape: 64-row tiles (one consumer warpgroup) when
/// the rows per batch fit in 64, 128x128 otherwise; 128x256 when N is large
/// and there is no promotion (the second accumulator would not fit in the
/// registers) nor an f32 result staged for a TMA store (128 KiB). Then as
/// many pipeline stages as shared memory allows, 8 at most.
inline GemmConfig selectTiles(GemmConfig c, int64_t m, int64_t n) {
  c.blockM = m <= 64 ? 64 : 128;
  c.promote |= c.blockScaled || c.mxScaled;
  c.blockN = (!c.promote && c.blockM == 128 && n >= 4096 &&
              !(c.tmaStore && c.out == Elem::F32))
                 ? 256
                 : 128;
  // MX promotes after every k32 step with a factor per column: 64 columns
  // keep the two accumulators and the scale codes in registers.
  if (c.mxScaled || (c.blockScaled && c.rhsRowBlocks))
    c.blockN = 64;
  c.stages = std::min<int>(8, (kMaxSharedBytes - kAlignSlack -
                               c.epilogueBytes()) /
                                  (c.stageBytes() + 16));
  return c;
}

/// Result columns in one 128-byte panel of a staged tile: 64 (bf16, f16),
/// 32 (f32).
inline int stagedColumns(Elem out) { return kRowBytes / bytes(out); }

/// Byte offset of element (row, col) of a consumer's staged 64 x BN result
/// tile (`_tmastore` kernels). The tile is cut into panels of 64 rows x 128
/// bytes, panel p holding columns [p, p + 1) * stagedColumns(out), each
/// 8 KiB and written to global memory by its own TMA store through the
/// SWIZZLE_128B result map: within a panel, row r's 16-byte chunk c sits at
/// chunk c ^ (r % 8). The 8 rows that one stmatrix matrix (or one f32 pair
/// store per row) covers then fall into 8 distinct chunks, so the shared
/// writes of the epilogue are free of bank conflicts.
inline int64_t stagedByteOffset(int64_t row, int64_t col, Elem out) {
  int64_t columns = stagedColumns(out);
  int64_t byte = (col % columns) * bytes(out);
  int64_t chunk = (byte / 16) ^ (row % 8);
  return col / columns * 64 * kRowBytes + row * kRowBytes + chunk * 16 +
         byte % 16;
}

/// Whether a result with rows of N elements can be stored with TMA (16-byte
/// global strides).
inline bool canTmaStore(Elem out, int64_t n) {
  return (n * bytes(out)) % 16 == 0;
}

inline int64_t numTiles(const GemmConfig &c, int64_t batch, int64_t m,
                        int64_t n) {
  return batch * ((m + c.blockM - 1) / c.blockM) *
         ((n + c.blockN - 1) / c.blockN);
}

/// One block per SM, each looping over tiles (persistent schedule).
inline int64_t persistentGridSize(const GemmConfig &c, int64_t batch,
                                  int64_t m, int64_t n, int64_t sms) {
  return std::max<int64_t>(1, std::min(sms, numTiles(c, batch, m, n)));
}

} // namespace mlir::fp8::gemm_abi

#endif // FP8_CONVERSION_FP8TONVVM_GEMMKERNELABI_H
