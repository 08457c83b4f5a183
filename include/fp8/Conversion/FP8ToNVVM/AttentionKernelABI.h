//===- AttentionKernelABI.h - The Hopper flash attention's contract -*- C++ -*-===//
//
// What convert-fp8-attention-to-wgmma generates and what a host that
// launches the attention kernels without MLIR (the GPU kit, fp8-run) must
// agree on: kernel names, parameters, launch geometry, the tensor maps and
// the layout of the transposed value. Header-only, no MLIR dependency
// (KernelABI.h's conventions, GemmKernelABI.h's element tags).
//
// Kernel `flash_attention_<qk>_<v>_<out>[_causal][_lse][_mask<m>]_d<D>_<BM>x<BN>_s<S>`
// computes fp8.attention (FP8Ops.td) for query [batch, heads, sq, D], key
// [batch, heads / group, sk, D] and the value given transposed, V^T
// [batch, heads / group, D, pitch] (valueKeyAt below), into output
// [batch, heads, sq, D] and, with `_lse`, lse [batch, heads, sq] (f32), all
// row-major. One block of threads() threads per BM query rows of one head
// (gridSize), warp-specialized as the GEMM: one producer warpgroup whose
// elected thread loads the query tile once and the key and value tiles of
// BN keys into an S-stage ring (TMA, 128-byte swizzle), and BM / 64
// consumer warpgroups, each owning 64 query rows: S = Q K^T on wgmma
// (shared-memory operands), the online softmax in registers (running max
// and sum per row, FlashAttention-2), then O += P V on wgmma with P in
// registers (16-bit P for a 16-bit value; E4M3 P scaled by
// probability_scale for an FP8 value, the op's tile-rounded semantics with
// block_k = BN). Key tiles past the last key a causal row reads are never
// loaded. Exponentials and the logarithm of lse are ex2.approx / lg2.approx
// (2 ulp); the rest rounds as the CPU lowering does.
// <qk> and <v> are bf16, f16 (then equal), or e4m3 / e5m2 (<qk> FP8 with
// per-token scales; <v> FP8 only with FP8 <qk>); <out> is bf16, f16 or f32.
// Parameters, in order:
//   0 tmQ   CUtensorMap (128 bytes, 64-byte aligned), __grid_constant__:
//           UINT8 (UINT16 for 16-bit), 3-D {D, sq, batch * heads}, strides
//           {D, D * sq} elements in bytes, box {kRowBytes / bytes, BM, 1},
//           SWIZZLE_128B, OOB fill zeros
//   1 tmK   likewise {D, sk, batch * kv heads}, box {kRowBytes / bytes, BN, 1}
//   2 tmV   V^T: {pitch, D, batch * kv heads}, strides {pitch, pitch * D}
//           elements in bytes, box {kRowBytes / bytes, D, 1}
//   3 out          device pointer
//   4 lse          device pointer, or 0 without `_lse`
//   5 query_scale_inv [batch, heads, sq], 6 key_scale_inv [batch, kv heads,
//           sk] (f32, FP8 <qk>; else not read),
//   7 value_scale_inv [batch, kv heads] (f32, FP8 <v>; else not read)
//   8 sq, 9 sk, 10 heads, 11 group (heads per kv head), 12 batch,
//  13 causal_offset                                       i32
//  14 scale, 15 probability_scale                         f32
//  16 mask         device pointer, or 0 without `_mask<m>`: <m> is f32,
//           bf16 or f16 (added to the scaled score, widened to f32) or i1
//           (one byte per element, nonzero keeps the score, zero makes it
//           -inf), applied on every tile before the causal and length masks
//  17 .. 20 the mask's element strides over batch, head, query row and
//           key (i64; 0 along a dimension the mask broadcasts)
// Grid: gridSize(); block: threads(); dynamic shared memory: sharedBytes()
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), which includes
// gemm_abi::kAlignSlack.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TONVVM_ATTENTIONKERNELABI_H
#define FP8_CONVERSION_FP8TONVVM_ATTENTIONKERNELABI_H

#include "fp8/Conversion/FP8ToNVVM/GemmKernelABI.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace mlir::fp8::attention_abi {

using gemm_abi::Elem;

/// Name of the gpu.module that holds the attention kernels (the GEMMs').
inline constexpr const char *kModuleName = gemm_abi::kGemmModuleName;
/// Name of their dynamic shared memory symbol.
inline constexpr const char *kSharedMemoryName = gemm_abi::kSharedMemoryName;

