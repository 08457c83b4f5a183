//===- AttentionGradToWGMMA.cpp - fp8.attention_grad on Hopper ------------===//
//
// The FlashAttention-2 backward as an sm_90a kernel (AttentionKernelABI.h,
// "The backward"), built from NVVM ops like the forward
// (AttentionToWGMMA.cpp, which plans and names it on the op):
//  - one block per 64 keys of one key/value head; a producer warpgroup
//    loads K, V and K^T once, then per query head of the group and per 64
//    queries Q, dO, Q^T and dO^T into a ring of stages (TMA, 128-byte
//    swizzle; the transposed copies are the host's, so that every operand
//    is K-major as the wgmma descriptors here are);
//  - one consumer warpgroup (64 keys, 64 queries a step) recomputes
//    S^T = K Q^T and dP^T = V dO^T (both operands in shared memory), P^T =
//    exp(S^T scale - lse) with the causal and length masks, dS^T = P^T
//    (dP^T - delta), then dV += P^T dO and dK += dS^T Q with P^T and dS^T
//    as register-A operands (the accumulator fragment is the 16-bit A
//    fragment, AttentionKernelABI.h's probabilityElement), accumulated in
//    registers over every query of the group (GQA sums in place); dS goes
//    through shared memory (swizzled, [queries, keys]) for dQ = dS K, added
//    into the f32 dQ buffer with atomics, 64 columns at a time;
//  - the epilogue stores round(scale dK) and round(dV) from the registers.
//
//===----------------------------------------------------------------------===//

#include "WgmmaBuilder.h"
#include "fp8/Conversion/FP8ToNVVM/AttentionToWGMMA.h"

using namespace mlir;
using namespace mlir::fp8;
namespace aabi = mlir::fp8::attention_abi;
namespace gabi = mlir::fp8::gemm_abi;

namespace {
class AttentionGradKernelBuilder : public WgmmaBuilder {
public:
  AttentionGradKernelBuilder(ImplicitLocOpBuilder &b,
                             const aabi::AttentionGradConfig &config)
      : WgmmaBuilder(b), c(config) {}

  void build(LLVM::LLVMFuncOp func);

private:
  // Shared memory.
  Value keyTile() { return smem; }
  Value valueTile() { return gepBytes(smem, i32(c.keyTileBytes())); }
  Value keyTransposed() { return gepBytes(smem, i32(2 * c.keyTileBytes())); }
  Value gradScores() { return gepBytes(smem, i32(c.gradScoresOffset())); }
  /// Tile `which` (0 Q, 1 dO, 2 Q^T, 3 dO^T) of `stage`.
  Value stageTile(Value stage, int which) {
    return gepBytes(smem, add(i32(c.stageOffset() + which * c.queryTileBytes()),
                              mul(stage, i32(c.stageBytes()))));
  }
  Value keysFull() { return gepBytes(smem, i32(c.barrierOffset())); }
  Value full(Value stage) {
    return gepBytes(smem, add(i32(c.barrierOffset() + 8), mul(stage, i32(8))));
  }
  Value empty(Value stage) {
    return gepBytes(smem, add(i32(c.barrierOffset() + 8 + 8 * c.stages),
                              mul(stage, i32(8))));
  }
  /// The (query layer, first query) of iteration `it` of the block's loop
  /// over the group's heads and their query tiles.
  std::pair<Value, Value> work(Value it) {
    Value head = divU(it, tilesPerHead);
    Value tile = add(firstQueryTile, remU(it, tilesPerHead));
    Value layer = add(mul(batchIndex, heads), add(mul(kvHead, group), head));
    return {layer, mul(tile, i32(c.blockM))};
  }
  /// wgmma m64n<n>k16 over D with both operands K-major in shared memory:
  /// `a` and `bTile` tiles of `aRows` and `bRows` rows, D in panels.
  Value sharedProduct(Value a, int64_t aRows, Value bTile, int64_t bRows,
                      int64_t n);
  /// A fragments of the 64 x 64 accumulator values `v` in the 16-bit type.
  SmallVector<std::array<Value, 4>> pack(ArrayRef<Value> v);
  /// dS^T (the fragments) into shared memory as dS [queries, keys].
  void storeGradScores(ArrayRef<std::array<Value, 4>> fragments);
  /// `desc` as a value of the loop body: the same bits through a mov that
  /// LLVM may not hoist, so that the descriptors of the fixed tiles (and
  /// their per-step neighbours) are made where the wgmma reads them
  /// instead of living across the loop in ~50 registers the consumer does
  /// not have (dK and dV hold 128 of its 255).
  Value inLoop(Value desc) {
    return LLVM::InlineAsmOp::create(
               b, b.getI64Type(), ValueRange{desc}, "mov.b64 $0, $1;", "=l,l",
               /*has_side_effects=*/true, /*is_align_stack=*/false,
               LLVM::TailCallKind::None,
               LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
               /*operand_attrs=*/ArrayAttr())
        .getResult(0);
  }
  void syncConsumers() {
    NVVM::BarrierOp::create(b, Type(), i32(1), i32(gabi::kWarpgroup),
                            NVVM::BarrierReductionAttr(), Value());
  }

