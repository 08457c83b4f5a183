//===- BlockCastTranspose.cpp - The transposing block cast kernel ---------===//
//
// block_cast_transpose (KernelABI.h): the backward copy of a block-scaled
// operand whose blocks run along the tokens (the weight gradient's [128, 1]
// blocks, MX's [32, 1]) in one pass over the high-precision tensor: each
// bc x 1 block's amax, its scale, and its FP8 bytes written transposed, so
// that the copy is K-major with 1 x bc blocks, the layout the wgmma kernels
// read. Written as a gpu.func on memrefs with gpu/scf/arith/vector/nvvm ops,
// the level upstream lowers (convert-gpu-to-nvvm), not as LLVM dialect.
//
// One thread block of 256 threads per bc x 32 tile of x:
//   1. Each warp reads 32-column row segments (coalesced), widened to f32,
//      into shared memory with a row pitch of 33 floats.
//   2. Eight consecutive threads take one column: 4-element runs at rows
//      32j + 4p (thread p of 8), read conflict-free (bank (4p + column) mod
//      32 differs across a warp), their |max| reduced with three xor
//      shuffles.
//   3. The scale from the recipe (ScaleArith, the CPU lowering's arithmetic)
//      and cvt.rn.satfinite; each run is 4 consecutive bytes of one q row:
//      8 threads write 32 contiguous bytes. Thread 0 of the column writes
//      the block's amax, scale and scale_inv.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
namespace abi = mlir::fp8::nvvm_abi;

