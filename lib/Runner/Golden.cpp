//===- Golden.cpp - The graph evaluated in wider floats -------------------===//

#include "fp8/Runner/Golden.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;

Type runner::getGoldenType(Type type, FloatType target) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return floatType.getWidth() > 8 && floatType.getWidth() < target.getWidth()
               ? target
               : type;
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(getGoldenType(shaped.getElementType(), target));
  if (auto function = dyn_cast<FunctionType>(type)) {
    auto widen = [&](Type t) { return getGoldenType(t, target); };
    return FunctionType::get(type.getContext(),
                             llvm::map_to_vector(function.getInputs(), widen),
                             llvm::map_to_vector(function.getResults(), widen));
  }
  return type;
}

namespace {
class Widener {
public:
  explicit Widener(FloatType target) : target(target) {}

  Type widen(Type type) { return getGoldenType(type, target); }

  /// A float or dense float attribute with the widened type, values exact.
  Attribute widen(Attribute attr) {
    if (auto floatAttr = dyn_cast<FloatAttr>(attr)) {
      Type type = widen(floatAttr.getType());
      return type == floatAttr.getType() ? attr : FloatAttr::get(type, convert(floatAttr.getValue()));
    }
    auto dense = dyn_cast<DenseFPElementsAttr>(attr);
    if (!dense)
      return attr;
    auto type = cast<ShapedType>(widen(dense.getType()));
    if (type == dense.getType())
      return attr;
    return dense.mapValues(type.getElementType(), [&](const APFloat &value) {
      return convert(value).bitcastToAPInt();
    });
  }


private:
  APFloat convert(APFloat value) {
    bool losesInfo;
    value.convert(target.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    return value;
  }

  FloatType target;
};
} // namespace

FailureOr<bool> runner::widenFloats(ModuleOp module, FloatType target,
                                    std::string &error) {
  Widener widener(target);
  bool changed = false;
  auto retype = [&](Value value) {
    Type type = widener.widen(value.getType());
    if (type != value.getType()) {
      value.setType(type);
      changed = true;
    }
  };
  auto rewriteAttr = [&](Operation *op, StringRef name) {
    if (Attribute attr = op->getAttr(name)) {
      Attribute wide = widener.widen(attr);
      if (wide != attr) {
        op->setAttr(name, wide);
        changed = true;
      }
    }
  };
  module.walk([&](Operation *op) {
    for (Value result : op->getResults())
      retype(result);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          retype(arg);
    if (auto function = dyn_cast<FunctionOpInterface>(op)) {
      Type type = widener.widen(function.getFunctionType());
      if (type != function.getFunctionType()) {
        function.setType(type);
        changed = true;
      }
    }
    if (isa<arith::ConstantOp>(op))
      rewriteAttr(op, "value");
    if (auto global = dyn_cast<ml_program::GlobalOp>(op)) {
      global.setType(widener.widen(global.getType()));
      rewriteAttr(op, "value");
    }
    if (auto global = dyn_cast<memref::GlobalOp>(op)) {
      global.setType(cast<MemRefType>(widener.widen(global.getType())));
      rewriteAttr(op, "initial_value");
    }
  });
  // extf / truncf between types that are now the same are identities.
  SmallVector<Operation *> identities;
  module.walk([&](Operation *op) {
    if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
        op->getOperand(0).getType() == op->getResult(0).getType())
      identities.push_back(op);
  });
  for (Operation *op : identities) {
    op->getResult(0).replaceAllUsesWith(op->getOperand(0));
    op->erase();
  }

  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  if (failed(verify(module))) {
    error = "the graph widened to " + llvm::formatv("{0}", target).str() +
            " does not verify:\n" + diagnostics;
    return failure();
  }
  return changed;
}
