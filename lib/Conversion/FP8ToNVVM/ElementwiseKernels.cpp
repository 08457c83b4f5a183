//===- ElementwiseKernels.cpp - The per-tensor cast kernels --------------===//
//
// quantize_<in>_<fp8>[_amax], amax_<in>, dequantize_<fp8>_<out> and
// cast_transpose_<in>_<fp8>[_amax] (KernelABI.h): the per-tensor casts,
// gpu.funcs on flat memrefs (views of a tensor of any rank; FP8 as bytes;
// cast_transpose also takes rows and cols), lowered by upstream's
// convert-gpu-to-nvvm.
//
// kBlockSize threads per block on a grid-stride loop over kChunk-element
// chunks: a chunk is read with 16-byte vector loads (4 for f32, 2 for
// bf16/f16, 1 of FP8 bytes) and written with 16-byte stores; the elements
// past the last chunk, and every element when a buffer is not 16-byte
// aligned (checked at run time), take a scalar loop. The amax is a
// NaN-ignoring maxnum per thread, five xor shuffles per warp, and one
// `atom.global.max.u32` per warp on the f32 bits (for non-negative floats
// the bit patterns order like the values); the host zeroes it first.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp8;
namespace abi = mlir::fp8::nvvm_abi;

namespace {
/// What the per-tensor cast kernels share, on one builder.
class ElementwiseBuilder : public KernelBuilder {
public:
  using KernelBuilder::KernelBuilder;

  /// kChunk elements of `x` from `at` along its last dimension (16-byte
  /// aligned), widened to f32.
  SmallVector<Value> loadChunk(Value x, ArrayRef<Value> at) {
    Type element = cast<MemRefType>(x.getType()).getElementType();
    int64_t perVector = 16 / (element.getIntOrFloatBitWidth() / 8);
    auto vectorType = VectorType::get({perVector}, element);
    SmallVector<Value> values;
    for (int64_t v = 0; v < abi::kChunk / perVector; ++v) {
      SmallVector<Value> indices(at);
      indices.back() = add(indices.back(), index(v * perVector));
      Value vec = vector::LoadOp::create(
          b, b.getLoc(), vectorType, x, indices,
          /*nontemporal=*/false, llvm::MaybeAlign(16));
      for (int64_t e = 0; e < perVector; ++e)
        values.push_back(widen(vector::ExtractOp::create(b, vec, e)));
    }
    return values;
  }

  /// f32 values, two per cvt.rn.satfinite, as bytes in element order.
  Value quantizeBytes(ArrayRef<Value> scaled, Type float8Type) {
    SmallVector<Value> pairs;
    for (size_t i = 0; i < scaled.size(); i += 2)
      pairs.push_back(createFloat8Pair(b, b.getLoc(), scaled[i + 1],
                                       scaled[i], float8Type));
    Value halves = vector::FromElementsOp::create(
        b, VectorType::get({static_cast<int64_t>(pairs.size())},
                           b.getI16Type()),
        pairs);
    return vector::BitCastOp::create(
        b,
        VectorType::get({static_cast<int64_t>(scaled.size())}, b.getI8Type()),
        halves);
  }

  /// The warp's max of `threadMax` into *amax (f32 bits, atom.max.u32).
  void atomicAmax(Value threadMax, Value amax) {
    Value warpMax = groupMax(threadMax, abi::kWarpSize);
    // maxnum from 0 cannot give NaN; defensive: NaN would order above Inf.
    Value isNaN = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, warpMax,
                                        warpMax);
    warpMax = select(isNaN, f32(0.0f), warpMax);
    Value bits = arith::BitcastOp::create(b, b.getI32Type(), warpMax);
    Value lane = rem(gpu::ThreadIdOp::create(b, gpu::Dimension::x),
                     abi::kWarpSize);
    ifThen(isZero(lane), [&] {
      // memref.atomic_rmw has no unsigned max on f32 bits: the LLVM op on
      // the buffer's global address.
      Value ptr = LLVM::IntToPtrOp::create(
          b,
          LLVM::LLVMPointerType::get(
              b.getContext(),
              static_cast<unsigned>(NVVM::NVVMMemorySpace::Global)),
          arith::IndexCastUIOp::create(b, b.getI64Type(), address(amax))
              .getResult());
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::umax, ptr, bits,
                                LLVM::AtomicOrdering::monotonic);
    });
  }
};
} // namespace

