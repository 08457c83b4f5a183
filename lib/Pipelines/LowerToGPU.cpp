//===- LowerToGPU.cpp - fp8-lower-to-gpu ----------------------------------===//
//
// A whole module as one GPU program, through MLIR's own passes: the fp8
// ops become linalg as on the CPU (convert-fp8-to-linalg and
// fp8-expand-float8: the same integer and f32 arithmetic), everything is
// bufferized, linalg ops become parallel loops mapped onto blocks and
// threads (reductions run sequentially inside a thread), kernels are
// outlined and serialized, and the host is LLVM dialect calling MLIR's GPU
// runtime ABI. Host memory is CUDA managed memory throughout (generic
// allocation functions, provided by libfp8_gpu_runtime.so), so the host
// code that remains (scalar reads of a scale, full reductions, copies)
// runs on the same buffers the kernels use; arguments and globals get
// managed copies (fp8-stage-buffers-for-gpu).
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/LowerToGPU.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/LowerToNVVM.h"
#include "fp8/Pipelines/Pipelines.h"
#include "BufferViews.h"
#include "SymbolIdentity.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8TILEPARALLELLOOPSFORGPU
#define GEN_PASS_DEF_FP8STAGEBUFFERSFORGPU
#define GEN_PASS_DEF_FP8EXPANDMATHFORGPU
#define GEN_PASS_DEF_FP8COPIESTOGPU
#define GEN_PASS_DEF_FP8MERGEGPUMODULES
#define GEN_PASS_DEF_FP8READONLYARGUMENTS
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using mlir::fp8::getViewedBuffer;

namespace {
/// The largest grid: x, then y and z (CUDA's limits).
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;

struct FP8TileParallelLoopsForGPUPass
    : fp8::impl::FP8TileParallelLoopsForGPUBase<
          FP8TileParallelLoopsForGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads < 1 || threads > 1024) {
      getOperation().emitError()
          << "fp8-tile-parallel-loops-for-gpu: threads="
          << static_cast<int64_t>(threads)
          << " is not a CUDA block size (1 to 1024)";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      // convert-parallel-loops-to-gpu takes no parallel reductions.
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          loop.getNumReductions() == 0)
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops)
      mapOntoGrid(loop);
  }

  /// Replaces `loop` by a loop over blocks holding a loop over threads,
  /// both mapped (see the pass description). Every size is an index value
  /// built with createOrFold: constants where the loop's bounds are, so
  /// that the static choices below see them.
  void mapOntoGrid(scf::ParallelOp loop) {
    // What the static choices below left unused (constants, products) goes
    // at the end.
    struct Created : OpBuilder::Listener {
      SmallVector<Operation *> ops;
      void notifyOperationInserted(Operation *op,
                                   OpBuilder::InsertPoint) override {
        ops.push_back(op);
      }
    } created;
    OpBuilder b(loop, &created);
    Location loc = loop.getLoc();
    // Constants before the loops, where they dominate both levels.
    OpBuilder host(loop, &created);
    DenseMap<int64_t, Value> constants;
    auto c = [&](int64_t value) -> Value {
      Value &constant = constants[value];
      if (!constant)
        constant = arith::ConstantIndexOp::create(host, loc, value);
      return constant;
    };
    auto sameConstant = [](Value x, Value y) {
      std::optional<int64_t> known = getConstantIntValue(x);
      return known && known == getConstantIntValue(y);
    };
    auto mul = [&](Value x, Value y) {
      return b.createOrFold<arith::MulIOp>(loc, x, y);
    };
    auto add = [&](Value x, Value y) {
      return b.createOrFold<arith::AddIOp>(loc, x, y);
    };
    auto ceilDiv = [&](Value x, Value y) {
      return b.createOrFold<arith::CeilDivUIOp>(loc, x, y);
    };
    auto minU = [&](Value x, Value y) {
      return b.createOrFold<arith::MinUIOp>(loc, x, y);
    };
    auto maxU = [&](Value x, Value y) {
      return b.createOrFold<arith::MaxUIOp>(loc, x, y);
    };

    // Trip counts (an empty range is 0 trips).
    unsigned rank = loop.getNumLoops();
    SmallVector<Value> trips;
    for (unsigned d = 0; d < rank; ++d) {
      Value span = b.createOrFold<arith::SubIOp>(loc, loop.getUpperBound()[d],
                                                 loop.getLowerBound()[d]);
      Value count =
          b.createOrFold<arith::CeilDivSIOp>(loc, span, loop.getStep()[d]);
      trips.push_back(b.createOrFold<arith::MaxSIOp>(loc, count, c(0)));
    }
    Value cols = trips.back();
    Value rows = c(1);
    for (Value trip : ArrayRef(trips).drop_back())
      rows = mul(rows, trip);

    // The block: a row of up to `threads` adjacent columns (a warp multiple
    // and the blocks of a row about even when there are several), and as
    // many rows as fit when a row is shorter.
    int64_t limit = threads;
    Value width;
    if (std::optional<int64_t> n = getConstantIntValue(cols);
        n && *n >= limit) {
      int64_t even = llvm::divideCeil(*n, llvm::divideCeil(*n, limit));
      width = c(std::min<int64_t>(limit, llvm::alignTo(even, 32)));
    } else {
      width = maxU(minU(cols, c(limit)), c(1));
    }
    Value fit = b.createOrFold<arith::DivUIOp>(loc, c(limit), width);
    Value someRows = maxU(rows, c(1));
    Value height = sameConstant(fit, c(1)) || sameConstant(someRows, c(1))
                       ? c(1)
                       : minU(fit, someRows);
    Value colBlocks = ceilDiv(cols, width);
    Value rowBlocks = ceilDiv(rows, height);
    Value tiles = mul(rowBlocks, colBlocks);

    // The tiles, numbered row-major, on grid x, then y and z, then
    // sequentially: no bound to prove, and with constant divisors.
    Value gridX = minU(tiles, c(kMaxGridX));
    Value gridY = minU(ceilDiv(tiles, c(kMaxGridX)), c(kMaxGridYZ));
    Value gridZ =
        minU(ceilDiv(tiles, c(kMaxGridX * kMaxGridYZ)), c(kMaxGridYZ));
    Value sequential =
        ceilDiv(tiles, c(kMaxGridX * kMaxGridYZ * kMaxGridYZ));

    MLIRContext *context = &getContext();
    auto id = AffineMap::getMultiDimIdentityMap(1, context);
    auto dim = [&](gpu::Processor processor) {
      return gpu::ParallelLoopDimMappingAttr::get(context, processor, id, id);
    };
    // A dimension of one trip (or none, with an empty grid) is left out.
    auto needed = [](Value trips) {
      std::optional<int64_t> known = getConstantIntValue(trips);
      return !known || *known > 1;
    };
    SmallVector<Value> gridSizes;
    SmallVector<gpu::ParallelLoopDimMappingAttr> gridMapping;
    std::pair<Value, gpu::Processor> grid[] = {
        {sequential, gpu::Processor::Sequential},
        {gridZ, gpu::Processor::BlockZ},
        {gridY, gpu::Processor::BlockY},
        {gridX, gpu::Processor::BlockX}};
    for (auto [size, processor] : grid) {
      if (processor != gpu::Processor::BlockX && !needed(size))
        continue;
      gridSizes.push_back(size);
      gridMapping.push_back(dim(processor));
    }
    SmallVector<Value> blockSizes{width};
    SmallVector<gpu::ParallelLoopDimMappingAttr> blockMapping{
        dim(gpu::Processor::ThreadX)};
    if (needed(height)) {
      blockSizes.push_back(height);
      blockMapping.push_back(dim(gpu::Processor::ThreadY));
    }
    // Whether some threads fall past the last row or column: the grid's
    // last tiles (none exist past the last row, so the row guards them
    // too), a short last row or column of tiles, all of them when dynamic.
    // With a single row of tiles, the tile is the column's block and the
    // column guards the grid's last tiles (no division).
    bool oneRowOfTiles = sameConstant(rowBlocks, c(1));
    bool exact = sameConstant(sequential, c(1)) &&
                 sameConstant(mul(mul(gridX, gridY), gridZ), tiles);
    bool guardRows = !sameConstant(mul(rowBlocks, height), rows) ||
                     (!exact && !oneRowOfTiles);
    bool guardCols = !sameConstant(mul(colBlocks, width), cols) ||
                     (!exact && oneRowOfTiles);

    Block *body = loop.getBody();
    auto zeros = [&](size_t n) { return SmallVector<Value>(n, c(0)); };
    auto ones = [&](size_t n) { return SmallVector<Value>(n, c(1)); };
    auto blocks = scf::ParallelOp::create(
        b, loc, zeros(gridSizes.size()), gridSizes, ones(gridSizes.size()));
    (void)gpu::setMappingAttr(blocks, gridMapping);
    host.setInsertionPoint(blocks);
    b.setInsertionPointToStart(blocks.getBody());
    // The tile: ((s * z + bz) * y + by) * x + bx over the dimensions kept.
    Value tile = c(0);
    for (auto [index, size] : llvm::zip(blocks.getInductionVars(), gridSizes))
      tile = add(mul(tile, size), index);
    Value firstCol =
        oneRowOfTiles
            ? mul(tile, width)
            : mul(b.createOrFold<arith::RemUIOp>(loc, tile, colBlocks), width);
    Value firstRow =
        oneRowOfTiles
            ? c(0)
            : mul(b.createOrFold<arith::DivUIOp>(loc, tile, colBlocks), height);
    auto threadLoop = scf::ParallelOp::create(
        b, loc, zeros(blockSizes.size()), blockSizes, ones(blockSizes.size()));
    (void)gpu::setMappingAttr(threadLoop, blockMapping);
    b.setInsertionPointToStart(threadLoop.getBody());
    Value col = add(firstCol, threadLoop.getInductionVars()[0]);
    Value row = firstRow;
    if (blockSizes.size() == 2)
      row = add(row, threadLoop.getInductionVars()[1]);

    Value inBounds;
    auto guard = [&](Value index, Value bound) {
      Value check = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          index, bound);
      inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, check)
                              .getResult()
                          : check;
    };
    if (guardRows)
      guard(row, rows);
    if (guardCols)
      guard(col, cols);
    if (inBounds) {
      auto inside = scf::IfOp::create(b, loc, inBounds);
      b.setInsertionPoint(inside.thenYield());
    }

    // The row, delinearized over the outer trip counts (innermost fastest),
    // and each position back to the loop's index.
    SmallVector<Value> positions(rank);
    positions[rank - 1] = col;
    for (unsigned d = rank - 1; d-- > 0;) {
      if (d == 0) {
        positions[d] = row;
        break;
      }
      positions[d] = b.createOrFold<arith::RemUIOp>(loc, row, trips[d]);
      row = b.createOrFold<arith::DivUIOp>(loc, row, trips[d]);
    }
    IRMapping mapping;
    for (unsigned d = 0; d < rank; ++d)
      mapping.map(body->getArgument(d),
                  add(mul(positions[d], loop.getStep()[d]),
                      loop.getLowerBound()[d]));
    for (Operation &op : body->without_terminator())
      b.clone(op, mapping);
    loop.erase();
    for (Operation *op : llvm::reverse(created.ops))
      if (op->getNumRegions() == 0 && isOpTriviallyDead(op))
        op->erase();
  }
};

