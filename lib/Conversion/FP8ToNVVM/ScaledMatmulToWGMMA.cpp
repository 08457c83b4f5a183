//===- ScaledMatmulToWGMMA.cpp - fp8.scaled_matmul to a Hopper GEMM -------===//
//
// convert-fp8-scaled-matmul-to-wgmma: every fp8.scaled_matmul gets an sm_90a
// GEMM kernel in `gpu.module @fp8_gemm_kernels` (GemmKernelABI.h is the
// launch contract) and a `fp8.wgmma_kernel` attribute naming it; operands in
// the wrong orientation are taken from, or turned into, fp8.cast_transpose
// copies (FP8 wgmma reads both operands K-major).
//
// The kernel is built from NVVM ops (no PTX strings), after DeepGEMM and
// CUTLASS's warp-specialized persistent FP8 GEMMs:
//  - one producer warpgroup (setmaxnreg down to 40) whose elected thread
//    issues TMA loads of BMx128 and BNx128 FP8 tiles, 128-byte swizzled,
//    into an S-stage ring guarded by full/empty mbarriers;
//  - BM/64 consumer warpgroups (setmaxnreg up to 232), each running 4
//    wgmma m64nBNk32 per stage on shared-memory descriptors, keeping one
//    wgmma group in flight, or promoting every 4 wgmma (128 K) into a
//    separate f32 accumulator -- with per-block scales, as
//    fma(partial, lhs_scale[row, kb] * rhs_scale[col / 128, kb], acc), the
//    scales read while the wgmma runs (DeepGEMM's sm90 1d2d kernel);
//  - a persistent loop over output tiles (one block per SM), grouped raster;
//  - an epilogue that scales, adds the bias, converts, reduces the amax and
//    stores directly from the accumulator registers, predicated on edges, or
//    (tma-store) stages each warpgroup's 64 x BN tile in shared memory and
//    stores it with TMA, which clips the edges.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToNVVM/ScaledMatmulToWGMMA.h"
#include "WgmmaBuilder.h"
#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"
#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Conversion/ScaleArith.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8SCALEDMATMULTOWGMMA
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
namespace gabi = mlir::fp8::gemm_abi;

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

namespace {
class GemmKernelBuilder : public WgmmaBuilder {
public:
  GemmKernelBuilder(ImplicitLocOpBuilder &b, const gabi::GemmConfig &config)
      : WgmmaBuilder(b), c(config) {}

  void build(LLVM::LLVMFuncOp func);

private:
  // Shared memory layout (byte offsets from the 1024-aligned base).
  int64_t offsetA(int64_t stage) { return stage * c.blockM * gabi::kRowBytes; }
  int64_t offsetB(int64_t stage) {
    return c.stages * c.blockM * gabi::kRowBytes +
           stage * c.blockN * gabi::kRowBytes;
  }
  int64_t offsetFull() { return c.barrierOffset(); }
  int64_t offsetEmpty() { return offsetFull() + 8 * c.stages; }
  Value fullBarrier(Value stage) {
    return gepBytes(smem, add(i32(offsetFull()), mul(stage, i32(8))));
  }
  Value emptyBarrier(Value stage) {
    return gepBytes(smem, add(i32(offsetEmpty()), mul(stage, i32(8))));
  }
  Value tileA(Value stage) {
    return gepBytes(smem, mul(stage, i32(c.blockM * gabi::kRowBytes)));
  }
  Value tileB(Value stage) {
    return gepBytes(smem, add(i32(offsetB(0)),
                              mul(stage, i32(c.blockN * gabi::kRowBytes))));
  }
  /// (stage, phase) of the next pipeline slot.
  std::pair<Value, Value> advance(Value stage, Value phase) {
    return advanceRing(stage, phase, c.stages);
  }

  void buildProducer();
  void buildConsumer();
  /// Tile coordinates (batch, first row, first column) of tile `t`.
  std::tuple<Value, Value, Value> tileCoords(Value t);
  /// wgmma steps (32 bytes of K each: k32 FP8, k16 bf16 / f16)
  /// [firstStep, firstStep + numSteps) of a stage, one commit group.
  Value mmaBlock(Value accumulator, Value stage, Value consumer, bool fromZero,
                 int64_t firstStep = 0,
                 int64_t numSteps = gabi::kRowBytes / 32);
  /// Gives a stage's ring slot back to the producer (one arrive per warp).
  void release(Value stage) { arrivePerWarp(emptyBarrier(stage), lane); }
  /// One stage of a block-scaled or MX GEMM: its partial sums from zero,
  /// each promoted into `acc` with its scales, the slot released.
  Value scaledStage(Value acc, Value stage, Value consumer, Value tile,
                    Value kb);
  /// The 1d1d scales of K block `kb`: the thread's two rows' lhs scales,
  /// then its BN/4 columns' rhs scales (column 2j + e at 2 + 2j + e).
  SmallVector<Value> loadRowBlockScales(Value tile, Value consumer, Value kb);
  /// The E8M0 codes an MX promotion needs for 32-deep K block `kb32`: the
  /// thread's two rows', and its BN/4 columns' packed four to an i32 (few
  /// registers next to the two accumulators).
  struct MXCodes {
    Value exists; // i1: the block is inside K
    Value rows[2];
    SmallVector<Value> columns;
  };
  MXCodes loadMXCodes(Value tile, Value consumer, Value kb32);
  /// fma(partial, f32(2^(row - 127) * 2^(col - 127)), acc) per element; a
  /// factor of 0 for a block past K.
  Value promoteMX(Value acc, Value partial, const MXCodes &codes);
  /// This thread's rows of the tile: the first of each 8-row half of its
  /// warp's 16 (wgmma m64nN f32 fragment: rows 16w + lane/4 and + 8).
  Value fragmentRow(Value tileRow, Value consumer);
  /// This thread's first column of the tile: 8j + 2(lane % 4) (+1).
  Value fragmentColumn(Value tileCol) {
    return add(tileCol, mul(remU(lane, i32(4)), i32(2)));
  }
  /// The lhs scale row of fragment row `row0` + 8h, batch * M + row: rows
  /// past M are computed and never stored, so they read the last row's
  /// scale instead of past the end.
  Value lhsScaleRow(Value batchIndex, Value row0, int h) {
    return add(mul(batchIndex, m), arith::MinUIOp::create(
                                       b, add(row0, i32(8 * h)),
                                       sub(m, i32(1))));
  }
  /// The rhs scale row of column `col0` + `offset` (one scale row per
  /// column), batch' * N + column, clamped likewise.
  Value rhsScaleRow(Value batchIndex, Value col0, int64_t offset) {
    return add(mul(mul(batchIndex, rhsBatched), n),
               arith::MinUIOp::create(b, add(col0, i32(offset)),
                                      sub(n, i32(1))));
  }
  /// The epilogue's f32(lhs_scale_inv * rhs_scale_inv); 1 when the block
  /// scales were applied in the promotion, or there are none (16-bit).
  Value tensorScale() {
    if (c.blockScaled || c.rowScaled || c.mxScaled || !c.isScaled())
      return f32(1.0f);
    return arith::MulFOp::create(
        b, LLVM::LoadOp::create(b, b.getF32Type(), lhsScale, 4),
        LLVM::LoadOp::create(b, b.getF32Type(), rhsScale, 4));
  }
  /// The two block-scale factors f32(lhs[row h, kb] * rhs[col tile, kb]) of
  /// this thread's rows for K block `kb`.
  std::pair<Value, Value> blockScaleFactors(Value tile, Value consumer,
                                            Value kb);
  /// fma(partial, factor, acc) element by element.
  Value promoteScaled(Value acc, Value partial,
                      llvm::function_ref<Value(int64_t)> factorOf);
  Value epilogue(Value accumulator, Value tile, Value consumer, Value amax);
  enum class Store { Pairs, Predicated, Staged };
  void storeResults(Value accumulator, Value batchIndex, Value row0,
                    Value col0, Value scale, Value &amax, Store mode);
  Value tmaStoreEpilogue(Value accumulator, Value batchIndex, Value tileRow,
                         Value tileCol, Value consumer, Value amax);
  /// Address of element (row, col) of the staging tile, both relative to
  /// it: gabi::stagedByteOffset.
  Value stagedAddress(Value row, Value col);
  /// One stmatrix .x4 of the 16-bit fragments of column blocks j0 and
  /// j0 + 1, rows +0 and +8 each, into the staging tile.
  void stageMatrices(int64_t j0, ValueRange fragments);

  const gabi::GemmConfig &c;
  LLVM::LLVMStructType accType;
  Value smem, tmA, tmB, tmOut, out, lhsScale, rhsScale, bias, amaxPtr;
  /// The staging tile of a TMA-store epilogue and its first row / column.
  Value staging, stagedRow, stagedCol;
  Value m, n, k, batch, rhsBatched;
  Value tilesM, tilesN, tilesPerBatch, numTiles, numK;
  /// Column blocks of 128 of the rhs scales (blockScaled).
  Value scaleBlocksN;
};
} // namespace

std::tuple<Value, Value, Value> GemmKernelBuilder::tileCoords(Value t) {
  // Grouped raster (as Triton and CUTLASS do): bands of kRasterGroup row
  // tiles, rows fastest inside a band, so that the blocks running at once
  // share a few A panels and a few B panels and both stay in L2.
  Value batchIndex = divU(t, tilesPerBatch);
  Value rest = remU(t, tilesPerBatch);
  Value bandTiles = mul(tilesN, i32(gabi::kRasterGroup));
  Value firstRow = mul(divU(rest, bandTiles), i32(gabi::kRasterGroup));
  Value bandRows =
      arith::MinUIOp::create(b, sub(tilesM, firstRow), i32(gabi::kRasterGroup));
  Value inBand = remU(rest, bandTiles);
  Value row0 = mul(add(firstRow, remU(inBand, bandRows)), i32(c.blockM));
  Value col0 = mul(divU(inBand, bandRows), i32(c.blockN));
  return {batchIndex, row0, col0};
}

