//===- GpuModuleToBinary.cpp - gpu-module-to-binary that fails on errors --===//
//
// MLIR 22's NVVM serializer emits some errors without failing (a toolkit
// path that is not a directory), so a pipeline that printed an error could
// exit 0 with a binary made by another toolkit's ptxas.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"

#include <atomic>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8GPUMODULETOBINARY
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
struct FP8GpuModuleToBinaryPass
    : fp8::impl::FP8GpuModuleToBinaryBase<FP8GpuModuleToBinaryPass> {
  using Base::Base;

  OpPassManager serialization() const {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = format;
    binary.toolkitPath = toolkit;
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createGpuModuleToBinaryPass(binary));
    return pm;
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    serialization().getDependentDialects(registry);
  }

  void runOnOperation() override {
    std::atomic<bool> reported = false;
    // Seen, then passed on to the handler that prints it.
    ScopedDiagnosticHandler errors(&getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        reported = true;
      return failure();
    });
    OpPassManager pm = serialization();
    if (failed(runPipeline(pm, getOperation())) || reported)
      signalPassFailure();
  }
};
} // namespace