/// Set by fp8-read-only-arguments on the functions whose arguments
/// bufferization must not write; read (and removed) by
/// fp8-stage-buffers-for-gpu.
constexpr StringLiteral kReadOnlyArguments = "fp8_read_only_arguments";

/// Whether anything may write `buffer` or a view of it.
bool mayWrite(Value buffer) {
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<ViewLikeOpInterface>(user);
        view && view.getViewSource() == buffer) {
      for (Value result : user->getResults())
        if (mayWrite(result))
          return true;
      continue;
    }
    if (isa<func::ReturnOp, memref::DimOp, memref::DeallocOp>(user))
      continue;
    // The fp8 kernels' launchers only read their arguments (their results
    // are buffers of their own).
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (callee && callee->hasAttr(fp8::kGpuLauncherAttr))
        continue;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects)
      return true; // calls, unknown ops
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffectsOnValue(buffer, instances);
    if (llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
          return isa<MemoryEffects::Write>(e.getEffect());
        }))
      return true;
  }
  return false;
}

/// Whether the driver copies `type` in one piece (gpu.memcpy, which
/// gpu-to-llvm lowers to mgpuMemcpy: any two addresses, device memory
/// included).
bool isDriverCopyable(MemRefType type) {
  return type.getLayout().isIdentity() && !type.getMemorySpace();
}

