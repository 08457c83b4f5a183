//===- MathToLibm.cpp - libm calls for math ops without an LLVM intrinsic -===//
//
// convert-math-to-llvm lowers a math op to an LLVM intrinsic where LLVM has
// one; the others (erf above all: exact GELU) would stay math ops in an LLVM
// dialect module. Upstream's math-to-libm patterns call libm for them, and
// for many ops LLVM handles better (floor, round, ... are instructions), so
// they are applied here to the ops without an intrinsic only.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8MATHTOLIBM
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// Whether libm is called for `op`: an op LLVM has no intrinsic for, on a
/// float type libm (or the patterns' promotion to f32) covers.
bool callsLibm(Operation *op) {
  if (!isa<math::ErfOp, math::ErfcOp, math::CbrtOp, math::AcoshOp,
           math::AsinhOp, math::AtanhOp>(op))
    return false;
  // Scalars and vectors (the patterns' domain; tensors are bufferized
  // before the pipelines get here).
  Type type = op->getResult(0).getType();
  if (!type.isIntOrFloat() && !isa<VectorType>(type))
    return false;
  Type element = getElementTypeOrSelf(type);
  return element.isF16() || element.isBF16() || element.isF32() ||
         element.isF64();
}

struct FP8MathToLibmPass : fp8::impl::FP8MathToLibmBase<FP8MathToLibmPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Everything is legal but the ops libm is called for (the patterns'
    // scalar and f32 forms of them included, until they are calls).
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !callsLibm(op); });
    RewritePatternSet patterns(context);
    populateMathToLibmConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::fp8::addMathToCallsPasses(OpPassManager &pm) {
  pm.addPass(fp8::createFP8MathToLibm());
  // math.ipowi only: math.fpowi stays for convert-math-to-llvm's llvm.powi
  // (no exponent is this wide), and math.ctlz is an instruction.
  ConvertMathToFuncsOptions funcs;
  funcs.minWidthOfFPowIExponent = std::numeric_limits<unsigned>::max();
  pm.addPass(createConvertMathToFuncs(funcs));
}
