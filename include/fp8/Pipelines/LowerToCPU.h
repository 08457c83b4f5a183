//===- LowerToCPU.h - fp8-lower-to-cpu --------------------------*- C++ -*-===//

#ifndef FP8_PIPELINES_LOWERTOCPU_H
#define FP8_PIPELINES_LOWERTOCPU_H

#include "fp8/Pipelines/Accumulation.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::fp8 {

/// Options of `fp8-lower-to-cpu`.
struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile and vectorize linalg ops "
                     "(fp8-tile-and-vectorize-for-cpu); off: scalar loops"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the outer tiles on every core (OpenMP: the program "
                     "then needs LLVM's libomp)"),
      llvm::cl::init(true)};
  PassOptions::Option<Accumulation> accumulation{
      *this, "accumulation",
      llvm::cl::desc("How bf16 and f16 contractions accumulate: f32 (the "
                     "default: fp8-widen-accumulation, as the GPU path "
                     "computes them) or as-written (linalg's semantics)"),
      llvm::cl::init(Accumulation::F32), accumulationValues()};
};

/// fp8-lower-to-cpu: fp8 ops (and func, linalg, tensor, arith, math,
/// ml_program) on tensors down to the LLVM dialect, runnable by mlir-runner:
/// fp8-widen-accumulation (unless accumulation=as-written),
/// convert-fp8-to-linalg, fp8-expand-float8, One-Shot Bufferize across
/// function boundaries, buffer deallocation, tiling and vectorization
/// (fp8-tile-and-vectorize-for-cpu), OpenMP, loops, and the LLVM
/// conversions.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const LowerToCPUOptions &options);
void buildLowerToCPUPipeline(OpPassManager &pm);

/// The front of fp8-lower-to-cpu, shared with fp8-lower-to-gpu: fp8 ops to
/// linalg (convert-fp8-to-linalg, fp8-expand-float8), One-Shot Bufferize
/// across function boundaries (identity layouts) and ownership-based
/// buffer deallocation; with `packContractionsForCPU`, contractions' B
/// operands packed for the CPU's register tiles first; `forGPU`, upstream's
/// elementwise fusion (a producer with one use into its consumer: one loop
/// nest, the same arithmetic) and fp8-split-reductions-for-gpu first.
void addTensorToBufferPasses(OpPassManager &pm, bool packContractionsForCPU,
                             bool forGPU = false);

/// Math ops that have no LLVM intrinsic as calls, for CPU code (the CPU
/// program, the GPU program's host): libm (fp8-math-to-libm) for erf and
/// the like, upstream's outlined implementation for math.ipowi (control
/// flow in cf, so after convert-scf-to-cf too). Before the LLVM
/// conversions.
void addMathToCallsPasses(OpPassManager &pm);

/// Registers `fp8-lower-to-cpu`.
void registerLowerToCPUPipeline();

/// Declares what mpi.allreduce does to memory (MLIR 22 does not), so that
/// buffer deallocation accepts data-parallel programs.
void registerMPIMemoryEffects(DialectRegistry &registry);

/// The external interface models the CPU pipeline needs in the context:
/// bufferization of arith, linalg, tensor, scf, func and ml_program,
/// buffer deallocation, and the ConvertToLLVMPatternInterface of every
/// dialect its one convert-to-llvm lowers.
void registerLowerToCPUDialectExtensions(DialectRegistry &registry);

} // namespace mlir::fp8

#endif // FP8_PIPELINES_LOWERTOCPU_H
