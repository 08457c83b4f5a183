//===- LowerToGPU.h - fp8-lower-to-gpu --------------------------*- C++ -*-===//

#ifndef FP8_PIPELINES_LOWERTOGPU_H
#define FP8_PIPELINES_LOWERTOGPU_H

#include "fp8/Pipelines/Accumulation.h"
#include "fp8/Pipelines/NVVMTargetOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::fp8 {

/// Options of `fp8-lower-to-gpu`.
struct LowerToGPUOptions : public NVVMTargetOptions<LowerToGPUOptions> {
  PassOptions::Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads of a block (along the innermost dimension, "
                     "several rows of it when it is shorter)"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> promote{
      *this, "promote",
      llvm::cl::desc("FP8 GEMMs add their wgmma partial sums into a separate "
                     "f32 accumulator every 128 K (DeepGEMM, TE's split "
                     "accumulator); off: one accumulator (fast accumulation)"),
      llvm::cl::init(true)};
  PassOptions::Option<Accumulation> accumulation{
      *this, "accumulation",
      llvm::cl::desc("How bf16 and f16 contractions that no wgmma kernel "
                     "takes accumulate: f32 (the default, as the wgmma "
                     "kernels do) or as-written (linalg's semantics)"),
      llvm::cl::init(Accumulation::F32), accumulationValues()};
};

/// fp8-lower-to-gpu: a whole module (fp8 ops and everything else) as one
/// GPU program through MLIR's own route: the fp8 ops as the project's
/// Hopper kernels (casts, scaling, wgmma GEMMs) launched from outlined host
/// functions (what no kernel takes: as linalg, the CPU path's lowering),
/// bufferization, linalg to
/// parallel loops mapped onto blocks and threads, kernel outlining,
/// convert-gpu-to-nvvm, gpu-module-to-binary, and a host in the LLVM
/// dialect that calls MLIR's GPU runtime ABI (libfp8_gpu_runtime.so) and
/// allocates managed memory.
void buildLowerToGPUPipeline(OpPassManager &pm,
                             const LowerToGPUOptions &options);

/// The pointer global through which a program fp8-lower-to-gpu compiled
/// keeps memref global `global` (delayed-scaling state, constants) in
/// managed memory across calls: null until the first call that uses it,
/// then the copy every function reads and writes (checkpoints read and set
/// the state there).
std::string getDeviceStateSlot(llvm::StringRef global);

/// math.round (halves away from zero) on f32 and f64 as trunc, abs, compare
/// and select, exact for every input, and math.copysign on the bits:
/// fp8-expand-math-for-gpu's forms for ops PTX has no instruction for
/// (upstream's expansion of math.round adds copysign(0.5, x) and truncates,
/// which rounds 0.49999997f to 1). Exposed for the test that runs them on
/// the CPU.
void populateExactRoundingPatterns(RewritePatternSet &patterns);

/// The dialect interfaces fp8-lower-to-gpu lowers through.
void registerLowerToGPUDialectExtensions(DialectRegistry &registry);

/// Registers `fp8-lower-to-gpu`.
void registerLowerToGPUPipeline();

} // namespace mlir::fp8

#endif // FP8_PIPELINES_LOWERTOGPU_H
