//===- fp8-opt.cpp - fp8-mlir optimizer driver ----------------------------===//
//
// mlir-opt with the fp8 dialect and passes, plus the upstream dialects and
// passes that real transformer graphs use (linalg on tensors, TOSA, and the
// dialects the lowerings produce). Only what is needed is linked.
//
//===----------------------------------------------------------------------===//

#include "fp8/AOT/InputDialects.h"
#include "fp8/InitAllFP8.h"

#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace {
/// The upstream passes fp8-mlir's pipelines are made of, to run or inspect
/// one at a time. Registered one by one, from the headers that declare them:
/// mlir/Conversion/Passes.h registers every conversion but costs this file
/// 20 s of compile time.
void registerUpstreamPasses() {
  using mlir::registerPass;
  mlir::registerTransformsPasses();
  mlir::registerLinalgPasses();
  mlir::tosa::registerTosaPasses();
  mlir::bufferization::registerBufferizationPasses();
  registerPass([] { return mlir::tosa::createTosaToLinalg(); });
  registerPass([] { return mlir::tosa::createTosaToLinalgNamed(); });
  registerPass([] { return mlir::createTosaToArithPass(); });
  registerPass([] { return mlir::createTosaToTensorPass(); });
  mlir::tosa::registerTosaToLinalgPipelines();
  // The steps of fp8-lower-to-gpu.
  registerPass([] { return mlir::createConvertParallelLoopToGpuPass(); });
  mlir::registerGpuMapParallelLoopsPass();
  mlir::registerGpuKernelOutliningPass();
  mlir::registerGpuNVVMAttachTarget();
  registerPass([] { return mlir::createConvertGpuOpsToNVVMOps(); });
  mlir::registerGpuModuleToBinaryPass();
  registerPass([] { return mlir::createGpuToLLVMConversionPass(); });
  registerPass([] { return mlir::createReconcileUnrealizedCastsPass(); });
}
} // namespace

int main(int argc, char **argv) {
  // The input dialects (linalg, TOSA, ml_program, ...) and what the
  // lowerings produce; registerAllFP8Dialects brings the GPU, NVVM and LLVM
  // dialects with their translations.
  mlir::DialectRegistry registry;
  mlir::fp8::aot::registerInputDialects(registry);
  mlir::fp8::registerAllFP8Dialects(registry);
  registerUpstreamPasses();
  mlir::fp8::registerAllFP8Passes();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fp8-mlir optimizer driver\n", registry));
}
