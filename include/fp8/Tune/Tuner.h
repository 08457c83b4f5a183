//===- Tuner.h - The most FP8 a graph takes under a budget -------*- C++ -*-===//
//
// fp8-tune's library: measures what each candidate GEMM costs in FP8 (the
// SQNR of every output against the golden run with that GEMM alone in FP8,
// and with all of them), predicts the noise of any subset by adding noise
// powers, chooses the subset with the largest FP8 share of GEMM FLOPs that
// meets the budget, verifies it with a full run (dropping the worst
// contributor while the measurement misses), and measures the choice again
// on fresh inputs. The graph is compiled twice in all: the golden version
// and one where every candidate's precision is chosen at run time
// (fp8-tune-variants).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TUNE_TUNER_H
#define FP8_TUNE_TUNER_H

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Runner/Runner.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::fp8::tune {

struct TuneOptions {
  /// Every output's SQNR against the golden run must be at least this.
  double budgetDb = 25;
  /// And, when set, the SQNR of every output's worst row.
  std::optional<double> perRowDb;
  /// The calibration inputs must beat the budgets by this much, so that
  /// inputs the choice was not made on (their SQNR varies by a dB or two
  /// from seed to seed on small graphs) meet them too.
  double marginDb = 0;
  /// fp8-pipeline's options: the recipe and policy the tuned graph is for.
  std::string pipelineOptions;
  /// Calibration inputs: `calibrationSets` sets drawn from seeds `seed`,
  /// `seed + 1`, ...; a GEMM's cost is the most it adds on any of them and
  /// the choice must meet the budget on all. The fresh inputs that check
  /// the choice afterwards use `freshSeed`.
  uint64_t seed = 0, freshSeed = 1;
  unsigned calibrationSets = 1;
  /// Inputs without a role-based default: `distribution` with `scale`;
  /// integers uniform in [0, integerRange).
  runner::Distribution distribution = runner::Distribution::Normal;
  double scale = 1.0;
  int64_t integerRange = 1000;
  /// Other ways into FP8 each candidate may take before high precision
  /// (fp8-tune-variants' alternatives: row, block, mx, e4m3, current);
  /// those equal to the pipeline's recipe are not offered.
  SmallVector<std::string> alternatives;
  /// A training step (fp8-train's contract) calibrated on batches of this
  /// corpus, as fp8-train reads it: each input set is a batch of the
  /// training text (seeded by the set's seed) at the initial parameters
  /// (drawn from `seed` as fp8-train draws them), zero moments, step 1,
  /// loss scale 1. Arguments given with --arg keep what --arg says.
  std::string corpus;
  /// fp8-run's --arg: "INDEX:DIST[:SCALE]" or "INDEX:file.npy".
  SmallVector<std::string> argOverrides;
  runner::CompileOptions compile;
};

/// One GEMM of the graph, candidate or not: nothing is left out.
/// One way a candidate GEMM can run in FP8, and what it costs alone.
struct VersionRecord {
  /// "recipe" (the pipeline's) or the alternative's name.
  std::string name;
  /// The GEMM's own recipe; null for the pipeline's.
  RecipeAttr recipe;
  /// Its value in the choice vector.
  int32_t choice = 0;
  /// The worst output SQNR with this GEMM alone in FP8 this way, every
  /// output's (the worst over the calibration sets), and the largest share
  /// of any metric's slack it uses (1: the whole budget).
  double aloneWorstDb = 0, aloneWorstRowDb = 0, budgetShare = 0;
  SmallVector<double> aloneDb;
};

struct GemmRecord {
  std::string location, opName;
  std::optional<int64_t> flops;
  /// The analysis's reason (for GEMMs that are no candidates, why not).
  GemmReason reason = GemmReason::UnsupportedLayout;
  /// Index in the choice vector, for candidates.
  std::optional<unsigned> candidate;
  /// Candidates: the ways into FP8 offered, the pipeline's recipe first.
  SmallVector<VersionRecord, 1> versions;
  /// The chosen version (FP8), or none (high precision).
  std::optional<unsigned> chosen;
  bool isFP8() const { return chosen.has_value(); }
  /// The pipeline's recipe (the GEMM alone in FP8 the default way).
  const VersionRecord &base() const { return versions.front(); }
  /// Why it got its decision, in words.
  std::string why;
};

/// The SQNRs of one configuration: per output (its SQNR and its worst
/// row's), and the worst of each over the outputs.
struct Measurement {
  SmallVector<double> outputDb, worstRowDb;
  double worstDb = 0, worstRowWorstDb = 0;
};

struct TuneResult {
  SmallVector<GemmRecord, 0> gemms;
  /// The alternatives offered (those of TuneOptions that differ from the
  /// pipeline's recipe), in the order of their choice values.
  SmallVector<std::string> alternatives;
  SmallVector<std::string> outputNames;
  /// What the calibration inputs are, in words.
  std::string calibration;
  /// Calibration inputs (the worst over the sets): every candidate in high
  /// precision, all in FP8 (measured and predicted), the choice (predicted
  /// and measured).
  Measurement baseline, allFP8, chosen;
  double allFP8PredictedDb = 0, predictedDb = 0, predictedRowDb = 0;
  /// Fresh inputs: every candidate in high precision, and the choice.
  Measurement freshBaseline, freshChosen;
  double fp8FlopShare = 0, candidateFlopShare = 0;
  int64_t totalFlops = 0, fp8Flops = 0;
  unsigned verifications = 0;
  bool exactSearch = false;
  double compileSeconds = 0, runSeconds = 0, totalSeconds = 0;
  unsigned runs = 0;
};

/// The GEMM policy fp8-pipeline applies under `options`.
GemmPolicy getGemmPolicy(const FP8PipelineOptions &options);

/// Tunes function `name` of `module` (linalg: after the TOSA front end) as
/// `options` say. Fails with `error` on bad options or inputs, a graph with
/// no candidate, a golden run that is not finite, and a budget the graph
/// misses with no GEMM in FP8 (its own arithmetic; the figures are in the
/// message).
FailureOr<TuneResult> tuneGraph(ModuleOp module, StringRef name,
                                const TuneOptions &options, std::string &error);

/// Writes the decisions into `module` (the one tuned) as `fp8.precision`:
/// "fp8" on the chosen candidates, "high" on the other candidates and on
/// every GEMM that fp8-pipeline's default policy would otherwise convert,
/// so that the graph needs no pipeline option to mean the tuned choice.
LogicalResult applyDecisions(ModuleOp module, const TuneOptions &options,
                             const TuneResult &result, std::string &error);

/// The --report document.
llvm::json::Value toJSON(const TuneResult &result, const TuneOptions &options);

/// A human-readable summary: one line per GEMM, then the totals.
void printSummary(llvm::raw_ostream &os, const TuneResult &result,
                  const TuneOptions &options);

} // namespace mlir::fp8::tune

#endif // FP8_TUNE_TUNER_H