/// quantize (withQuantize) and/or amax (withAmax) of x: see the file
/// comment.
static void buildQuantizeOrAmax(ElementwiseBuilder &k, gpu::GPUFuncOp func,
                                Type out, bool withQuantize, bool withAmax) {
  ImplicitLocOpBuilder &b = k.b;
  Value x = func.getArgument(0);
  Value q = withQuantize ? func.getArgument(1) : Value();
  Value scale = withQuantize
                    ? memref::LoadOp::create(b, func.getArgument(2), ValueRange{})
                          .getResult()
                    : Value();
  Value amax = withAmax ? func.getArguments().back() : Value();
  Value n = memref::DimOp::create(b, x, 0);
  auto [first, stride] = k.gridStrideOver(1);
  SmallVector<Value> buffers{x};
  if (q)
    buffers.push_back(q);
  Value chunks = k.select(k.allAligned(buffers), k.div(n, abi::kChunk),
                          k.index(0));
  Value acc = k.forLoop(first, chunks, stride, k.f32(0.0f), [&](Value c,
                                                                Value acc) {
    Value start = k.mul(c, k.index(abi::kChunk));
    SmallVector<Value> values = k.loadChunk(x, {start});
    if (withAmax)
      for (Value v : values)
        acc = k.absMax(acc, v);
    if (withQuantize) {
      SmallVector<Value> scaled;
      for (Value v : values)
        scaled.push_back(arith::MulFOp::create(b, v, scale));
      vector::StoreOp::create(b, b.getLoc(), k.quantizeBytes(scaled, out), q,
                              ValueRange{start}, /*nontemporal=*/false,
                              llvm::MaybeAlign(16));
    }
    return acc;
  });
  Value tail = k.add(k.mul(chunks, k.index(abi::kChunk)), first);
  acc = k.forLoop(tail, n, stride, acc, [&](Value i, Value acc) {
    Value v = k.widen(memref::LoadOp::create(b, x, ValueRange{i}));
    if (withAmax)
      acc = k.absMax(acc, v);
    if (withQuantize) {
      Value pair = createFloat8Pair(b, b.getLoc(), k.f32(0.0f),
                                    arith::MulFOp::create(b, v, scale), out);
      memref::StoreOp::create(b, arith::TruncIOp::create(b, b.getI8Type(), pair),
                              q, ValueRange{i});
    }
    return acc;
  });
  if (withAmax)
    k.atomicAmax(acc, amax);
}

