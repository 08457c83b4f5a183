//===- BlockKernels.cpp - The per-block cast kernels ----------------------===//
//
// block_cast, block_amax, block_quantize, block_dequantize and block_scales
// (KernelABI.h): per-block scaling of a tensor viewed as [batch, rows, cols]
// in blocks of br x bc over its last two dimensions, with scales in the
// dialect's block layout [batch, ceil(rows / br), ceil(cols / bc)].
// gpu.funcs on flat memrefs (memref<?xT>, FP8 and E8M0 as i8) and the
// [batch, rows, cols] geometry as index parameters, lowered by upstream's
// convert-gpu-to-nvvm. (Flat views, not 3-D memrefs: one linear index per
// run serves the input and the output alike, which keeps the PTX of the
// LLVM-dialect kernels these replace; 3-D memrefs cost 25-40% more
// instructions in address arithmetic.)
//
// One group of blockGroupSize(br, bc) threads per block (bc / 4 lanes of a
// warp for 1 x bc, the whole thread block otherwise), each thread holding
// blockSteps(br, bc) runs of kBlockVector consecutive elements of a row in
// registers: the block is read once, its amax reduced (xor shuffles, then
// through shared memory across warps), its scale computed with ScaleArith's
// ops (the CPU lowering's) and its runs cast. A whole block on 4-element
// rows and 16-byte aligned buffers takes vector accesses; edge blocks take
// each element on its own, those outside the tensor read as 0.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"
#include "fp8/Conversion/ScaleArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp8;
namespace abi = mlir::fp8::nvvm_abi;

namespace {
/// One group of threads on one block, and this thread's runs of it.
struct BlockCursor {
  Value valid; // i1: the group has a block this iteration
  Value index; // the block's index in the (flat) scale layout
  Value rank;  // this thread's rank in its group
  Value fast;  // i1: a whole block on aligned rows: vector accesses
  Value rows, cols;
  SmallVector<Value> start, row, col; // per step: the run's first element
};

/// Builds the body of one per-block kernel.
class BlockKernelBuilder : public KernelBuilder {
public:
  BlockKernelBuilder(ImplicitLocOpBuilder &b, int64_t br, int64_t bc)
      : KernelBuilder(b), br(br), bc(bc), group(abi::blockGroupSize(br, bc)),
        steps(abi::blockSteps(br, bc)) {}

  /// Runs `body` for every block of a [batch, rows, cols] tensor (the
  /// kernel's last three parameters), a group of threads per block;
  /// `vectorBuffers` are the tensors the fast path reads or writes with
  /// vector accesses.
  void walk(gpu::GPUFuncOp func, ArrayRef<Value> vectorBuffers,
            function_ref<void(BlockCursor &)> body);

  /// The NaN-ignoring max over the group, in every thread of it; `slots`
  /// (one f32 per warp in shared memory) when the group spans warps.
  Value groupMax(Value value, Value slots);

  /// Run `s` of a wide tensor, widened to f32.
  SmallVector<Value, 4> load(Value x, BlockCursor &c, int64_t s);
  /// Run `s` of an FP8 tensor (bytes), decoded exactly to f32.
  SmallVector<Value, 4> loadFloat8(Value q, Type float8Type, BlockCursor &c,
                                   int64_t s);
  /// Casts run `s` (already scaled) into `q`.
  void storeFloat8(Value q, ArrayRef<Value> scaled, Type float8Type,
                   BlockCursor &c, int64_t s);
  /// Rounds run `s` to y's element type and stores it.
  void storeWide(Value y, ArrayRef<Value> values, BlockCursor &c, int64_t s);
  /// The block's entry of a per-block tensor.
  Value loadBlockValue(Value scales, BlockCursor &c);
  /// Stores `value` at the block's entry of a per-block tensor, once.
  void storeBlockValue(Value scales, Value value, BlockCursor &c);

  const int64_t br, bc, group, steps;

private:
  /// Element j of step s's run is in the tensor.
  Value inside(BlockCursor &c, int64_t s, int64_t j) {
    return both(c.valid, both(ult(c.row[s], c.rows),
                              ult(add(c.col[s], index(j)), c.cols)));
  }
  SmallVector<Value, 1> at(BlockCursor &c, int64_t s, int64_t j = 0) {
    return {j ? add(c.start[s], index(j)) : c.start[s]};
  }
};
} // namespace

