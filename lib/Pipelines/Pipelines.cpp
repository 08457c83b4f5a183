//===- Pipelines.cpp - Named fp8 pass pipelines ---------------------------===//

#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8IMPORTTOSA
#define GEN_PASS_REGISTRATION
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

/// TOSA to linalg on tensors. MLIR 22's stock tosa-to-linalg-pipeline runs a
/// validation that rejects tosa.cast i64->f32 found in real exports; this
/// sequence converts the same graphs completely. Upstream's conversions to
/// linalg are full conversions that fail the module on one op they cannot
/// convert; their patterns run here as partial conversions, which leave
/// such an op as it was (DESIGN.md decision 8).
void mlir::fp8::buildTosaFrontEnd(OpPassManager &pm) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(tosa::createTosaOptionalDecompositionsPass());
  func.addPass(fp8::createFP8TosaToLinalgNamed());
  func.addPass(createCanonicalizerPass());
  func.addPass(tosa::createTosaInferShapesPass());
  func.addPass(tosa::createTosaMakeBroadcastablePass());
  func.addPass(fp8::createFP8TosaToLinalg());
  func.addPass(createTosaToArithPass());
  func.addPass(createTosaToTensorPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

namespace {
struct FP8ImportTosaPass : fp8::impl::FP8ImportTosaBase<FP8ImportTosaPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildTosaFrontEnd(pm);
    pm.getDependentDialects(registry);
  }

  /// The names of the TOSA ops in `module`, in walk order.
  static SmallVector<OperationName> tosaOps(ModuleOp module) {
    SmallVector<OperationName> names;
    module->walk([&](Operation *op) {
      if (isa_and_present<tosa::TosaDialect>(op->getDialect()))
        names.push_back(op->getName());
    });
    return names;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<OperationName> before = tosaOps(module);
    if (before.empty())
      return markAllAnalysesPreserved();
    // The front end runs on a copy, taken only when it converted a TOSA op.
    // Ops that nothing converts (tosa.custom) then leave the module exactly
    // as it was: the front end's canonicalization would otherwise rewrite
    // the rest of it on every run, and fp8-pipeline on its own output would
    // not be a fixed point (found by fp8-fuzz).
    OwningOpRef<ModuleOp> copy = module.clone();
    PassManager pm(&getContext(), ModuleOp::getOperationName());
    buildTosaFrontEnd(pm);
    if (failed(pm.run(*copy)))
      return signalPassFailure();
    if (tosaOps(*copy) == before)
      markAllAnalysesPreserved();
    else
      module.getBodyRegion().takeBody(copy->getBodyRegion());
    if (!complete)
      return;
    WalkResult left = module->walk([](Operation *op) {
      if (!isa_and_present<tosa::TosaDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitOpError()
          << "is left by the TOSA import (no conversion to linalg, arith or "
             "tensor takes it), and nothing lowers TOSA";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

void mlir::fp8::buildFP8Pipeline(OpPassManager &pm,
                                 const FP8PipelineOptions &options) {
  pm.addPass(createFP8ImportTosa());
  if (options.fuseAttention) {
    FP8FuseAttentionOptions fuse;
    fuse.remarks = options.remarks;
    pm.addPass(createFP8FuseAttention(fuse));
  }

  FP8QuantizeOptions quantize;
  quantize.scaling = options.scaling;
  quantize.format = options.format;
  quantize.history = options.history;
  quantize.algo = options.algo;
  quantize.margin = options.margin;
  quantize.powerOfTwo = options.powerOfTwo;
  quantize.granularity = options.granularity;
  quantize.exactScales = options.exactScales;
  quantize.wgradHigh = options.wgradHigh;
  quantize.state = options.state;
  quantize.fp8Attention = options.fp8Attention;
  quantize.attentionScales = options.attentionScales;
  quantize.keepFirstLast = options.keepFirstLast;
  quantize.minFlops = options.minFlops;
  quantize.exclude = llvm::to_vector(options.exclude);
  quantize.report = options.report;
  quantize.remarks = options.remarks;
  pm.addPass(createFP8Quantize(quantize));
  pm.addPass(createFP8Optimize());
  pm.addPass(createFP8Verify());
}

void mlir::fp8::registerFP8Pipelines() {
  registerFP8PipelinesPasses();
  PassPipelineRegistration<FP8PipelineOptions>(
      "fp8-pipeline",
      "The FP8 rewrite: TOSA to linalg, quantize GEMMs per the recipe, "
      "clean up, verify",
      buildFP8Pipeline);
}