/// Whether host code may read or write the memory of `arg`: a use, through
/// views, metadata and address arithmetic, by anything but a kernel (an op
/// inside a `gpu.launch`, an operand of `gpu.launch_func`), the driver
/// (`gpu.memcpy`, `gpu.memset`), the address of a tensor map, a size
/// (`memref.dim`) or the return. Where none does, device memory (which the
/// host cannot address) is used in place.
bool hostMayTouch(BlockArgument arg) {
  SmallVector<Value> worklist{arg};
  DenseSet<Value> seen{arg};
  auto follow = [&](ValueRange values) {
    for (Value value : values)
      if (seen.insert(value).second)
        worklist.push_back(value);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getParentOfType<gpu::LaunchOp>() ||
          isa<gpu::LaunchFuncOp, gpu::MemcpyOp, gpu::MemsetOp, memref::DimOp,
              func::ReturnOp>(user))
        continue;
      // The map (operand 0) is host memory; the address is only written
      // into it.
      if (auto call = dyn_cast<func::CallOp>(user)) {
        if (call.getCallee() == fp8::kEncodeTensorMapFunction &&
            use.getOperandNumber() != 0)
          continue;
        return true;
      }
      // Sizes and strides are not addresses.
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        follow({meta.getBaseBuffer(), meta.getOffset()});
        continue;
      }
      // Views, casts, address arithmetic.
      if (isMemoryEffectFree(user) && user->getNumRegions() == 0 &&
          !user->hasTrait<OpTrait::IsTerminator>()) {
        follow(user->getResults());
        continue;
      }
      return true;
    }
  }
  return false;
}

