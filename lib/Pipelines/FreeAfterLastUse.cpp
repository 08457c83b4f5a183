//===- FreeAfterLastUse.cpp - Free each buffer after its last use ---------===//
//
// Ownership-based buffer deallocation frees a block's buffers at the block's
// end. Moving each free to right after the buffer's last use makes a call's
// peak memory what is live at once, not everything it allocates.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FREEAFTERLASTUSE
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// Whether `user` only reads or writes the memory of `buffer`: it has
/// read or write effects on it, and hands no address on (no memref or
/// pointer results).
bool onlyAccesses(Operation *user, Value buffer) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(user);
  if (!effects)
    return false;
  if (llvm::any_of(user->getResultTypes(), [](Type type) {
        return isa<BaseMemRefType, LLVM::LLVMPointerType>(type);
      }))
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
      if (isa<memref::DimOp, gpu::LaunchFuncOp, gpu::MemcpyOp,
              gpu::MemsetOp>(user) ||
          onlyAccesses(user, value))
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
} // namespace
