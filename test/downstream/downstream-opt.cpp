//===- downstream-opt.cpp - A compiler linking fp8-mlir as a package ------===//

#include "fp8/InitAllFP8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect>();
  mlir::fp8::registerAllFP8Dialects(registry);
  mlir::fp8::registerAllFP8Passes();
  mlir::registerCanonicalizerPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "downstream compiler\n", registry));
}
