//===- Run.h - One recipe's compiled step and training state ----*- C++ -*-===//
//
// A recipe is how the step is compiled (FP32, BF16, or through fp8-pipeline
// with given options); a run is a recipe's compiled step with the state
// carried from step to step (parameters, AdamW moments, and the FP8 scaling
// state in the compiled module's globals) and what training recorded.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TRAIN_RUN_H
#define FP8_TRAIN_RUN_H

#include "fp8/Runner/Probes.h"
#include "fp8/Runner/Runner.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fp8::train {

struct Contract;

struct Recipe {
  std::string label;
  enum Kind { FP32, BF16, FP8 } kind;
  /// fp8-pipeline options (FP8 only).
  std::string pipeline;
};

/// Parses a comma-separated list of recipes: fp32, bf16, delayed, current,
/// or LABEL=OPTIONS (fp8-pipeline options).
FailureOr<SmallVector<Recipe>> parseRecipes(StringRef list, std::string &error);

/// One run's state and history.
struct Run {
  Recipe recipe;
  /// Shared by every seed of the recipe: compiled once.
  std::shared_ptr<runner::CompiledFunction> fn;
  /// The seed of the initial weights and batches; `name` is how events and
  /// progress lines call the run (the recipe's label when empty).
  uint64_t seed = 1;
  std::string name;
  SmallVector<runner::QuantizeProbe> probes;
  llvm::StringMap<RankedTensorType> scalingState;
  SmallVector<runner::HostTensor> parameters, moment1, moment2;
  struct Row {
    uint64_t step;
    double loss, gradNorm, valLoss, seconds;
  };
  std::vector<Row> rows;
  struct TensorRow {
    uint64_t step;
    std::string tensor;
    double amax, scale, saturated, flushed;
    /// Of the quantization's input this step (runner::momentKurtosis).
    double kurtosis = NAN;
  };
  std::vector<TensorRow> tensorRows;
  std::vector<std::string> events;
  uint64_t firstStep = 1, lastStep = 0;
  bool stopped = false;
  double finalLoss = NAN, finalValLoss = NAN;
  /// The standard error of the final validation loss over its batches
  /// (NaN with one batch): the validation noise, next to the seeds'.
  double finalValStdErr = NAN;
  /// The all-reduces (MAX) that fp8-pipeline added for amaxes: one step's.
  unsigned amaxCollectives = 0;

  StringRef getName() const { return name.empty() ? recipe.label : name; }
  /// The step at which the run diverged: stopped (--on-spike=stop), or its
  /// first non-finite loss, or its last when the final validation loss is
  /// not finite. Its results then enter no mean.
  std::optional<uint64_t> divergedAt() const;
};

/// The step of `run.recipe` in `module`, transformed as the recipe says
/// (widened, as written, or through fp8-pipeline): the module to compile.
/// Sets the run's probes, scaling state and collective count.
FailureOr<OwningOpRef<ModuleOp>> transformForRecipe(ModuleOp module,
                                                    const Contract &contract,
                                                    Run &run,
                                                    std::string &error);

/// Compiles `module` (transformForRecipe's) into `run.fn`.
LogicalResult compileRun(ModuleOp module, const Contract &contract, Run &run,
                         const runner::CompileOptions &options,
                         std::string &error);

/// A copy of the FP8 scaling state, to undo a step (validation, skip).
using StateSnapshot = runner::CompiledFunction::GlobalSnapshot;

FailureOr<StateSnapshot> snapshotState(const Run &run, std::string &error);
LogicalResult restoreState(Run &run, const StateSnapshot &state,
                           std::string &error);

/// A digest of what must be the same on every rank after a run: the FP8
/// scaling state (amax histories, scales) and the parameters, bit for bit.
FailureOr<uint64_t> digestState(const Run &run, std::string &error);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_RUN_H