void GemmKernelBuilder::buildProducer() {
  NVVM::SetMaxRegisterOp::create(b, gabi::kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  Value elected = cmp(arith::CmpIPredicate::eq, tid, i32(0));
  ifThen(elected, [&] {
    Value first = NVVM::BlockIdXOp::create(b, b.getI32Type());
    Value stride = NVVM::GridDimXOp::create(b, b.getI32Type());
    Value txBytes = i32(c.stageBytes());
    forLoop(first, numTiles, stride, {i32(0), i32(0)},
            [&](Value t, ValueRange slot) -> SmallVector<Value> {
              Value batchIndex, row0, col0;
              std::tie(batchIndex, row0, col0) = tileCoords(t);
              Value batchB = mul(batchIndex, rhsBatched);
              return forLoop(
                  i32(0), numK, i32(1), slot,
                  [&](Value kb, ValueRange s) -> SmallVector<Value> {
                    Value stage = s[0], phase = s[1];
                    // The slot is free once every consumer warp released
                    // it; on the first pass over the ring the wait on the
                    // preceding phase returns at once.
                    wait(emptyBarrier(stage), xorI(phase, i32(1)));
                    Value full = fullBarrier(stage);
                    NVVM::MBarrierArriveExpectTxOp::create(
                        b, Type(), full, txBytes, NVVM::MemScopeKind::CTA,
                        /*relaxed=*/false, Value());
                    Value k0 = mul(kb, i32(c.blockK()));
                    tmaLoad(tileA(stage), tmA, {k0, row0, batchIndex}, full);
                    tmaLoad(tileB(stage), tmB, {k0, col0, batchB}, full);
                    auto [ns, np] = advance(stage, phase);
                    return {ns, np};
                  });
            });
  });
}

Value GemmKernelBuilder::mmaBlock(Value accumulator, Value stage,
                                  Value consumer, bool fromZero,
                                  int64_t firstStep, int64_t numSteps) {
  Value rowOffset = mul(consumer, i32(64 * gabi::kRowBytes));
  Value descA = descriptor(gepBytes(tileA(stage), rowOffset));
  Value descB = descriptor(tileB(stage));
  NVVM::WgmmaFenceAlignedOp::create(b);
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, c.blockN, c.instructionK());
  Value d = accumulator;
  for (int64_t kk = firstStep; kk < firstStep + numSteps; ++kk) {
    // A step is 32 bytes along the 128-byte swizzled row: +2 in the
    // descriptor's address field (16-byte units).
    Value step = i64(2 * kk);
    auto scaleD = fromZero && kk == firstStep ? NVVM::WGMMAScaleOut::zero
                                              : NVVM::WGMMAScaleOut::one;
    d = NVVM::WgmmaMmaAsyncOp::create(
        b, accType, d, add(descA, step), add(descB, step), shape,
        getWgmmaType(c.lhs), getWgmmaType(c.rhs), NVVM::WGMMATypes::f32, scaleD,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        NVVM::MMALayout::row, NVVM::MMALayout::col,
        NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  return d;
}

Value GemmKernelBuilder::fragmentRow(Value tileRow, Value consumer) {
  return add(add(tileRow, mul(consumer, i32(64))),
             add(mul(warpInGroup, i32(16)), divU(lane, i32(4))));
}

std::pair<Value, Value>
GemmKernelBuilder::blockScaleFactors(Value tile, Value consumer, Value kb) {
  auto [batchIndex, tileRow, tileCol] = tileCoords(tile);
  Type f32Type = b.getF32Type();
  auto load = [&](Value base, Value index) -> Value {
    return LLVM::LoadOp::create(b, f32Type, gep(base, f32Type, index), 4);
  };
  Value row0 = fragmentRow(tileRow, consumer);
  Value factors[2];
  Value batchB = mul(batchIndex, rhsBatched);
  Value rhsIndex =
      add(mul(zext64(add(mul(batchB, scaleBlocksN), divU(tileCol, i32(128)))),
              zext64(numK)),
          zext64(kb));
  Value rhsScaleValue = load(rhsScale, rhsIndex);
  for (int h = 0; h < 2; ++h) {
    Value lhsIndex =
        add(mul(zext64(lhsScaleRow(batchIndex, row0, h)), zext64(numK)),
            zext64(kb));
    factors[h] = arith::MulFOp::create(b, load(lhsScale, lhsIndex),
                                       rhsScaleValue);
  }
  return {factors[0], factors[1]};
}

Value GemmKernelBuilder::promoteScaled(
    Value acc, Value partial, llvm::function_ref<Value(int64_t)> factorOf) {
  int64_t numAcc = accType.getBody().size();
  for (int64_t i = 0; i < numAcc; ++i) {
    Value x = LLVM::ExtractValueOp::create(b, acc, i);
    Value p = LLVM::ExtractValueOp::create(b, partial, i);
    acc = LLVM::InsertValueOp::create(
        b, acc, math::FmaOp::create(b, p, factorOf(i), x), i);
  }
  return acc;
}

GemmKernelBuilder::MXCodes GemmKernelBuilder::loadMXCodes(Value tile,
                                                          Value consumer,
                                                          Value kb32) {
  auto [batchIndex, tileRow, tileCol] = tileCoords(tile);
  Type i8 = b.getI8Type(), i32Type = b.getI32Type();
  Value numK32 = ceilDiv(k, 32);
  MXCodes codes;
  // A 32-deep block past K (the last stage's tail) has no scale: its
  // partial sum is 0 and its factor 0, never a NaN from a clamped read.
  codes.exists = cmp(arith::CmpIPredicate::ult, kb32, numK32);
  Value kbSafe = arith::MinUIOp::create(b, kb32, sub(numK32, i32(1)));
  // i32 indices (GemmKernelABI.h: M, N and K are i32): the per-column
  // offsets LLVM hoists out of the K loop take one register each, not two.
  auto load = [&](Value base, Value scaleRow) -> Value {
    Value index = add(mul(scaleRow, numK32), kbSafe);
    return arith::ExtUIOp::create(
        b, i32Type, LLVM::LoadOp::create(b, i8, gep(base, i8, index), 1));
  };
  Value row0 = fragmentRow(tileRow, consumer);
  for (int h = 0; h < 2; ++h)
    codes.rows[h] = load(lhsScale, lhsScaleRow(batchIndex, row0, h));
  // The thread's BN/4 columns' codes, four to a register.
  Value col0 = fragmentColumn(tileCol);
  for (int64_t j = 0; j < c.blockN / 8; ++j)
    for (int e = 0; e < 2; ++e) {
      int64_t slot = 2 * j + e;
      Value code = arith::ShLIOp::create(
          b, load(rhsScale, rhsScaleRow(batchIndex, col0, 8 * j + e)),
          i32(8 * (slot % 4)));
      if (slot % 4 == 0)
        codes.columns.push_back(code);
      else
        codes.columns.back() = arith::OrIOp::create(b, codes.columns.back(), code);
    }
  return codes;
}

Value GemmKernelBuilder::promoteMX(Value acc, Value partial,
                                   const MXCodes &codes) {
  Location loc = b.getLoc();
  Value rowScale[2];
  for (int h = 0; h < 2; ++h)
    rowScale[h] = createE8M0ToF32(b, loc, codes.rows[h]);
  for (int64_t j = 0; j < c.blockN / 8; ++j)
    for (int e = 0; e < 2; ++e) {
      int64_t slot = 2 * j + e;
      Value code = andI(arith::ShRUIOp::create(b, codes.columns[slot / 4],
                                               i32(8 * (slot % 4))),
                        i32(0xFF));
      Value colScale = createE8M0ToF32(b, loc, code);
      for (int h = 0; h < 2; ++h) {
        int64_t i = 4 * j + 2 * h + e;
        Value factor =
            select(codes.exists, arith::MulFOp::create(b, rowScale[h], colScale),
                   f32(0.0f));
        Value x = LLVM::ExtractValueOp::create(b, acc, i);
        Value p = LLVM::ExtractValueOp::create(b, partial, i);
        acc = LLVM::InsertValueOp::create(
            b, acc, math::FmaOp::create(b, p, factor, x), i);
      }
    }
  return acc;
}

SmallVector<Value> GemmKernelBuilder::loadRowBlockScales(Value tile,
                                                        Value consumer,
                                                        Value kb) {
  auto [batchIndex, tileRow, tileCol] = tileCoords(tile);
  Type f32Type = b.getF32Type();
  // i32 offsets, as loadMXCodes.
  auto load = [&](Value base, Value scaleRow) -> Value {
    Value index = add(mul(scaleRow, numK), kb);
    return LLVM::LoadOp::create(b, f32Type, gep(base, f32Type, index), 4);
  };
  SmallVector<Value> scales;
  Value row0 = fragmentRow(tileRow, consumer);
  for (int h = 0; h < 2; ++h)
    scales.push_back(load(lhsScale, lhsScaleRow(batchIndex, row0, h)));
  Value col0 = fragmentColumn(tileCol);
  for (int64_t j = 0; j < c.blockN / 8; ++j)
    for (int e = 0; e < 2; ++e)
      scales.push_back(
          load(rhsScale, rhsScaleRow(batchIndex, col0, 8 * j + e)));
  return scales;
}

Value GemmKernelBuilder::scaledStage(Value acc, Value stage, Value consumer,
                                     Value tile, Value kb) {
  Value undef = LLVM::UndefOp::create(b, accType);
  if (c.blockScaled && c.rhsRowBlocks) {
    Value partial = mmaBlock(undef, stage, consumer, /*fromZero=*/true);
    // Row and column scales read while the wgmma runs.
    SmallVector<Value> scales = loadRowBlockScales(tile, consumer, kb);
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    release(stage);
    // Element 4j + 2h + e: row h, column 2j + e of the thread's.
    return promoteScaled(acc, partial, [&](int64_t i) -> Value {
      return arith::MulFOp::create(b, scales[(i / 2) % 2],
                                   scales[2 + 2 * (i / 4) + i % 2]);
    });
  }
  if (c.blockScaled) {
    Value partial = mmaBlock(undef, stage, consumer, /*fromZero=*/true);
    // The scale loads overlap the wgmma in flight.
    Value first, second;
    std::tie(first, second) = blockScaleFactors(tile, consumer, kb);
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    release(stage);
    // Element 4j + 2h + e is in the thread's row h.
    return promoteScaled(acc, partial, [&](int64_t i) {
      return (i / 2) % 2 == 0 ? first : second;
    });
  }
  // MX: every wgmma k32 step is a block of its own, promoted before the
  // next one starts (Hopper has no block-scaled tensor-core instruction).
  for (int64_t kk = 0; kk < gabi::kRowBytes / 32; ++kk) {
    Value partial = mmaBlock(undef, stage, consumer, /*fromZero=*/true, kk, 1);
    MXCodes codes =
        loadMXCodes(tile, consumer, add(mul(kb, i32(4)), i32(kk)));
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    acc = promoteMX(acc, partial, codes);
  }
  release(stage);
  return acc;
}

void GemmKernelBuilder::buildConsumer() {
  NVVM::SetMaxRegisterOp::create(b, gabi::kConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  Value consumer = sub(warpgroup, i32(1));
  Value laneZero = cmp(arith::CmpIPredicate::eq, lane, i32(0));
  Value first = NVVM::BlockIdXOp::create(b, b.getI32Type());
  Value stride = NVVM::GridDimXOp::create(b, b.getI32Type());
  int64_t numAcc = accType.getBody().size();

  SmallVector<Value> finalState = forLoop(
      first, numTiles, stride, {i32(0), i32(0), f32(0.0f)},
      [&](Value t, ValueRange state) -> SmallVector<Value> {
        // K = 0 (uniform across the grid): no K block, so no loads and no
        // wgmma; the epilogue gets a zero accumulator (the result is the
        // bias, or zeros).
        auto hasK = scf::IfOp::create(
            b, TypeRange{accType, b.getI32Type(), b.getI32Type()},
            cmp(arith::CmpIPredicate::ugt, numK, i32(0)),
            /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&hasK.getElseRegion().front());
          Value zeros = LLVM::UndefOp::create(b, accType);
          for (int64_t i = 0; i < numAcc; ++i)
            zeros = LLVM::InsertValueOp::create(b, zeros, f32(0.0f), i);
          scf::YieldOp::create(b, ValueRange{zeros, state[0], state[1]});
        }
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&hasK.getThenRegion().front());
        // The first K block starts the accumulator with scale-d = 0, peeled
        // off the loop: PTX forbids writing the accumulator registers
        // between wgmma.fence and the wgmma that reads them, which zeroing
        // them in the loop would do. Promotion sums the blocks' partial
        // products in registers of its own.
        auto previousStage = [&](Value stage) {
          return select(cmp(arith::CmpIPredicate::eq, stage, i32(0)),
                        i32(c.stages - 1), sub(stage, i32(1)));
        };
        Value undef = LLVM::UndefOp::create(b, accType);
        wait(fullBarrier(state[0]), state[1]);
        bool scaled = c.blockScaled || c.mxScaled;
        Value first;
        if (scaled) {
          // From zero, as the definition: fma(p, f, +0).
          Value zeros = undef;
          for (int64_t i = 0; i < numAcc; ++i)
            zeros = LLVM::InsertValueOp::create(b, zeros, f32(0.0f), i);
          first = scaledStage(zeros, state[0], consumer, t, i32(0));
        } else {
          first = mmaBlock(undef, state[0], consumer, /*fromZero=*/true);
        }
        if (c.promote && !scaled) {
          NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
          release(state[0]);
        } else if (!c.promote) {
          // One group stays in flight; its slot is released by the next.
          NVVM::WgmmaWaitGroupSyncOp::create(b, 1);
        }
        auto [stage1, phase1] = advance(state[0], state[1]);
        SmallVector<Value> loop = forLoop(
            i32(1), numK, i32(1), {first, stage1, phase1},
            [&](Value kb, ValueRange s) -> SmallVector<Value> {
              Value acc = s[0], stage = s[1], phase = s[2];
              wait(fullBarrier(stage), phase);
              if (scaled) {
                acc = scaledStage(acc, stage, consumer, t, kb);
              } else if (c.promote) {
                Value partial = mmaBlock(undef, stage, consumer, true);
                NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
                release(stage);
                for (int64_t i = 0; i < numAcc; ++i) {
                  Value x = LLVM::ExtractValueOp::create(b, acc, i);
                  Value y = LLVM::ExtractValueOp::create(b, partial, i);
                  acc = LLVM::InsertValueOp::create(
                      b, acc, arith::AddFOp::create(b, x, y), i);
                }
              } else {
                acc = mmaBlock(acc, stage, consumer, false);
                // The previous group is done: its slot goes back to the
                // producer.
                NVVM::WgmmaWaitGroupSyncOp::create(b, 1);
                release(previousStage(stage));
              }
              auto [ns, np] = advance(stage, phase);
              return {acc, ns, np};
            });
        if (!c.promote) {
          NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
          release(previousStage(loop[1]));
        }
        scf::YieldOp::create(b, ValueRange{loop[0], loop[1], loop[2]});
        b.setInsertionPointAfter(hasK);
        Value amax = epilogue(hasK.getResult(0), t, consumer, state[2]);
        return {hasK.getResult(1), hasK.getResult(2), amax};
      });

  if (c.tmaStore)
    ifThen(cmp(arith::CmpIPredicate::eq, tid, i32(0)), [&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, UnitAttr());
    });
  if (!c.amax)
    return;
  // Warp butterfly max, then one atomic per warp on the f32 bits (valid
  // for non-negative floats; float redux.sync needs sm_100a).
  Value amax = finalState[2];
  for (int64_t offset = 16; offset >= 1; offset /= 2) {
    Value other = NVVM::ShflOp::create(b, b.getF32Type(), i32(-1), amax,
                                       i32(offset), i32(31),
                                       NVVM::ShflKind::bfly, UnitAttr());
    amax = arith::MaxNumFOp::create(b, amax, other);
  }
  ifThen(laneZero, [&] {
    Value bits = arith::BitcastOp::create(b, b.getI32Type(), amax);
    LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::umax, amaxPtr, bits,
                              LLVM::AtomicOrdering::monotonic);
  });
}