struct FP8StageBuffersForGPUPass
    : fp8::impl::FP8StageBuffersForGPUBase<FP8StageBuffersForGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Globals a kernel uses, from any function, with a use to locate
    // errors at.
    llvm::MapVector<StringAttr, Operation *> resident;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(stage(func, symbols, resident)))
        return signalPassFailure();
    // Delayed-scaling state, wherever it is used: the host code between
    // kernels that reads or writes it then works on the device's copy.
    module.walk([&](memref::GetGlobalOp load) {
      auto global = symbols.lookup<memref::GlobalOp>(load.getName());
      if (global && !global.getConstant())
        resident.insert({load.getNameAttr().getAttr(), load});
    });
    if (failed(makeResident(module, symbols, resident)))
      return signalPassFailure();
  }

  /// Who copies a staged argument: the host (memref.copy), the driver
  /// (gpu.memcpy: device memory, which host code cannot address,
  /// included), or the driver where the argument is device memory.
  enum class CopyBy { Host, Driver, DriverIfDevice };

  /// Copies `source` into `target` as `by` says (`isDevice`: whether the
  /// argument is device memory, for DriverIfDevice); a strided buffer is
  /// copied on the host. `exclude` gets the ops that read `source`.
  static void copyBuffer(OpBuilder &builder, Location loc, Value source,
                         Value target, CopyBy by, Value isDevice,
                         SmallPtrSetImpl<Operation *> &exclude) {
    if (by == CopyBy::Host ||
        !isDriverCopyable(cast<MemRefType>(source.getType())) ||
        !isDriverCopyable(cast<MemRefType>(target.getType()))) {
      exclude.insert(memref::CopyOp::create(builder, loc, source, target));
      return;
    }
    OpBuilder::InsertionGuard guard(builder);
    if (by == CopyBy::DriverIfDevice) {
      auto ifDriver = scf::IfOp::create(builder, loc, isDevice,
                                        /*withElseRegion=*/true);
      builder.setInsertionPointToStart(&ifDriver.getElseRegion().front());
      exclude.insert(memref::CopyOp::create(builder, loc, source, target));
      builder.setInsertionPointToStart(&ifDriver.getThenRegion().front());
    }
    auto tokenType = gpu::AsyncTokenType::get(builder.getContext());
    Value stream = gpu::WaitOp::create(builder, loc, tokenType, ValueRange())
                       .getAsyncToken();
    auto copy = gpu::MemcpyOp::create(builder, loc, tokenType,
                                      ValueRange{stream}, target, source);
    exclude.insert(copy);
    gpu::WaitOp::create(builder, loc, Type(),
                        ValueRange{copy.getAsyncToken()});
  }

  /// A managed copy of `buffer` (a function argument) at the start of
  /// `entry`, copied as copyBuffer does; `exclude` gets the ops that read
  /// the original.
  Value makeCopy(OpBuilder &builder, Value buffer, CopyBy by, Value isDevice,
                 SmallPtrSetImpl<Operation *> &exclude) {
    auto type = cast<MemRefType>(buffer.getType());
    Location loc = buffer.getLoc();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      auto dim = memref::DimOp::create(builder, loc, buffer, d);
      exclude.insert(dim);
      sizes.push_back(dim);
    }
    auto copy = memref::AllocOp::create(
        builder, loc, MemRefType::get(type.getShape(), type.getElementType()),
        sizes);
    copyBuffer(builder, loc, buffer, copy, by, isDevice, exclude);
    if (copy.getType() == type)
      return copy;
    return memref::CastOp::create(builder, loc, type, copy);
  }

  /// The memrefs `values` are, or are computed from through ops without
  /// memory effects (addresses: extract_aligned_pointer_as_index, index
  /// arithmetic, inttoptr, casts).
  static void addressedBuffers(ValueRange values,
                               llvm::SetVector<Value> &buffers) {
    SmallVector<Value> worklist(values.begin(), values.end());
    llvm::SmallPtrSet<Operation *, 16> seen;
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (isa<BaseMemRefType>(value.getType())) {
        buffers.insert(value);
        continue;
      }
      Operation *def = value.getDefiningOp();
      // Sizes and strides are not addresses (an argument whose shape sizes
      // a grid is not copied for it).
      if (isa_and_present<memref::DimOp>(def))
        continue;
      if (auto meta = dyn_cast_if_present<memref::ExtractStridedMetadataOp>(def);
          meta && value != meta.getBaseBuffer() && value != meta.getOffset())
        continue;
      if (def && def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
          seen.insert(def).second)
        llvm::append_range(worklist, def->getOperands());
    }
  }

  /// `arg` itself where the kernels (`kernelsUse`) and the host code
  /// (`hostTouches`) that use it can address it, else a managed copy (made
  /// at the entry); whether it was copied; and who copies it (back). The
  /// runtime asks the driver what the memory is (fp8GpuMemoryKind: 0
  /// host, 1 managed, 2 device): managed memory is used in place, device
  /// memory unless host code touches it, host memory unless kernels use
  /// it. Device memory is copied by the driver, host memory on the host.
  /// `exclude` gets the ops that read the original.
  std::tuple<Value, Value, CopyBy, Value>
  makeCopyUnlessOnDevice(OpBuilder &builder, BlockArgument arg,
                         bool kernelsUse, bool hostTouches,
                         SmallPtrSetImpl<Operation *> &exclude) {
    Location loc = arg.getLoc();
    MLIRContext *context = builder.getContext();
    auto module = arg.getOwner()->getParentOp()->getParentOfType<ModuleOp>();
    constexpr StringLiteral kQuery = "fp8GpuMemoryKind";
    auto pointerType = LLVM::LLVMPointerType::get(context);
    if (!module.lookupSymbol(kQuery)) {
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      func::FuncOp::create(
          top, loc, kQuery,
          FunctionType::get(context, {pointerType}, {builder.getI32Type()}))
          .setPrivate();
    }
    auto address =
        memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, arg);
    exclude.insert(address);
    Value bits = arith::IndexCastOp::create(builder, loc,
                                            builder.getI64Type(), address);
    Value pointer = LLVM::IntToPtrOp::create(builder, loc, pointerType, bits);
    Value kind = func::CallOp::create(builder, loc, kQuery,
                                      builder.getI32Type(), ValueRange{pointer})
                     .getResult(0);
    auto kindIs = [&](arith::CmpIPredicate predicate, int32_t value) {
      return arith::CmpIOp::create(
          builder, loc, predicate, kind,
          arith::ConstantOp::create(builder, loc,
                                    builder.getI32IntegerAttr(value)));
    };
    Value inPlace = !hostTouches ? kindIs(arith::CmpIPredicate::ne, 0)
                    : kernelsUse ? kindIs(arith::CmpIPredicate::eq, 1)
                                 : kindIs(arith::CmpIPredicate::ne, 2);
    // What the copy is made from: host memory when only kernels use the
    // argument, device memory when only host code does, either otherwise.
    CopyBy by = !hostTouches  ? CopyBy::Host
                : !kernelsUse ? CopyBy::Driver
                              : CopyBy::DriverIfDevice;
    Value isDevice = by == CopyBy::DriverIfDevice
                         ? kindIs(arith::CmpIPredicate::eq, 2)
                         : Value();
    auto ifInPlace =
        scf::IfOp::create(builder, loc, TypeRange{arg.getType()}, inPlace,
                          /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&ifInPlace.getThenRegion().front());
      exclude.insert(scf::YieldOp::create(builder, loc, ValueRange{arg}));
      builder.setInsertionPointToStart(&ifInPlace.getElseRegion().front());
      Value copy = makeCopy(builder, arg, by, isDevice, exclude);
      scf::YieldOp::create(builder, loc, copy);
    }
    Value copied = arith::XOrIOp::create(
        builder, loc, inPlace,
        arith::ConstantOp::create(builder, loc, builder.getBoolAttr(true)));
    return {ifInPlace.getResult(0), copied, by, isDevice};
  }

  LogicalResult stage(func::FuncOp func, SymbolTable &symbols,
                      llvm::MapVector<StringAttr, Operation *> &resident) {
    // A launcher's buffers were staged where it is called.
    if (func->hasAttr(fp8::kGpuLauncherAttr))
      return success();
    Block &entry = func.getBody().front();
    // Arguments and globals that a kernel reads or writes: inside a
    // gpu.launch, passed to a launcher of the fp8 kernels, or (launchers
    // inlined) to their launches and tensor maps.
    llvm::SetVector<BlockArgument> args;
    WalkResult result = func.walk([&](Operation *op) {
      llvm::SetVector<Value> used;
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        getUsedValuesDefinedAbove(launch.getBody(), used);
        launch.getBody().walk([&](memref::GetGlobalOp global) {
          resident.insert({global.getNameAttr().getAttr(), global});
        });
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (callee && callee->hasAttr(fp8::kGpuLauncherAttr))
          used.insert(call.getOperands().begin(), call.getOperands().end());
        else if (callee && callee.getName() == fp8::kEncodeTensorMapFunction)
          addressedBuffers(call.getOperands(), used);
        else
          return WalkResult::advance();
      } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
        // An inlined launcher's launch (fp8-inline-gpu-launchers): its
        // buffers, as memrefs or as addresses computed from them.
        addressedBuffers(launch.getKernelOperands(), used);
      } else {
        return WalkResult::advance();
      }
      for (Value value : used) {
        if (!isa<BaseMemRefType>(value.getType()))
          continue;
        Value buffer = getViewedBuffer(value);
        if (auto global = buffer.getDefiningOp<memref::GetGlobalOp>()) {
          resident.insert({global.getNameAttr().getAttr(), global});
          continue;
        }
        auto arg = dyn_cast<BlockArgument>(buffer);
        if (!arg || arg.getOwner() != &entry)
          continue;
        if (!isa<MemRefType>(arg.getType())) {
          op->emitOpError()
              << "reads argument #" << arg.getArgNumber()
              << " of unranked type " << arg.getType()
              << ", which fp8-lower-to-gpu cannot copy to managed memory";
          return WalkResult::interrupt();
        }
        args.insert(arg);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    // Arguments host code touches: device memory there must be copied
    // (the host cannot address it), and the copy then serves the kernels
    // too.
    llvm::SmallDenseSet<BlockArgument> touched;
    for (BlockArgument arg : entry.getArguments())
      if (isa<MemRefType>(arg.getType()) && hostMayTouch(arg))
        touched.insert(arg);
    SmallVector<BlockArgument> staged(args.begin(), args.end());
    for (BlockArgument arg : entry.getArguments())
      if (touched.contains(arg) && !args.contains(arg))
        staged.push_back(arg);
    if (staged.empty())
      return success();

    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    SmallVector<func::ReturnOp> returns;
    func.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
    bool readOnlyArgs = func->hasAttr(kReadOnlyArguments);

    // Arguments (the runtime asks the driver what each is): used where
    // they are when both the kernels and the host code that use them can
    // address them (managed memory; device memory that only kernels use;
    // host memory that only host code uses), copied to managed memory
    // otherwise, by the driver when the argument is device memory; the
    // caller's memory stays as it was unless the function may write it
    // (never when fp8-read-only-arguments marked it).
    for (BlockArgument arg : staged) {
      bool mayBeWritten = mayWrite(arg);
      bool written = !readOnlyArgs && mayBeWritten;
      SmallPtrSet<Operation *, 4> exclude;
      if (readOnlyArgs && mayBeWritten) {
        // Writes the caller must not see: always a copy, by the driver
        // (any memory).
        Value copy = makeCopy(builder, arg, CopyBy::Driver, Value(), exclude);
        arg.replaceAllUsesExcept(copy, exclude);
        for (func::ReturnOp ret : returns)
          release(ret, copy);
        continue;
      }
      auto [buffer, copied, by, isDevice] = makeCopyUnlessOnDevice(
          builder, arg, args.contains(arg), touched.contains(arg), exclude);
      arg.replaceAllUsesExcept(buffer, exclude);
      for (func::ReturnOp ret : returns) {
        OpBuilder at(ret);
        auto ifCopied = scf::IfOp::create(at, ret.getLoc(), copied,
                                          /*withElseRegion=*/false);
        at.setInsertionPointToStart(&ifCopied.getThenRegion().front());
        if (written) {
          SmallPtrSet<Operation *, 2> readers;
          copyBuffer(at, ret.getLoc(), buffer, arg, by, isDevice, readers);
        }
        memref::DeallocOp::create(at, ret.getLoc(), buffer);
      }
    }

    func->removeAttr(kReadOnlyArguments);
    return success();
  }

  /// Frees `copy` before `ret`.
  static void release(func::ReturnOp ret, Value copy) {
    Value base = copy;
    if (auto cast = copy.getDefiningOp<memref::CastOp>())
      base = cast.getSource();
    OpBuilder at(ret);
    memref::DeallocOp::create(at, ret.getLoc(), base);
  }

  /// Moves each global of `resident` to device-accessible memory for the
  /// program's lifetime: a pointer global (fp8::getDeviceStateSlot) holds
  /// its managed copy, made from the host global's value by the first
  /// function entry that finds it null; every get_global of the symbol, in
  /// every function, reads the copy; a global destructor frees them all.
  LogicalResult
  makeResident(ModuleOp module, SymbolTable &symbols,
               const llvm::MapVector<StringAttr, Operation *> &resident) {
    if (resident.empty())
      return success();
    MLIRContext *context = module.getContext();
    Location loc = module.getLoc();
    auto pointerType = LLVM::LLVMPointerType::get(context);
    auto i64 = IntegerType::get(context, 64);
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    declare(top, symbols, kAllocFunction,
            LLVM::LLVMFunctionType::get(pointerType, {i64}));
    declare(top, symbols, kFreeFunction,
            LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                        {pointerType}));

    DataLayout layout = DataLayout::closest(module);
    SmallVector<std::pair<memref::GlobalOp, LLVM::GlobalOp>> slots;
    for (auto [name, user] : resident) {
      auto global = symbols.lookup<memref::GlobalOp>(name);
      if (!global)
        return user->emitOpError() << "uses @" << name.getValue()
                                   << ", which is not a memref.global";
      MemRefType type = global.getType();
      if (!type.getLayout().isIdentity() || type.getMemorySpace())
        return user->emitOpError()
               << "uses @" << name.getValue() << " of type " << type
               << ", which fp8-lower-to-gpu cannot place in managed memory "
                  "(only identity layouts in the default memory space)";
      std::string slotName = fp8::getDeviceStateSlot(name.getValue());
      if (symbols.lookup(slotName))
        return global.emitOpError()
               << "cannot get a device copy: the module already defines @"
               << slotName;
      auto slot = LLVM::GlobalOp::create(
          top, global.getLoc(), pointerType, /*isConstant=*/false,
          LLVM::Linkage::External, slotName, Attribute());
      auto *init = new Block();
      slot.getInitializerRegion().push_back(init);
      OpBuilder initBuilder = OpBuilder::atBlockBegin(init);
      LLVM::ReturnOp::create(
          initBuilder, global.getLoc(),
          LLVM::ZeroOp::create(initBuilder, global.getLoc(), pointerType)
              .getResult());
      symbols.insert(slot);
      slots.push_back({global, slot});
    }

    // One walk per function (a model has thousands of state globals).
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      llvm::DenseMap<StringAttr, SmallVector<memref::GetGlobalOp>> loads;
      func.walk([&](memref::GetGlobalOp load) {
        loads[load.getNameAttr().getAttr()].push_back(load);
      });
      for (auto [global, slot] : slots) {
        auto found = loads.find(global.getSymNameAttr());
        if (found == loads.end())
          continue;
        OpBuilder builder = OpBuilder::atBlockBegin(&func.getBody().front());
        Value buffer = getDeviceCopy(builder, func.getLoc(), global, slot,
                                     layout);
        for (memref::GetGlobalOp load : found->second) {
          load.getResult().replaceAllUsesWith(buffer);
          load.erase();
        }
      }
    }

    // Freed at exit (dlclose of an AOT library, the JIT engine's end).
    auto release = LLVM::LLVMFuncOp::create(
        top, loc, kReleaseFunction,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {}),
        LLVM::Linkage::Internal);
    OpBuilder body(context);
    body.setInsertionPointToStart(release.addEntryBlock(body));
    Value null = LLVM::ZeroOp::create(body, loc, pointerType);
    for (LLVM::GlobalOp slot : llvm::make_second_range(slots)) {
      Value address = LLVM::AddressOfOp::create(body, loc, slot);
      Value copy = LLVM::LoadOp::create(body, loc, pointerType, address);
      LLVM::CallOp::create(body, loc, TypeRange{}, kFreeFunction,
                           ValueRange{copy});
      LLVM::StoreOp::create(body, loc, null, address);
    }
    LLVM::ReturnOp::create(body, loc, ValueRange{});
    LLVM::GlobalDtorsOp::create(
        top, loc, top.getArrayAttr(FlatSymbolRefAttr::get(release)),
        top.getI32ArrayAttr({0}),
        top.getArrayAttr(LLVM::ZeroAttr::get(context)));
    return success();
  }

  /// At the builder: the managed copy of `global` that `slot` points to,
  /// made from the global's value when `slot` is null.
  static Value getDeviceCopy(OpBuilder &builder, Location loc,
                             memref::GlobalOp global, LLVM::GlobalOp slot,
                             const DataLayout &layout) {
    MLIRContext *context = builder.getContext();
    auto pointerType = LLVM::LLVMPointerType::get(context);
    MemRefType type = global.getType();
    Value address = LLVM::AddressOfOp::create(builder, loc, slot);
    Value current = LLVM::LoadOp::create(builder, loc, pointerType, address);
    Value null = LLVM::ZeroOp::create(builder, loc, pointerType);
    Value fresh = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq,
                                       current, null);
    auto ifFresh = scf::IfOp::create(builder, loc, TypeRange{pointerType},
                                     fresh, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&ifFresh.getThenRegion().front());
      uint64_t bytes = layout.getTypeSize(type.getElementType()) *
                       static_cast<uint64_t>(type.getNumElements());
      Value size = LLVM::ConstantOp::create(
          builder, loc, builder.getI64Type(),
          builder.getI64IntegerAttr(static_cast<int64_t>(bytes)));
      Value copy = LLVM::CallOp::create(builder, loc, TypeRange{pointerType},
                                        kAllocFunction, ValueRange{size})
                       .getResult();
      LLVM::StoreOp::create(builder, loc, copy, address);
      scf::YieldOp::create(builder, loc, copy);
      builder.setInsertionPointToStart(&ifFresh.getElseRegion().front());
      scf::YieldOp::create(builder, loc, current);
    }
    // The descriptor of a dense buffer at the pointer, as a memref: the
    // LLVM conversions fold the cast away.
    LLVMTypeConverter converter(context);
    Value descriptor = MemRefDescriptor::fromStaticShape(
        builder, loc, converter, type, ifFresh.getResult(0));
    Value buffer =
        UnrealizedConversionCastOp::create(builder, loc, type, descriptor)
            .getResult(0);
    auto ifFreshCopy = scf::IfOp::create(builder, loc, fresh,
                                         /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&ifFreshCopy.getThenRegion().front());
    Value initial =
        memref::GetGlobalOp::create(builder, loc, type, global.getSymName());
    memref::CopyOp::create(builder, loc, initial, buffer);
    return buffer;
  }

  /// Declares the LLVM function `name` unless the module has it.
  static void declare(OpBuilder &builder, SymbolTable &symbols, StringRef name,
                      LLVM::LLVMFunctionType type) {
    if (symbols.lookup(name))
      return;
    auto decl =
        LLVM::LLVMFuncOp::create(builder, builder.getUnknownLoc(), name, type);
    symbols.insert(decl);
  }

  /// The runtime library's managed-memory allocation functions, with the
  /// signatures finalize-memref-to-llvm{use-generic-functions} declares.
  static constexpr StringLiteral kAllocFunction = "_mlir_memref_to_llvm_alloc";
  static constexpr StringLiteral kFreeFunction = "_mlir_memref_to_llvm_free";
  static constexpr StringLiteral kReleaseFunction =
      "__fp8_release_device_state";
};

