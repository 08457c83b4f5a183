//===- Report.h - The runs' losses as a table, JSON, CSV, a plot -*- C++
//-*-===//

#ifndef FP8_TRAIN_REPORT_H
#define FP8_TRAIN_REPORT_H

#include "fp8/Pipelines/Accumulation.h"
#include "fp8/Train/Confidence.h"
#include "fp8/Train/Run.h"

#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::fp8::train {

/// "+0.30%": a relative gap as a signed percentage.
std::string formatPercent(double fraction);

/// A number in CSV and plot data ("%.7g"); "" when not finite.
std::string formatNumber(double value);

/// Closes `os`, an output to `path`: fails, with `error` naming the file,
/// when a write failed (a full disk), which the stream would otherwise
/// report as a fatal error.
LogicalResult closeOutput(llvm::raw_fd_ostream &os, StringRef path,
                          std::string &error);

/// The relative gap of `run`'s final validation loss to the BF16 run's.
std::optional<double> gapToBF16(const Run &run, ArrayRef<Run> runs);

/// A recipe's runs over the seeds and their statistics: the final losses
/// means and intervals over the seeds that did not diverge, the paired gap
/// of the final validation loss to BF16's (absent without a bf16 recipe),
/// and the verdict at a tolerance.
struct RecipeSummary {
  std::string label;
  Recipe::Kind kind;
  SmallVector<const Run *> runs;
  Interval finalLoss, finalValLoss;
  SmallVector<double> gaps;
  std::optional<Interval> gap;
  std::string verdict;
};

/// `runs` grouped by recipe, in order, each recipe's runs in seed order.
std::vector<RecipeSummary> summarizeRecipes(ArrayRef<Run> runs,
                                            double tolerance);

/// Two recipes' final validation losses compared seed by seed: the mean and
/// 95% interval of the paired relative differences (first - second) /
/// second, the paired t test's two-sided p-value, and whether Holm's
/// procedure over all compared pairs tells the two apart at 5%.
struct RecipeComparison {
  std::string first, second;
  Interval difference;
  double p = NAN;
  bool toldApart = false;
};

/// Every pair of `recipes` with at least 2 seeds finite in both, the later
/// recipe first, except that BF16 is always second (so that its pairs are
/// the recipes' gaps to BF16); Holm's procedure at `alpha` over them all.
std::vector<RecipeComparison> compareRecipes(ArrayRef<RecipeSummary> recipes,
                                             double alpha = 0.05);

/// What the bf16 recipe is when its 16-bit GEMMs accumulate as
/// `accumulation` says: one line for the summary.
std::string describeBF16(Accumulation accumulation);

/// The summary table of `runs` and their events, then (with `json`) one
/// JSON object of the runs (`ranks` data-parallel ranks trained them; their
/// 16-bit GEMMs accumulated as `accumulation` says; `seeds` seeds per
/// recipe, verdicts at `tolerance`).
void printSummary(raw_ostream &os, ArrayRef<Run> runs, bool json, int64_t ranks,
                  Accumulation accumulation, unsigned seeds = 1,
                  double tolerance = 0.01);

/// Writes every run and step to the CSV file `path` (the last column says
/// how 16-bit GEMMs accumulated), and the per-tensor statistics to
/// `path`.tensors.csv.
LogicalResult writeCsv(StringRef path, ArrayRef<Run> runs,
                       Accumulation accumulation, std::string &error);

/// Draws the train and validation curves of every run into the PNG file
/// `path` with gnuplot, `title` in the plot's title.
LogicalResult writePlot(StringRef path, StringRef title, ArrayRef<Run> runs,
                        std::string &error);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_REPORT_H