/// Parameter indices.
enum Param : unsigned {
  kTensorMapQ = 0,
  kTensorMapK,
  kTensorMapV,
  kOut,
  kLse,
  kQueryScaleInv,
  kKeyScaleInv,
  kValueScaleInv,
  kQueries,
  kKeys,
  kHeads,
  kGroup,
  kBatch,
  kCausalOffset,
  kScale,
  kProbabilityScale,
  kMask,
  kMaskStrideBatch,
  kMaskStrideHead,
  kMaskStrideRow,
  kMaskStrideKey,
  kNumParams
};

/// The mask operand a forward kernel reads: none, additive (f32, bf16,
/// f16) or boolean (i1 stored as one byte).
enum class Mask { None, F32, BF16, F16, Bool };

inline const char *tag(Mask m) {
  switch (m) {
  case Mask::F32:
    return "f32";
  case Mask::BF16:
    return "bf16";
  case Mask::F16:
    return "f16";
  case Mask::Bool:
    return "i1";
  case Mask::None:
    break;
  }
  return "none";
}

inline int bytes(Mask m) {
  return m == Mask::F32 ? 4 : m == Mask::BF16 || m == Mask::F16 ? 2
                          : m == Mask::Bool                     ? 1
                                                                : 0;
}

/// Keys per tile (BN) and query rows per block (BM).
inline constexpr int kBlockN = 128;
inline constexpr int kBlockM = 128;

struct AttentionConfig {
  Elem qk = Elem::BF16, v = Elem::BF16, out = Elem::BF16;
  bool causal = false, lse = false;
  Mask mask = Mask::None;
  int headDim = 128;
  int blockM = kBlockM, blockN = kBlockN, stages = 2;

  int consumers() const { return blockM / 64; }
  int threads() const { return gemm_abi::kWarpgroup * (1 + consumers()); }
  bool fp8Scores() const { return gemm_abi::bytes(qk) == 1; }
  bool fp8Values() const { return gemm_abi::bytes(v) == 1; }
  /// 128-byte panels of a query or key row (along D) and of a V^T row
  /// (along BN keys).
  int keyPanels() const {
    return headDim * gemm_abi::bytes(qk) / gemm_abi::kRowBytes;
  }
  int valuePanels() const {
    return blockN * gemm_abi::bytes(v) / gemm_abi::kRowBytes;
  }
  int queryTileBytes() const { return blockM * headDim * gemm_abi::bytes(qk); }
  int keyTileBytes() const { return blockN * headDim * gemm_abi::bytes(qk); }
  int valueTileBytes() const { return headDim * blockN * gemm_abi::bytes(v); }
  /// Shared memory: the query tile, the key ring, the value ring (each
  /// tile a whole number of 1024-byte swizzle periods), then the mbarriers:
  /// query full, key full / empty, value full / empty (8 bytes each).
  int keyOffset() const { return queryTileBytes(); }
  int valueOffset() const { return keyOffset() + stages * keyTileBytes(); }
  int barrierOffset() const { return valueOffset() + stages * valueTileBytes(); }
  int barrierEnd() const { return barrierOffset() + 8 + 32 * stages; }
  int sharedBytes() const { return gemm_abi::kAlignSlack + barrierEnd(); }
  std::string name() const {
    std::string s = std::string("flash_attention_") + gemm_abi::tag(qk) +
                    "_" + gemm_abi::tag(v) + "_" + gemm_abi::tag(out);
    if (causal)
      s += "_causal";
    if (lse)
      s += "_lse";
    if (mask != Mask::None)
      s += std::string("_mask") + tag(mask);
    s += "_d" + std::to_string(headDim) + "_" + std::to_string(blockM) + "x" +
         std::to_string(blockN) + "_s" + std::to_string(stages);
    return s;
  }
};

/// Whether a kernel exists for these element types and head dimension:
/// rows of whole 128-byte panels and D <= 128 (the output accumulator and
/// S share the registers: 16-bit D = 64 or 128, FP8 D = 128), one 16-bit
/// type throughout, or FP8 scores with a 16-bit or FP8 value; the output in
/// bf16, f16 or f32.
inline bool isSupported(Elem qk, Elem v, Elem out, int64_t headDim) {
  auto isFP8 = [](Elem e) { return e == Elem::E4M3 || e == Elem::E5M2; };
  auto is16 = [](Elem e) { return e == Elem::BF16 || e == Elem::F16; };
  bool types = isFP8(qk) ? is16(v) || isFP8(v) : is16(qk) && v == qk;
  int64_t rowBytes = headDim * gemm_abi::bytes(qk);
  bool rows = headDim > 0 && headDim <= 128 &&
              rowBytes % gemm_abi::kRowBytes == 0;
  return types && rows && (is16(out) || out == Elem::F32);
}

