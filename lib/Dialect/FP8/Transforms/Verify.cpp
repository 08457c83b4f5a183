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
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8VERIFY
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// Every 8-bit-or-narrower float MLIR has: the two the fp8 dialect computes
/// with (f8E4M3FN, f8E5M2), the other FP8 encodings (f8E4M3, f8E4M3FNUZ,
/// f8E4M3B11FNUZ, f8E5M2FNUZ, f8E3M4, f8E8M0FNU) and the sub-byte ones
/// (f6E2M3FN, f6E3M2FN, f4E2M1FN). None of them may carry data unscaled.
static bool isFloat8(Type type) {
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return floatType && floatType.getWidth() <= 8;
}

/// Ops that move or view FP8 bytes without interpreting them. Calls are not:
/// what the callee does with the bytes is checked in its body, or, for an
/// external callee, cannot be (see checkCall).
static bool isDataMovement(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::CastOp,
             tensor::ReshapeOp, tensor::ConcatOp, tensor::PadOp,
             tensor::EmptyOp, tensor::DimOp, linalg::TransposeOp,
             linalg::BroadcastOp, linalg::CopyOp, linalg::FillOp,
             func::ReturnOp, scf::YieldOp, scf::ForOp, scf::IfOp,
             ml_program::GlobalStoreOp, memref::CopyOp>(op) ||
         isa<ViewLikeOpInterface>(op);
}

/// An op that makes FP8 values out of wider or integer data without a
/// scale: a truncation, a TOSA cast or a bitcast.
static std::optional<StringRef> describeUnscaledCast(Operation *op) {
  if (op->getNumResults() != 1 || !isFloat8(op->getResult(0).getType()) ||
      op->getNumOperands() != 1 || isFloat8(op->getOperand(0).getType()))
    return std::nullopt;
  if (isa<arith::TruncFOp, tosa::CastOp>(op))
    return StringRef("cast");
  if (isa<arith::BitcastOp, tensor::BitcastOp>(op))
    return StringRef("bitcast");
  return std::nullopt;
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
  void checkCall(CallOpInterface call);

  bool failed = false;
  /// Set for the duration of runOnOperation.
  SymbolTableCollection *symbolTables = nullptr;
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
    if (isa_and_present<FP8Dialect>(user->getDialect()) ||
        isDataMovement(user) || isa<CallOpInterface>(user))
      continue; // Calls: checkCall.
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

/// FP8 values crossing a call: checked in the callee's body when the module
/// has it; an external callee (or an indirect call) is a place the verifier
/// cannot see, and the scale does not travel with the bytes.
void FP8VerifyPass::checkCall(CallOpInterface call) {
  auto callee = dyn_cast_if_present<FunctionOpInterface>(
      call.resolveCallableInTable(symbolTables));
  if (callee && !callee.isExternal())
    return;
  auto anyFloat8 = [](auto values) {
    return llvm::any_of(values,
                        [](Value value) { return isFloat8(value.getType()); });
  };
  bool passes = anyFloat8(call.getArgOperands());
  if (!passes && !anyFloat8(call->getResults()))
    return;
  InFlightDiagnostic diag = call->emitError(
      passes ? "FP8 value passed to " : "FP8 value returned by ");
  if (auto symbol = llvm::dyn_cast_if_present<SymbolRefAttr>(
          call.getCallableForCallee()))
    diag << "external function " << symbol;
  else
    diag << "an indirect callee";
  diag << (passes ? ", where its scale is lost and its use cannot be verified"
                  : ", with no scale: it did not come from fp8.quantize");
  failed = true;
}

void FP8VerifyPass::check(Operation *op) {
  if (std::optional<StringRef> kind = describeUnscaledCast(op)) {
    op->emitError() << *kind << " to "
                    << getElementTypeOrSelf(op->getResult(0).getType())
                    << " without a scale; use fp8.quantize (or "
                       "fp8.cast_transpose)";
    failed = true;
  }
  if (auto call = dyn_cast<CallOpInterface>(op))
    checkCall(call);

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
  SymbolTableCollection tables;
  symbolTables = &tables;
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
