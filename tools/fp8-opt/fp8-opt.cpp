//===- fp8-opt.cpp - fp8-mlir optimizer driver ----------------------------===//
//
// mlir-opt with the fp8 dialect and passes, plus the upstream dialects and
// passes that real transformer graphs use (linalg on tensors, TOSA, and the
// dialects the lowerings produce). Only what is needed is linked.
//
//===----------------------------------------------------------------------===//

#include "fp8/InitAllFP8.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace {
void registerUpstreamDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::linalg::LinalgDialect,
                  mlir::ml_program::MLProgramDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::NVVM::NVVMDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                  mlir::tosa::TosaDialect, mlir::vector::VectorDialect>();
}

void registerUpstreamPasses() {
  mlir::registerTransformsPasses();
  mlir::registerLinalgPasses();
  mlir::tosa::registerTosaPasses();
  mlir::bufferization::registerBufferizationPasses();
  mlir::registerTosaToLinalg();
  mlir::registerTosaToLinalgNamed();
  mlir::registerTosaToArithPass();
  mlir::registerTosaToTensorPass();
  mlir::tosa::registerTosaToLinalgPipelines();
  // The steps of fp8-lower-to-gpu, to run or inspect one at a time.
  mlir::registerConvertParallelLoopToGpuPass();
  mlir::registerGpuMapParallelLoopsPass();
  mlir::registerGpuKernelOutliningPass();
  mlir::registerGpuNVVMAttachTarget();
  mlir::registerConvertGpuOpsToNVVMOps();
  mlir::registerGpuModuleToBinaryPass();
  mlir::registerGpuToLLVMConversionPass();
  mlir::registerReconcileUnrealizedCastsPass();
}
} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registerUpstreamDialects(registry);
  mlir::fp8::registerAllFP8Dialects(registry);
  registerUpstreamPasses();
  mlir::fp8::registerAllFP8Passes();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fp8-mlir optimizer driver\n", registry));
}
