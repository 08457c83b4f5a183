//===- Verify.cpp - Lint FP8 usage ----------------------------------------===//
//
// fp8-verify: every FP8 value must come from a scaled cast and go only to
// FP8-aware ops or pure data movement; nothing accumulates or persists in
// FP8. The pass reports every violation (not just the first) so that one run
// explains a whole graph.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8VERIFY
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

static bool isFloat8(Type type) {
  return getNumericsFormat(getElementTypeOrSelf(type)).has_value();
}

/// Ops that move or view FP8 bytes without interpreting them.
static bool isDataMovement(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::CastOp,
             tensor::ReshapeOp, tensor::ConcatOp, tensor::PadOp,
             tensor::EmptyOp, tensor::DimOp, linalg::TransposeOp,
             linalg::BroadcastOp, linalg::CopyOp, func::ReturnOp,
             func::CallOp, scf::YieldOp, scf::ForOp, scf::IfOp,
             ml_program::GlobalStoreOp, memref::CopyOp>(op) ||
         isa<ViewLikeOpInterface>(op);
}

/// A short name for why `user` must not see FP8 values.
static StringRef describeSensitiveUser(Operation *user) {
  if (isa<linalg::SoftmaxOp>(user))
    return "softmax";
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
    if (linalgOp.getNumReductionLoops() > 0)
      return "a reduction (norm, softmax, loss or sum)";
    bool adds = false;
    user->walk([&](arith::AddFOp) { adds = true; });
    if (adds)
      return "an addition (residual add)";
  }
  if (isa<linalg::ReduceOp>(user))
    return "a reduction (norm, softmax, loss or sum)";
  if (isa<arith::AddFOp>(user))
    return "an addition (residual add)";
  if (isa<arith::ExtFOp>(user))
    return "a widening cast that drops its scale (use fp8.dequantize)";
  return "a high-precision op";
}

namespace {
struct FP8VerifyPass : fp8::impl::FP8VerifyBase<FP8VerifyPass> {
  void runOnOperation() override;

private:
  void check(Operation *op);
  void checkContraction(linalg::LinalgOp op);
  void checkUsers(Value value);

  bool failed = false;
  /// Ops already reported as FP8 users: one error per op, however many FP8
  /// operands it has (addf %q, %q; softmax with an FP8 input and init).
  DenseSet<Operation *> reportedUsers;
};
} // namespace

void FP8VerifyPass::checkContraction(linalg::LinalgOp op) {
  if (!linalg::isaContractionOpInterface(op))
    return;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (isFloat8(init.get().getType())) {
      op->emitError("accumulates in FP8 (")
          << getElementTypeOrSelf(init.get().getType())
          << "); GEMMs must accumulate in f32";
      failed = true;
      return;
    }
  }
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (isFloat8(input->get().getType())) {
      op->emitError("FP8 operand #")
          << input->getOperandNumber()
          << " reaches a contraction that is not fp8.scaled_matmul: its "
             "scale is lost";
      failed = true;
      return;
    }
  }
}

void FP8VerifyPass::checkUsers(Value value) {
  if (!isFloat8(value.getType()))
    return;
  for (Operation *user : value.getUsers()) {
    if (isa_and_present<FP8Dialect>(user->getDialect()) || isDataMovement(user))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
        linalgOp && linalg::isaContractionOpInterface(linalgOp))
      continue; // Reported once, by checkContraction.
    if (!reportedUsers.insert(user).second)
      continue;
    InFlightDiagnostic diag = user->emitError("FP8 value reaches ")
                              << describeSensitiveUser(user)
                              << ", which must run in high precision";
    diag.attachNote(value.getLoc()) << "FP8 value defined here";
    failed = true;
  }
}

void FP8VerifyPass::check(Operation *op) {
  if (auto trunc = dyn_cast<arith::TruncFOp>(op);
      trunc && isFloat8(trunc.getType())) {
    op->emitError("cast to ")
        << getElementTypeOrSelf(trunc.getType())
        << " without a scale; use fp8.quantize (or fp8.cast_transpose)";
    failed = true;
  }

  if (auto global = dyn_cast<ml_program::GlobalOp>(op);
      global && global.getIsMutable() && isFloat8(global.getType())) {
    op->emitError("mutable FP8 global: master weights and optimizer state "
                  "must stay in high precision");
    failed = true;
  }
  if (auto global = dyn_cast<memref::GlobalOp>(op);
      global && !global.getConstant() && isFloat8(global.getType())) {
    op->emitError("mutable FP8 global: master weights and optimizer state "
                  "must stay in high precision");
    failed = true;
  }

  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    checkContraction(linalgOp);

  for (Value result : op->getResults())
    checkUsers(result);
  // A structured op's body computes on the elements of its operands, which
  // were judged at the op itself (see runOnOperation).
  if (isa<linalg::LinalgOp>(op))
    return;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        checkUsers(arg);
}

void FP8VerifyPass::runOnOperation() {
  failed = false;
  reportedUsers.clear();
  // The body of a structured op is not walked: its ops see the elements of
  // the op's operands, already judged at the op. Walking it would report the
  // op twice, flag the linalg.yield of pure data movement (linalg.transpose)
  // and the implicit casts in named ops' bodies, which have no location.
  getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    check(op);
    return isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                     : WalkResult::advance();
  });
  if (failed)
    signalPassFailure();
}