/// cast_transpose: q = cast(x * scale) and qt = q^T in one pass, with the
/// amax fused. Persistent blocks walk kTile x kTile tiles (so the amax
/// costs one atomic per warp, not per tile). Phase 1: each thread reads a
/// 16-element row segment (16-byte loads), writes its 16 bytes to q with
/// one 16-byte store and byte by byte into the transposed shared tile
/// (kTile rows of kTilePitch bytes). Phase 2: each thread copies 16
/// contiguous bytes of a tile row (one shared 16-byte load) to qt with one
/// 16-byte store. Edge tiles, dimensions not multiples of 16 and
/// misaligned buffers take a bounds-checked element path in which a warp
/// reads 32 adjacent elements and writes 32 adjacent bytes (the H200 ran
/// the former 16-elements-per-thread path at 10% of a copy on 11585^2).
static void buildCastTranspose(ElementwiseBuilder &k, gpu::GPUFuncOp func,
                               Type out, bool withAmax) {
  ImplicitLocOpBuilder &b = k.b;
  Value x = func.getArgument(0), q = func.getArgument(1);
  Value qt = func.getArgument(2);
  Value scale = memref::LoadOp::create(b, func.getArgument(3), ValueRange{});
  Value amax = withAmax ? func.getArgument(4) : Value();
  Value tile = func.getWorkgroupAttributions().front();
  Value rows = func.getArgument(func.getNumArguments() - 2);
  Value cols = func.getArgument(func.getNumArguments() - 1);
  Value tileSize = k.index(abi::kTile);
  Value colTiles = arith::CeilDivUIOp::create(b, cols, tileSize);
  Value numTiles =
      k.mul(arith::CeilDivUIOp::create(b, rows, tileSize), colTiles);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  constexpr int64_t segments = abi::kTile / abi::kChunk;
  Value r = k.div(tid, segments); // row within the tile
  Value seg = k.mul(k.rem(tid, segments), k.index(abi::kChunk));
  Value pitch = k.index(abi::kTilePitch);
  Value aligned = k.both(
      k.isZero(k.rem(k.either(rows, cols), abi::kChunk)),
      k.allAligned({x, q, qt}));
  Type i8 = b.getI8Type();
  auto chunkType = VectorType::get({abi::kChunk}, i8);
  // Tile row `column` (an input column), byte r.
  auto tileSlot = [&](Value column) -> SmallVector<Value, 1> {
    return {k.add(k.mul(column, pitch), r)};
  };

  Value acc = k.forLoop(
      gpu::BlockIdOp::create(b, gpu::Dimension::x), numTiles,
      gpu::GridDimOp::create(b, gpu::Dimension::x), k.f32(0.0f),
      [&](Value t, Value acc) {
        Value r0 = k.mul(arith::DivUIOp::create(b, t, colTiles), tileSize);
        Value c0 = k.mul(arith::RemUIOp::create(b, t, colTiles), tileSize);
        Value full = k.both(k.ule(k.add(r0, tileSize), rows),
                            k.ule(k.add(c0, tileSize), cols));
        Value fast = k.both(full, aligned);
        Value row = k.add(r0, r), col = k.add(c0, seg);
        Value rowStart = k.add(k.mul(row, cols), col);

        // Phase 1: a row segment to q and, transposed, to the tile.
        acc = k.select(
            fast, b.getF32Type(),
            [&]() -> Value {
              Value a = acc;
              SmallVector<Value> scaled;
              for (Value v : k.loadChunk(x, {rowStart})) {
                if (withAmax)
                  a = k.absMax(a, v);
                scaled.push_back(arith::MulFOp::create(b, v, scale));
              }
              Value bytes = k.quantizeBytes(scaled, out);
              vector::StoreOp::create(b, b.getLoc(), bytes, q,
                                      ValueRange{rowStart},
                                      /*nontemporal=*/false,
                                      llvm::MaybeAlign(16));
              for (int64_t j = 0; j < abi::kChunk; ++j)
                memref::StoreOp::create(
                    b, vector::ExtractOp::create(b, bytes, j), tile,
                    tileSlot(k.add(seg, k.index(j))));
              return a;
            },
            [&]() -> Value {
              // Element e = j * kBlockSize + tid of the tile is its row
              // e / kTile, column e % kTile: a warp reads 32 adjacent
              // elements of a row (coalesced, unlike 16 per thread).
              return k.forLoop(
                  k.index(0), k.index(abi::kChunk), k.index(1), acc,
                  [&](Value j, Value a) {
                    Value e = k.add(k.mul(j, k.index(abi::kBlockSize)), tid);
                    Value tr = k.div(e, abi::kTile),
                          tc = k.rem(e, abi::kTile);
                    Value rowE = k.add(r0, tr), colE = k.add(c0, tc);
                    Value at = k.add(k.mul(rowE, cols), colE);
                    return k.select(
                        k.both(k.ult(rowE, rows), k.ult(colE, cols)),
                        b.getF32Type(),
                        [&]() -> Value {
                          Value v = k.widen(
                              memref::LoadOp::create(b, x, ValueRange{at}));
                          Value pair = createFloat8Pair(
                              b, b.getLoc(), k.f32(0.0f),
                              arith::MulFOp::create(b, v, scale), out);
                          Value byte = arith::TruncIOp::create(b, i8, pair);
                          memref::StoreOp::create(b, byte, q, ValueRange{at});
                          memref::StoreOp::create(
                              b, byte, tile,
                              ValueRange{k.add(k.mul(tc, pitch), tr)});
                          return withAmax ? k.absMax(a, v) : a;
                        },
                        [&]() { return a; });
                  });
            });
        gpu::BarrierOp::create(b);

        // Phase 2: tile row r is input column c0 + r; its 16 bytes at seg
        // are qt[c0 + r, r0 + seg ..].
        Value tcol = k.add(c0, r), trow = k.add(r0, seg);
        Value tStart = k.add(k.mul(tcol, rows), trow);
        Value slot = k.add(k.mul(r, pitch), seg);
        k.ifThen(
            fast,
            [&] {
              Value bytes = vector::LoadOp::create(
                  b, b.getLoc(), chunkType, tile, ValueRange{slot},
                  /*nontemporal=*/false, llvm::MaybeAlign(16));
              vector::StoreOp::create(b, b.getLoc(), bytes, qt,
                                      ValueRange{tStart},
                                      /*nontemporal=*/false,
                                      llvm::MaybeAlign(16));
            },
            [&] {
              // Tile byte e = j * kBlockSize + tid: tile row (input
              // column) e / kTile, byte (input row) e % kTile; a warp
              // writes 32 adjacent bytes of a qt row.
              k.forLoop(
                  k.index(0), k.index(abi::kChunk), k.index(1), k.f32(0.0f),
                  [&](Value j, Value unused) {
                    Value e = k.add(k.mul(j, k.index(abi::kBlockSize)), tid);
                    Value tr = k.div(e, abi::kTile),
                          tc = k.rem(e, abi::kTile);
                    Value colE = k.add(c0, tr), rowE = k.add(r0, tc);
                    k.ifThen(k.both(k.ult(colE, cols), k.ult(rowE, rows)),
                             [&] {
                               Value byte = memref::LoadOp::create(
                                   b, tile,
                                   ValueRange{k.add(k.mul(tr, pitch), tc)});
                               memref::StoreOp::create(
                                   b, byte, qt,
                                   ValueRange{k.add(k.mul(colE, rows), rowE)});
                             });
                    return unused;
                  });
            });
        // The next tile overwrites the shared tile.
        gpu::BarrierOp::create(b);
        return acc;
      });
  if (withAmax)
    k.atomicAmax(acc, amax);
}

