//===- Pipelines.h - Named fp8 pass pipelines -------------------*- C++ -*-===//

#ifndef FP8_PIPELINES_PIPELINES_H
#define FP8_PIPELINES_PIPELINES_H

#include "fp8/Pipelines/Accumulation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::fp8 {

#define GEN_PASS_DECL
#include "fp8/Pipelines/Passes.h.inc"

/// Options of `fp8-pipeline`: the recipe and the GEMM policy, as in
/// fp8-quantize.
struct FP8PipelineOptions : public PassPipelineOptions<FP8PipelineOptions> {
  PassOptions::Option<std::string> scaling{
      *this, "scaling",
      llvm::cl::desc("delayed | current (default: delayed per tensor, "
                     "current for finer granularities)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("hybrid | e4m3 (default: hybrid per tensor, e4m3 for "
                     "finer granularities)"),
      llvm::cl::init("")};
  PassOptions::Option<unsigned> history{
      *this, "history", llvm::cl::desc("Amax history length"),
      llvm::cl::init(1024)};
  PassOptions::Option<std::string> algo{
      *this, "algo", llvm::cl::desc("max | most_recent"),
      llvm::cl::init("max")};
  PassOptions::Option<int> margin{
      *this, "margin", llvm::cl::desc("Scale headroom in powers of two"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> powerOfTwo{
      *this, "power-of-two", llvm::cl::desc("Power-of-two scales"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> granularity{
      *this, "granularity",
      llvm::cl::desc("tensor | row | block | mx: what one scale covers"),
      llvm::cl::init("tensor")};
  PassOptions::Option<bool> exactScales{
      *this, "exact-scales",
      llvm::cl::desc("granularity=row|block: f32 scales, not powers of two"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> wgradHigh{
      *this, "wgrad-high",
      llvm::cl::desc("granularity=row: weight gradients in high precision"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> state{
      *this, "state", llvm::cl::desc("globals | arguments"),
      llvm::cl::init("globals")};
  PassOptions::Option<bool> fp8Attention{
      *this, "fp8-attention",
      llvm::cl::desc("Also FP8: activation x activation GEMMs, and fused "
                     "attention inside (query and key in E4M3 with one scale "
                     "per token, the value with a delayed scale, P in E4M3 "
                     "per key tile)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> attentionScales{
      *this, "attention-scales",
      llvm::cl::desc("fp8-attention's scales: token (query and key one per "
                     "token, the value a delayed one: causal) | head (all "
                     "three one per batch and head from their own amax: "
                     "current scaling, not causal)"),
      llvm::cl::init("token")};
  PassOptions::Option<bool> keepFirstLast{
      *this, "keep-first-last",
      llvm::cl::desc("Keep the first and last GEMM in high precision"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> minFlops{
      *this, "min-flops",
      llvm::cl::desc("Keep GEMMs with 2*M*N*K below this in high precision"),
      llvm::cl::init(0)};
  PassOptions::ListOption<std::string> exclude{
      *this, "exclude",
      llvm::cl::desc("Regexes on function names / locations to keep")};
  PassOptions::Option<std::string> report{
      *this, "report", llvm::cl::desc("JSON report file"), llvm::cl::init("")};
  PassOptions::Option<bool> remarks{
      *this, "remarks", llvm::cl::desc("Explain decisions with remarks"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> fuseAttention{
      *this, "fuse-attention",
      llvm::cl::desc("Replace attention written op by op with fp8.attention "
                     "(fp8-fuse-attention)"),
      llvm::cl::init(true)};
};

/// TOSA to linalg on tensors (a no-op on linalg input), then cleanup.
void buildTosaFrontEnd(OpPassManager &pm);

/// fp8-import-tosa, fp8-quantize, fp8-optimize, fp8-verify.
void buildFP8Pipeline(OpPassManager &pm, const FP8PipelineOptions &options);

/// Registers `fp8-pipeline` and `fp8-import-tosa`.
void registerFP8Pipelines();

} // namespace mlir::fp8

#endif // FP8_PIPELINES_PIPELINES_H
