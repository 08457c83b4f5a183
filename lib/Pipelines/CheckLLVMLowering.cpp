//===- CheckLLVMLowering.cpp - Refuse what the LLVM lowering left ---------===//
//
// The conversions to the LLVM dialect are partial: an op nothing lowers is
// left in place, wrapped in unrealized casts, and the module fails later in
// translation to LLVM IR ("LLVM Translation failed for operation:
// builtin.unrealized_conversion_cast"), without naming what is missing. The
// pipelines end with this check instead.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8CHECKLLVMLOWERING
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// Ops that translate to LLVM IR (a GPU program's binaries and launches
/// through the GPU dialect's offloading translation).
bool isLowered(Operation *op) {
  return isa<ModuleOp, gpu::BinaryOp, gpu::LaunchFuncOp>(op) ||
         isa_and_present<LLVM::LLVMDialect, omp::OpenMPDialect>(
             op->getDialect());
}

struct FP8CheckLLVMLoweringPass
    : fp8::impl::FP8CheckLLVMLoweringBase<FP8CheckLLVMLoweringPass> {
  void runOnOperation() override {
    // An op nothing lowered is named first: the casts around it are only
    // its consequence.
    UnrealizedConversionCastOp cast;
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (isLowered(op))
        return WalkResult::advance();
      if (auto unrealized = dyn_cast<UnrealizedConversionCastOp>(op)) {
        if (!cast)
          cast = unrealized;
        return WalkResult::advance();
      }
      op->emitOpError() << "is left after the lowering to the LLVM dialect: "
                           "nothing lowers it";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    if (!cast)
      return;
    cast.emitOpError() << "is left after the lowering to the LLVM dialect: "
                       << "a value of type " << cast.getOperandTypes()
                       << " was not converted to " << cast.getResultTypes();
    signalPassFailure();
  }
};
} // namespace
