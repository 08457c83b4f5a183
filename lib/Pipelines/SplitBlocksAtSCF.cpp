//===- SplitBlocksAtSCF.cpp - Linear-time convert-scf-to-cf ---------------===//
//
// Upstream's scf-to-cf patterns split the block of each op they lower at that
// op: every op after it moves to a new block (and its parent pointer with
// it). Lowering n ops of one block of N ops, first to last, moves O(n * N)
// ops. Splitting after each op here, from the last one up, moves each op
// once; the patterns' splits then move one op each (the `cf.br`).
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8SPLITBLOCKSATSCF
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// The ops convert-scf-to-cf lowers by splitting their block (scf.parallel
/// and scf.forall become scf.for first; scf.yield and scf.condition are
/// terminators of the others' bodies).
bool splitsItsBlock(Operation &op) {
  return isa<scf::IfOp, scf::ForOp, scf::WhileOp, scf::IndexSwitchOp,
             scf::ExecuteRegionOp, scf::ParallelOp, scf::ForallOp>(op);
}

/// Ends `block` after each op that splits it, last first: each split moves
/// the ops up to the split made before it, so every op moves once.
void splitAfterSCF(Block &block) {
  SmallVector<Operation *> points;
  for (Operation &op : block.without_terminator())
    if (splitsItsBlock(op))
      points.push_back(&op);
  for (Operation *op : llvm::reverse(points)) {
    Operation *next = op->getNextNode();
    // Right before the terminator the pattern moves the terminator alone.
    if (next == block.getTerminator())
      continue;
    Block *rest = block.splitBlock(next);
    OpBuilder builder = OpBuilder::atBlockEnd(&block);
    cf::BranchOp::create(builder, next->getLoc(), rest);
  }
}

struct FP8SplitBlocksAtSCFPass
    : fp8::impl::FP8SplitBlocksAtSCFBase<FP8SplitBlocksAtSCFPass> {
  void runOnOperation() override {
    bool changed = false;
    getOperation()->walk([&](FunctionOpInterface func) {
      // Function bodies take any number of blocks (scf bodies: one).
      Region &body = func.getFunctionBody();
      // The blocks made here come right after their origin: collect first.
      SmallVector<Block *> blocks =
          llvm::map_to_vector(body, [](Block &block) { return &block; });
      for (Block *block : blocks) {
        if (!block->mightHaveTerminator())
          continue;
        size_t before = body.getBlocks().size();
        splitAfterSCF(*block);
        changed |= body.getBlocks().size() != before;
      }
    });
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
