//===- TosaToLinalgNamed.cpp - tosa-to-linalg-named, partial --------------===//
//
// Upstream's tosa-to-linalg-named patterns under a partial conversion: a
// named TOSA op they cannot convert stays as it was instead of failing the
// module (see TosaToLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8TOSATOLINALGNAMED
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
struct FP8TosaToLinalgNamedPass
    : fp8::impl::FP8TosaToLinalgNamedBase<FP8TosaToLinalgNamedPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // The ops upstream's pass converts, converted when a pattern applies
    // and left as they were when none does; other TOSA ops are the next
    // passes'.
    target.addDynamicallyLegalOp<tosa::Conv2DOp, tosa::Conv3DOp,
                                 tosa::DepthwiseConv2DOp, tosa::MaxPool2dOp,
                                 tosa::AvgPool2dOp, tosa::MatMulOp,
                                 tosa::TransposeOp>(
        [](Operation *) -> std::optional<bool> { return std::nullopt; });

    TypeConverter converter;
    tosa::populateTosaTypeConversion(converter);
    RewritePatternSet patterns(context);
    tosa::populateTosaToLinalgNamedConversionPatterns(
        converter, &patterns, TosaToLinalgNamedOptions());
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
