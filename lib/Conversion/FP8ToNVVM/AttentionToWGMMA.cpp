//===- AttentionToWGMMA.cpp - fp8.attention to a Hopper flash kernel ------===//
//
// convert-fp8-attention-to-wgmma: every fp8.attention a kernel takes gets a
// FlashAttention forward kernel for sm_90a in `gpu.module @fp8_gemm_kernels`
// (AttentionKernelABI.h is the launch contract) and the `fp8.wgmma_kernel`
// and `fp8.wgmma_tile` attributes naming it; convert-fp8-to-gpu-launches
// then launches it. The others keep their op: fp8-decompose-attention
// takes them.
//
// The kernel is warp-specialized like the GEMM (ScaledMatmulToWGMMA.cpp),
// after FlashAttention-3's design:
//  - a producer warpgroup whose elected thread loads the block's query tile
//    once, then the key tiles and the transposed value tiles of BN keys
//    into a ring of stages (TMA, 128-byte swizzle), each tile with its own
//    full and empty mbarriers, so that Q K^T of a tile starts before its
//    values arrive; with causal masking no tile past a row's last key is
//    loaded;
//  - BM / 64 consumer warpgroups, 64 query rows each: S = Q K^T on wgmma
//    (both operands in shared memory, f32 accumulators), the scale (and
//    FP8 scales per token), the mask operand (added, or boolean, through
//    run-time strides), the causal and length mask on the tiles that need
//    one, the online softmax in registers (running max and sum per
//    row, rows reduced over the 4 lanes that share them), the accumulator
//    rescaled, then O += P V on wgmma with P in registers: the f32
//    accumulator fragment rounded to bf16 / f16 is the 16-bit A fragment
//    as it is; for an FP8 value, P * probability_scale rounded to E4M3 is
//    an A fragment whose columns are a permutation of the keys, and the
//    host's transposed value holds its keys in that permutation
//    (attention_abi::valueKeyAt);
//  - an epilogue that divides by the row sums (after value_scale /
//    probability_scale for FP8 values), converts and stores from the
//    registers, and writes the log-sum-exp.
// MLIR 22's nvvm.wgmma.mma_async takes A only from shared memory, so the
// register form is an llvm.inline_asm in exactly the shape upstream's
// PTX builder gives the shared-memory form.
//
//===----------------------------------------------------------------------===//

#include "WgmmaBuilder.h"
#include "fp8/Conversion/FP8ToNVVM/AttentionToWGMMA.h"
#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"
#include "fp8/Conversion/FP8ToNVVM/ScaledMatmulToWGMMA.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8ATTENTIONTOWGMMA
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
namespace aabi = mlir::fp8::attention_abi;
namespace gabi = mlir::fp8::gemm_abi;

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

namespace {
class AttentionKernelBuilder : public WgmmaBuilder {
public:
  AttentionKernelBuilder(ImplicitLocOpBuilder &b,
                         const aabi::AttentionConfig &config)
      : WgmmaBuilder(b), c(config) {}

  void build(LLVM::LLVMFuncOp func);

private:
  // Shared memory (byte offsets from the 1024-aligned base).
  Value keyTile(Value stage) {
    return gepBytes(smem, add(i32(c.keyOffset()),
                              mul(stage, i32(c.keyTileBytes()))));
  }
  Value valueTile(Value stage) {
    return gepBytes(smem, add(i32(c.valueOffset()),
                              mul(stage, i32(c.valueTileBytes()))));
  }
  /// The mbarrier `which` (0 key full, 1 key empty, 2 value full, 3 value
  /// empty) of `stage`, after the query's.
  Value barrier(int which, Value stage) {
    return gepBytes(smem, add(i32(c.barrierOffset() + 8 +
                                  8 * which * c.stages),
                              mul(stage, i32(8))));
  }
  Value queryFull() { return gepBytes(smem, i32(c.barrierOffset())); }
  Value keyFull(Value s) { return barrier(0, s); }
  Value keyEmpty(Value s) { return barrier(1, s); }
  Value valueFull(Value s) { return barrier(2, s); }
  Value valueEmpty(Value s) { return barrier(3, s); }
  std::pair<Value, Value> advance(Value stage, Value phase) {
    return advanceRing(stage, phase, c.stages);
  }
  /// `op` of `value` over the 4 lanes of a quad (the threads that hold one
  /// accumulator row).
  Value quadReduce(Value value, llvm::function_ref<Value(Value, Value)> op) {
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, value, offset, 32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      value = op(value, other);
    }
    return value;
  }
  void buildProducer();
  void buildConsumer();
  /// S = Q K^T of the consumer's 64 rows and the key tile in `stage`.
  Value scoreTile(Value stage, Value consumer);
  /// O + P V: one wgmma per 32 bytes of keys, A (P) from `fragments` (4
  /// i32 each), B from the value tile in `stage`.
  Value accumulateValues(Value o, ArrayRef<std::array<Value, 4>> fragments,
                         Value stage);
  /// P's A fragments: 16-bit pairs, or E4M3 quadruples of P * ps.
  SmallVector<std::array<Value, 4>> packProbabilities(ArrayRef<Value> p);
  /// `score` with the mask element at `offset` (i64 elements) applied:
  /// added (widened to f32), or -inf where the boolean mask is false.
  Value applyMask(Value score, Value offset);

