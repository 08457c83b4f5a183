//===- TosaToLinalg.cpp - tosa-to-linalg as a partial conversion ----------===//
//
// Upstream's tosa-to-linalg is a full conversion: one TOSA op without a
// lowering (tosa.custom) fails the whole module. The same patterns under a
// partial conversion convert everything they can and leave the rest.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8TOSATOLINALG
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
struct FP8TosaToLinalgPass
    : fp8::impl::FP8TosaToLinalgBase<FP8TosaToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // A TOSA op is neither legal nor illegal: converted when a pattern
    // applies, left as it was when none does.
    target.addDynamicallyLegalDialect<tosa::TosaDialect>(
        [](Operation *) -> std::optional<bool> { return std::nullopt; });
    // What upstream leaves to tosa-to-arith, tosa-to-tensor and tosa-to-scf.
    target.addLegalOp<tosa::ApplyScaleOp, tosa::IfOp, tosa::ConstOp,
                      tosa::ConstShapeOp, tosa::WhileOp, tosa::ConcatOp,
                      tosa::SliceOp, tosa::ReshapeOp, tosa::PadOp>();

    TypeConverter converter;
    tosa::populateTosaTypeConversion(converter);
    RewritePatternSet patterns(context);
    tosa::populateTosaToLinalgConversionPatterns(converter, &patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