struct FP8CopiesToGPUPass
    : fp8::impl::FP8CopiesToGPUBase<FP8CopiesToGPUPass> {
  void runOnOperation() override {
    getOperation().walk([](Block *block) { forwardThroughTemporaries(*block); });
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!copy->getParentOfType<gpu::GPUModuleOp>() &&
          !copy->getParentOfType<gpu::LaunchOp>())
        copies.push_back(copy);
    });
    auto tokenType = gpu::AsyncTokenType::get(&getContext());
    for (memref::CopyOp copy : copies) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!source || !target)
        continue;
      OpBuilder builder(copy);
      Location loc = copy.getLoc();
      if (isDense(source) && isDense(target)) {
        Value stream =
            gpu::WaitOp::create(builder, loc, tokenType, ValueRange())
                .getAsyncToken();
        Value copied = gpu::MemcpyOp::create(builder, loc, tokenType,
                                             ValueRange{stream},
                                             copy.getTarget(),
                                             copy.getSource())
                           .getAsyncToken();
        gpu::WaitOp::create(builder, loc, Type(), ValueRange{copied});
      } else if (source.getRank() > 0) {
        linalg::CopyOp::create(builder, loc, copy.getSource(),
                               copy.getTarget());
      } else {
        continue;
      }
      copy.erase();
    }
  }

  /// `copy %src, %tmp` before `copy %tmp, %dst`, where %tmp is an
  /// allocation nothing else uses but its free (what bufferization makes of
  /// a global's store: the state's new history and scale, a state setter's
  /// argument), is one `copy %src, %dst`: the value is the same, as nothing
  /// that touches memory runs in between (a `memref.get_global` of %dst
  /// may) but frees of allocations (fp8-free-after-last-use puts them
  /// there; one of %src's own moves after the new copy).
  static void forwardThroughTemporaries(Block &block) {
    SmallVector<Operation *> dead;
    for (Operation &op : block) {
      auto second = dyn_cast<memref::CopyOp>(op);
      if (!second)
        continue;
      Operation *before = op.getPrevNode();
      SmallVector<memref::DeallocOp> frees;
      while (before && !isa<memref::CopyOp>(before)) {
        auto free = dyn_cast<memref::DeallocOp>(before);
        if (free && free.getMemref().getDefiningOp<memref::AllocOp>())
          frees.push_back(free);
        else if (!isMemoryEffectFree(before))
          break;
        before = before->getPrevNode();
      }
      auto first = dyn_cast_or_null<memref::CopyOp>(before);
      if (!first || first.getTarget() != second.getSource())
        continue;
      Value temporary = first.getTarget();
      auto alloc = temporary.getDefiningOp<memref::AllocOp>();
      if (!alloc || !llvm::all_of(temporary.getUsers(), [&](Operation *user) {
            return user == first || user == second ||
                   isa<memref::DeallocOp>(user);
          }))
        continue;
      second.getSourceMutable().assign(first.getSource());
      Value source = getViewedBuffer(first.getSource());
      for (memref::DeallocOp free : frees)
        if (free.getMemref() == source)
          free->moveAfter(second);
      for (Operation *user : temporary.getUsers())
        if (user != second)
          dead.push_back(user);
      dead.push_back(alloc);
    }
    for (Operation *op : dead)
      op->erase();
  }

  /// What gpu-to-llvm copies with mgpuMemcpy.
  static bool isDense(MemRefType type) {
    return type.getLayout().isIdentity() && !type.getMemorySpace();
  }
};