  void buildProducer();
  void buildConsumer();

  const aabi::AttentionGradConfig &c;
  Type elementType;
  Value smem, tmK, tmV, tmKT, tmQ, tmDO, tmQT, tmDOT;
  Value gradKey, gradValue, gradQuery, lse, delta;
  Value sq, sk, heads, group, batch, causalOffset, scale;
  Value batchIndex, kvHead, keyLayer, key0, firstQueryTile, tilesPerHead,
      iterations;
};
} // namespace

void AttentionGradKernelBuilder::buildProducer() {
  NVVM::SetMaxRegisterOp::create(b, gabi::kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  ifThen(cmp(arith::CmpIPredicate::eq, tid, i32(0)), [&] {
    int64_t columns = gabi::kRowBytes / c.bytes();
    expectBytes(keysFull(), 3 * c.keyTileBytes());
    for (int64_t p = 0; p < c.headPanels(); ++p) {
      Value offset = i32(p * c.blockN * gabi::kRowBytes);
      tmaLoad(gepBytes(keyTile(), offset), tmK,
              {i32(p * columns), key0, keyLayer}, keysFull());
      tmaLoad(gepBytes(valueTile(), offset), tmV,
              {i32(p * columns), key0, keyLayer}, keysFull());
    }
    tmaLoad(keyTransposed(), tmKT, {key0, i32(0), keyLayer}, keysFull());
    forLoop(i32(0), iterations, i32(1), {i32(0), i32(0)},
            [&](Value it, ValueRange slot) -> SmallVector<Value> {
              Value stage = slot[0], phase = slot[1];
              auto [layer, query0] = work(it);
              wait(empty(stage), xorI(phase, i32(1)));
              expectBytes(full(stage), c.stageBytes());
              for (int64_t p = 0; p < c.headPanels(); ++p) {
                Value offset = i32(p * c.blockM * gabi::kRowBytes);
                tmaLoad(gepBytes(stageTile(stage, 0), offset), tmQ,
                        {i32(p * columns), query0, layer}, full(stage));
                tmaLoad(gepBytes(stageTile(stage, 1), offset), tmDO,
                        {i32(p * columns), query0, layer}, full(stage));
              }
              tmaLoad(stageTile(stage, 2), tmQT, {query0, i32(0), layer},
                      full(stage));
              tmaLoad(stageTile(stage, 3), tmDOT, {query0, i32(0), layer},
                      full(stage));
              auto [next, nextPhase] = advanceRing(stage, phase, c.stages);
              return {next, nextPhase};
            });
  });
}

Value AttentionGradKernelBuilder::sharedProduct(Value a, int64_t aRows,
                                                Value bTile, int64_t bRows,
                                                int64_t n) {
  auto accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n / 2, b.getF32Type()));
  Value d = LLVM::UndefOp::create(b, accType);
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, n, 16);
  NVVM::WGMMATypes type = getWgmmaType(c.type);
  for (int64_t p = 0; p < c.headPanels(); ++p) {
    Value descA =
        inLoop(descriptor(gepBytes(a, i32(p * aRows * gabi::kRowBytes))));
    Value descB =
        descriptor(gepBytes(bTile, i32(p * bRows * gabi::kRowBytes)));
    for (int64_t kk = 0; kk < gabi::kRowBytes / 32; ++kk) {
      Value step = i64(2 * kk);
      d = NVVM::WgmmaMmaAsyncOp::create(
          b, accType, d, arith::AddIOp::create(b, descA, step),
          arith::AddIOp::create(b, descB, step), shape, type, type,
          NVVM::WGMMATypes::f32,
          p == 0 && kk == 0 ? NVVM::WGMMAScaleOut::zero
                            : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::col,
          NVVM::MMAIntOverflowAttr());
    }
  }
  return d;
}