/// A per-tensor cast kernel of kBlockSize threads: see getOrCreateKernel.
static StringRef
getOrCreate(gpu::GPUModuleOp module, StringRef name, TypeRange params,
            function_ref<void(ElementwiseBuilder &, gpu::GPUFuncOp)> build,
            TypeRange workgroup = {}) {
  return getOrCreateKernel<ElementwiseBuilder>(module, name, params,
                                               abi::kBlockSize, workgroup,
                                               build);
}

StringRef mlir::fp8::getOrCreateQuantize(gpu::GPUModuleOp module, Type in,
                                         Type out, bool withAmax) {
  std::string name = ("quantize_" + Twine(withAmax ? "amax_" : "") +
                      getKernelTypeTag(in) + "_" + getKernelTypeTag(out))
                         .str();
  Builder b(module.getContext());
  auto scalar = MemRefType::get({}, b.getF32Type());
  SmallVector<Type> params{getDynamicVectorType(in),
                           getDynamicVectorType(b.getI8Type()), scalar};
  if (withAmax)
    params.push_back(scalar);
  return getOrCreate(module, name, params,
                     [&](ElementwiseBuilder &k, gpu::GPUFuncOp func) {
                       buildQuantizeOrAmax(k, func, out, /*withQuantize=*/true,
                                           withAmax);
                     });
}

StringRef mlir::fp8::getOrCreateAmax(gpu::GPUModuleOp module, Type in) {
  Builder b(module.getContext());
  return getOrCreate(
      module, ("amax_" + getKernelTypeTag(in)).str(),
      {getDynamicVectorType(in), MemRefType::get({}, b.getF32Type())},
      [&](ElementwiseBuilder &k, gpu::GPUFuncOp func) {
        buildQuantizeOrAmax(k, func, Type(), /*withQuantize=*/false,
                            /*withAmax=*/true);
      });
}