struct FP8MergeGPUModulesPass
    : fp8::impl::FP8MergeGPUModulesBase<FP8MergeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> outlined;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      if (!gpuModule.getTargets() &&
          llvm::all_of(gpuModule.getBody()->getOperations(),
                       [](Operation &op) {
                         auto func = dyn_cast<gpu::GPUFuncOp>(op);
                         return func && func.isKernel();
                       }))
        outlined.push_back(gpuModule);
    if (outlined.size() < 2)
      return;
    gpu::GPUModuleOp merged = outlined.front();
    SymbolTable symbols(merged);
    // (module, kernel) -> the kernel's name in `merged`.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp from : ArrayRef(outlined).drop_front()) {
      for (auto kernel : llvm::make_early_inc_range(
               from.getBody()->getOps<gpu::GPUFuncOp>())) {
        StringAttr name = kernel.getNameAttr();
        kernel->moveBefore(merged.getBody(), merged.getBody()->end());
        renamed[{from.getNameAttr(), name}] = symbols.insert(kernel);
      }
    }
    DenseMap<StringAttr, StringAttr> duplicates = eraseDuplicates(merged);
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr name = launch.getKernelName();
      if (auto it = renamed.find({launch.getKernelModuleName(), name});
          it != renamed.end())
        name = it->second;
      else if (launch.getKernelModuleName() != merged.getNameAttr())
        return;
      if (auto it = duplicates.find(name); it != duplicates.end())
        name = it->second;
      launch.setKernelAttr(SymbolRefAttr::get(merged.getNameAttr(),
                                              {FlatSymbolRefAttr::get(name)}));
    });
    for (gpu::GPUModuleOp from : ArrayRef(outlined).drop_front())
      from.erase();
  }

  /// Erases each kernel of `kernels` that is the same as one before it but
  /// for its name (and locations): the layers of a model launch the same
  /// kernels. Returns the erased names, each with the kernel that stays.
  static DenseMap<StringAttr, StringAttr>
  eraseDuplicates(gpu::GPUModuleOp kernels) {
    llvm::StringMap<StringAttr> first;
    DenseMap<StringAttr, StringAttr> duplicates;
    for (auto kernel : llvm::make_early_inc_range(
             kernels.getBody()->getOps<gpu::GPUFuncOp>())) {
      StringAttr name = kernel.getNameAttr();
      auto [it, inserted] = first.try_emplace(fp8::printIdentity(kernel), name);
      if (inserted)
        continue;
      duplicates[name] = it->second;
      kernel.erase();
    }
    return duplicates;
  }
};