Value GemmKernelBuilder::epilogue(Value accumulator, Value t, Value consumer,
                                  Value amax) {
  auto [batchIndex, tileRow, tileCol] = tileCoords(t);
  if (c.tmaStore)
    return tmaStoreEpilogue(accumulator, batchIndex, tileRow, tileCol,
                            consumer, amax);
  // wgmma m64nN f32 fragment: warp w of the warpgroup holds rows
  // 16w + lane/4 (+8), columns 8j + 2(lane%4) (+1).
  Value row0 = fragmentRow(tileRow, consumer);
  Value col0 = fragmentColumn(tileCol);
  Value scale = tensorScale();
  // Whole tile in bounds (and pairs aligned): unpredicated pair stores.
  Value inRows = cmp(arith::CmpIPredicate::ule,
                     add(add(tileRow, mul(consumer, i32(64))), i32(64)), m);
  Value inCols =
      cmp(arith::CmpIPredicate::ule, add(tileCol, i32(c.blockN)), n);
  Value evenN = cmp(arith::CmpIPredicate::eq, andI(n, i32(1)), i32(0));
  Value full = andI(andI(inRows, inCols), evenN);
  auto ifOp = scf::IfOp::create(b, TypeRange{b.getF32Type()}, full, true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value a = amax;
    storeResults(accumulator, batchIndex, row0, col0, scale, a, Store::Pairs);
    scf::YieldOp::create(b, a);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    Value e = amax;
    storeResults(accumulator, batchIndex, row0, col0, scale, e,
                 Store::Predicated);
    scf::YieldOp::create(b, e);
  }
  return ifOp.getResult(0);
}

