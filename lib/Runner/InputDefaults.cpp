//===- InputDefaults.cpp - How a graph's inputs are drawn -----------------===//

#include "fp8/Runner/InputDefaults.h"
#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Runner/Probes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;

/// Whether the boolean `root` is the condition of a select (arith.select,
/// tosa.select) whose result reaches an exponential (a softmax), followed
/// through views, casts and the bodies of linalg ops. `sawSelect` tells
/// whether it reached a select at all.
static bool selectsSoftmaxInput(Value root, bool &sawSelect) {
  SmallVector<std::pair<Value, bool>> worklist{{root, false}};
  DenseSet<Value> seen;
  sawSelect = false;
  while (!worklist.empty() && seen.size() < 1024) {
    auto [value, selected] = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (selected && isa<math::ExpOp, math::Exp2Op, tosa::ExpOp>(user))
        return true;
      bool isCondition = isa<arith::SelectOp, tosa::SelectOp>(user) &&
                         use.getOperandNumber() == 0;
      sawSelect |= isCondition;
      bool next = selected || isCondition;
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
        if (linalgOp.isDpsInput(&use))
          worklist.push_back({linalgOp.getMatchingBlockArgument(&use), next});
        continue;
      }
      if (auto yield = dyn_cast<linalg::YieldOp>(user)) {
        worklist.push_back(
            {yield->getParentOp()->getResult(use.getOperandNumber()), next});
        continue;
      }
      for (Value result : user->getResults())
        worklist.push_back({result, next});
    }
  }
  return false;
}

llvm::StringMap<InputDefault>
runner::chooseInputDefaults(ModuleOp module, func::FuncOp func) {
  llvm::StringMap<InputDefault> defaults;
  // The analysis reports bad fp8.* attributes itself; the pipeline will too.
  ScopedDiagnosticHandler quiet(module.getContext(),
                                [](Diagnostic &) { return success(); });
  FailureOr<SmallVector<GemmInfo, 0>> gemms = analyzeGemms(module, {});
  // A weight in every GEMM that reads it (x in a forward GEMM and in a
  // weight-gradient one is an activation, whatever the latter says).
  llvm::StringSet<> notWeights;
  if (succeeded(gemms))
    for (const GemmInfo &gemm : *gemms)
      for (const GemmOperand *operand : {&gemm.lhs, &gemm.rhs}) {
        if (!operand->value ||
            gemm.op->getParentOfType<func::FuncOp>() != func)
          continue;
        if (operand->role != OperandRole::Weight ||
            ShapedType::isDynamic(gemm.k) || gemm.k <= 0) {
          notWeights.insert(operand->origin);
          continue;
        }
        if (!defaults.count(operand->origin))
          defaults[operand->origin] = {
              1.0 / std::sqrt(double(gemm.k)), std::nullopt,
              "weight, K = " + std::to_string(gemm.k)};
      }
  for (const auto &name : notWeights)
    defaults.erase(name.getKey());
  for (BlockArgument arg : func.getArguments()) {
    Type element = getElementTypeOrSelf(arg.getType());
    if (!element.isSignlessInteger() || element.isInteger(1))
      continue;
    if (std::optional<int64_t> extent = findIndexedExtent(arg))
      defaults["arg" + std::to_string(arg.getArgNumber())] = {
          std::nullopt, extent,
          "indexes a dimension of " + std::to_string(*extent)};
  }
  auto chooseMask = [](Value value) {
    bool sawSelect;
    auto shaped = dyn_cast<ShapedType>(value.getType());
    bool causal = selectsSoftmaxInput(value, sawSelect) && shaped &&
                  shaped.getRank() >= 2;
    InputDefault mask;
    mask.mask = causal ? InputDefault::Mask::Causal
                       : InputDefault::Mask::AllTrue;
    mask.why = causal      ? "selects what a softmax reads"
               : sawSelect ? "selects, but not before a softmax"
                           : "a boolean";
    return mask;
  };
  for (BlockArgument arg : func.getArguments())
    if (getElementTypeOrSelf(arg.getType()).isInteger(1))
      defaults["arg" + std::to_string(arg.getArgNumber())] = chooseMask(arg);
  // Boolean globals (a causal mask exported without its values): the
  // first load the function reads decides.
  func.walk([&](ml_program::GlobalLoadOp load) {
    if (getElementTypeOrSelf(load.getType()).isInteger(1))
      defaults.try_emplace(
          ("global @" + load.getGlobal().getLeafReference().getValue()).str(),
          chooseMask(load.getResult()));
  });
  return defaults;
}

void runner::fillMask(HostTensor &tensor, bool causal) {
  ArrayRef<int64_t> shape = tensor.getShape();
  int64_t keys = shape.empty() ? 1 : shape.back();
  int64_t queries = shape.size() < 2 ? 1 : shape[shape.size() - 2];
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
    int64_t key = i % keys, query = (i / keys) % queries;
    tensor.set(i, !causal || key <= query + keys - queries ? 1 : 0);
  }
}