void BlockKernelBuilder::walk(gpu::GPUFuncOp func,
                              ArrayRef<Value> vectorBuffers,
                              function_ref<void(BlockCursor &)> body) {
  // Rows of the block one step of the whole group covers.
  const int64_t rowsPerStep = group * abi::kBlockVector / bc;
  unsigned numArgs = func.getNumArguments();
  Value batch = func.getArgument(numArgs - 3);
  Value rows = func.getArgument(numArgs - 2);
  Value cols = func.getArgument(numArgs - 1);
  Value blockRows = arith::CeilDivUIOp::create(b, rows, index(br));
  Value blockCols = arith::CeilDivUIOp::create(b, cols, index(bc));
  Value numBlocks = mul(batch, mul(blockRows, blockCols));
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value slot = div(tid, group);
  Value rank = rem(tid, group);
  auto [first, stride] = gridStrideOver(group);
  // Whole rows of 4-element runs stay aligned when cols is a multiple of 4.
  Value aligned = both(allAligned(vectorBuffers),
                       isZero(rem(cols, abi::kBlockVector)));
  Value runOffset = mul(rank, index(abi::kBlockVector));
  Value rowInBlock = div(runOffset, bc);
  Value colInBlock = rem(runOffset, bc);

  // The loop runs alike for every thread of a thread block (its bounds
  // depend on the thread block alone), so the shuffles and barriers of the
  // reductions see every thread; a group without a block idles through.
  forLoop(first, numBlocks, stride, f32(0.0f), [&](Value t, Value unused) {
    BlockCursor c;
    Value block = add(t, slot);
    c.valid = ult(block, numBlocks);
    c.index = select(c.valid, block, index(0));
    c.rank = rank;
    c.rows = rows;
    c.cols = cols;
    Value blockCol = arith::RemUIOp::create(b, c.index, blockCols);
    Value rest = arith::DivUIOp::create(b, c.index, blockCols);
    Value blockRow = arith::RemUIOp::create(b, rest, blockRows);
    Value batchIndex = arith::DivUIOp::create(b, rest, blockRows);
    Value row0 = mul(blockRow, index(br));
    Value col0 = mul(blockCol, index(bc));
    Value whole = both(ule(add(row0, index(br)), rows),
                       ule(add(col0, index(bc)), cols));
    c.fast = both(both(c.valid, whole), aligned);
    Value base = mul(batchIndex, mul(rows, cols));
    for (int64_t step = 0; step < steps; ++step) {
      Value row = add(row0, add(rowInBlock, index(step * rowsPerStep)));
      Value col = add(col0, colInBlock);
      c.row.push_back(row);
      c.col.push_back(col);
      c.start.push_back(add(base, add(mul(row, cols), col)));
    }
    body(c);
    return unused;
  });
}

Value BlockKernelBuilder::groupMax(Value value, Value slots) {
  value = KernelBuilder::groupMax(
      value, static_cast<int32_t>(std::min<int64_t>(group, abi::kWarpSize)));
  if (group <= abi::kWarpSize)
    return value;
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  ifThen(isZero(rem(tid, abi::kWarpSize)), [&] {
    memref::StoreOp::create(b, value, slots,
                            ValueRange{div(tid, abi::kWarpSize)});
  });
  gpu::BarrierOp::create(b);
  Value result = f32(0.0f);
  for (int64_t w = 0; w < abi::kBlockSize / abi::kWarpSize; ++w)
    result = arith::MaxNumFOp::create(
        b, result, memref::LoadOp::create(b, slots, ValueRange{index(w)}));
  // The slots are written again for the next block.
  gpu::BarrierOp::create(b);
  return result;
}

SmallVector<Value, 4> BlockKernelBuilder::load(Value x, BlockCursor &c,
                                               int64_t s) {
  Type type = cast<MemRefType>(x.getType()).getElementType();
  auto wide = VectorType::get({abi::kBlockVector}, b.getF32Type());
  Value values = select(
      c.fast, wide,
      [&]() -> Value {
        Value vec = vector::LoadOp::create(
            b, b.getLoc(), VectorType::get({abi::kBlockVector}, type), x,
            at(c, s), /*nontemporal=*/false,
            llvm::MaybeAlign(type.getIntOrFloatBitWidth() / 8 *
                             abi::kBlockVector));
        return type.isF32() ? vec : arith::ExtFOp::create(b, wide, vec);
      },
      [&]() -> Value {
        SmallVector<Value, 4> elements;
        for (int64_t j = 0; j < abi::kBlockVector; ++j)
          elements.push_back(select(
              inside(c, s, j), b.getF32Type(),
              [&]() -> Value {
                return widen(memref::LoadOp::create(b, x, at(c, s, j)));
              },
              [&]() { return f32(0.0f); }));
        return vector::FromElementsOp::create(b, wide, elements);
      });
  SmallVector<Value, 4> result;
  for (int64_t j = 0; j < abi::kBlockVector; ++j)
    result.push_back(vector::ExtractOp::create(b, values, j));
  return result;
}

