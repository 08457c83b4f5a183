//===- InitAllFP8.h - Register the fp8 dialect and passes -------*- C++ -*-===//
//
// The entry points a downstream compiler calls to use fp8-mlir:
//
//   mlir::DialectRegistry registry;
//   mlir::fp8::registerAllFP8Dialects(registry);
//   mlir::fp8::registerAllFP8Passes();
//
//===----------------------------------------------------------------------===//

#ifndef FP8_INITALLFP8_H
#define FP8_INITALLFP8_H

#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Pipelines/LowerGemmToNVVM.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/LowerToGPU.h"
#include "fp8/Pipelines/LowerToNVVM.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::fp8 {

inline void registerAllFP8Dialects(DialectRegistry &registry) {
  registry.insert<FP8Dialect>();
  // Data-parallel programs: grids and collectives, and what they lower to.
  registry.insert<DLTIDialect, mpi::MPIDialect, shard::ShardDialect>();
  registerLowerToCPUDialectExtensions(registry);
  registerFP8ToNVVMDialectExtensions(registry);
  registerLowerToGPUDialectExtensions(registry);
}

inline void registerAllFP8Passes() {
  registerFP8Passes();
  registerFP8ConversionPasses();
  registerFP8Pipelines();
  registerLowerToCPUPipeline();
  registerLowerToNVVMPipeline();
  registerLowerToGPUPipeline();
  registerLowerGemmToNVVMPipeline();
}

} // namespace mlir::fp8

#endif // FP8_INITALLFP8_H
