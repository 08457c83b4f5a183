//===- InitAllFP8.cpp - Register the fp8 dialect and passes ---------------===//

#include "fp8/InitAllFP8.h"

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
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::fp8::registerAllFP8Dialects(DialectRegistry &registry) {
  registry.insert<FP8Dialect>();
  // Data-parallel programs: grids and collectives, and what they lower to.
  registry.insert<DLTIDialect, mpi::MPIDialect, shard::ShardDialect>();
  // What fp8-lower-to-cpu's threads leave in its output, so that fp8-opt
  // reads back what it writes.
  registry.insert<omp::OpenMPDialect>();
  registerLowerToCPUDialectExtensions(registry);
  registerFP8ToNVVMDialectExtensions(registry);
  registerLowerToGPUDialectExtensions(registry);
}

void mlir::fp8::registerAllFP8Passes() {
  registerFP8Passes();
  registerFP8ConversionPasses();
  registerFP8Pipelines();
  registerLowerToCPUPipeline();
  registerLowerToNVVMPipeline();
  registerLowerToGPUPipeline();
  registerLowerGemmToNVVMPipeline();
}