/// As many stages as shared memory allows, 4 at most.
inline AttentionConfig selectStages(AttentionConfig c) {
  c.stages = 1;
  int perStage = c.keyTileBytes() + c.valueTileBytes() + 32;
  int room = gemm_abi::kMaxSharedBytes - gemm_abi::kAlignSlack - 8 -
             c.queryTileBytes();
  c.stages = std::clamp(room / perStage, 1, 4);
  return c;
}

/// Blocks: BM query rows of one head each.
inline int64_t gridSize(const AttentionConfig &c, int64_t batch,
                        int64_t heads, int64_t sq) {
  return batch * heads * ((sq + c.blockM - 1) / c.blockM);
}

/// Keys per row of V^T: sk rounded up to 16 (16-byte rows for TMA; the
/// pad is zeros, read by no unmasked key).
inline int64_t valuePitch(int64_t sk) { return (sk + 15) / 16 * 16; }

/// The key that column `p` of V^T holds. 16-bit values: key p. FP8
/// values: keys are permuted within each group of 16, so that the E4M3 P
/// fragment the softmax leaves in a thread's registers (the f32 wgmma
/// accumulator's columns 2t, 2t + 1, 2t + 8, 2t + 9 of each 16, thread t
/// = lane % 4) is, byte for byte, the A fragment of the FP8 P V wgmma
/// (columns 4t .. 4t + 3): column 16h + 4t + i holds key 16h + 2t + i % 2 +
/// 8 (i / 2).
inline constexpr int64_t valueKeyAt(int64_t p, bool fp8Values) {
  if (!fp8Values)
    return p;
  int64_t group = p / 16 * 16, inGroup = p % 16;
  int64_t t = inGroup / 4, i = inGroup % 4;
  return group + 2 * t + i % 2 + 8 * (i / 2);
}

/// Which element of a consumer thread's f32 S accumulator (element 4j + 2h
/// + e: row h of the thread's two, column 8j + 2 (lane % 4) + e of the key
/// tile) goes into slot `slot` (the low half first, or the low byte first
/// for E4M3) of A register `r` (0 .. 3) of P V step `kk` (16 keys per step
/// for 16-bit P, 32 for E4M3). 16-bit: register r holds columns 2t, 2t + 1
/// of row r % 2 and column block 2kk + r / 2, which is the wgmma A
/// fragment. E4M3: register r = 2q + h holds row h's columns 2t, 2t + 1,
/// 2t + 8, 2t + 9 of the step's keys 16q .. 16q + 15, which the A fragment
/// reads as columns 16q + 4t .. + 3: valueKeyAt permutes V^T to match.
inline constexpr int probabilityElement(bool fp8Values, int kk, int r,
                                        int slot) {
  if (!fp8Values)
    return 8 * kk + 2 * r + slot;
  int q = r / 2, h = r % 2;
  int j = 4 * kk + 2 * q + slot / 2;
  return 4 * j + 2 * h + slot % 2;
}

//===----------------------------------------------------------------------===//
// The backward: fp8.attention_grad
//===----------------------------------------------------------------------===//
//
// Kernel `flash_attention_grad_<t>[_causal]_d<D>_<BN>x<BM>_s<S>` computes
// fp8.attention_grad (FlashAttention-2's backward) for query, key, value
// and grad_output of one 16-bit type <t> (bf16, f16), D = 64 or 128. One
// block of 256 threads per BN = 64 keys of one key/value head: a producer
// warpgroup loads the key tile, the value tile and K^T once, then per
// query head of the group and per tile of BM = 64 queries the query, dO,
// Q^T and dO^T tiles into an S-stage ring; one consumer warpgroup
// recomputes S^T = K Q^T, P^T = exp(S^T scale - lse) (masked), accumulates
// dV += P^T dO and, from dP^T = V dO^T and dS^T = P^T (dP^T - delta), dK +=
// dS^T Q in registers over the whole group, and adds dQ += dS K (dS
// through shared memory) into an f32 buffer with atomics. The host
// computes delta = rowsum(dO * O) first and dQ = round(scale * dQaccum)
// after; dK = round(scale * dK) and dV = round(dV) are stored by the
// kernel. Parameters, in order:
//   0 tmK, 1 tmV   {D, sk, batch * kv heads}, box {kRowBytes / 2, BN, 1}
//   2 tmKT         K^T [batch * kv heads, D, key pitch], {pitch, D, layers},
//                  box {kRowBytes / 2, D, 1}
//   3 tmQ, 4 tmDO  {D, sq, batch * heads}, box {kRowBytes / 2, BM, 1}
//   5 tmQT, 6 tmDOT  Q^T and dO^T [batch * heads, D, query pitch], box
//                  {kRowBytes / 2, D, 1}
//   7 grad_key, 8 grad_value    [batch, kv heads, sk, D] in <t>
//   9 dQaccum      [batch, heads, sq, D] f32, zeroed before the launch
//  10 lse, 11 delta  [batch, heads, sq] f32
//  12 sq, 13 sk, 14 heads, 15 group, 16 batch, 17 causal_offset   i32
//  18 scale                                                         f32
// Pitches: valuePitch() of the length (16-element multiples, zero-padded).
// Grid: gradGridSize(); block: threads(); dynamic shared memory:
// sharedBytes().