SmallVector<Value, 4> BlockKernelBuilder::loadFloat8(Value q,
                                                     Type float8Type,
                                                     BlockCursor &c,
                                                     int64_t s) {
  auto bytesType = VectorType::get({abi::kBlockVector}, b.getI8Type());
  Value bytes = select(
      c.fast, bytesType,
      [&]() -> Value {
        return vector::LoadOp::create(b, b.getLoc(), bytesType, q, at(c, s),
                                      /*nontemporal=*/false,
                                      llvm::MaybeAlign(abi::kBlockVector));
      },
      [&]() -> Value {
        SmallVector<Value, 4> elements;
        for (int64_t j = 0; j < abi::kBlockVector; ++j)
          elements.push_back(select(
              inside(c, s, j), b.getI8Type(),
              [&]() -> Value {
                return memref::LoadOp::create(b, q, at(c, s, j));
              },
              [&]() -> Value {
                return arith::ConstantOp::create(b, b.getI8IntegerAttr(0));
              }));
        return vector::FromElementsOp::create(b, bytesType, elements);
      });
  SmallVector<Value, 4> result;
  for (int64_t p = 0; p < abi::kBlockVector; p += 2) {
    Value pair = vector::ShuffleOp::create(b, bytes, bytes,
                                           ArrayRef<int64_t>{p, p + 1});
    auto [lo, hi] = dequantizePair(pair, float8Type);
    result.append({lo, hi});
  }
  return result;
}

void BlockKernelBuilder::storeFloat8(Value q, ArrayRef<Value> scaled,
                                     Type float8Type, BlockCursor &c,
                                     int64_t s) {
  ifThen(
      c.fast,
      [&] {
        Value lo =
            createFloat8Pair(b, b.getLoc(), scaled[1], scaled[0], float8Type);
        Value hi =
            createFloat8Pair(b, b.getLoc(), scaled[3], scaled[2], float8Type);
        Value pairs = vector::FromElementsOp::create(
            b, VectorType::get({2}, b.getI16Type()), ValueRange{lo, hi});
        Value bytes = vector::BitCastOp::create(
            b, VectorType::get({abi::kBlockVector}, b.getI8Type()), pairs);
        vector::StoreOp::create(b, b.getLoc(), bytes, q, at(c, s),
                                /*nontemporal=*/false,
                                llvm::MaybeAlign(abi::kBlockVector));
      },
      [&] {
        for (int64_t j = 0; j < abi::kBlockVector; ++j)
          ifThen(inside(c, s, j), [&] {
            Value pair = createFloat8Pair(b, b.getLoc(), f32(0.0f), scaled[j],
                                          float8Type);
            memref::StoreOp::create(
                b, arith::TruncIOp::create(b, b.getI8Type(), pair), q,
                at(c, s, j));
          });
      });
}

void BlockKernelBuilder::storeWide(Value y, ArrayRef<Value> values,
                                   BlockCursor &c, int64_t s) {
  Type type = cast<MemRefType>(y.getType()).getElementType();
  ifThen(
      c.fast,
      [&] {
        SmallVector<Value, 4> elements;
        for (Value v : values)
          elements.push_back(narrow(v, type));
        Value vec = vector::FromElementsOp::create(
            b, VectorType::get({abi::kBlockVector}, type), elements);
        vector::StoreOp::create(
            b, b.getLoc(), vec, y, at(c, s), /*nontemporal=*/false,
            llvm::MaybeAlign(type.getIntOrFloatBitWidth() / 8 *
                             abi::kBlockVector));
      },
      [&] {
        for (int64_t j = 0; j < abi::kBlockVector; ++j)
          ifThen(inside(c, s, j), [&] {
            memref::StoreOp::create(b, narrow(values[j], type), y,
                                    at(c, s, j));
          });
      });
}

Value BlockKernelBuilder::loadBlockValue(Value scales, BlockCursor &c) {
  return memref::LoadOp::create(b, scales, ValueRange{c.index});
}

void BlockKernelBuilder::storeBlockValue(Value scales, Value value,
                                         BlockCursor &c) {
  ifThen(both(c.valid, isZero(c.rank)), [&] {
    memref::StoreOp::create(b, value, scales, ValueRange{c.index});
  });
}