Value GemmKernelBuilder::tmaStoreEpilogue(Value accumulator, Value batchIndex,
                                          Value tileRow, Value tileCol,
                                          Value consumer, Value amax) {
  Value groupRow = add(tileRow, mul(consumer, i32(64)));
  Value row0 = fragmentRow(tileRow, consumer);
  Value col0 = fragmentColumn(tileCol);
  Value scale = tensorScale();
  staging = gepBytes(smem, add(i32(c.stagingOffset()),
                               mul(consumer, i32(c.stagedTileBytes()))));
  stagedRow = groupRow;
  stagedCol = tileCol;
  Value elected = cmp(arith::CmpIPredicate::eq, tid, i32(0));
  // Named barrier of this warpgroup only (0 is the block's).
  auto syncGroup = [&] {
    NVVM::BarrierOp::create(b, Type(), add(consumer, i32(1)),
                            i32(gabi::kWarpgroup),
                            NVVM::BarrierReductionAttr(), Value());
  };
  // The previous tile's TMA store must be done reading the staging tile.
  ifThen(elected, [&] {
    NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr());
  });
  syncGroup();
  storeResults(accumulator, batchIndex, row0, col0, scale, amax,
               Store::Staged);
  // The generic-proxy writes become visible to the TMA unit (async proxy).
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  syncGroup();
  // One TMA store per 128-byte panel that starts inside the result.
  ifThen(elected, [&] {
    int64_t columns = gabi::stagedColumns(c.out);
    for (int64_t p = 0; p < c.blockN / columns; ++p) {
      Value col = add(tileCol, i32(p * columns));
      ifThen(cmp(arith::CmpIPredicate::ult, col, n), [&] {
        NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
            b, tmOut, gepBytes(staging, i32(p * 64 * gabi::kRowBytes)),
            ValueRange{col, groupRow, batchIndex}, Value(),
            NVVM::TMAStoreMode::TILE, Value());
      });
    }
    NVVM::CpAsyncBulkCommitGroupOp::create(b);
  });
  return amax;
}

Value GemmKernelBuilder::stagedAddress(Value row, Value col) {
  int64_t columns = gabi::stagedColumns(c.out);
  int64_t bytes = gabi::bytes(c.out);
  Value byte = mul(remU(col, i32(columns)), i32(bytes));
  Value chunk = xorI(divU(byte, i32(16)), remU(row, i32(8)));
  Value offset =
      add(add(mul(divU(col, i32(columns)), i32(64 * gabi::kRowBytes)),
              mul(row, i32(gabi::kRowBytes))),
          add(mul(chunk, i32(16)), remU(byte, i32(16))));
  return gepBytes(staging, offset);
}

void GemmKernelBuilder::stageMatrices(int64_t j0, ValueRange fragments) {
  // Lanes 8q .. 8q + 7 give the rows of matrix q = (j0 + q / 2, h = q % 2):
  // row 16 * warp + 8h + lane % 8, columns 8 (j0 + q / 2) .. +7.
  Value q = divU(lane, i32(8));
  Value row = add(add(mul(warpInGroup, i32(16)), mul(remU(q, i32(2)), i32(8))),
                  remU(lane, i32(8)));
  Value col = mul(add(i32(j0), divU(q, i32(2))), i32(8));
  NVVM::StMatrixOp::create(b, stagedAddress(row, col), fragments,
                           NVVM::MMALayout::row,
                           NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
                           NVVM::LdStMatrixEltType::B16);
}

void GemmKernelBuilder::storeResults(Value accumulator, Value batchIndex,
                                     Value row0, Value col0, Value scale,
                                     Value &amax, Store mode) {
  Type outType = getKernelElemType(ctx, c.out);
  Type biasType = getKernelElemType(ctx, c.bias);
  Value batchRow = mul(batchIndex, m);
  auto convert = [&](Value v) -> Value {
    if (outType.isF32())
      return v;
    return arith::TruncFOp::create(b, outType, v);
  };
  auto widen = [&](Value v) -> Value {
    if (v.getType().isF32())
      return v;
    return arith::ExtFOp::create(b, b.getF32Type(), v);
  };
  int64_t outBits = outType.getIntOrFloatBitWidth();
  Type bitsType = b.getIntegerType(outBits);
  Type pairType = b.getIntegerType(2 * outBits);
  // Row-wise scales: lhs_scale_inv of this thread's two rows, and below
  // rhs_scale_inv of each column.
  Type f32Type = b.getF32Type();
  auto loadScale = [&](Value base, Value index) -> Value {
    return LLVM::LoadOp::create(b, f32Type, gep(base, f32Type, zext64(index)),
                                4);
  };
  Value rowScale[2];
  // Staged 16-bit pairs of column blocks j - 1 and j, for one stmatrix.
  SmallVector<Value, 4> fragments(4);
  if (c.rowScaled)
    for (int h = 0; h < 2; ++h)
      rowScale[h] = loadScale(lhsScale, lhsScaleRow(batchIndex, row0, h));
  for (int64_t j = 0; j < c.blockN / 8; ++j) {
    Value col = add(col0, i32(8 * j));
    Value colScale[2];
    if (c.rowScaled)
      for (int e = 0; e < 2; ++e)
        colScale[e] =
            loadScale(rhsScale, rhsScaleRow(batchIndex, col0, 8 * j + e));
    Value biasValue[2];
    if (biasType) {
      for (int e = 0; e < 2; ++e) {
        // Clamped index: columns past N are computed but never stored.
        Value index = arith::MinUIOp::create(b, add(col, i32(e)),
                                             sub(n, i32(1)));
        biasValue[e] = widen(LLVM::LoadOp::create(
            b, biasType, gep(bias, biasType, zext64(index)),
            biasType.getIntOrFloatBitWidth() / 8));
      }
    }
    for (int h = 0; h < 2; ++h) {
      Value row = add(row0, i32(8 * h));
      Value rowOk = cmp(arith::CmpIPredicate::ult, row, m);
      Value results[2];
      for (int e = 0; e < 2; ++e) {
        Value v = LLVM::ExtractValueOp::create(b, accumulator, 4 * j + 2 * h + e);
        if (c.rowScaled)
          // The one K block's promotion onto +0 (the op's definition).
          v = math::FmaOp::create(
              b, v, arith::MulFOp::create(b, rowScale[h], colScale[e]),
              f32(0.0f));
        else
          v = arith::MulFOp::create(b, v, scale);
        if (biasType)
          v = arith::AddFOp::create(b, v, biasValue[e]);
        results[e] = convert(v);
      }
      Value address;
      if (mode != Store::Staged)
        address = gep(
            out, outType,
            add(arith::MulIOp::create(b, zext64(add(batchRow, row)),
                                      zext64(n)),
                zext64(col)));
      if (mode != Store::Predicated) {
        auto bitsOf = [&](Value x) {
          return arith::ExtUIOp::create(
              b, pairType, arith::BitcastOp::create(b, bitsType, x));
        };
        Value pair = arith::OrIOp::create(
            b, bitsOf(results[0]),
            arith::ShLIOp::create(b, bitsOf(results[1]),
                                  arith::ConstantOp::create(
                                      b, b.getIntegerAttr(pairType, outBits))));
        if (mode == Store::Staged && outBits == 16) {
          // Swizzled staging (TMA clips the edges; the amax skips them).
          fragments[2 * (j % 2) + h] = pair;
          if (j % 2 == 1 && h == 1)
            stageMatrices(j - 1, fragments);
        } else {
          if (mode == Store::Staged)
            address = stagedAddress(sub(row, stagedRow), sub(col, stagedCol));
          LLVM::StoreOp::create(b, pair, address, 2 * outBits / 8);
        }
        if (c.amax)
          for (int e = 0; e < 2; ++e) {
            Value magnitude = math::AbsFOp::create(b, widen(results[e]));
            if (mode == Store::Staged)
              magnitude = select(
                  andI(rowOk, cmp(arith::CmpIPredicate::ult,
                                  add(col, i32(e)), n)),
                  magnitude, f32(0.0f));
            amax = arith::MaxNumFOp::create(b, amax, magnitude);
          }
        continue;
      }
      for (int e = 0; e < 2; ++e) {
        Value ok = andI(rowOk, cmp(arith::CmpIPredicate::ult,
                                   add(col, i32(e)), n));
        Value elementAddress =
            e == 0 ? address : gep(address, outType, i32(1));
        ifThen(ok, [&] {
          LLVM::StoreOp::create(b, results[e], elementAddress, outBits / 8);
        });
        if (c.amax)
          amax = arith::MaxNumFOp::create(
              b, amax,
              select(ok, math::AbsFOp::create(b, widen(results[e])),
                     f32(0.0f)));
      }
    }
  }
}

void GemmKernelBuilder::build(LLVM::LLVMFuncOp func) {
  assert((c.promote || !(c.blockScaled || c.mxScaled)) &&
         "per-block scales are applied by the promotion (selectTiles)");
  assert((!c.blockScaled || c.rhsRowBlocks || c.blockN == 128) &&
         "one rhs scale block per tile column");
  Block *entry = &func.getBody().front();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  tmA = args[gabi::kTensorMapA];
  tmB = args[gabi::kTensorMapB];
  tmOut = args[gabi::kTensorMapOut];
  out = args[gabi::kOut];
  lhsScale = args[gabi::kLhsScaleInv];
  rhsScale = args[gabi::kRhsScaleInv];
  bias = args[gabi::kBias];
  amaxPtr = args[gabi::kAmax];
  m = args[gabi::kM];
  n = args[gabi::kN];
  k = args[gabi::kK];
  batch = args[gabi::kBatch];
  rhsBatched = args[gabi::kRhsBatched];

  accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(c.blockN / 2, b.getF32Type()));

  smem = alignedSharedMemory(gabi::kSharedMemoryName);

  readThreadIndices();
  tilesM = ceilDiv(m, c.blockM);
  tilesN = ceilDiv(n, c.blockN);
  tilesPerBatch = mul(tilesM, tilesN);
  numTiles = mul(tilesPerBatch, batch);
  numK = ceilDiv(k, c.blockK());
  scaleBlocksN = ceilDiv(n, 128);
  splitWarpgroups(
      [&] {
        for (int64_t s = 0; s < c.stages; ++s) {
          NVVM::MBarrierInitOp::create(b, fullBarrier(i32(s)), i32(1),
                                       Value());
          NVVM::MBarrierInitOp::create(b, emptyBarrier(i32(s)),
                                       i32(4 * c.consumers()), Value());
        }
      },
      [&] { buildProducer(); }, [&] { buildConsumer(); });
}

