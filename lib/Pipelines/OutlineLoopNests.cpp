//===- OutlineLoopNests.cpp - A function per loop nest, one of each -------===//
//
// OpenMPIRBuilder outlines each omp.parallel region with LLVM's
// CodeExtractor, whose analysis scans the whole enclosing function: in a
// model lowered to one function with thousands of parallel loop nests,
// translation to LLVM IR is quadratic. Moving each nest into a function of
// its own first keeps every scan to one nest, and lets the layers share
// one copy of each nest.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"
#include "SymbolIdentity.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8OUTLINELOOPNESTS
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// Whether `value` is computed from constants alone, by ops without
/// effects or regions (lower-affine's bounds arithmetic, not yet folded):
/// such values are recomputed in an outlined function, not passed, so that
/// LLVM sees constant trip counts. The ops computing them go to `ops`,
/// operands first.
bool isConstantExpression(Value value, SetVector<Operation *> &ops,
                          unsigned depth = 0) {
  Operation *producer = value.getDefiningOp();
  if (!producer || producer->getNumRegions() != 0 || depth > 8 ||
      !isMemoryEffectFree(producer))
    return false;
  if (ops.contains(producer))
    return true;
  if (!producer->hasTrait<OpTrait::ConstantLike>())
    for (Value operand : producer->getOperands())
      if (!isConstantExpression(operand, ops, depth + 1))
        return false;
  ops.insert(producer);
  return true;
}

/// Replaces `loop` with a call of a new function `name`, placed after
/// `after`, that holds it; returns the call.
func::CallOp outline(Operation *loop, StringRef name, Operation *after,
                     SymbolTable &symbols) {
  MLIRContext *context = loop->getContext();
  Location loc = loop->getLoc();
  llvm::SetVector<Value> used(llvm::from_range, loop->getOperands());
  getUsedValuesDefinedAbove(loop->getRegions(), used);
  SmallVector<Value> arguments;
  SetVector<Operation *> constants;
  for (Value value : used) {
    SetVector<Operation *> expression;
    if (isConstantExpression(value, expression))
      constants.insert_range(expression);
    else
      arguments.push_back(value);
  }

  OpBuilder builder(context);
  builder.setInsertionPointAfter(after);
  auto type = FunctionType::get(context, ValueRange(arguments).getTypes(),
                                loop->getResultTypes());
  auto outlined = func::FuncOp::create(builder, loc, name, type);
  outlined.setPrivate();
  // convert-func-to-llvm gives an llvm.func this linkage (otherwise
  // external: every nest would be exported from a compiled library).
  outlined->setAttr(
      "llvm.linkage",
      LLVM::LinkageAttr::get(context, LLVM::linkage::Linkage::Internal));
  symbols.insert(outlined);

  Block *entry = outlined.addEntryBlock();
  IRMapping mapping;
  mapping.map(arguments, entry->getArguments());
  builder.setInsertionPointToStart(entry);
  for (Operation *constant : constants)
    builder.clone(*constant, mapping);
  Operation *copy = builder.clone(*loop, mapping);
  func::ReturnOp::create(builder, loc, copy->getResults());

  builder.setInsertionPoint(loop);
  auto call = func::CallOp::create(builder, loc, outlined, arguments);
  loop->replaceAllUsesWith(call.getResults());
  loop->erase();
  return call;
}

/// Whether `loop` is one loop nest rather than a loop around several (a
/// training step's or a layer's loop): no scf.parallel inside, and at most
/// one loop directly in its body.
bool isOneNest(scf::ForOp loop) {
  if (loop->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return false;
  return llvm::count_if(loop.getBody()->getOperations(), [](Operation &op) {
           return isa<scf::ForOp, scf::WhileOp>(op);
         }) <= 1;
}

/// Whether `loop` may move into a function of its own: not when a memref
/// it returns could be stack memory of its body (a memref.alloca), which
/// the callee's return would free.
bool isMovable(Operation *loop) {
  bool returnsMemRef = llvm::any_of(loop->getResultTypes(), [](Type type) {
    return isa<BaseMemRefType>(type);
  });
  return !returnsMemRef ||
         !loop->walk([](memref::AllocaOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

/// The loop nests of `func` to outline: outermost scf.parallel ops, and
/// outermost scf.for nests (the loops inside a loop around several nests
/// are looked at instead).
SmallVector<Operation *> findLoopNests(func::FuncOp func) {
  SmallVector<Operation *> nests;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!isa<scf::ParallelOp>(op) && !(loop && isOneNest(loop)))
      return WalkResult::advance();
    if (isMovable(op))
      nests.push_back(op);
    return WalkResult::skip();
  });
  return nests;
}

struct FP8OutlineLoopNestsPass
    : fp8::impl::FP8OutlineLoopNestsBase<FP8OutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::CallOp> calls;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      // In order, after the function.
      Operation *after = func;
      for (auto [index, nest] : llvm::enumerate(findLoopNests(func))) {
        calls.push_back(outline(
            nest, (func.getSymName() + "_nest_" + Twine(index)).str(), after,
            symbols));
        after = symbols.lookup(calls.back().getCallee());
      }
    }
    // The layers of a model run the same loop nests on other buffers: one
    // function of each, so that LLVM compiles it once.
    llvm::StringMap<FlatSymbolRefAttr> first;
    for (func::CallOp call : calls) {
      auto outlined = symbols.lookup<func::FuncOp>(call.getCallee());
      auto [it, inserted] = first.try_emplace(fp8::printIdentity(outlined),
                                              call.getCalleeAttr());
      if (inserted)
        continue;
      call.setCalleeAttr(it->second);
      symbols.erase(outlined);
    }
  }
};
} // namespace