enum GradParam : unsigned {
  kGradTensorMapK = 0,
  kGradTensorMapV,
  kGradTensorMapKT,
  kGradTensorMapQ,
  kGradTensorMapDO,
  kGradTensorMapQT,
  kGradTensorMapDOT,
  kGradKey,
  kGradValue,
  kGradQueryAccum,
  kGradLse,
  kGradDelta,
  kGradQueries,
  kGradKeys,
  kGradHeads,
  kGradGroup,
  kGradBatch,
  kGradCausalOffset,
  kGradScale,
  kGradNumParams
};

struct AttentionGradConfig {
  Elem type = Elem::BF16;
  bool causal = false;
  int headDim = 128;
  int blockN = 64, blockM = 64, stages = 2;

  int threads() const { return 2 * gemm_abi::kWarpgroup; }
  int bytes() const { return gemm_abi::bytes(type); }
  /// 128-byte panels of a row along D, and rows of BN keys / BM queries
  /// (one panel each: 64 16-bit elements).
  int headPanels() const { return headDim * bytes() / gemm_abi::kRowBytes; }
  /// Tiles: K, V [BN, D]; K^T [D, BN]; dS [BM, BN]; then per stage Q, dO
  /// [BM, D] and Q^T, dO^T [D, BM]; then the mbarriers (key/value full,
  /// then full and empty per stage).
  int keyTileBytes() const { return blockN * headDim * bytes(); }
  int queryTileBytes() const { return blockM * headDim * bytes(); }
  int gradScoresOffset() const { return 3 * keyTileBytes(); }
  int stageOffset() const {
    return gradScoresOffset() + blockM * blockN * bytes();
  }
  int stageBytes() const { return 4 * queryTileBytes(); }
  int barrierOffset() const { return stageOffset() + stages * stageBytes(); }
  int barrierEnd() const { return barrierOffset() + 8 + 16 * stages; }
  int sharedBytes() const { return gemm_abi::kAlignSlack + barrierEnd(); }
  std::string name() const {
    std::string s =
        std::string("flash_attention_grad_") + gemm_abi::tag(type);
    if (causal)
      s += "_causal";
    s += "_d" + std::to_string(headDim) + "_" + std::to_string(blockN) +
         "x" + std::to_string(blockM) + "_s" + std::to_string(stages);
    return s;
  }
};

/// A 16-bit type and D = 64 or 128.
inline bool isGradSupported(Elem type, int64_t headDim) {
  return (type == Elem::BF16 || type == Elem::F16) &&
         (headDim == 64 || headDim == 128);
}

/// As many stages as shared memory allows, 4 at most.
inline AttentionGradConfig selectGradStages(AttentionGradConfig c) {
  int room = gemm_abi::kMaxSharedBytes - gemm_abi::kAlignSlack - 8 -
             c.stageOffset();
  c.stages = std::clamp(room / (c.stageBytes() + 16), 1, 4);
  return c;
}

/// Blocks: BN keys of one key/value head each.
inline int64_t gradGridSize(const AttentionGradConfig &c, int64_t batch,
                            int64_t kvHeads, int64_t sk) {
  return batch * kvHeads * ((sk + c.blockN - 1) / c.blockN);
}

} // namespace mlir::fp8::attention_abi

#endif // FP8_CONVERSION_FP8TONVVM_ATTENTIONKERNELABI_H