SmallVector<std::array<Value, 4>>
AttentionGradKernelBuilder::pack(ArrayRef<Value> v) {
  Type i32Type = b.getI32Type();
  auto bits = [&](Value x) {
    return arith::ExtUIOp::create(
        b, i32Type,
        arith::BitcastOp::create(b, b.getI16Type(),
                                 arith::TruncFOp::create(b, elementType, x)));
  };
  SmallVector<std::array<Value, 4>> fragments;
  for (int64_t kk = 0; kk < c.blockM / 16; ++kk) {
    std::array<Value, 4> regs;
    for (int r = 0; r < 4; ++r)
      regs[r] = arith::OrIOp::create(
          b, bits(v[aabi::probabilityElement(false, kk, r, 0)]),
          arith::ShLIOp::create(
              b, bits(v[aabi::probabilityElement(false, kk, r, 1)]),
              i32(16)));
    fragments.push_back(regs);
  }
  return fragments;
}

void AttentionGradKernelBuilder::storeGradScores(
    ArrayRef<std::array<Value, 4>> fragments) {
  // Element (query q, key k) of the [BM, BN] tile (rows of 128 bytes,
  // 128-byte swizzle: 16-byte chunk (2k / 16) ^ (q % 8)). This thread's
  // dS^T values: key row 16 w + lane / 4 + 8 (r % 2), query column 2
  // (lane % 4) + half + 16 kk + 8 (r / 2). The last two terms are multiples
  // of 8: they move the row, not the swizzle, so four addresses (two keys
  // x two halves) and constant offsets cover all 64 stores.
  Value keyRow = add(mul(warpInGroup, i32(16)), divU(lane, i32(4)));
  Value query0 = mul(remU(lane, i32(4)), i32(2));
  Value bases[2][2];
  for (int h = 0; h < 2; ++h)
    for (int half = 0; half < 2; ++half) {
      Value key = add(keyRow, i32(8 * h));
      Value query = add(query0, i32(half));
      Value byte = mul(key, i32(c.bytes()));
      Value chunk = xorI(divU(byte, i32(16)), query);
      bases[h][half] = gepBytes(
          gradScores(), add(mul(query, i32(gabi::kRowBytes)),
                            add(mul(chunk, i32(16)), remU(byte, i32(16)))));
    }
  for (int64_t kk = 0; kk < c.blockM / 16; ++kk)
    for (int r = 0; r < 4; ++r)
      for (int half = 0; half < 2; ++half) {
        int64_t rows = 16 * kk + 8 * (r / 2);
        Value value = arith::TruncIOp::create(
            b, b.getI16Type(),
            arith::ShRUIOp::create(b, fragments[kk][r], i32(16 * half)));
        LLVM::StoreOp::create(
            b, value,
            gepBytes(bases[r % 2][half], i32(rows * gabi::kRowBytes)), 2);
      }
}