/// The block extents in a kernel name.
static std::string getBlockTag(int64_t br, int64_t bc) {
  return ("_" + Twine(br) + "x" + Twine(bc)).str();
}

/// The parameters of a per-block kernel: these flat tensors, then batch,
/// rows and cols.
static SmallVector<Type> getBlockParams(MLIRContext *ctx,
                                        ArrayRef<Type> elements) {
  SmallVector<Type> params;
  for (Type element : elements)
    params.push_back(getDynamicVectorType(element));
  params.append(3, IndexType::get(ctx));
  return params;
}

/// A br x bc block kernel (see getOrCreateKernel), with one f32 of shared
/// memory per warp when a block's group spans warps; `build` gets that
/// buffer (null otherwise).
static StringRef getOrCreate(
    gpu::GPUModuleOp module, StringRef name, int64_t br, int64_t bc,
    TypeRange params,
    function_ref<void(BlockKernelBuilder &, gpu::GPUFuncOp, Value)> build) {
  MLIRContext *ctx = module.getContext();
  SmallVector<Type, 1> workgroup;
  if (abi::blockGroupSize(br, bc) > abi::kWarpSize)
    workgroup.push_back(MemRefType::get(
        {abi::kBlockSize / abi::kWarpSize}, Float32Type::get(ctx),
        MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
  return getOrCreateKernel<BlockKernelBuilder>(
      module, name, params, abi::kBlockSize, workgroup,
      [&](BlockKernelBuilder &k, gpu::GPUFuncOp func) {
        Value slots;
        if (!workgroup.empty())
          slots = func.getWorkgroupAttributions().front();
        build(k, func, slots);
      },
      br, bc);
}

StringRef mlir::fp8::getOrCreateBlockCast(gpu::GPUModuleOp module, Type in,
                                          Type out, int64_t br, int64_t bc,
                                          const BlockRecipe &recipe) {
  std::string name = ("block_cast_" + getKernelTypeTag(in) + "_" +
                      getKernelTypeTag(out) + getBlockTag(br, bc) +
                      recipe.getSuffix())
                         .str();
  Builder builder(module.getContext());
  Type f32 = builder.getF32Type(), i8 = builder.getI8Type();
  // (x, q, amax, scale, scale_inv, batch, rows, cols)
  return getOrCreate(
      module, name, br, bc,
      getBlockParams(module.getContext(),
                     {in, i8, f32, f32, recipe.mx ? i8 : f32}),
      [&](BlockKernelBuilder &k, gpu::GPUFuncOp func, Value slots) {
        Value x = func.getArgument(0), q = func.getArgument(1);
        k.walk(func, {x, q}, [&](BlockCursor &c) {
          SmallVector<SmallVector<Value, 4>> values;
          Value threadMax = k.f32(0.0f);
          for (int64_t s = 0; s < k.steps; ++s) {
            values.push_back(k.load(x, c, s));
            for (Value v : values.back())
              threadMax = k.absMax(threadMax, v);
          }
          Value amax = k.groupMax(threadMax, slots);
          auto [scale, scaleInv] =
              createBlockScale(k.b, k.b.getLoc(), amax, out, recipe);
          for (int64_t s = 0; s < k.steps; ++s) {
            SmallVector<Value, 4> scaled;
            for (Value v : values[s])
              scaled.push_back(arith::MulFOp::create(k.b, v, scale));
            k.storeFloat8(q, scaled, out, c, s);
          }
          k.storeBlockValue(func.getArgument(2), amax, c);
          k.storeBlockValue(func.getArgument(3), scale, c);
          k.storeBlockValue(func.getArgument(4), scaleInv, c);
        });
      });
}

StringRef mlir::fp8::getOrCreateBlockAmax(gpu::GPUModuleOp module, Type in,
                                          int64_t br, int64_t bc) {
  std::string name =
      ("block_amax_" + getKernelTypeTag(in) + getBlockTag(br, bc)).str();
  Type f32 = Float32Type::get(module.getContext());
  // (x, amax, batch, rows, cols)
  return getOrCreate(
      module, name, br, bc,
      getBlockParams(module.getContext(), {in, f32}),
      [&](BlockKernelBuilder &k, gpu::GPUFuncOp func, Value slots) {
        Value x = func.getArgument(0);
        k.walk(func, {x}, [&](BlockCursor &c) {
          Value threadMax = k.f32(0.0f);
          for (int64_t s = 0; s < k.steps; ++s)
            for (Value v : k.load(x, c, s))
              threadMax = k.absMax(threadMax, v);
          k.storeBlockValue(func.getArgument(1), k.groupMax(threadMax, slots),
                            c);
        });
      });
}

StringRef mlir::fp8::getOrCreateBlockQuantize(gpu::GPUModuleOp module,
                                              Type in, Type out, int64_t br,
                                              int64_t bc) {
  std::string name = ("block_quantize_" + getKernelTypeTag(in) + "_" +
                      getKernelTypeTag(out) + getBlockTag(br, bc))
                         .str();
  Builder builder(module.getContext());
  // (x, q, scale, batch, rows, cols)
  return getOrCreate(
      module, name, br, bc,
      getBlockParams(module.getContext(),
                     {in, builder.getI8Type(), builder.getF32Type()}),
      [&](BlockKernelBuilder &k, gpu::GPUFuncOp func, Value) {
        Value x = func.getArgument(0), q = func.getArgument(1);
        k.walk(func, {x, q}, [&](BlockCursor &c) {
          Value scale = k.loadBlockValue(func.getArgument(2), c);
          for (int64_t s = 0; s < k.steps; ++s) {
            SmallVector<Value, 4> scaled;
            for (Value v : k.load(x, c, s))
              scaled.push_back(arith::MulFOp::create(k.b, v, scale));
            k.storeFloat8(q, scaled, out, c, s);
          }
        });
      });
}

StringRef mlir::fp8::getOrCreateBlockDequantize(gpu::GPUModuleOp module,
                                                Type in, Type out, int64_t br,
                                                int64_t bc, bool mx) {
  std::string name = ("block_dequantize_" + getKernelTypeTag(in) + "_" +
                      getKernelTypeTag(out) + getBlockTag(br, bc) +
                      (mx ? "_mx" : ""))
                         .str();
  Builder builder(module.getContext());
  Type i8 = builder.getI8Type();
  // (q, y, scale_inv, batch, rows, cols)
  return getOrCreate(
      module, name, br, bc,
      getBlockParams(module.getContext(),
                     {i8, out, mx ? i8 : builder.getF32Type()}),
      [&](BlockKernelBuilder &k, gpu::GPUFuncOp func, Value) {
        Value q = func.getArgument(0), y = func.getArgument(1);
        k.walk(func, {q, y}, [&](BlockCursor &c) {
          ImplicitLocOpBuilder &b = k.b;
          Value scaleInv = k.loadBlockValue(func.getArgument(2), c);
          if (mx)
            scaleInv = createE8M0ToF32(
                b, b.getLoc(),
                arith::ExtUIOp::create(b, b.getI32Type(), scaleInv));
          for (int64_t s = 0; s < k.steps; ++s) {
            SmallVector<Value, 4> values;
            for (Value v : k.loadFloat8(q, in, c, s))
              values.push_back(arith::MulFOp::create(b, v, scaleInv));
            k.storeWide(y, values, c, s);
          }
        });
      });
}

StringRef mlir::fp8::getOrCreateBlockScales(gpu::GPUModuleOp module,
                                            Type out,
                                            const BlockRecipe &recipe) {
  std::string name =
      ("block_scales_" + getKernelTypeTag(out) + recipe.getSuffix()).str();
  Builder builder(module.getContext());
  Type f32 = builder.getF32Type();
  // (amax, scale, scale_inv), flat: element-wise, grid-stride.
  return getOrCreate(
      module, name, /*br=*/1, /*bc=*/abi::kBlockVector,
      {getDynamicVectorType(f32), getDynamicVectorType(f32),
       getDynamicVectorType(recipe.mx ? builder.getI8Type() : f32)},
      [&](BlockKernelBuilder &k, gpu::GPUFuncOp func, Value) {
        ImplicitLocOpBuilder &b = k.b;
        Value amax = func.getArgument(0);
        auto [first, stride] = k.gridStrideOver(1);
        Value n = memref::DimOp::create(b, amax, 0);
        k.forLoop(first, n, stride, k.f32(0.0f), [&](Value i, Value unused) {
          Value value = memref::LoadOp::create(b, amax, ValueRange{i});
          auto [scale, scaleInv] =
              createBlockScale(b, b.getLoc(), value, out, recipe);
          memref::StoreOp::create(b, scale, func.getArgument(1),
                                  ValueRange{i});
          memref::StoreOp::create(b, scaleInv, func.getArgument(2),
                                  ValueRange{i});
          return unused;
        });
      });
}