  const aabi::AttentionConfig &c;
  Value smem, tmQ, tmK, tmV, out, lse, queryScale, keyScale, valueScale;
  Value sq, sk, heads, group, batch, causalOffset, scale, probabilityScale;
  /// The mask and its element strides (batch, head, row, key; i64).
  Value mask, maskStrides[4];
  /// The block's work: its first query row, its batch and query head, its
  /// (batch, head) and (batch, kv head) layers, and its key tiles.
  Value row0, batchIndex, queryHead, queryLayer, keyLayer, numKeyTiles;
};
} // namespace

void AttentionKernelBuilder::buildProducer() {
  NVVM::SetMaxRegisterOp::create(b, gabi::kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  ifThen(cmp(arith::CmpIPredicate::eq, tid, i32(0)), [&] {
    int64_t qkColumns = gabi::kRowBytes / gabi::bytes(c.qk);
    int64_t vColumns = gabi::kRowBytes / gabi::bytes(c.v);
    expectBytes(queryFull(), c.queryTileBytes());
    for (int64_t p = 0; p < c.keyPanels(); ++p)
      tmaLoad(gepBytes(smem, i32(p * c.blockM * gabi::kRowBytes)), tmQ,
              {i32(p * qkColumns), row0, queryLayer}, queryFull());
    forLoop(i32(0), numKeyTiles, i32(1), {i32(0), i32(0)},
            [&](Value t, ValueRange slot) -> SmallVector<Value> {
              Value stage = slot[0], phase = slot[1];
              Value key0 = mul(t, i32(c.blockN));
              // A slot is free once every consumer warp released it; on
              // the first pass the wait on the preceding phase returns.
              wait(keyEmpty(stage), xorI(phase, i32(1)));
              expectBytes(keyFull(stage), c.keyTileBytes());
              for (int64_t p = 0; p < c.keyPanels(); ++p)
                tmaLoad(gepBytes(keyTile(stage),
                                 i32(p * c.blockN * gabi::kRowBytes)),
                        tmK, {i32(p * qkColumns), key0, keyLayer},
                        keyFull(stage));
              wait(valueEmpty(stage), xorI(phase, i32(1)));
              expectBytes(valueFull(stage), c.valueTileBytes());
              for (int64_t p = 0; p < c.valuePanels(); ++p)
                tmaLoad(gepBytes(valueTile(stage),
                                 i32(p * c.headDim * gabi::kRowBytes)),
                        tmV, {add(key0, i32(p * vColumns)), i32(0), keyLayer},
                        valueFull(stage));
              auto [next, nextPhase] = advance(stage, phase);
              return {next, nextPhase};
            });
  });
}

Value AttentionKernelBuilder::scoreTile(Value stage, Value consumer) {
  auto accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(c.blockN / 2, b.getF32Type()));
  Value d = LLVM::UndefOp::create(b, accType);
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, c.blockN,
                                       32 / gabi::bytes(c.qk));
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t p = 0; p < c.keyPanels(); ++p) {
    Value descQ = descriptor(gepBytes(
        smem, add(i32(p * c.blockM * gabi::kRowBytes),
                  mul(consumer, i32(64 * gabi::kRowBytes)))));
    Value descK = descriptor(
        gepBytes(keyTile(stage), i32(p * c.blockN * gabi::kRowBytes)));
    for (int64_t kk = 0; kk < gabi::kRowBytes / 32; ++kk) {
      // 32 bytes of the 128-byte swizzled row: +2 in 16-byte units.
      Value step = i64(2 * kk);
      auto scaleD = p == 0 && kk == 0 ? NVVM::WGMMAScaleOut::zero
                                      : NVVM::WGMMAScaleOut::one;
      d = NVVM::WgmmaMmaAsyncOp::create(
          b, accType, d, arith::AddIOp::create(b, descQ, step),
          arith::AddIOp::create(b, descK, step), shape, getWgmmaType(c.qk),
          getWgmmaType(c.qk), NVVM::WGMMATypes::f32, scaleD,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::col,
          NVVM::MMAIntOverflowAttr());
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  return d;
}

SmallVector<std::array<Value, 4>>
AttentionKernelBuilder::packProbabilities(ArrayRef<Value> p) {
  // aabi::probabilityElement says which accumulator element goes where.
  Type i32Type = b.getI32Type();
  SmallVector<std::array<Value, 4>> fragments;
  bool fp8 = c.fp8Values();
  auto element = [&](int64_t kk, int r, int slot) {
    return p[aabi::probabilityElement(fp8, kk, r, slot)];
  };
  if (!fp8) {
    Type half = getKernelElemType(ctx, c.v);
    auto bits = [&](Value x) {
      return arith::ExtUIOp::create(
          b, i32Type,
          arith::BitcastOp::create(b, b.getI16Type(),
                                   arith::TruncFOp::create(b, half, x)));
    };
    for (int64_t kk = 0; kk < c.blockN / 16; ++kk) {
      std::array<Value, 4> regs;
      for (int r = 0; r < 4; ++r)
        regs[r] = arith::OrIOp::create(
            b, bits(element(kk, r, 0)),
            arith::ShLIOp::create(b, bits(element(kk, r, 1)), i32(16)));
      fragments.push_back(regs);
    }
    return fragments;
  }
  // E4M3 P * probability_scale, two bytes per cvt (low byte first).
  Type e4m3 = b.getType<Float8E4M3FNType>();
  auto pair = [&](Value lo, Value hi) {
    return arith::ExtUIOp::create(
        b, i32Type,
        NVVM::ConvertF32x2ToF8x2Op::create(
            b, b.getI16Type(), fmul(hi, probabilityScale),
            fmul(lo, probabilityScale), NVVM::FPRoundingMode::RN,
            NVVM::SaturationMode::SATFINITE, /*relu=*/false, e4m3));
  };
  for (int64_t kk = 0; kk < c.blockN / 32; ++kk) {
    std::array<Value, 4> regs;
    for (int r = 0; r < 4; ++r)
      regs[r] = arith::OrIOp::create(
          b, pair(element(kk, r, 0), element(kk, r, 1)),
          arith::ShLIOp::create(
              b, pair(element(kk, r, 2), element(kk, r, 3)), i32(16)));
    fragments.push_back(regs);
  }
  return fragments;
}

Value AttentionKernelBuilder::applyMask(Value score, Value offset) {
  Type f32Type = b.getF32Type();
  switch (c.mask) {
  case aabi::Mask::F32:
    return fadd(score, LLVM::LoadOp::create(b, f32Type,
                                            gep(mask, f32Type, offset), 4));
  case aabi::Mask::BF16:
  case aabi::Mask::F16: {
    Type half = c.mask == aabi::Mask::BF16 ? Type(b.getBF16Type())
                                           : Type(b.getF16Type());
    Value element = LLVM::LoadOp::create(b, half, gep(mask, half, offset), 2);
    return fadd(score, arith::ExtFOp::create(b, f32Type, element));
  }
  case aabi::Mask::Bool: {
    Type byte = b.getI8Type();
    Value element = LLVM::LoadOp::create(b, byte, gep(mask, byte, offset), 1);
    Value keep = cmp(arith::CmpIPredicate::ne, element,
                     arith::ConstantOp::create(b, b.getI8IntegerAttr(0)));
    return select(keep, score, negInf());
  }
  case aabi::Mask::None:
    break;
  }
  return score;
}

Value AttentionKernelBuilder::accumulateValues(
    Value o, ArrayRef<std::array<Value, 4>> fragments, Value stage) {
  std::string type = gabi::tag(c.v);
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (auto [kk, regs] : llvm::enumerate(fragments)) {
    // 32 bytes of keys per step: the value tile's panel, then +2 per step
    // in the descriptor's 16-byte address field.
    int64_t byte = kk * 32;
    Value desc = descriptor(
        gepBytes(valueTile(stage), i32(byte / gabi::kRowBytes * c.headDim *
                                       gabi::kRowBytes)));
    desc = arith::AddIOp::create(b, desc, i64(byte % gabi::kRowBytes / 16));
    o = wgmmaRegisterA(o, regs, desc, c.headDim,
                       c.fp8Values() ? "e4m3" : type, type);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  return o;
}

void AttentionKernelBuilder::buildConsumer() {
  NVVM::SetMaxRegisterOp::create(b, gabi::kConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  Value consumer = sub(warpgroup, i32(1));
  Type f32Type = b.getF32Type();
  // wgmma m64nN f32 fragment: warp w of the warpgroup holds rows 16w +
  // lane / 4 (+8), columns 8j + 2 (lane % 4) (+1): element 4j + 2h + e.
  Value rows[2];
  rows[0] = add(add(row0, mul(consumer, i32(64))),
                add(mul(warpInGroup, i32(16)), divU(lane, i32(4))));
  rows[1] = add(rows[0], i32(8));
  Value column0 = mul(remU(lane, i32(4)), i32(2));
  Value lastQuery = sub(sq, i32(1)), lastKey = sub(sk, i32(1));
  // The mask's element offset of each of the thread's rows (rows past sq
  // read the last row's), in i64: a [b, h, sq, sk] mask passes 2^31
  // elements at long sequences.
  bool hasMask = c.mask != aabi::Mask::None;
  Value maskRows[2];
  if (hasMask) {
    Value layerOffset = add(mul(zext64(batchIndex), maskStrides[0]),
                            mul(zext64(queryHead), maskStrides[1]));
    for (int h = 0; h < 2; ++h)
      maskRows[h] = add(
          layerOffset,
          mul(zext64(arith::MinUIOp::create(b, rows[h], lastQuery)),
              maskStrides[2]));
  }
  // Rows past sq are computed and never stored: they read the last row's
  // scale instead of past the end.
  Value queryScales[2];
  if (c.fp8Scores())
    for (int h = 0; h < 2; ++h)
      queryScales[h] = loadF32(
          queryScale,
          add(mul(queryLayer, sq),
              arith::MinUIOp::create(b, rows[h], lastQuery)));
  int64_t numScores = c.blockN / 2, numOut = c.headDim / 2;
  wait(queryFull(), i32(0));

  Value zero = f32(0.0f);
  SmallVector<Value> init{structOf(numOut, zero), negInf(), negInf(), zero,
                          zero, i32(0), i32(0)};
  SmallVector<Value> state = forLoop(
      i32(0), numKeyTiles, i32(1), init,
      [&](Value t, ValueRange carried) -> SmallVector<Value> {
        Value o = carried[0], stage = carried[5], phase = carried[6];
        Value runningMax[2] = {carried[1], carried[2]};
        Value rowSum[2] = {carried[3], carried[4]};
        Value key0 = mul(t, i32(c.blockN));

        wait(keyFull(stage), phase);
        Value s = scoreTile(stage, consumer);
        arrivePerWarp(keyEmpty(stage), lane);

        // The scaled scores (FP8: times the query's and the key's scale,
        // in the op's order).
        // The thread's keys are column0 + 8 j + e: one scale each (both
        // rows share it).
        SmallVector<Value> keyScales;
        if (c.fp8Scores())
          for (int64_t j = 0; j < c.blockN / 8; ++j)
            for (int e = 0; e < 2; ++e) {
              Value key = add(key0, add(column0, i32(8 * j + e)));
              keyScales.push_back(loadF32(
                  keyScale, add(mul(keyLayer, sk),
                                arith::MinUIOp::create(b, key, lastKey))));
            }
        SmallVector<Value> scores(numScores);
        for (int64_t i = 0; i < numScores; ++i) {
          Value x = LLVM::ExtractValueOp::create(b, s, i);
          if (c.fp8Scores())
            x = fmul(fmul(x, queryScales[(i / 2) % 2]),
                     keyScales[2 * (i / 4) + i % 2]);
          scores[i] = fmul(x, scale);
        }
        // The mask operand, on every tile (keys past sk read the last
        // key's element; the length mask below makes them -inf anyway).
        if (hasMask)
          for (int64_t i = 0; i < numScores; ++i) {
            Value key = arith::MinUIOp::create(
                b, add(key0, add(column0, i32(8 * (i / 4) + i % 2))), lastKey);
            scores[i] = applyMask(
                scores[i], add(maskRows[(i / 2) % 2],
                               mul(zext64(key), maskStrides[3])));
          }
        // -inf for keys past sk and, causal, past the row's last key; only
        // a tile that holds such a key for one of this thread's rows pays
        // for the selects.
        Value tileEnd = add(key0, i32(c.blockN));
        Value needsMask = cmp(arith::CmpIPredicate::sgt, tileEnd, sk);
        if (c.causal)
          needsMask = arith::OrIOp::create(
              b, needsMask,
              cmp(arith::CmpIPredicate::sgt, tileEnd,
                  add(add(rows[0], causalOffset), i32(1))));
        auto masked = scf::IfOp::create(
            b, SmallVector<Type>(numScores, f32Type), needsMask,
            /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&masked.getThenRegion().front());
          SmallVector<Value> kept(numScores);
          for (int64_t i = 0; i < numScores; ++i) {
            Value key = add(key0, add(column0, i32(8 * (i / 4) + i % 2)));
            Value ok = cmp(arith::CmpIPredicate::slt, key, sk);
            if (c.causal)
              ok = andI(ok, cmp(arith::CmpIPredicate::sle, key,
                                add(rows[(i / 2) % 2], causalOffset)));
            kept[i] = select(ok, scores[i], negInf());
          }
          scf::YieldOp::create(b, kept);
          b.setInsertionPointToStart(&masked.getElseRegion().front());
          scf::YieldOp::create(b, scores);
        }
        for (int64_t i = 0; i < numScores; ++i)
          scores[i] = masked.getResult(i);

        // The online softmax, per row h: the running max m (NaN-
        // propagating), exp against it (0 where the whole row so far is
        // -inf), the rescale alpha of what was summed against the old max.
        Value alpha[2], safeMax[2];
        for (int h = 0; h < 2; ++h) {
          Value tileMax = negInf();
          for (int64_t i = 0; i < numScores; ++i)
            if ((i / 2) % 2 == h)
              tileMax = fmax(tileMax, scores[i]);
          tileMax = quadReduce(tileMax, [&](Value x, Value y) {
            return fmax(x, y);
          });
          Value newMax = fmax(runningMax[h], tileMax);
          safeMax[h] = select(arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                                    newMax, negInf()),
                              zero, newMax);
          alpha[h] = exp(fsub(runningMax[h], safeMax[h]));
          runningMax[h] = newMax;
        }
        SmallVector<Value> p(numScores);
        Value tileSum[2] = {zero, zero};
        for (int64_t i = 0; i < numScores; ++i) {
          int h = (i / 2) % 2;
          p[i] = exp(fsub(scores[i], safeMax[h]));
          tileSum[h] = fadd(tileSum[h], p[i]);
        }
        for (int h = 0; h < 2; ++h)
          rowSum[h] = fadd(fmul(rowSum[h], alpha[h]), tileSum[h]);
        for (int64_t i = 0; i < numOut; ++i) {
          Value x = LLVM::ExtractValueOp::create(b, o, i);
          o = LLVM::InsertValueOp::create(b, o, fmul(x, alpha[(i / 2) % 2]),
                                          i);
        }
        SmallVector<std::array<Value, 4>> fragments = packProbabilities(p);

        wait(valueFull(stage), phase);
        o = accumulateValues(o, fragments, stage);
        arrivePerWarp(valueEmpty(stage), lane);
        auto [next, nextPhase] = advance(stage, phase);
        return {o, runningMax[0], runningMax[1], rowSum[0], rowSum[1], next,
                nextPhase};
      });

  // Epilogue: O / l (FP8 values: O * (value_scale / ps) / l), converted,
  // stored from the registers; lse = m + log(l).
  Value o = state[0];
  Value factor;
  if (c.fp8Values())
    factor = arith::DivFOp::create(b, loadF32(valueScale, keyLayer),
                                   probabilityScale);
  Type outType = getKernelElemType(ctx, c.out);
  int64_t outBits = outType.getIntOrFloatBitWidth();
  Type bitsType = b.getIntegerType(outBits);
  Type pairType = b.getIntegerType(2 * outBits);
  for (int h = 0; h < 2; ++h) {
    Value l = quadReduce(state[3 + h], [&](Value x, Value y) {
      return fadd(x, y);
    });
    Value row = rows[h];
    ifThen(cmp(arith::CmpIPredicate::slt, row, sq), [&] {
      Value rowIndex = add(mul(queryLayer, sq), row);
      Value rowBase = mul(zext64(rowIndex), i64(c.headDim));
      for (int64_t j = 0; j < c.headDim / 8; ++j) {
        Value bits[2];
        for (int e = 0; e < 2; ++e) {
          Value x = LLVM::ExtractValueOp::create(b, o, 4 * j + 2 * h + e);
          if (factor)
            x = fmul(x, factor);
          x = arith::DivFOp::create(b, x, l);
          if (!outType.isF32())
            x = arith::TruncFOp::create(b, outType, x);
          bits[e] = arith::ExtUIOp::create(
              b, pairType, arith::BitcastOp::create(b, bitsType, x));
        }
        Value pair = arith::OrIOp::create(
            b, bits[0],
            arith::ShLIOp::create(
                b, bits[1],
                arith::ConstantOp::create(b,
                                          b.getIntegerAttr(pairType, outBits))));
        Value column = add(column0, i32(8 * j));
        Value address = gep(out, outType, add(rowBase, zext64(column)));
        LLVM::StoreOp::create(b, pair, address, 2 * outBits / 8);
      }
      if (c.lse)
        ifThen(cmp(arith::CmpIPredicate::eq, remU(lane, i32(4)), i32(0)), [&] {
          Value value = fadd(state[1 + h], log(l));
          LLVM::StoreOp::create(b, value, gep(lse, f32Type, rowIndex), 4);
        });
    });
  }
}

void AttentionKernelBuilder::build(LLVM::LLVMFuncOp func) {
  Block *entry = &func.getBody().front();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  tmQ = args[aabi::kTensorMapQ];
  tmK = args[aabi::kTensorMapK];
  tmV = args[aabi::kTensorMapV];
  out = args[aabi::kOut];
  lse = args[aabi::kLse];
  queryScale = args[aabi::kQueryScaleInv];
  keyScale = args[aabi::kKeyScaleInv];
  valueScale = args[aabi::kValueScaleInv];
  sq = args[aabi::kQueries];
  sk = args[aabi::kKeys];
  heads = args[aabi::kHeads];
  group = args[aabi::kGroup];
  batch = args[aabi::kBatch];
  causalOffset = args[aabi::kCausalOffset];
  scale = args[aabi::kScale];
  probabilityScale = args[aabi::kProbabilityScale];
  mask = args[aabi::kMask];
  for (int d = 0; d < 4; ++d)
    maskStrides[d] = args[aabi::kMaskStrideBatch + d];

  smem = alignedSharedMemory(aabi::kSharedMemoryName);
  readThreadIndices();

  // The block's query tile, head and batch; causal blocks take the tiles
  // with the most keys first (block x = 0 runs the last row tile).
  Value rowTiles = ceilDiv(sq, c.blockM);
  Value block = NVVM::BlockIdXOp::create(b, b.getI32Type());
  Value rowTile = remU(block, rowTiles);
  if (c.causal)
    rowTile = sub(sub(rowTiles, i32(1)), rowTile);
  Value layer = divU(block, rowTiles);
  queryHead = remU(layer, heads);
  batchIndex = divU(layer, heads);
  row0 = mul(rowTile, i32(c.blockM));
  queryLayer = layer;
  keyLayer =
      add(mul(batchIndex, divU(heads, group)), divU(queryHead, group));
  // Keys the block's rows read: all of sk, or causal, up to its last row's
  // last key (none when every row is fully masked).
  Value keyEnd = sk;
  if (c.causal) {
    Value lastRow = arith::MinSIOp::create(b, add(row0, i32(c.blockM)), sq);
    keyEnd = arith::MaxSIOp::create(
        b, arith::MinSIOp::create(b, add(lastRow, causalOffset), sk), i32(0));
  }
  numKeyTiles = ceilDiv(keyEnd, c.blockN);

  splitWarpgroups(
      [&] {
        NVVM::MBarrierInitOp::create(b, queryFull(), i32(1), Value());
        for (int64_t s = 0; s < c.stages; ++s) {
          for (int which : {0, 2})
            NVVM::MBarrierInitOp::create(b, barrier(which, i32(s)), i32(1),
                                         Value());
          for (int which : {1, 3})
            NVVM::MBarrierInitOp::create(b, barrier(which, i32(s)),
                                         i32(4 * c.consumers()), Value());
        }
      },
      [&] { buildProducer(); }, [&] { buildConsumer(); });
}

LLVM::LLVMFuncOp
mlir::fp8::getOrBuildFlashAttentionKernel(gpu::GPUModuleOp module,
                                          const aabi::AttentionConfig &config) {
  MLIRContext *ctx = module.getContext();
  Type generic = LLVM::LLVMPointerType::get(ctx);
  Type global = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  SmallVector<Type> params(aabi::kNumParams, IntegerType::get(ctx, 32));
  for (unsigned p : {aabi::kTensorMapQ, aabi::kTensorMapK, aabi::kTensorMapV})
    params[p] = generic;
  for (unsigned p : {aabi::kOut, aabi::kLse, aabi::kQueryScaleInv,
                     aabi::kKeyScaleInv, aabi::kValueScaleInv, aabi::kMask})
    params[p] = global;
  params[aabi::kScale] = params[aabi::kProbabilityScale] = Float32Type::get(ctx);
  for (unsigned p = aabi::kMaskStrideBatch; p <= aabi::kMaskStrideKey; ++p)
    params[p] = IntegerType::get(ctx, 64);
  return getOrCreateWgmmaKernel(
      module, config.name(), aabi::kSharedMemoryName, params,
      {aabi::kTensorMapQ, aabi::kTensorMapK, aabi::kTensorMapV},
      config.threads(), [&](LLVM::LLVMFuncOp func) {
        ImplicitLocOpBuilder b(func.getLoc(), ctx);
        AttentionKernelBuilder(b, config).build(func);
      });
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// The head dimension both kernels need, one static extent for the query
/// and the value; or why not.
static FailureOr<int64_t> getHeadDim(Value query, Value value,
                                     std::string &whyNot) {
  int64_t d = cast<RankedTensorType>(query.getType()).getShape().back();
  int64_t dv = cast<RankedTensorType>(value.getType()).getShape().back();
  if (ShapedType::isDynamic(d) || d != dv) {
    whyNot = "its head dimensions are not one static extent";
    return failure();
  }
  return d;
}

FailureOr<aabi::AttentionConfig>
mlir::fp8::planFlashAttention(AttentionOp op, std::string &whyNot) {
  auto fail = [&](StringRef reason) {
    whyNot = reason.str();
    return failure();
  };
  FailureOr<int64_t> headDim = getHeadDim(op.getQuery(), op.getValue(), whyNot);
  if (failed(headDim))
    return failure();
  int64_t d = *headDim;
  RankedTensorType query = op.getQuery().getType();
  RankedTensorType value = op.getValue().getType();
  aabi::Elem qk = getKernelElem(query.getElementType());
  aabi::Elem v = getKernelElem(value.getElementType());
  aabi::Elem out = getKernelElem(op.getOutput().getType().getElementType());
  if (!aabi::isSupported(qk, v, out, d))
    return fail("no kernel takes its element types and head dimension "
                "(16-bit D = 64 or 128, FP8 D = 128; bf16, f16 or f32 "
                "output)");
  aabi::AttentionConfig config;
  config.qk = qk;
  config.v = v;
  config.out = out;
  config.headDim = d;
  config.causal = op.getCausal();
  config.lse = static_cast<bool>(op.getLse());
  // A mask that changes no score (canonicalization would drop it) is not
  // read: the launch never passes it.
  if (Value mask = op.getMask(); mask && !isNeutralAttentionMask(mask)) {
    Type element = getElementTypeOrSelf(mask.getType());
    config.mask = element.isInteger(1) ? aabi::Mask::Bool
                  : element.isF32()    ? aabi::Mask::F32
                  : element.isBF16()   ? aabi::Mask::BF16
                                       : aabi::Mask::F16;
  }
  if (config.fp8Values() && op.getBlockK() != config.blockN)
    return fail("its FP8 value has key tiles of " +
                std::to_string(op.getBlockK().value_or(0)) +
                " (the kernel's are " + std::to_string(config.blockN) + ")");
  return aabi::selectStages(config);
}

FailureOr<aabi::AttentionGradConfig>
mlir::fp8::planFlashAttentionGrad(AttentionGradOp op, std::string &whyNot) {
  if (op.getMask() && !isNeutralAttentionMask(op.getMask())) {
    whyNot = "it has a mask operand (the backward kernel masks causally "
             "and by length only)";
    return failure();
  }
  FailureOr<int64_t> headDim = getHeadDim(op.getQuery(), op.getValue(), whyNot);
  if (failed(headDim))
    return failure();
  int64_t d = *headDim;
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  auto value = cast<RankedTensorType>(op.getValue().getType());
  aabi::Elem type = getKernelElem(query.getElementType());
  Type element = query.getElementType();
  bool oneType = op.getKey().getType().getElementType() == element &&
                 value.getElementType() == element &&
                 cast<RankedTensorType>(op.getGradOutput().getType())
                         .getElementType() == element;
  if (!oneType || !aabi::isGradSupported(type, d)) {
    whyNot = "no backward kernel takes its element types and head "
             "dimension (one 16-bit type, D = 64 or 128)";
    return failure();
  }
  aabi::AttentionGradConfig config;
  config.type = type;
  config.headDim = d;
  config.causal = op.getCausal();
  return aabi::selectGradStages(config);
}

namespace {
struct ConvertFP8AttentionToWGMMAPass
    : fp8::impl::ConvertFP8AttentionToWGMMABase<ConvertFP8AttentionToWGMMAPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<AttentionOp, aabi::AttentionConfig>> planned;
    module.walk([&](AttentionOp op) {
      if (op->getParentOfType<gpu::GPUModuleOp>() ||
          !op->getParentOfType<FunctionOpInterface>())
        return;
      std::string whyNot;
      FailureOr<aabi::AttentionConfig> config = planFlashAttention(op, whyNot);
      if (succeeded(config))
        planned.push_back({op, *config});
      else if (remarks)
        op.emitRemark() << "attention without a flash kernel (decomposed on "
                           "the GPU): "
                        << whyNot;
    });
    SmallVector<std::pair<AttentionGradOp, aabi::AttentionGradConfig>>
        plannedGrads;
    module.walk([&](AttentionGradOp op) {
      if (op->getParentOfType<gpu::GPUModuleOp>() ||
          !op->getParentOfType<FunctionOpInterface>())
        return;
      std::string whyNot;
      FailureOr<aabi::AttentionGradConfig> config =
          planFlashAttentionGrad(op, whyNot);
      if (succeeded(config))
        plannedGrads.push_back({op, *config});
      else if (remarks)
        op.emitRemark() << "attention backward without a flash kernel "
                           "(decomposed on the GPU): "
                        << whyNot;
    });
    if (planned.empty() && plannedGrads.empty())
      return;
    if (std::optional<std::string> error =
            checkNVVMTarget(chip, features, /*needsWgmma=*/true)) {
      module.emitError() << *error;
      return signalPassFailure();
    }
    FailureOr<gpu::GPUModuleOp> kernels =
        getOrCreateKernelModule(module, aabi::kModuleName, chip, features);
    if (failed(kernels))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    for (auto &[op, config] : planned) {
      LLVM::LLVMFuncOp kernel = getOrBuildFlashAttentionKernel(*kernels, config);
      op->setAttr(kWgmmaKernelAttr,
                  SymbolRefAttr::get(
                      StringAttr::get(ctx, aabi::kModuleName),
                      {FlatSymbolRefAttr::get(kernel.getSymNameAttr())}));
      op->setAttr(kWgmmaTileAttr,
                  DenseI64ArrayAttr::get(ctx, {config.blockM, config.blockN,
                                               config.threads(),
                                               config.sharedBytes()}));
      if (remarks)
        op.emitRemark() << "attention on the flash kernel " << config.name();
    }
    for (auto &[op, config] : plannedGrads) {
      LLVM::LLVMFuncOp kernel =
          getOrBuildFlashAttentionGradKernel(*kernels, config);
      op->setAttr(kWgmmaKernelAttr,
                  SymbolRefAttr::get(
                      StringAttr::get(ctx, aabi::kModuleName),
                      {FlatSymbolRefAttr::get(kernel.getSymNameAttr())}));
      op->setAttr(kWgmmaTileAttr,
                  DenseI64ArrayAttr::get(ctx, {config.blockN, config.blockM,
                                               config.threads(),
                                               config.sharedBytes()}));
      if (remarks)
        op.emitRemark() << "attention backward on the flash kernel "
                        << config.name();
    }
  }
};
} // namespace
