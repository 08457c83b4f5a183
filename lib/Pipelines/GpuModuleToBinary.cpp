//===- GpuModuleToBinary.cpp - gpu-module-to-binary that fails on errors --===//
//
// MLIR 22's NVVM serializer emits some errors without failing (a toolkit
// path that is not a directory), so a pipeline that printed an error could
// exit 0 with a binary made by another toolkit's ptxas. One of those errors
// is no error for most modules: a toolkit without libdevice (a bare ptxas
// install) only matters to kernels that call libdevice's __nv_* functions.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"

#include <atomic>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8GPUMODULETOBINARY
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// True when a kernel module calls into libdevice: an external __nv_*
/// function is left for the serializer to link.
bool callsLibdevice(ModuleOp module) {
  bool calls = false;
  module.walk([&](gpu::GPUModuleOp kernels) {
    for (auto func : kernels.getOps<LLVM::LLVMFuncOp>())
      if (func.isExternal() && func.getName().starts_with("__nv_"))
        calls = true;
  });
  return calls;
}

/// MLIR 22's words when the toolkit has no nvvm/libdevice/libdevice.10.bc.
bool isMissingLibdevice(Diagnostic &diag) {
  return llvm::StringRef(diag.str()).starts_with("LibDevice path:");
}

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
    // Upstream goes on without libdevice; that is right, and its error is
    // noise, unless a kernel calls it.
    bool needsLibdevice = callsLibdevice(getOperation());
    // Seen, then passed on to the handler that prints it.
    ScopedDiagnosticHandler errors(&getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      if (!needsLibdevice && isMissingLibdevice(diag))
        return success();
      reported = true;
      return failure();
    });
    OpPassManager pm = serialization();
    if (failed(runPipeline(pm, getOperation())) || reported)
      signalPassFailure();
  }
};
} // namespace
