//===- UndefinedReads.cpp - Reads of tensors with no contents -------------===//
//
// A `tensor.empty` has a shape and no contents: an op that reads them
// computes garbage, differently from run to run and from one lowering to
// the next. Exports hand-edited after the fact do it (a reduction whose
// init lost its linalg.fill, position ids left as an empty tensor), and a
// runner comparing two versions of such a graph would report noise as FP8
// error; it refuses them instead.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/Runner.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

/// The op that made `value`'s undefined contents (tensor.empty, or
/// alloc_tensor without a copy), looked for through views; null if the
/// contents are defined or come from elsewhere.
static Operation *getUndefinedSource(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<tensor::EmptyOp>(def))
      return def;
    if (auto alloc = dyn_cast<bufferization::AllocTensorOp>(def))
      return alloc.getCopy() ? nullptr : def;
    if (!isa<tensor::CastOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp, tensor::ReshapeOp>(def))
      return nullptr;
    value = def->getOperand(0);
  }
  return nullptr;
}

/// Whether `type` holds no element (reading it reads nothing).
static bool isEmptyShape(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasStaticShape() && shaped.getNumElements() == 0;
}

/// Errs at the first op of `func` (outside nested calls) that reads
/// undefined contents, and collects the functions it calls.
static LogicalResult checkFunction(func::FuncOp func,
                                   SmallVectorImpl<func::FuncOp> &callees) {
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto call = dyn_cast<CallOpInterface>(op))
      if (auto callee =
              dyn_cast_or_null<func::FuncOp>(call.resolveCallable()))
        callees.push_back(callee);
    // A read whose results nobody uses computes nothing.
    if (isOpTriviallyDead(op))
      return WalkResult::advance();
    SmallVector<OpOperand *> reads;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      for (OpOperand &operand : op->getOpOperands())
        if (isa<RankedTensorType>(operand.get().getType()) &&
            linalgOp.payloadUsesValueFromOperand(&operand))
          reads.push_back(&operand);
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      reads.push_back(&extract.getTensorMutable());
    }
    for (OpOperand *read : reads) {
      Operation *source = getUndefinedSource(read->get());
      if (!source || isEmptyShape(read->get().getType()))
        continue;
      InFlightDiagnostic error = emitError(op->getLoc());
      error << "'" << op->getName() << "' reads operand #"
            << read->getOperandNumber() << ", the contents of a '"
            << source->getName()
            << "', which are undefined: so would be every result computed "
               "from it (initialize it, e.g. with linalg.fill)";
      error.attachNote(source->getLoc()) << "the tensor with no contents";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult fp8::runner::checkNoUndefinedReads(func::FuncOp entry) {
  SmallVector<func::FuncOp> worklist{entry};
  DenseSet<Operation *> seen{entry};
  while (!worklist.empty()) {
    SmallVector<func::FuncOp> callees;
    if (failed(checkFunction(worklist.pop_back_val(), callees)))
      return failure();
    for (func::FuncOp callee : callees)
      if (seen.insert(callee).second)
        worklist.push_back(callee);
  }
  return success();
}
