//===- Deallocation.cpp - Buffer deallocation for whole models ------------===//
//
// Ownership-based buffer deallocation frees a block's buffers at the block's
// end, with one bufferization.dealloc of all of them. In a whole model's
// one-block function that is thousands of buffers: upstream's simplification
// compares each with every other (quadratic), and all of them live until the
// function returns. fp8-split-deallocs frees each fresh allocation on its own
// (linear); fp8-free-after-last-use moves each free to right after the
// buffer's last use, so a call's peak memory is what is live at once.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"
#include "BufferViews.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FREEAFTERLASTUSE
#define GEN_PASS_DEF_FP8SPLITDEALLOCS
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using mlir::fp8::getViewedBuffer;

namespace {
/// Whether a result of this type may still hold or use a buffer after its
/// op: a view, an address, a tensor over it (bufferization.to_tensor), or
/// the token of GPU work that may still be running on it.
bool mayOutliveItsOp(Type type) {
  return isa<BaseMemRefType, TensorType, LLVM::LLVMPointerType,
             gpu::AsyncTokenType>(type);
}

/// Whether `user` only reads or writes the memory of `buffer`, and is done
/// with it when it returns: read or write effects on it (or a synchronous
/// GPU launch, copy or memset), and no result that may carry it on.
bool onlyAccesses(Operation *user, Value buffer) {
  if (llvm::any_of(user->getResultTypes(), mayOutliveItsOp))
    return false;
  // Without a token these wait for their work (a launch given a stream
  // does not).
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(user))
    return !launch.getAsyncObject();
  if (isa<gpu::MemcpyOp, gpu::MemsetOp>(user))
    return true;
  // Reads and writes that go on after it (a DMA: until its dma_wait).
  if (isa<memref::DmaStartOp>(user))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(user);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffectsOnValue(buffer, instances);
  return !instances.empty() &&
         llvm::all_of(instances, [](const MemoryEffects::EffectInstance &e) {
           return isa<MemoryEffects::Read, MemoryEffects::Write>(
               e.getEffect());
         });
}

/// The op of `free`'s block that holds the last use of `alloc`'s memory,
/// or null when a use may hand the address on, or lies outside the block
/// or after `free`.
Operation *findLastUse(memref::AllocOp alloc, memref::DeallocOp free) {
  Block *block = free->getBlock();
  Operation *last = alloc;
  SmallVector<Value> worklist{alloc.getResult()};
  DenseSet<Value> seen{alloc.getResult()};
  auto follow = [&](ValueRange values) {
    for (Value value : values)
      if (seen.insert(value).second)
        worklist.push_back(value);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == free)
        continue;
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at || !at->isBeforeInBlock(free))
        return nullptr;
      if (last->isBeforeInBlock(at))
        last = at;
      // Sizes, strides and offset are not addresses.
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        follow(meta.getBaseBuffer());
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        follow(user->getResults());
        continue;
      }
      if (isa<memref::DimOp>(user) || onlyAccesses(user, value))
        continue;
      return nullptr;
    }
  }
  return last;
}

struct FP8FreeAfterLastUsePass
    : fp8::impl::FP8FreeAfterLastUseBase<FP8FreeAfterLastUsePass> {
  void runOnOperation() override {
    // Decided first, moved after: moves would invalidate the blocks' op
    // order, which every isBeforeInBlock query would then recompute.
    SmallVector<std::pair<memref::DeallocOp, Operation *>> moves;
    getOperation()->walk([&](memref::DeallocOp free) {
      auto alloc = free.getMemref().getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != free->getBlock())
        return;
      if (Operation *last = findLastUse(alloc, free);
          last && last->getNextNode() != free)
        moves.push_back({free, last});
    });
    for (auto [free, last] : moves)
      free->moveAfter(last);
    if (moves.empty())
      markAllAnalysesPreserved();
  }
};

/// Whether `buffer` is memory of its own, which no other value but its
/// views can be: an argument of the function, or an allocation (heap or
/// stack). Not: a call's result, a block argument, a select, which may be
/// any buffer.
bool isKnownBuffer(Value buffer) {
  if (auto arg = dyn_cast<BlockArgument>(buffer))
    return arg.getOwner()->isEntryBlock() &&
           isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return isa_and_present<memref::AllocOp, memref::AllocaOp>(
      buffer.getDefiningOp());
}

struct FP8SplitDeallocsPass
    : fp8::impl::FP8SplitDeallocsBase<FP8SplitDeallocsPass> {
  void runOnOperation() override {
    getOperation()->walk([](bufferization::DeallocOp dealloc) {
      if (dealloc.getMemrefs().size() < 2)
        return;
      // Any memref or retained value that may be any buffer (a loop's
      // result, a select) may be one of the allocations: then the dealloc
      // stays whole, for upstream's alias analysis.
      if (!llvm::all_of(dealloc.getMemrefs(), isKnownBuffer))
        return;
      llvm::SmallDenseSet<Value> retained;
      for (Value value : dealloc.getRetained()) {
        Value buffer = getViewedBuffer(value);
        if (!isKnownBuffer(buffer))
          return;
        retained.insert(buffer);
      }
      SmallVector<Value> keptMemrefs, keptConditions;
      OpBuilder builder(dealloc);
      for (auto [memref, condition] :
           llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions())) {
        // Distinct buffers of their own never alias one another: an
        // allocation that no retained value views is freed (if its
        // condition holds) on its own.
        if (memref.getDefiningOp<memref::AllocOp>() &&
            !retained.contains(memref)) {
          bufferization::DeallocOp::create(builder, dealloc.getLoc(),
                                           ValueRange{memref},
                                           ValueRange{condition},
                                           ValueRange{});
          continue;
        }
        keptMemrefs.push_back(memref);
        keptConditions.push_back(condition);
      }
      dealloc.getMemrefsMutable().assign(keptMemrefs);
      dealloc.getConditionsMutable().assign(keptConditions);
    });
  }
};
} // namespace