LLVM::LLVMFuncOp
mlir::fp8::getOrBuildWgmmaGemmKernel(gpu::GPUModuleOp module,
                                     const gabi::GemmConfig &config) {
  MLIRContext *ctx = module.getContext();
  auto generic = LLVM::LLVMPointerType::get(ctx);
  auto global = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  SmallVector<Type> params(gabi::kNumParams, IntegerType::get(ctx, 32));
  params[gabi::kTensorMapA] = params[gabi::kTensorMapB] =
      params[gabi::kTensorMapOut] = generic;
  for (unsigned p : {gabi::kOut, gabi::kLhsScaleInv, gabi::kRhsScaleInv,
                     gabi::kBias, gabi::kAmax})
    params[p] = global;
  return getOrCreateWgmmaKernel(
      module, config.name(), gabi::kSharedMemoryName, params,
      {gabi::kTensorMapA, gabi::kTensorMapB, gabi::kTensorMapOut},
      config.threads(), [&](LLVM::LLVMFuncOp func) {
        ImplicitLocOpBuilder b(func.getLoc(), ctx);
        GemmKernelBuilder(b, config).build(func);
      });
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// The same FP8 matrix in the other orientation, when the graph has it or
/// can make it: the other result of a fp8.cast_transpose, or the transpose
/// of a rank-2 fp8.quantize turned into a fp8.cast_transpose (one pass over
/// the input writes both layouts). Null otherwise.
static Value getTransposedCopy(OpBuilder &builder, Value operand) {
  if (auto fused = operand.getDefiningOp<CastTransposeOp>())
    return operand == fused.getResult() ? fused.getTransposed()
                                        : fused.getResult();
  auto quantize = operand.getDefiningOp<QuantizeOp>();
  if (!quantize || quantize.getResult().getType().getRank() != 2)
    return Value();
  RankedTensorType type = quantize.getResult().getType();
  auto transposedType = RankedTensorType::get(
      {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(quantize);
  auto fused = CastTransposeOp::create(
      builder, quantize.getLoc(), type, transposedType,
      quantize.getAmax() ? quantize.getAmax().getType() : Type(),
      quantize.getInput(), quantize.getScale());
  quantize.getResult().replaceAllUsesWith(fused.getResult());
  if (quantize.getAmax())
    quantize.getAmax().replaceAllUsesWith(fused.getAmax());
  quantize.erase();
  return fused.getTransposed();
}

/// `operand` with its last two dimensions swapped: a copy of its bytes
/// (linalg.transpose), exact for any element type.
static Value transposeBytes(OpBuilder &builder, Value operand) {
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> permutation = llvm::to_vector(llvm::seq<int64_t>(rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  Location loc = operand.getLoc();
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, loc, operand);
  std::swap(sizes[rank - 2], sizes[rank - 1]);
  Value init = tensor::EmptyOp::create(builder, loc, sizes,
                                       type.getElementType());
  return linalg::TransposeOp::create(builder, loc, operand, init, permutation)
      .getResult()[0];
}

/// The transposed copy of a block-scaled operand `data` (with scales
/// `scaleInv`) that a block cast of x produced (block_amax ->
/// compute_block_scales -> quantize, what fp8-quantize emits), when this
/// GEMM is its only reader: the same cast of x^T with the blocks swapped.
/// Every block sees the same elements, so amax, scale and bytes are those
/// of the transposed cast, bit for bit; fp8-lower-to-gpu then reads x once
/// and writes the copy transposed (block_cast_transpose) instead of
/// casting and transposing the bytes. The old cast is erased. Null
/// otherwise.
static std::pair<Value, Value> recastTransposed(OpBuilder &builder,
                                                Value data, Value scaleInv) {
  auto quantize = data.getDefiningOp<QuantizeOp>();
  if (!quantize || !quantize.getBlockShape() || quantize.getAmax() ||
      quantize.getResult().getType().getRank() != 2 || !data.hasOneUse() ||
      !scaleInv.hasOneUse())
    return {};
  auto scales = quantize.getScale().getDefiningOp<ComputeBlockScalesOp>();
  if (!scales || scales.getScaleInv() != scaleInv ||
      !scales.getScale().hasOneUse())
    return {};
  auto amax = scales.getAmax().getDefiningOp<BlockAmaxOp>();
  if (!amax || amax.getInput() != quantize.getInput() ||
      amax.getBlockShape() != *quantize.getBlockShape() ||
      !amax.getAmax().hasOneUse())
    return {};
  // Only blocks down the columns that the fused kernel takes, from a wide
  // type it reads: anything else would transpose 2-4 bytes per element
  // instead of 1.
  ArrayRef<int64_t> blockShape = amax.getBlockShape();
  Type wide = quantize.getInput().getType().getElementType();
  if (blockShape[1] != 1 ||
      !nvvm_abi::isTransposeCastBlock(blockShape[0]) ||
      !(wide.isF32() || wide.isBF16() || wide.isF16()))
    return {};
  auto transposed = [](Type type) -> Type {
    auto ranked = cast<RankedTensorType>(type);
    return RankedTensorType::get(
        {ranked.getDimSize(1), ranked.getDimSize(0)}, ranked.getElementType());
  };
  SmallVector<int64_t> block{amax.getBlockShape()[1],
                             amax.getBlockShape()[0]};
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(quantize);
  Location loc = quantize.getLoc();
  Value x = transposeBytes(builder, quantize.getInput());
  auto amaxT = BlockAmaxOp::create(
      builder, amax.getLoc(), transposed(amax.getAmax().getType()), x, block);
  auto scalesT = ComputeBlockScalesOp::create(
      builder, scales.getLoc(), transposed(scales.getScale().getType()),
      transposed(scaleInv.getType()), amaxT.getAmax(),
      scales.getFp8TypeAttr(), scales.getPowerOfTwoAttr(),
      scales.getEpsilonAttr());
  auto quantizeT = QuantizeOp::create(
      builder, loc, transposed(data.getType()), /*amax=*/Type(), x,
      scalesT.getScale(), builder.getDenseI64ArrayAttr(block));
  return {quantizeT.getResult(), scalesT.getScaleInv()};
}

/// Erases the block cast `data` came from once nothing reads it.
static void eraseDeadBlockCast(Value data) {
  auto quantize = data.getDefiningOp<QuantizeOp>();
  if (!quantize || !quantize->use_empty())
    return;
  auto scales = quantize.getScale().getDefiningOp<ComputeBlockScalesOp>();
  quantize.erase();
  if (!scales || !scales->use_empty())
    return;
  auto amax = scales.getAmax().getDefiningOp<BlockAmaxOp>();
  scales.erase();
  if (amax && amax->use_empty())
    amax.erase();
}

/// `operand` with its dimensions permuted so that the loop dimensions
/// `order` index them in that order (a linalg.transpose copy; the operand
/// itself when they already do). `map` is the operand's indexing map, a
/// permutation of `order`'s loops.
static Value permuteOperand(OpBuilder &builder, Value operand, AffineMap map,
                            ArrayRef<unsigned> order) {
  SmallVector<int64_t> permutation;
  for (unsigned loop : order)
    for (auto [dim, expr] : llvm::enumerate(map.getResults()))
      if (cast<AffineDimExpr>(expr).getPosition() == loop)
        permutation.push_back(dim);
  if (llvm::equal(permutation, llvm::seq<int64_t>(permutation.size())))
    return operand;
  Location loc = operand.getLoc();
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, loc, operand);
  SmallVector<OpFoldResult> permuted =
      llvm::map_to_vector(permutation, [&](int64_t d) { return sizes[d]; });
  Value init = tensor::EmptyOp::create(builder, loc, permuted,
                                       type.getElementType());
  return linalg::TransposeOp::create(builder, loc, operand, init, permutation)
      .getResult()[0];
}

/// gabi::selectTiles for a GEMM with this result ([batch..., M, N]);
/// unknown extents count as large.
static gabi::GemmConfig selectTilesFor(const gabi::GemmConfig &config,
                                       RankedTensorType result) {
  auto extent = [&](int64_t d) {
    int64_t size = result.getDimSize(result.getRank() + d);
    return ShapedType::isDynamic(size) ? int64_t(1) << 30 : size;
  };
  return gabi::selectTiles(config, extent(-2), extent(-1));
}

/// Whether `value` is a linalg.fill of zero.
static bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  Attribute constant;
  return matchPattern(fill.getInputs()[0], m_Constant(&constant)) &&
         ((isa<FloatAttr>(constant) &&
           cast<FloatAttr>(constant).getValue().isZero()) ||
          (isa<IntegerAttr>(constant) &&
           cast<IntegerAttr>(constant).getValue().isZero()));
}

/// How a whole program's f32 contractions run (the pass's
/// `f32-contractions` option).
enum class F32Contractions { None, TF32, TF32x3 };

/// `operand` ([batch..., R, K], f32) as the tf32 terms of the 3xTF32 split,
/// [batch..., R, 3K]: three copies of K side by side, each `hi` = the
/// operand rounded to a tf32 value (10 mantissa bits, to nearest) except
/// the copy `loCopy`, which is `lo` = operand - hi (exact in f32, at most
/// half a tf32 ulp; the tensor cores keep its top 11 bits). Multiplying the
/// lhs split (lo, hi, hi) by the rhs split (hi, lo, hi) over 3K sums
/// lo*hi + hi*lo + hi*hi: each product to about 2^-22 relative, what f32
/// gives, on tf32 tensor cores (CUTLASS's 3xTF32; the dropped lo*lo is
/// below 2^-22 and unbiased with rounding, where truncation would bias
/// it). A NaN becomes the quiet NaN (a payload in the low 13 bits would
/// read as Inf); an Inf has lo = 0: an Inf meeting a zero lo of the other
/// operand makes Inf x 0 = NaN where f32 would give Inf.
static Value splitForTF32(OpBuilder &builder, Location loc, Value operand,
                          int64_t loCopy) {
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = builder.getContext();
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, loc, operand);
  sizes.insert(sizes.end() - 1, builder.getIndexAttr(3));
  Value init = tensor::EmptyOp::create(builder, loc, sizes,
                                       builder.getF32Type());
  // Loops (batch..., R, copy, K); the operand does not depend on the copy.
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0; d < rank + 1; ++d)
    if (d != rank - 1)
      inExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank + 1, 0, inExprs, ctx),
      AffineMap::getMultiDimIdentityMap(rank + 1, ctx)};
  SmallVector<utils::IteratorType> iterators(rank + 1,
                                             utils::IteratorType::parallel);
  auto split = linalg::GenericOp::create(
      builder, loc, init.getType(), operand, init, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Type i32 = b.getI32Type();
        auto bits = [&](uint32_t v) -> Value {
          return arith::ConstantOp::create(
              b, l, b.getIntegerAttr(i32, static_cast<int32_t>(v)));
        };
        Value tf32Mask = bits(0xFFFFE000u), exponentMask = bits(0x7F800000u);
        Value zero = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0));
        Value nan = arith::ConstantOp::create(
            b, l, b.getFloatAttr(b.getF32Type(),
                                APFloat::getQNaN(APFloat::IEEEsingle())));
        Value loIndex = arith::ConstantIndexOp::create(b, l, loCopy);
        auto isFinite = [&](Value v) -> Value {
          return arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::ne,
              arith::AndIOp::create(b, l, v, exponentMask), exponentMask);
        };
        auto toF32 = [&](Value v) -> Value {
          return arith::BitcastOp::create(b, l, b.getF32Type(), v);
        };
        Value x = args[0];
        Value xBits = arith::BitcastOp::create(b, l, i32, x);
        // Rounded to nearest (ties away), or truncated where rounding
        // would overflow to Inf or x is Inf; a NaN (whose payload may sit
        // in the bits the tensor cores drop) becomes the quiet NaN.
        Value roundedBits = arith::AndIOp::create(
            b, l, arith::AddIOp::create(b, l, xBits, bits(0x1000u)), tf32Mask);
        Value truncatedBits = arith::AndIOp::create(b, l, xBits, tf32Mask);
        Value finite = isFinite(xBits);
        Value useRounded =
            arith::AndIOp::create(b, l, finite, isFinite(roundedBits));
        Value hi = arith::SelectOp::create(
            b, l,
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x), nan,
            toF32(arith::SelectOp::create(b, l, useRounded, roundedBits,
                                          truncatedBits)));
        Value lo = arith::SelectOp::create(
            b, l, finite, arith::SubFOp::create(b, l, x, hi), zero);
        Value isLo = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq,
            linalg::IndexOp::create(b, l, rank - 1), loIndex);
        linalg::YieldOp::create(
            b, l, Value(arith::SelectOp::create(b, l, isLo, lo, hi)));
      });
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d < rank - 1; ++d)
    reassociation.push_back({d});
  reassociation.push_back({rank - 1, rank});
  return tensor::CollapseShapeOp::create(builder, loc, split.getResult(0),
                                         reassociation);
}

