//===- Trainer.h - The training loop ------------------------------*- C++
//-*-===//
//
// Calls a run's compiled step once per optimizer step on batches drawn from
// the step number, carries the parameters, moments and scaling state, takes
// the validation loss, records per-tensor statistics, watches for loss
// spikes and non-finite values, and checkpoints.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TRAIN_TRAINER_H
#define FP8_TRAIN_TRAINER_H

#include "fp8/Runner/Runner.h"

#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::fp8::train {

struct Contract;
struct Corpus;
struct Run;

/// The most optimizer steps a training takes: the step function gets the
/// step number as an f32 (AdamW's bias correction), exact up to 2^24.
constexpr uint64_t kMaxSteps = uint64_t(1) << 24;

/// What a loss spike or a non-finite loss or gradient does to its run.
enum class OnSpike { Continue, Stop, Skip };

/// A disturbance injected into every run at one step, to see what breaks
/// which scaling recipe (issue 35's stress run).
struct Stress {
  enum class Kind {
    None,
    /// That step's update is `factor` times larger: new = old + f (new -
    /// old), a learning-rate spike for one AdamW step (the decay too).
    LearningRate,
    /// Every 64th channel of each norm gain (the parameters initialized to
    /// ones) is multiplied by `factor` before that step and stays so: the
    /// outlier features of large transformers, in a few fixed channels.
    Outliers
  };
  Kind kind = Kind::None;
  uint64_t step = 0;
  double factor = 1.0;
};

/// `lr:F` or `outliers:F` at `step`; an error for anything else.
FailureOr<Stress> parseStress(StringRef text, uint64_t step,
                              std::string &error);

struct TrainOptions {
  /// Optimizer steps, counted from the start of the training.
  uint64_t steps = 100;
  /// Seed of the initial weights and of the batches.
  uint64_t seed = 1;
  /// Validation loss every N steps and at the last (0: steps / 10).
  uint64_t valEvery = 0;
  unsigned valBatches = 16;
  OnSpike onSpike = OnSpike::Continue;
  /// A loss over spikeFactor times the median of the last spikeWindow
  /// losses is a spike.
  double spikeFactor = 3.0;
  unsigned spikeWindow = 20;
  /// Where to save checkpoints (none when empty): at the end and every
  /// checkpointEvery steps.
  std::string checkpointDir;
  uint64_t checkpointEvery = 0;
  /// Injected into every run (none by default).
  Stress stress;
  /// Where events (spikes, non-finite values) are reported; none when null.
  raw_ostream *log = nullptr;
  /// Also report progress lines on `log`.
  bool progress = false;
};

/// The initial parameters, the same for every run: "zeros", "ones", or
/// N(0, std^2) from `seed` (std 0.02 when the contract does not say).
SmallVector<runner::HostTensor> initialParameters(const Contract &contract,
                                                  uint64_t seed);

/// Starts `run` from `initial` parameters and zero moments.
void startRun(Run &run, ArrayRef<runner::HostTensor> initial);

/// The step's inputs in the contract's order: a batch (tokens and
/// targets), loss scale 1, the step count, the parameters and the AdamW
/// moments.
SmallVector<runner::HostTensor>
stepInputs(const Contract &contract, runner::HostTensor tokens,
           runner::HostTensor targets, uint64_t step,
           ArrayRef<runner::HostTensor> parameters,
           ArrayRef<runner::HostTensor> moment1,
           ArrayRef<runner::HostTensor> moment2);

/// Trains `run` from `run.firstStep` to `options.steps`.
LogicalResult trainRun(Run &run, const Contract &contract, const Corpus &data,
                       const TrainOptions &options, std::string &error);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_TRAINER_H