void AttentionGradKernelBuilder::buildConsumer() {
  NVVM::SetMaxRegisterOp::create(b, 256, NVVM::SetMaxRegisterAction::increase);
  Type f32Type = b.getF32Type();
  int64_t numScores = c.blockM / 2, numOut = c.headDim / 2;
  // wgmma m64nN fragment: key row 16 w + lane / 4 (+ 8), column 8 j + 2
  // (lane % 4) (+ 1): element 4 j + 2 h + e.
  Value rowInTile = add(mul(warpInGroup, i32(16)), divU(lane, i32(4)));
  Value column0 = mul(remU(lane, i32(4)), i32(2));
  Value keys[2] = {add(key0, rowInTile), add(key0, add(rowInTile, i32(8)))};
  Value lastQuery = sub(sq, i32(1));
  wait(keysFull(), i32(0));

  Value zero = f32(0.0f);
  SmallVector<Value> init{structOf(numOut, zero), structOf(numOut, zero),
                          i32(0), i32(0)};
  SmallVector<Value> state = forLoop(
      i32(0), iterations, i32(1), init,
      [&](Value it, ValueRange carried) -> SmallVector<Value> {
        Value gradK = carried[0], gradV = carried[1];
        Value stage = carried[2], phase = carried[3];
        auto [layer, query0] = work(it);
        wait(full(stage), phase);
        // dP^T = V dO^T, then S^T = K Q^T, two groups: dP^T - delta while
        // S^T runs, so that the two accumulators and the rows' lse and
        // delta are not all live at once (registers: dK and dV hold 128).
        NVVM::WgmmaFenceAlignedOp::create(b);
        Value gradProbabilities = sharedProduct(
            valueTile(), c.blockN, stageTile(stage, 1), c.blockM, c.blockM);
        NVVM::WgmmaGroupSyncAlignedOp::create(b);
        Value scores = sharedProduct(keyTile(), c.blockN, stageTile(stage, 0),
                                     c.blockM, c.blockM);
        NVVM::WgmmaGroupSyncAlignedOp::create(b);
        // This thread's queries are query0 + column0 + 8 j + e; rows past
        // sq read the last row's lse and delta and are zeroed below. The
        // masks compare one value per row with constants (few registers).
        Value rowBase = mul(layer, sq);
        Value firstQuery = add(query0, column0);
        auto rowOf = [&](int64_t i) { return 8 * (i / 4) + i % 2; };
        auto loadRows = [&](Value base) {
          SmallVector<Value> values;
          for (int64_t j = 0; j < c.blockM / 8; ++j)
            for (int e = 0; e < 2; ++e) {
              Value query = add(firstQuery, i32(8 * j + e));
              values.push_back(loadF32(
                  base,
                  add(rowBase, arith::MinUIOp::create(b, query, lastQuery))));
            }
          return values;
        };
        auto column = [](int64_t i) { return 2 * (i / 4) + i % 2; };
        NVVM::WgmmaWaitGroupSyncOp::create(b, 1);
        SmallVector<Value> dpMinusDelta(numScores);
        {
          SmallVector<Value> rowDelta = loadRows(delta);
          for (int64_t i = 0; i < numScores; ++i)
            dpMinusDelta[i] =
                fsub(LLVM::ExtractValueOp::create(b, gradProbabilities, i),
                     rowDelta[column(i)]);
        }
        NVVM::WgmmaWaitGroupSyncOp::create(b, 0);

        // P^T = exp(S^T scale - lse), -inf where causal masks it (0 then,
        // NaN in a row that lse says is fully masked), 0 outside sk x sq;
        // dS^T = P^T (dP^T - delta).
        SmallVector<Value> p(numScores), ds(numScores);
        {
          SmallVector<Value> rowLse = loadRows(lse);
          // query < sq  <=>  rowOf(i) < sq - firstQuery; causal masks key >
          // query + offset  <=>  key - firstQuery - offset > rowOf(i).
          Value queriesLeft = sub(sq, firstQuery);
          Value reach[2];
          for (int h = 0; h < 2; ++h)
            reach[h] = sub(sub(keys[h], firstQuery), causalOffset);
          for (int64_t i = 0; i < numScores; ++i) {
            int h = (i / 2) % 2;
            Value s = fmul(LLVM::ExtractValueOp::create(b, scores, i), scale);
            if (c.causal)
              s = select(cmp(arith::CmpIPredicate::sgt, reach[h],
                             i32(rowOf(i))),
                         negInf(), s);
            Value inside =
                andI(cmp(arith::CmpIPredicate::slt, keys[h], sk),
                     cmp(arith::CmpIPredicate::sgt, queriesLeft, i32(rowOf(i))));
            p[i] = select(inside, exp(fsub(s, rowLse[column(i)])), zero);
            ds[i] = fmul(p[i], dpMinusDelta[i]);
          }
        }
        SmallVector<std::array<Value, 4>> pFragments = pack(p);
        SmallVector<std::array<Value, 4>> dsFragments = pack(ds);
        // dS into shared memory for dQ before the fragments become A
        // operands: PTX forbids reading the registers of an in-flight
        // wgmma. The buffer is free: the previous step's dQ wgmma was
        // waited for and the consumers synchronized after it.
        storeGradScores(dsFragments);
        NVVM::FenceProxyOp::create(
            b, NVVM::ProxyKind::async_shared,
            NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
        syncConsumers();

        // dV += P^T dO, dK += dS^T Q: K = the 64 queries, one 128-byte
        // panel of the transposed tiles, +2 per k16 step.
        NVVM::WgmmaFenceAlignedOp::create(b);
        StringRef type = gabi::tag(c.type);
        for (int64_t kk = 0; kk < c.blockM / 16; ++kk) {
          Value step = i64(2 * kk);
          gradV = wgmmaRegisterA(
              gradV, pFragments[kk],
              arith::AddIOp::create(b, descriptor(stageTile(stage, 3)), step),
              c.headDim, type, type);
          gradK = wgmmaRegisterA(
              gradK, dsFragments[kk],
              arith::AddIOp::create(b, descriptor(stageTile(stage, 2)), step),
              c.headDim, type, type);
        }
        NVVM::WgmmaGroupSyncAlignedOp::create(b);

        // dQ += dS K, 64 columns of D at a time: dS [queries, keys] through
        // shared memory (written above), K^T's rows of those columns.
        Value queryRows[2] = {add(query0, rowInTile),
                              add(query0, add(rowInTile, i32(8)))};
        for (int64_t half = 0; half < c.headDim / 64; ++half) {
          NVVM::WgmmaFenceAlignedOp::create(b);
          auto accType = LLVM::LLVMStructType::getLiteral(
              ctx, SmallVector<Type>(32, f32Type));
          Value dq = LLVM::UndefOp::create(b, accType);
          auto shape = NVVM::MMAShapeAttr::get(ctx, 64, 64, 16);
          NVVM::WGMMATypes wtype = getWgmmaType(c.type);
          Value descA = inLoop(descriptor(gradScores()));
          Value descB = inLoop(descriptor(
              gepBytes(keyTransposed(), i32(half * 64 * gabi::kRowBytes))));
          for (int64_t kk = 0; kk < c.blockN / 16; ++kk) {
            Value step = i64(2 * kk);
            dq = NVVM::WgmmaMmaAsyncOp::create(
                b, accType, dq, arith::AddIOp::create(b, descA, step),
                arith::AddIOp::create(b, descB, step), shape, wtype, wtype,
                NVVM::WGMMATypes::f32,
                kk == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
                NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
                NVVM::MMALayout::row, NVVM::MMALayout::col,
                NVVM::MMAIntOverflowAttr());
          }
          NVVM::WgmmaGroupSyncAlignedOp::create(b);
          NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
          for (int h = 0; h < 2; ++h)
            ifThen(cmp(arith::CmpIPredicate::slt, queryRows[h], sq), [&] {
              // One pointer per row, the columns as immediate offsets.
              Value row = gep(
                  gradQuery, f32Type,
                  add(mul(zext64(add(rowBase, queryRows[h])), i64(c.headDim)),
                      zext64(column0)));
              // red.global.add.f32, the column as an immediate offset: an
              // llvm.atomicrmw whose result is unused still takes a
              // register per add in NVPTX (atom, not red).
              for (int64_t j = 0; j < 8; ++j)
                for (int e = 0; e < 2; ++e) {
                  int64_t offset = 4 * (half * 64 + 8 * j + e);
                  LLVM::InlineAsmOp::create(
                      b, TypeRange{},
                      ValueRange{row, LLVM::ExtractValueOp::create(
                                          b, dq, 4 * j + 2 * h + e)},
                      "red.global.add.f32 [$0+" + std::to_string(offset) +
                          "], $1;",
                      "l,f", /*has_side_effects=*/true,
                      /*is_align_stack=*/false, LLVM::TailCallKind::None,
                      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
                      /*operand_attrs=*/ArrayAttr());
                }
            });
        }
        // Every read of dS (and of the stage) is done: the stage goes back
        // to the producer, dS may be written again.
        syncConsumers();
        arrivePerWarp(empty(stage), lane);
        auto [next, nextPhase] = advanceRing(stage, phase, c.stages);
        return {gradK, gradV, next, nextPhase};
      });

  // round(scale dK), round(dV), rows of keys < sk, pairs of columns.
  int64_t bits = 16;
  Type pairType = b.getIntegerType(2 * bits);
  for (int which = 0; which < 2; ++which) {
    Value acc = state[which];
    Value base = which == 0 ? gradKey : gradValue;
    for (int h = 0; h < 2; ++h)
      ifThen(cmp(arith::CmpIPredicate::slt, keys[h], sk), [&] {
        Value row = mul(zext64(add(mul(keyLayer, sk), keys[h])),
                        i64(c.headDim));
        for (int64_t j = 0; j < c.headDim / 8; ++j) {
          Value halves[2];
          for (int e = 0; e < 2; ++e) {
            Value x = LLVM::ExtractValueOp::create(b, acc, 4 * j + 2 * h + e);
            if (which == 0)
              x = fmul(x, scale);
            halves[e] = arith::ExtUIOp::create(
                b, pairType,
                arith::BitcastOp::create(
                    b, b.getI16Type(),
                    arith::TruncFOp::create(b, elementType, x)));
          }
          Value pair = arith::OrIOp::create(
              b, halves[0],
              arith::ShLIOp::create(
                  b, halves[1],
                  arith::ConstantOp::create(b,
                                            b.getIntegerAttr(pairType, bits))));
          Value column = add(column0, i32(8 * j));
          LLVM::StoreOp::create(
              b, pair, gep(base, elementType, add(row, zext64(column))), 4);
        }
      });
  }
}

void AttentionGradKernelBuilder::build(LLVM::LLVMFuncOp func) {
  Block *entry = &func.getBody().front();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  tmK = args[aabi::kGradTensorMapK];
  tmV = args[aabi::kGradTensorMapV];
  tmKT = args[aabi::kGradTensorMapKT];
  tmQ = args[aabi::kGradTensorMapQ];
  tmDO = args[aabi::kGradTensorMapDO];
  tmQT = args[aabi::kGradTensorMapQT];
  tmDOT = args[aabi::kGradTensorMapDOT];
  gradKey = args[aabi::kGradKey];
  gradValue = args[aabi::kGradValue];
  gradQuery = args[aabi::kGradQueryAccum];
  lse = args[aabi::kGradLse];
  delta = args[aabi::kGradDelta];
  sq = args[aabi::kGradQueries];
  sk = args[aabi::kGradKeys];
  heads = args[aabi::kGradHeads];
  group = args[aabi::kGradGroup];
  batch = args[aabi::kGradBatch];
  causalOffset = args[aabi::kGradCausalOffset];
  scale = args[aabi::kGradScale];
  elementType = getKernelElemType(ctx, c.type);

  smem = alignedSharedMemory(aabi::kSharedMemoryName);
  readThreadIndices();

  // The block's keys and key/value head, and its loop: every query head of
  // the group, every query tile that sees a key of the block (causal: from
  // the first query whose last key reaches key0).
  Value keyTiles = ceilDiv(sk, c.blockN);
  Value block = NVVM::BlockIdXOp::create(b, b.getI32Type());
  key0 = mul(remU(block, keyTiles), i32(c.blockN));
  keyLayer = divU(block, keyTiles);
  Value kvHeads = divU(heads, group);
  batchIndex = divU(keyLayer, kvHeads);
  kvHead = remU(keyLayer, kvHeads);
  Value queryTiles = ceilDiv(sq, c.blockM);
  firstQueryTile = i32(0);
  if (c.causal)
    firstQueryTile = arith::MinSIOp::create(
        b,
        arith::DivSIOp::create(
            b, arith::MaxSIOp::create(b, sub(key0, causalOffset), i32(0)),
            i32(c.blockM)),
        queryTiles);
  tilesPerHead = sub(queryTiles, firstQueryTile);
  iterations = mul(group, tilesPerHead);

  splitWarpgroups(
      [&] {
        NVVM::MBarrierInitOp::create(b, keysFull(), i32(1), Value());
        for (int64_t s = 0; s < c.stages; ++s) {
          NVVM::MBarrierInitOp::create(b, full(i32(s)), i32(1), Value());
          NVVM::MBarrierInitOp::create(b, empty(i32(s)), i32(4), Value());
        }
      },
      [&] { buildProducer(); }, [&] { buildConsumer(); });
}

LLVM::LLVMFuncOp mlir::fp8::getOrBuildFlashAttentionGradKernel(
    gpu::GPUModuleOp module, const aabi::AttentionGradConfig &config) {
  MLIRContext *ctx = module.getContext();
  Type generic = LLVM::LLVMPointerType::get(ctx);
  Type global = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  SmallVector<Type> params(aabi::kGradNumParams, IntegerType::get(ctx, 32));
  SmallVector<unsigned> maps;
  for (unsigned p = aabi::kGradTensorMapK; p <= aabi::kGradTensorMapDOT; ++p) {
    params[p] = generic;
    maps.push_back(p);
  }
  for (unsigned p = aabi::kGradKey; p <= aabi::kGradDelta; ++p)
    params[p] = global;
  params[aabi::kGradScale] = Float32Type::get(ctx);
  return getOrCreateWgmmaKernel(
      module, config.name(), aabi::kSharedMemoryName, params, maps,
      config.threads(), [&](LLVM::LLVMFuncOp func) {
        ImplicitLocOpBuilder b(func.getLoc(), ctx);
        AttentionGradKernelBuilder(b, config).build(func);
      });
}