/// `lhs` + `rhs` elementwise, in f32, rounded once to the element type of
/// `like`: what a contraction into a non-zero init (`lhs`) computes from
/// its f32 sum (`rhs`).
static Value addInF32(OpBuilder &builder, Location loc, Value lhs, Value rhs,
                      RankedTensorType like) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, lhs);
  Value init =
      tensor::EmptyOp::create(builder, loc, sizes, like.getElementType());
  int64_t rank = like.getRank();
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(rank, builder.getContext());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, like, ValueRange{lhs, rhs}, init,
             SmallVector<AffineMap>(3, identity), iterators,
             [&](OpBuilder &b, Location l, ValueRange args) {
               Type f32 = b.getF32Type(), out = like.getElementType();
               Value c = args[0];
               if (c.getType() != f32)
                 c = arith::ExtFOp::create(b, l, f32, c);
               Value sum = arith::AddFOp::create(b, l, c, args[1]);
               if (out != f32)
                 sum = arith::TruncFOp::create(b, l, out, sum);
               linalg::YieldOp::create(b, l, sum);
             })
      .getResult(0);
}

/// A contraction a high-precision wgmma kernel computes, as a
/// linalg.generic on operands [batch..., M, K] and [batch..., N, K]
/// (transposed copies where the graph has other orders) into [batch..., M,
/// N], loops (batch..., M, N, K); or null. It needs operands of one type
/// (bf16 or f16 with a bf16, f16 or f32 result; f32 with an f32 result
/// unless `f32Mode` is None), batch dimensions on the lhs and the result
/// (and on the rhs, or not), and the result in (batch..., M..., N...)
/// order. Several M, N or K dimensions are collapsed into one each (a
/// batched lhs times an unbatched rhs, [B, S, K] x [K, N], whose B
/// inferContractionDims counts as an M dimension, is a [B*S, K] x [N, K]
/// GEMM), the result expanded back.
/// The kernel accumulates in f32 and rounds once, as cuBLAS does: a bf16
/// result may differ from linalg's bf16 accumulation in the last bits. It
/// stores, it does not accumulate: a contraction into anything but a zero
/// fill becomes one into a zero f32 result, added to the init in f32 and
/// rounded once by an elementwise op after it. f32 operands run as tf32
/// (`F32Contractions::TF32`: 10-bit mantissas) or split into 3xTF32 terms
/// (splitForTF32: f32 accuracy, K tripled).
static linalg::GenericOp planContraction(OpBuilder &builder,
                                         linalg::LinalgOp op,
                                         F32Contractions f32Mode) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return {};
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return {};
  Type lhsElement = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type rhsElement = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type outElement = getElementTypeOrSelf(op->getResult(0).getType());
  bool sixteenBit = (lhsElement.isBF16() || lhsElement.isF16()) &&
                    (outElement.isBF16() || outElement.isF16() ||
                     outElement.isF32());
  bool f32 = lhsElement.isF32() && outElement.isF32() &&
             f32Mode != F32Contractions::None;
  if (lhsElement != rhsElement || !(sixteenBit || f32))
    return {};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps, [](AffineMap map) { return map.isPermutation() ||
                                                    map.isProjectedPermutation(); }))
    return {};
  SmallVector<unsigned> batch(dims->batch.begin(), dims->batch.end());
  // M and N loops in the order the result has them, K loops in loop order.
  auto positionInResult = [&](unsigned loop) -> unsigned {
    for (auto [i, expr] : llvm::enumerate(maps[2].getResults()))
      if (cast<AffineDimExpr>(expr).getPosition() == loop)
        return i;
    return maps[2].getNumResults();
  };
  auto inResultOrder = [&](ArrayRef<unsigned> loops) {
    SmallVector<unsigned> sorted(loops);
    llvm::sort(sorted, [&](unsigned x, unsigned y) {
      return positionInResult(x) < positionInResult(y);
    });
    return sorted;
  };
  SmallVector<unsigned> ms = inResultOrder(dims->m),
                        ns = inResultOrder(dims->n);
  SmallVector<unsigned> ks(dims->k.begin(), dims->k.end());
  auto order = [&](std::initializer_list<ArrayRef<unsigned>> groups,
                   bool withBatch) {
    SmallVector<unsigned> loops = withBatch ? batch : SmallVector<unsigned>();
    for (ArrayRef<unsigned> group : groups)
      loops.append(group.begin(), group.end());
    return loops;
  };
  auto hasLoops = [](AffineMap map, ArrayRef<unsigned> loops) {
    if (map.getNumResults() != loops.size())
      return false;
    for (unsigned loop : loops)
      if (!map.isFunctionOfDim(loop))
        return false;
    return true;
  };
  // The result in (batch..., M..., N...) order.
  SmallVector<unsigned> outOrder = order({ms, ns}, true);
  if (maps[2].getNumResults() != outOrder.size() ||
      !hasLoops(maps[0], order({ms, ks}, true)))
    return {};
  for (auto [i, expr] : llvm::enumerate(maps[2].getResults()))
    if (cast<AffineDimExpr>(expr).getPosition() != outOrder[i])
      return {};
  bool rhsBatched = hasLoops(maps[1], order({ns, ks}, true));
  if (!rhsBatched && !hasLoops(maps[1], order({ns, ks}, false)))
    return {};

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(op);
  Location loc = op.getLoc();
  // Operands [batch..., M..., K...] and [batch'..., N..., K...], then each
  // group of M, N and K dimensions collapsed into one: the kernel's
  // [batch..., M, K] x [batch'..., N, K] -> [batch..., M, N] (a [B, S, D]
  // activation times a [D, N] weight is a [B*S, D] x [N, D] GEMM).
  int64_t numBatch = batch.size();
  // Dimensions [0, leading) alone, then one group per size.
  auto groupsOf = [](int64_t leading, ArrayRef<size_t> groupSizes) {
    SmallVector<ReassociationIndices> reassociation;
    int64_t next = 0;
    for (; next < leading; ++next)
      reassociation.push_back({next});
    for (size_t size : groupSizes) {
      ReassociationIndices group;
      for (size_t i = 0; i < size; ++i)
        group.push_back(next++);
      reassociation.push_back(group);
    }
    return reassociation;
  };
  auto collapses = [](ArrayRef<size_t> groupSizes) {
    return llvm::any_of(groupSizes, [](size_t size) { return size != 1; });
  };
  auto collapseGroups = [&](Value value, int64_t leading,
                            ArrayRef<size_t> groupSizes) {
    if (!collapses(groupSizes))
      return value;
    return Value(tensor::CollapseShapeOp::create(
        builder, loc, value, groupsOf(leading, groupSizes)));
  };
  Value lhs = collapseGroups(
      permuteOperand(builder, op.getDpsInputs()[0], maps[0],
                     order({ms, ks}, true)),
      numBatch, {ms.size(), ks.size()});
  Value rhs = collapseGroups(
      permuteOperand(builder, op.getDpsInputs()[1], maps[1],
                     order({ns, ks}, rhsBatched)),
      rhsBatched ? numBatch : 0, {ns.size(), ks.size()});
  if (f32 && f32Mode == F32Contractions::TF32x3) {
    // The small terms first: lo*hi and hi*lo accumulate while the sum is
    // small, then the K hi*hi products (exact in tf32 x tf32) add to it:
    // no more roundings at the sum's size than an f32 GEMM makes.
    lhs = splitForTF32(builder, loc, lhs, /*loCopy=*/0);
    rhs = splitForTF32(builder, loc, rhs, /*loCopy=*/1);
  }
  // Loops (batch..., M, N, K).
  MLIRContext *ctx = op.getContext();
  unsigned numLoops = numBatch + 3;
  auto map = [&](ArrayRef<unsigned> loops) {
    SmallVector<AffineExpr> exprs;
    for (unsigned loop : loops)
      exprs.push_back(getAffineDimExpr(loop, ctx));
    return AffineMap::get(numLoops, 0, exprs, ctx);
  };
  SmallVector<unsigned> batchLoops =
      llvm::to_vector(llvm::seq<unsigned>(numBatch));
  auto withBatch = [&](std::initializer_list<unsigned> tail, bool b) {
    SmallVector<unsigned> loops = b ? batchLoops : SmallVector<unsigned>();
    loops.append(tail);
    return loops;
  };
  unsigned M = numBatch, N = numBatch + 1, K = numBatch + 2;
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  SmallVector<AffineMap, 3> newMaps = {map(withBatch({M, K}, true)),
                                       map(withBatch({N, K}, rhsBatched)),
                                       map(withBatch({M, N}, true))};
  Value init = op.getDpsInits()[0];
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<size_t> outGroups = {ms.size(), ns.size()};
  // The kernel's [batch..., M, N] result as the op's [batch..., M..., N...].
  auto expand = [&](Value value) {
    if (!collapses(outGroups))
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    return Value(tensor::ExpandShapeOp::create(
        builder, loc, resultType.clone(type.getElementType()), value,
        groupsOf(numBatch, outGroups),
        tensor::getMixedSizes(builder, loc, init)));
  };
  linalg::GenericOp generic;
  Value result;
  if (isZeroFill(init)) {
    Value zeros = collapseGroups(init, numBatch, outGroups);
    generic = linalg::GenericOp::create(builder, loc, zeros.getType(),
                                        ValueRange{lhs, rhs}, zeros, newMaps,
                                        iterators);
    IRMapping mapping;
    op->getRegion(0).cloneInto(&generic.getRegion(), mapping);
    result = expand(generic.getResult(0));
  } else {
    // Into a zero f32 result, then init + sum in f32, rounded once.
    Type f32Type = builder.getF32Type();
    Value zero = arith::ConstantOp::create(builder, loc,
                                           builder.getF32FloatAttr(0));
    Value empty = tensor::EmptyOp::create(
        builder, loc, tensor::getMixedSizes(builder, loc, init), f32Type);
    Value zeroInit = collapseGroups(
        linalg::FillOp::create(builder, loc, zero, empty).getResult(0),
        numBatch, outGroups);
    generic = linalg::GenericOp::create(
        builder, loc, zeroInit.getType(), ValueRange{lhs, rhs}, zeroInit,
        newMaps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          auto widen = [&](Value v) {
            return v.getType() == f32Type
                       ? v
                       : Value(arith::ExtFOp::create(b, l, f32Type, v));
          };
          Value product = arith::MulFOp::create(b, l, widen(args[0]),
                                                widen(args[1]));
          linalg::YieldOp::create(
              b, l, Value(arith::AddFOp::create(b, l, args[2], product)));
        });
    result = addInF32(builder, loc, init, expand(generic.getResult(0)),
                      resultType);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return generic;
}