StringRef mlir::fp8::getOrCreateBlockCastTranspose(gpu::GPUModuleOp module,
                                                   Type in, Type out,
                                                   int64_t bc,
                                                   const BlockRecipe &recipe) {
  assert(abi::isTransposeCastBlock(bc) && "a block height the kernel takes");
  std::string name =
      ("block_cast_transpose_" + getKernelTypeTag(in) + "_" +
       getKernelTypeTag(out) + "_" + Twine(bc) + "x1" + recipe.getSuffix())
          .str();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing.getName();

  constexpr int64_t columns = abi::kTransposeCastColumns;
  constexpr int64_t pitch = columns + 1;
  constexpr int64_t warps = abi::kBlockSize / abi::kWarpSize;
  constexpr int64_t perColumn = abi::kBlockSize / columns;
  constexpr int64_t run = abi::kBlockVector;
  static_assert(perColumn * run == abi::kWarpSize,
                "the threads of a column cover 32 rows per step");

  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  KernelBuilder k(b);
  Type f32 = b.getF32Type();
  // FP8 and E8M0 are bytes to the kernel (KernelABI.h).
  Type i8 = b.getI8Type();
  Type scaleInvType = recipe.mx ? i8 : f32;
  auto tileType = MemRefType::get(
      {bc * pitch}, f32, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  gpu::GPUFuncOp func = k.createKernel(
      module, name,
      {getDynamicMatrixType(in), getDynamicMatrixType(i8),
       getDynamicMatrixType(f32), getDynamicMatrixType(f32),
       getDynamicMatrixType(scaleInvType)},
      abi::kBlockSize, TypeRange{tileType});

  Value x = func.getArgument(0), q = func.getArgument(1);
  Value amaxOut = func.getArgument(2), scaleOut = func.getArgument(3),
        scaleInvOut = func.getArgument(4);
  Value tile = func.getWorkgroupAttributions().front();
  Value rows = memref::DimOp::create(b, x, 0);
  Value cols = memref::DimOp::create(b, x, 1);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value blockRow = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value firstRow = k.mul(blockRow, k.index(bc));
  Value firstCol =
      k.mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), k.index(columns));

  // 1. Stage the tile as f32; elements outside x are 0, which no amax sees.
  Value lane = k.rem(tid, abi::kWarpSize), warp = k.div(tid, abi::kWarpSize);
  Value col = k.add(firstCol, lane);
  auto stage = [&](bool guarded) {
    for (int64_t i = 0; i < bc / warps; ++i) {
      Value r = k.add(warp, k.index(i * warps));
      Value row = k.add(firstRow, r);
      auto load = [&]() -> Value {
        Value v = memref::LoadOp::create(b, x, ValueRange{row, col});
        return in == f32 ? v : arith::ExtFOp::create(b, f32, v);
      };
      Value v = guarded ? k.select(k.both(k.ult(row, rows), k.ult(col, cols)),
                                   f32, load, [&] { return k.f32(0.0f); })
                        : load();
      memref::StoreOp::create(b, v, tile,
                              k.add(k.mul(r, k.index(pitch)), lane));
    }
  };
  Value whole = k.both(k.ule(k.add(firstRow, k.index(bc)), rows),
                       k.ule(k.add(firstCol, k.index(columns)), cols));
  k.ifThen(whole, [&] { stage(false); }, [&] { stage(true); });
  gpu::BarrierOp::create(b);

  // 2. Eight threads per column: the block's amax.
  Value column = k.div(tid, perColumn), part = k.rem(tid, perColumn);
  int64_t runs = bc / abi::kWarpSize;
  SmallVector<Value> values;
  Value amax = k.f32(0.0f);
  for (int64_t j = 0; j < runs; ++j)
    for (int64_t i = 0; i < run; ++i) {
      Value r = k.add(k.index(j * abi::kWarpSize + i),
                      k.mul(part, k.index(run)));
      Value v = memref::LoadOp::create(
          b, tile, k.add(k.mul(r, k.index(pitch)), column));
      values.push_back(v);
      amax = k.absMax(amax, v);
    }
  amax = k.groupMax(amax, perColumn);
  std::pair<Value, Value> scales =
      createBlockScale(b, b.getLoc(), amax, out, recipe);
  Value scale = scales.first, scaleInv = scales.second;

  // 3. Cast and store, transposed: q[col, row].
  Value outCol = k.add(firstCol, column);
  k.ifThen(k.ult(outCol, cols), [&] {
    // 4-byte stores need rows of q on 4-byte boundaries.
    auto meta = memref::ExtractStridedMetadataOp::create(b, q);
    Value base = k.add(memref::ExtractAlignedPointerAsIndexOp::create(b, q),
                       meta.getOffset());
    Value aligned = k.both(k.isZero(k.rem(rows, run)),
                           k.isZero(k.rem(base, run)));
    for (int64_t j = 0; j < runs; ++j) {
      SmallVector<Value> scaled;
      for (int64_t i = 0; i < run; ++i)
        scaled.push_back(
            arith::MulFOp::create(b, values[j * run + i], scale));
      Value start = k.add(k.add(firstRow, k.index(j * abi::kWarpSize)),
                          k.mul(part, k.index(run)));
      k.ifThen(
          k.both(aligned, k.ult(start, rows)),
          [&] {
            Value lo = createFloat8Pair(b, b.getLoc(), scaled[1], scaled[0],
                                        out);
            Value hi = createFloat8Pair(b, b.getLoc(), scaled[3], scaled[2],
                                        out);
            Value pairs = vector::FromElementsOp::create(
                b, VectorType::get({2}, b.getI16Type()), ValueRange{lo, hi});
            Value bytes = vector::BitCastOp::create(
                b, VectorType::get({run}, i8), pairs);
            vector::StoreOp::create(b, b.getLoc(), bytes, q,
                                    ValueRange{outCol, start},
                                    /*nontemporal=*/false,
                                    llvm::MaybeAlign(run));
          },
          [&] {
            for (int64_t i = 0; i < run; ++i) {
              Value row = k.add(start, k.index(i));
              k.ifThen(k.ult(row, rows), [&] {
                Value pair = createFloat8Pair(b, b.getLoc(), k.f32(0.0f),
                                              scaled[i], out);
                memref::StoreOp::create(b, arith::TruncIOp::create(b, i8, pair),
                                        q, ValueRange{outCol, row});
              });
            }
          });
    }
    k.ifThen(k.isZero(part), [&] {
      SmallVector<Value, 2> at{outCol, blockRow};
      memref::StoreOp::create(b, amax, amaxOut, at);
      memref::StoreOp::create(b, scale, scaleOut, at);
      memref::StoreOp::create(b, scaleInv, scaleInvOut, at);
    });
  });
  gpu::ReturnOp::create(b);
  return func.getName();
}