struct FP8ReadOnlyArgumentsPass
    : fp8::impl::FP8ReadOnlyArgumentsBase<FP8ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<TensorType>(type))
          func.setArgAttr(index, "bufferization.writable",
                          BoolAttr::get(context, false));
      func->setAttr(kReadOnlyArguments, UnitAttr::get(context));
    }
  }
};

/// A unary math op on f16 or bf16 computed in f32 and truncated, for the
/// operations where that is exact: rounding to an integer, abs, and sqrt
/// (correctly rounded in f32, whose 24 bits are at least twice the
/// narrow types' precision plus 2, so rounding again to 11 or 8 bits gives
/// the correctly rounded narrow result).
template <typename MathOp>
struct ExactThroughF32 : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF16() && !type.isBF16())
      return failure();
    Location loc = op.getLoc();
    Value wide = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(),
                                       op->getOperand(0));
    Value result = MathOp::create(rewriter, loc, wide);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, type, result);
    return success();
  }
};

/// A unary math op on f32 or f64 as one PTX instruction (inline assembly:
/// convert-gpu-to-nvvm would call libdevice, and marks the LLVM
/// intrinsics illegal).
template <typename MathOp>
struct UnaryMathToPtx : OpRewritePattern<MathOp> {
  UnaryMathToPtx(MLIRContext *context, StringRef instruction)
      : OpRewritePattern<MathOp>(context), instruction(instruction) {}

  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return failure();
    StringRef suffix = type.isF32() ? "f32" : "f64";
    // cvt.rmi.f32.f32 names the type twice; sqrt.rn.f32 and abs.f32 once.
    std::string text = instruction;
    for (size_t at; (at = text.find("%T")) != std::string::npos;)
      text.replace(at, 2, suffix.str());
    std::string constraints = type.isF32() ? "=f,f" : "=d,d";
    rewriter.replaceOpWithNewOp<LLVM::InlineAsmOp>(
        op, type, op->getOperands(), text + " $0, $1;", constraints,
        /*has_side_effects=*/false, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
        ArrayAttr());
    return success();
  }

  std::string instruction;
};

/// arith.maxnumf / minnumf on f32 or f64 as LLVM's maxnum / minnum (PTX
/// max / min, which return the other operand of a NaN, as maxnum does):
/// convert-gpu-to-nvvm would call libdevice's __nv_fmaxf. (It marks fabs,
/// sqrt and the rounding intrinsics illegal: those go through inline PTX.)
template <typename From, typename To>
struct ToLLVMIntrinsic : OpRewritePattern<From> {
  using OpRewritePattern<From>::OpRewritePattern;
  LogicalResult matchAndRewrite(From op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return failure();
    rewriter.replaceOpWithNewOp<To>(op, type, op->getOperands());
    return success();
  }
};

/// copysign(x, y) on the bits: x's magnitude, y's sign bit (the input may
/// have them, and RoundHalfAwayFromZero makes one; convert-gpu-to-nvvm
/// would call libdevice and marks llvm.copysign illegal).
struct CopySignToBits : OpRewritePattern<math::CopySignOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::CopySignOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return failure();
    Location loc = op.getLoc();
    unsigned width = type.getWidth();
    auto bitsType = rewriter.getIntegerType(width);
    auto bits = [&](Value value) {
      return arith::BitcastOp::create(rewriter, loc, bitsType, value);
    };
    auto mask = [&](const APInt &value) {
      return arith::ConstantOp::create(
          rewriter, loc, rewriter.getIntegerAttr(bitsType, value));
    };
    APInt sign = APInt::getSignMask(width);
    Value magnitude = arith::AndIOp::create(rewriter, loc, bits(op.getLhs()),
                                            mask(~sign));
    Value signBit =
        arith::AndIOp::create(rewriter, loc, bits(op.getRhs()), mask(sign));
    Value result = arith::OrIOp::create(rewriter, loc, magnitude, signBit);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, type, result);
    return success();
  }
};

/// round(x), halves away from zero: t = trunc(x) is exact, and so is the
/// fraction |x - t|; one at least 1/2 moves t one away from zero (exact:
/// then |t| < 2^23, or 2^52 in f64). NaN stays NaN, infinities and -0
/// themselves.
struct RoundHalfAwayFromZero : OpRewritePattern<math::RoundOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RoundOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type || !(type.isF32() || type.isF64()))
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](double value) {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getFloatAttr(type, value));
    };
    Value x = op.getOperand();
    Value truncated = math::TruncOp::create(rewriter, loc, x);
    Value fraction = math::AbsFOp::create(
        rewriter, loc, arith::SubFOp::create(rewriter, loc, x, truncated));
    Value away = arith::AddFOp::create(
        rewriter, loc, truncated,
        math::CopySignOp::create(rewriter, loc, constant(1.0), x));
    Value roundsAway = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGE, fraction, constant(0.5));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, roundsAway, away,
                                                 truncated);
    return success();
  }
};

/// log10(x) = log(x) * log10(e), in f32 (f16 and bf16 through it): upstream
/// has no approximation of log10, and log's is within a few ulp.
struct Log10ThroughLog : OpRewritePattern<math::Log10Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Log10Op op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type || !(type.isF32() || type.isF16() || type.isBF16()))
      return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value x = op.getOperand();
    if (type != f32)
      x = arith::ExtFOp::create(rewriter, loc, f32, x);
    Value log = math::LogOp::create(rewriter, loc, x);
    Value log10e = arith::ConstantOp::create(
        rewriter, loc, rewriter.getF32FloatAttr(0.43429448190325182f));
    Value result = arith::MulFOp::create(rewriter, loc, log, log10e);
    if (type != f32)
      result = arith::TruncFOp::create(rewriter, loc, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// rsqrt(x) = 1 / sqrt(x), both correctly rounded.
struct RsqrtToDivSqrt : OpRewritePattern<math::RsqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RsqrtOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return failure();
    Value one = arith::ConstantOp::create(rewriter, op.getLoc(),
                                          rewriter.getFloatAttr(type, 1.0));
    Value root = math::SqrtOp::create(rewriter, op.getLoc(), op.getOperand());
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, one, root);
    return success();
  }
};