namespace {
struct ConvertFP8ScaledMatmulToWGMMAPass
    : fp8::impl::ConvertFP8ScaledMatmulToWGMMABase<
          ConvertFP8ScaledMatmulToWGMMAPass> {
  using Base::Base;

  enum class BlockForm { Blocks, Blocks1d1d, Rows, MX };

  /// The block-scaled GEMMs the kernels apply, f32 scales, both operands
  /// K-major: 1x128 lhs blocks with 128x128 rhs blocks (DeepGEMM's 1d2d:
  /// the block recipe's forward GEMMs) or 1x128 rhs blocks (1d1d: its
  /// weight gradients, K = tokens), and one scale per row along all of
  /// K (torchao's rowwise), and MXFP8 (1x32 blocks on both, E8M0 scales,
  /// promoted after every wgmma k32 step: emulated, Hopper has no MX
  /// instruction). The copies planLayouts makes for other layouts are
  /// per-tensor casts, so a block-scaled operand must come K-major.
  /// The form of block scales the kernels apply, for K-major operands
  /// (`kMajor`: lhs [M, K], rhs [N, K]) with these blocks, scale element
  /// types and K extent; nullopt when none does.
  static std::optional<BlockForm> classifyBlocks(ArrayRef<int64_t> lhsBlock,
                                                 ArrayRef<int64_t> rhsBlock,
                                                 bool kMajor, Type lhsScale,
                                                 Type rhsScale, int64_t k) {
    auto isBlock = [](ArrayRef<int64_t> block, int64_t rows, int64_t cols) {
      for (size_t d = 0; d + 2 < block.size(); ++d)
        if (block[d] != 1)
          return false;
      return block.size() >= 2 && block[block.size() - 2] == rows &&
             block.back() == cols;
    };
    bool layouts = kMajor && lhsScale.isF32() && rhsScale.isF32();
    if (layouts && isBlock(lhsBlock, 1, gabi::kBlockK) &&
        isBlock(rhsBlock, 128, gabi::kBlockK))
      return BlockForm::Blocks;
    if (layouts && !ShapedType::isDynamic(k) && isBlock(lhsBlock, 1, k) &&
        isBlock(rhsBlock, 1, k))
      return BlockForm::Rows;
    if (layouts && isBlock(lhsBlock, 1, gabi::kBlockK) &&
        isBlock(rhsBlock, 1, gabi::kBlockK))
      return BlockForm::Blocks1d1d;
    if (kMajor && isa<Float8E8M0FNUType>(lhsScale) &&
        isa<Float8E8M0FNUType>(rhsScale) && isBlock(lhsBlock, 1, 32) &&
        isBlock(rhsBlock, 1, 32))
      return BlockForm::MX;
    return std::nullopt;
  }

  static Type getScaleElement(Value scales) {
    return cast<ShapedType>(scales.getType()).getElementType();
  }

  FailureOr<BlockForm> checkBlockScales(ScaledMatmulOp op) {
    int64_t k = op.getLhs().getType().getShape().back();
    if (std::optional<BlockForm> form = classifyBlocks(
            *op.getLhsBlock(), *op.getRhsBlock(),
            !op.getTransposeLhs() && op.getTransposeRhs(),
            getScaleElement(op.getLhsScaleInv()),
            getScaleElement(op.getRhsScaleInv()), k))
      return *form;
    auto print = [](ArrayRef<int64_t> block) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "[";
      llvm::interleaveComma(block, os);
      os << "]";
      return text;
    };
    return op.emitOpError()
           << "has block scales " << print(*op.getLhsBlock()) << ", "
           << print(*op.getRhsBlock())
           << " that no wgmma kernel applies: they take lhs [M, K] and "
              "rhs [N, K] (transpose_rhs) with f32 scales in 1x128 lhs "
              "blocks and 128x128 or 1x128 rhs blocks, or one per row along "
              "all of K (row-wise), or E8M0 scales in 1x32 blocks (MX); "
              "other blocks and layouts run with fp8-lower-to-cpu";
  }