StringRef mlir::fp8::getOrCreateDequantize(gpu::GPUModuleOp module, Type in,
                                           Type out) {
  std::string name =
      ("dequantize_" + getKernelTypeTag(in) + "_" + getKernelTypeTag(out))
          .str();
  Builder builder(module.getContext());
  Type i8 = builder.getI8Type();
  return getOrCreate(
      module, name,
      {getDynamicVectorType(i8), getDynamicVectorType(out),
       MemRefType::get({}, builder.getF32Type())},
      [&](ElementwiseBuilder &k, gpu::GPUFuncOp func) {
        ImplicitLocOpBuilder &b = k.b;
        Value q = func.getArgument(0), y = func.getArgument(1);
        Value scaleInv =
            memref::LoadOp::create(b, func.getArgument(2), ValueRange{});
        Value n = memref::DimOp::create(b, q, 0);
        auto [first, stride] = k.gridStrideOver(1);
        Value chunks = k.select(k.allAligned({q, y}), k.div(n, abi::kChunk),
                                k.index(0));
        int64_t perVector = 16 / (out.getIntOrFloatBitWidth() / 8);
        auto bytesType = VectorType::get({abi::kChunk}, i8);
        auto pairType = VectorType::get({2}, i8);
        Value zero = k.f32(0.0f);
        k.forLoop(first, chunks, stride, zero, [&](Value c, Value unused) {
          Value start = k.mul(c, k.index(abi::kChunk));
          Value bytes = vector::LoadOp::create(b, b.getLoc(), bytesType, q,
                                               ValueRange{start},
                                               /*nontemporal=*/false,
                                               llvm::MaybeAlign(16));
          SmallVector<Value> values;
          for (int64_t p = 0; p < abi::kChunk; p += 2) {
            Value pair = vector::ShuffleOp::create(
                b, bytes, bytes, ArrayRef<int64_t>{p, p + 1});
            auto [lo, hi] = k.dequantizePair(pair, in);
            values.push_back(
                k.narrow(arith::MulFOp::create(b, lo, scaleInv), out));
            values.push_back(
                k.narrow(arith::MulFOp::create(b, hi, scaleInv), out));
          }
          for (int64_t v = 0; v < abi::kChunk / perVector; ++v) {
            Value vec = vector::FromElementsOp::create(
                b, VectorType::get({perVector}, out),
                ArrayRef<Value>(values).slice(v * perVector, perVector));
            vector::StoreOp::create(
                b, b.getLoc(), vec, y,
                ValueRange{k.add(start, k.index(v * perVector))},
                /*nontemporal=*/false, llvm::MaybeAlign(16));
          }
          return unused;
        });
        Value tail = k.add(k.mul(chunks, k.index(abi::kChunk)), first);
        k.forLoop(tail, n, stride, zero, [&](Value i, Value unused) {
          Value byte = memref::LoadOp::create(b, q, ValueRange{i});
          Value pair = vector::FromElementsOp::create(
              b, pairType, ValueRange{byte, arith::ConstantOp::create(
                                                b, b.getI8IntegerAttr(0))});
          Value value = k.dequantizePair(pair, in).first;
          memref::StoreOp::create(
              b, k.narrow(arith::MulFOp::create(b, value, scaleInv), out), y,
              ValueRange{i});
          return unused;
        });
      });
}

StringRef mlir::fp8::getOrCreateCastTranspose(gpu::GPUModuleOp module,
                                              Type in, Type out,
                                              bool withAmax) {
  std::string name = ("cast_transpose_" + getKernelTypeTag(in) + "_" +
                      getKernelTypeTag(out) + (withAmax ? "_amax" : ""))
                         .str();
  MLIRContext *ctx = module.getContext();
  Builder builder(ctx);
  Type i8 = builder.getI8Type();
  auto scalar = MemRefType::get({}, builder.getF32Type());
  // Flat views and the shape, as the per-block kernels: one linear index
  // serves x and q (2-D memrefs cost 8 registers more with the amax).
  SmallVector<Type> params{getDynamicVectorType(in), getDynamicVectorType(i8),
                           getDynamicVectorType(i8), scalar};
  if (withAmax)
    params.push_back(scalar);
  params.append(2, IndexType::get(ctx));
  // The transposed tile: kTile rows of kTilePitch bytes (16-byte rows).
  auto tileType = MemRefType::get(
      {abi::kTile * abi::kTilePitch}, i8, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  return getOrCreate(
      module, name, params,
      [&](ElementwiseBuilder &k, gpu::GPUFuncOp func) {
        // 16-byte rows for the vector reads of phase 2.
        func.setWorkgroupAttributionAttr(
            0, LLVM::LLVMDialect::getAlignAttrName(),
            builder.getI64IntegerAttr(16));
        buildCastTranspose(k, func, out, withAmax);
      },
      TypeRange{tileType});
}