struct FP8ExpandMathForGPUPass
    : fp8::impl::FP8ExpandMathForGPUBase<FP8ExpandMathForGPUPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    auto all = [](StringRef) { return true; };
    math::populateExpansionPatterns(patterns);
    populateMathF32ExpansionPatterns(patterns, all);
    populateMathPolynomialApproximationPatterns(patterns, all);
    patterns.add<RsqrtToDivSqrt, Log10ThroughLog>(context, /*benefit=*/2);
    fp8::populateExactRoundingPatterns(patterns);
    patterns.add<ToLLVMIntrinsic<arith::MaxNumFOp, LLVM::MaxNumOp>,
                 ToLLVMIntrinsic<arith::MinNumFOp, LLVM::MinNumOp>>(context);
    patterns.add<UnaryMathToPtx<math::SqrtOp>>(context, "sqrt.rn.%T");
    patterns.add<UnaryMathToPtx<math::AbsFOp>>(context, "abs.%T");
    patterns.add<UnaryMathToPtx<math::FloorOp>>(context, "cvt.rmi.%T.%T");
    patterns.add<UnaryMathToPtx<math::CeilOp>>(context, "cvt.rpi.%T.%T");
    patterns.add<UnaryMathToPtx<math::TruncOp>>(context, "cvt.rzi.%T.%T");
    patterns.add<UnaryMathToPtx<math::RoundEvenOp>>(context,
                                                   "cvt.rni.%T.%T");
    // math.round (halves away from zero) has no PTX rounding mode: in f32
    // through populateExactRoundingPatterns.
    patterns.add<ExactThroughF32<math::SqrtOp>, ExactThroughF32<math::AbsFOp>,
                 ExactThroughF32<math::FloorOp>, ExactThroughF32<math::CeilOp>,
                 ExactThroughF32<math::TruncOp>,
                 ExactThroughF32<math::RoundEvenOp>,
                 ExactThroughF32<math::RoundOp>>(context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // What is left would become a libdevice call that the driver cannot
    // resolve (f64 transcendental functions, for one): an error here.
    WalkResult left = getOperation()->walk([](Operation *op) {
      if (!isa_and_present<math::MathDialect>(op->getDialect()) ||
          isa<math::FmaOp>(op))
        return WalkResult::advance();
      op->emitOpError() << "has no lowering without libdevice in a GPU "
                           "kernel (approximations cover f32, f16 and bf16)";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

void mlir::fp8::populateExactRoundingPatterns(RewritePatternSet &patterns) {
  // Ahead of upstream's math.round expansion.
  patterns.add<RoundHalfAwayFromZero>(patterns.getContext(), /*benefit=*/2);
  patterns.add<CopySignToBits>(patterns.getContext());
}

std::string mlir::fp8::getDeviceStateSlot(StringRef global) {
  return ("__fp8_device_" + global).str();
}

void mlir::fp8::buildLowerToGPUPipeline(OpPassManager &pm,
                                        const LowerToGPUOptions &options) {
  // A TOSA graph that did not come through fp8-pipeline (its high-precision
  // twin) is imported here; nothing happens to one without TOSA. A TOSA op
  // the import leaves is an error here: nothing after it converts TOSA.
  FP8ImportTosaOptions tosa;
  tosa.complete = true;
  pm.addPass(createFP8ImportTosa(tosa));
  pm.addPass(fp8::createFP8ReadOnlyArguments());
  bool hopper =
      !checkNVVMTarget(options.chip, options.features, /*needsWgmma=*/true);
  // Attention on the flash kernel where the chip has wgmma and a kernel
  // takes the op; the others as their materialized math, which the
  // linalg -> gpu route below takes like any other linalg, with E rounded
  // to bf16 / f16 as FlashAttention does: E V on the 16-bit kernel, not
  // the f32 one with its three-way split of E.
  if (hopper) {
    fp8::ConvertFP8AttentionToWGMMAOptions attention;
    attention.chip = options.chip;
    attention.features = options.features;
    pm.addPass(fp8::createConvertFP8AttentionToWGMMA(attention));
  }
  pm.addPass(fp8::createFP8DecomposeAttention(
      fp8::FP8DecomposeAttentionOptions{/*roundProbabilities=*/true}));
  // The fp8 ops as the project's kernels: the wgmma GEMMs where the chip
  // has wgmma, the casts and scaling kernels everywhere.
  if (hopper) {
    fp8::ConvertFP8ScaledMatmulToWGMMAOptions gemm;
    gemm.chip = options.chip;
    gemm.features = options.features;
    gemm.promote = options.promote;
    gemm.wholeGraph = true;
    pm.addPass(fp8::createConvertFP8ScaledMatmulToWGMMA(gemm));
  }
  fp8::ConvertFP8ToGPULaunchesOptions launches;
  launches.chip = options.chip;
  launches.features = options.features;
  pm.addPass(fp8::createConvertFP8ToGPULaunches(launches));
  // What no wgmma kernel took accumulates in f32 too (DESIGN.md 15).
  if (options.accumulation == Accumulation::F32)
    pm.addPass(fp8::createFP8WidenAccumulation());
  addTensorToBufferPasses(pm, /*packContractionsForCPU=*/false,
                          /*forGPU=*/true);
  pm.addPass(fp8::createFP8CopiesToGPU());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  fp8::FP8TileParallelLoopsForGPUOptions tiling;
  tiling.threads = options.threads;
  pm.addNestedPass<func::FuncOp>(fp8::createFP8TileParallelLoopsForGPU(tiling));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(fp8::createFP8StageBuffersForGPU());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(fp8::createFP8MergeGPUModules());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(fp8::createFP8SplitBlocksAtSCF());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(fp8::createFP8AsyncGPUHost());
  fp8::addKernelLoweringPasses(pm.nest<gpu::GPUModuleOp>());
  fp8::FP8GpuModuleToBinaryOptions binary;
  binary.format = options.format;
  binary.toolkit = options.toolkit;
  pm.addPass(fp8::createFP8GpuModuleToBinary(binary));
  // Math left on the host (scalar code between kernels).
  addMathToCallsPasses(pm);

  // The host: runtime calls, and every allocation managed memory.
  // memref first: gpu-to-llvm would lower the allocations with malloc.
  FinalizeMemRefToLLVMConversionPassOptions memory;
  memory.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memory));
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(fp8::createFP8CheckLLVMLowering());
}

void mlir::fp8::registerLowerToGPUDialectExtensions(
    DialectRegistry &registry) {
  // What convert-gpu-to-nvvm (in the kernels) and convert-to-llvm (on the
  // host) lower through each dialect's ConvertToLLVMPatternInterface.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
}

void mlir::fp8::registerLowerToGPUPipeline() {
  registerCheckedNVVMPipeline<LowerToGPUOptions>(
      "fp8-lower-to-gpu",
      "Lower a whole module to one GPU program (upstream's GPU route) with "
      "a host on MLIR's GPU runtime ABI",
      buildLowerToGPUPipeline);
}