  /// Names `kernel` and its launch shape on `op`; a static K whose rows are
  /// not 16-byte multiples gets the K its operands are padded to.
  static void annotate(Operation *op, LLVM::LLVMFuncOp kernel,
                       const gabi::GemmConfig &config, int64_t k) {
    MLIRContext *ctx = op->getContext();
    op->setAttr(kWgmmaKernelAttr,
                SymbolRefAttr::get(
                    StringAttr::get(ctx, gabi::kGemmModuleName),
                    {FlatSymbolRefAttr::get(kernel.getSymNameAttr())}));
    op->setAttr(kWgmmaTileAttr,
                DenseI64ArrayAttr::get(
                    ctx, {config.blockM, config.blockN, config.threads(),
                          config.sharedBytes()}));
    // TMA needs 16-byte row pitches: such operands are copied into rows
    // padded with zeros (the tensor map keeps the true K).
    int64_t align = 16 / config.elementBytes();
    if (!ShapedType::isDynamic(k) && k % align != 0)
      op->setAttr(kWgmmaPadKAttr, IntegerAttr::get(IntegerType::get(ctx, 64),
                                                   (k + align - 1) / align *
                                                       align));
  }

  /// whole-graph: a block-scaled operand in the wrong orientation (the
  /// data gradient's weight [K, N], the weight gradient's [K, M] and
  /// [K, N], K = tokens) as a transposed copy of its bytes and of its
  /// scales, with its block shape swapped: the same values, each still
  /// with its scale (its blocks already run along the GEMM's K: fp8-quantize
  /// quantized it that way), now in a form a kernel applies. Only when the
  /// result is one.
  void transposeBlockOperands(ScaledMatmulOp op) {
    if (!op.getTransposeLhs() && op.getTransposeRhs())
      return;
    auto swapped = [](ArrayRef<int64_t> block) {
      SmallVector<int64_t> result(block);
      std::swap(result[result.size() - 2], result.back());
      return result;
    };
    SmallVector<int64_t> lhsBlock(*op.getLhsBlock()),
        rhsBlock(*op.getRhsBlock());
    if (op.getTransposeLhs())
      lhsBlock = swapped(lhsBlock);
    if (!op.getTransposeRhs())
      rhsBlock = swapped(rhsBlock);
    ArrayRef<int64_t> lhsShape = op.getLhs().getType().getShape();
    int64_t k = lhsShape[lhsShape.size() - (op.getTransposeLhs() ? 2 : 1)];
    if (!classifyBlocks(lhsBlock, rhsBlock, /*kMajor=*/true,
                        getScaleElement(op.getLhsScaleInv()),
                        getScaleElement(op.getRhsScaleInv()), k))
      return;
    OpBuilder builder(op);
    MLIRContext *ctx = op.getContext();
    // A cast of x^T where the operand is a block cast only this GEMM reads
    // and its blocks then run along the rows (the weight gradient's
    // token-wise blocks: one kernel), a transpose of the bytes and of the
    // scale grid otherwise (a 128x128 weight cast the forward GEMM reads
    // too: moving one byte per element beats a second cast).
    auto transposeOperand = [&](OpOperand &data, OpOperand &scaleInv) {
      Value old = data.get();
      auto [copy, copyScaleInv] = recastTransposed(builder, old, scaleInv.get());
      if (!copy) {
        copy = transposeBytes(builder, old);
        copyScaleInv = transposeBytes(builder, scaleInv.get());
      }
      data.assign(copy);
      scaleInv.assign(copyScaleInv);
      eraseDeadBlockCast(old);
    };
    if (op.getTransposeLhs()) {
      transposeOperand(op.getLhsMutable(), op.getLhsScaleInvMutable());
      op.setLhsBlockAttr(DenseI64ArrayAttr::get(ctx, lhsBlock));
      op.setTransposeLhs(false);
    }
    if (!op.getTransposeRhs()) {
      transposeOperand(op.getRhsMutable(), op.getRhsScaleInvMutable());
      op.setRhsBlockAttr(DenseI64ArrayAttr::get(ctx, rhsBlock));
      op.setTransposeRhs(true);
    }
  }

  /// Puts both operands K-major: lhs [M, K], rhs [N, K] (transpose_rhs).
  LogicalResult planLayouts(ScaledMatmulOp op) {
    if (op.isBlockScaled())
      return failure(failed(checkBlockScales(op)));
    OpBuilder builder(op);
    auto copyOf = [&](Value operand) {
      Value copy = cast<RankedTensorType>(operand.getType()).getRank() == 2
                       ? getTransposedCopy(builder, operand)
                       : Value();
      if (!copy && wholeGraph)
        copy = transposeBytes(builder, operand);
      return copy;
    };
    if (op.getTransposeLhs()) {
      Value copy = copyOf(op.getLhs());
      if (!copy)
        return op.emitOpError()
               << "has lhs in [K, M] layout (transpose_lhs), but FP8 wgmma "
                  "reads both operands K-major and no [M, K] copy exists: "
                  "produce the lhs with fp8.quantize or fp8.cast_transpose "
                  "(rank 2) so that the transposed copy can be written in "
                  "the same pass";
      op.getLhsMutable().assign(copy);
      op.setTransposeLhs(false);
    }
    if (!op.getTransposeRhs()) {
      Value copy = copyOf(op.getRhs());
      if (!copy)
        return op.emitOpError()
               << "has rhs in [K, N] layout, but FP8 wgmma reads both "
                  "operands K-major ([N, K], transpose_rhs) and no [N, K] "
                  "copy exists: produce the rhs with fp8.quantize or "
                  "fp8.cast_transpose (rank 2) so that the transposed copy "
                  "can be written in the same pass";
      op.getRhsMutable().assign(copy);
      op.setTransposeRhs(true);
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<F32Contractions> f32Mode =
        llvm::StringSwitch<std::optional<F32Contractions>>(f32Contractions)
            .Case("3xtf32", F32Contractions::TF32x3)
            .Case("tf32", F32Contractions::TF32)
            .Case("none", F32Contractions::None)
            .Default(std::nullopt);
    if (!f32Mode) {
      module.emitError() << "f32-contractions='" << f32Contractions
                         << "' is none of 3xtf32, tf32, none";
      return signalPassFailure();
    }
    SmallVector<ScaledMatmulOp> gemms;
    module.walk([&](ScaledMatmulOp op) { gemms.push_back(op); });
    // In a whole program, the high-precision contractions too; not one
    // outside any function, which nothing runs (fp8-classify's
    // outside_function): a launch there would be the only op left of it.
    SmallVector<linalg::LinalgOp> contractions;
    if (wholeGraph)
      module.walk([&](linalg::LinalgOp op) {
        if (!op->getParentOfType<gpu::GPUModuleOp>() &&
            op->getParentOfType<FunctionOpInterface>() &&
            linalg::isaContractionOpInterface(op))
          contractions.push_back(op);
      });
    if (std::optional<std::string> error = checkNVVMTarget(
            chip, features,
            /*needsWgmma=*/!gemms.empty() || !contractions.empty())) {
      module.emitError() << *error;
      return signalPassFailure();
    }
    if (gemms.empty() && contractions.empty())
      return;
    MLIRContext *ctx = &getContext();

    FailureOr<gpu::GPUModuleOp> kernelModule =
        getOrCreateKernelModule(module, gabi::kGemmModuleName, chip, features);
    if (failed(kernelModule))
      return signalPassFailure();
    gpu::GPUModuleOp gpuModule = *kernelModule;

    for (ScaledMatmulOp op : gemms) {
      if (wholeGraph && op.isBlockScaled()) {
        transposeBlockOperands(op);
        // A block form no kernel applies lowers with the rest of the
        // program.
        ScopedDiagnosticHandler quiet(ctx,
                                      [](Diagnostic &) { return success(); });
        if (failed(checkBlockScales(op)))
          continue;
      }
      if (failed(planLayouts(op)))
        return signalPassFailure();
      RankedTensorType lhsType = op.getLhs().getType();
      RankedTensorType resultType = op.getResult().getType();
      int64_t rank = resultType.getRank();
      gabi::GemmConfig config;
      config.lhs = getKernelElem(lhsType.getElementType());
      config.rhs = getKernelElem(op.getRhs().getType().getElementType());
      config.out = getKernelElem(resultType.getElementType());
      if (op.getBias())
        config.bias = getKernelElem(op.getBias().getType().getElementType());
      config.amax = static_cast<bool>(op.getResultAmax());
      config.promote = promote;
      if (op.isBlockScaled()) {
        BlockForm form = *checkBlockScales(op);
        config.blockScaled =
            form == BlockForm::Blocks || form == BlockForm::Blocks1d1d;
        config.rhsRowBlocks = form == BlockForm::Blocks1d1d;
        config.rowScaled = form == BlockForm::Rows;
        config.mxScaled = form == BlockForm::MX;
      }
      int64_t n = resultType.getDimSize(rank - 1);
      config.tmaStore = tmaStore && !ShapedType::isDynamic(n) &&
                        gabi::canTmaStore(config.out, n);
      config = selectTilesFor(config, resultType);
      annotate(op, getOrBuildWgmmaGemmKernel(gpuModule, config), config,
               lhsType.getDimSize(lhsType.getRank() - 1));
    }
    OpBuilder builder(ctx);
    for (linalg::LinalgOp candidate : contractions) {
      linalg::GenericOp op = planContraction(builder, candidate, *f32Mode);
      if (!op)
        continue;
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      auto lhsType = cast<RankedTensorType>(op.getDpsInputs()[0].getType());
      gabi::GemmConfig config;
      config.lhs = config.rhs = getKernelElem(lhsType.getElementType());
      config.out = getKernelElem(type.getElementType());
      config = selectTilesFor(config, type);
      annotate(op, getOrBuildWgmmaGemmKernel(gpuModule, config), config,
               lhsType.getShape().back());
    }
    // Every GEMM left to the rest of the program (whole-graph).
    if (gpuModule.getBody()->without_terminator().empty())
      gpuModule.erase();
  }
};
} // namespace
