//===- InputDialects.cpp - What compiled modules may contain --------------===//

#include "fp8/AOT/InputDialects.h"
#include "fp8/InitAllFP8.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

void fp8::aot::registerInputDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, LLVM::LLVMDialect, linalg::LinalgDialect,
                  ml_program::MLProgramDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, tosa::TosaDialect,
                  vector::VectorDialect>();
  registerAllFP8Dialects(registry);
}

bool fp8::aot::isElidedResource(Attribute attr) {
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(attr);
  return resource && !resource.getRawHandle().getBlob();
}

LogicalResult fp8::aot::checkNoElidedResources(ModuleOp module) {
  WalkResult walk = module.walk([](Operation *op) {
    WalkResult found = op->getAttrDictionary().walk([](Attribute attr) {
      return isElidedResource(attr) ? WalkResult::interrupt()
                                    : WalkResult::advance();
    });
    if (!found.wasInterrupted())
      return WalkResult::advance();
    emitError(op->getLoc())
        << "the values of this '" << op->getName()
        << "' are elided in the file (dense_resource<__elided__>): a "
           "compiled library cannot hold them; export the graph with its "
           "weights, or take them as arguments or ml_program globals";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}
