//===- Selection.h - Which GEMMs go to FP8 under a noise budget --*- C++ -*-===//
//
// fp8-tune's model: a GEMM run in FP8 adds quantization noise to every
// output, independent of the noise the others add, so noise powers add.
// From each candidate's measured cost alone, the noise of any subset is
// predicted without running it, and the subset with the most FP8 FLOPs
// that stays within the budget is chosen: a multi-dimensional knapsack,
// solved exactly for small graphs and greedily (with swaps) for large ones.
// A GEMM may have several ways into FP8 (the pipeline's recipe, finer
// scales, E4M3 gradients): the subset is chosen with each GEMM's leanest
// way, then each chosen GEMM takes the most preferred way that fits.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TUNE_SELECTION_H
#define FP8_TUNE_SELECTION_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::fp8::tune {

/// 10^(-dB/10): the noise power of an SQNR in dB, relative to the signal's;
/// 0 for +inf dB, +inf for NaN (a broken output costs everything).
double noiseFromDb(double db);
/// -10 log10(noise): +inf for 0.
double dbFromNoise(double noise);

/// The selection's input. A metric is one number the budget bounds: an
/// output's SQNR, or the SQNR of its worst row.
struct SelectionProblem {
  /// Per candidate: what FP8 gains (its FLOPs).
  SmallVector<double> flops;
  /// [candidate][metric]: the noise power the candidate adds in FP8 alone,
  /// above the baseline (+inf when it breaks the output).
  SmallVector<SmallVector<double>> cost;
  /// [metric]: the noise power with every candidate in high precision (the
  /// graph's own arithmetic against the golden run).
  SmallVector<double> baseline;
  /// [metric]: the most noise the budget allows, noiseFromDb(budget).
  SmallVector<double> limit;
  /// Per candidate: whether it may be chosen (empty: all may).
  SmallVector<bool> allowed;
};

/// baseline[m] + sum of cost[i][m] over the chosen candidates, per metric.
SmallVector<double> predictNoise(const SelectionProblem &problem,
                                 ArrayRef<bool> chosen);

/// Whether `chosen`'s predicted noise is within every limit.
bool fitsBudget(const SelectionProblem &problem, ArrayRef<bool> chosen);

struct Selection {
  SmallVector<bool> chosen;
  double flops = 0;
  /// The optimum (exact search), not a heuristic's answer.
  bool exact = false;
};

/// Exact search (depth first, largest FLOPs first, pruned by the FLOPs
/// still reachable) up to this many allowed candidates.
inline constexpr unsigned kExactSearchLimit = 24;

/// The allowed candidates with the most FLOPs in total whose predicted
/// noise stays within every limit: selectExact up to kExactSearchLimit
/// candidates, selectGreedy beyond.
Selection selectSubset(const SelectionProblem &problem);
Selection selectExact(const SelectionProblem &problem);
/// Candidates in decreasing FLOPs per unit of the budget they use (the
/// largest share of any metric's slack), each taken if it still fits; then
/// swaps (one chosen out, one larger in) and additions while they gain.
Selection selectGreedy(const SelectionProblem &problem);

/// Candidates with several ways into FP8 ("options"), each in order of
/// preference: the pipeline's recipe first (the cheapest to run).
struct OptionProblem {
  SmallVector<double> flops;
  /// [candidate][option][metric]: the noise power the candidate adds in
  /// FP8 alone under that option.
  SmallVector<SmallVector<SmallVector<double>>> cost;
  SmallVector<double> baseline, limit;
  /// [candidate][option]: whether it may be chosen (empty: all may).
  SmallVector<SmallVector<bool>> allowed;

  bool isAllowed(unsigned candidate, unsigned option) const {
    return allowed.empty() || allowed[candidate][option];
  }
};

/// Per candidate: the chosen option, or none (high precision).
using OptionChoice = SmallVector<std::optional<unsigned>>;

struct OptionSelection {
  OptionChoice option;
  double flops = 0;
  /// The subset is the optimum for the candidates' leanest options.
  bool exact = false;
};

/// baseline[m] + the chosen options' costs, per metric.
SmallVector<double> predictNoise(const OptionProblem &problem,
                                 const OptionChoice &choice);

/// The most FP8 FLOPs within every limit, then the most preferred options.
/// Each candidate enters selectSubset with its allowed option that uses the
/// least of the budget (the smallest largest share of any metric's slack),
/// and again with its most preferred allowed option; the subset with more
/// FLOPs is kept (the preferred one on a tie: with several metrics, a
/// smaller largest share is not a smaller cost on every metric). Then,
/// largest GEMMs first, each chosen candidate takes the first allowed
/// option, in order of preference, with which the whole choice still fits.
OptionSelection selectOptions(const OptionProblem &problem);

} // namespace mlir::fp8::tune

#endif // FP8_TUNE_SELECTION_H
