//===- Confidence.h - Means and 95% intervals over seeds ---------*- C++
//-*-===//
//
// The statistics of fp8-train --seeds=N: a sample's mean and Student-t 95%
// confidence interval (non-finite values excluded, never averaged), the
// paired relative gap of a recipe to BF16 seed by seed, and the verdict that
// interval supports at a parity tolerance (docs/fp8-train.md states the
// rules).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TRAIN_CONFIDENCE_H
#define FP8_TRAIN_CONFIDENCE_H

#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::fp8::train {

/// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1;
/// the two-sided 95% critical value): exact to the printed digits of the
/// textbook table for df <= 30, then Cornish-Fisher's expansion around the
/// normal's 1.959964 (error < 1e-4 for df > 30).
double studentT975(unsigned df);

/// The mean and 95% interval of the finite values of a sample.
struct Interval {
  /// Values used (finite) and left out (NaN or infinite).
  unsigned used = 0, excluded = 0;
  double mean = 0, stddev = 0;
  /// The interval mean -+ t * s / sqrt(n); absent with fewer than 2 values.
  std::optional<double> lo, hi;
  double halfWidth() const { return lo ? (*hi - *lo) / 2 : 0; }
};

Interval summarize(ArrayRef<double> values);

/// (value - reference) / reference per index, NaN where either is not
/// finite or the reference is 0.
SmallVector<double> pairedGaps(ArrayRef<double> values,
                               ArrayRef<double> reference);

enum class Verdict { OneSeed, TooFewSeeds, Within, Worse, Better, Undecided };

/// The verdict of a relative gap's interval at `tolerance` (0.01 = 1%):
/// Within when [lo, hi] lies inside [-tolerance, +tolerance]; Worse when
/// lo > 0 and hi > tolerance (BF16 is better at 95% and the gap may exceed
/// the tolerance); Better symmetrically; Undecided otherwise. `seeds` is
/// how many seeds ran (OneSeed) when the interval is absent.
Verdict judge(const Interval &gap, double tolerance, unsigned seeds);

/// "within 0.8% at 95%", "worse than BF16", "better than BF16", "not
/// distinguishable", "one seed", "fewer than 2 finite seeds".
std::string describeVerdict(Verdict verdict, const Interval &gap);

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom: the
/// two-sided p-value of a t statistic, exact for every integer df by the
/// finite series of Abramowitz & Stegun 26.7.3 and 26.7.4, to an absolute
/// error of about 1e-16 (computed as 1 - P(|T| < t)). NaN when df is 0 or
/// t is NaN.
double studentTwoSidedP(double t, unsigned df);

/// The two-sided p-value of the one-sample t test that the mean of the
/// finite values summarized in `sample` is 0 (a paired test, on the
/// differences): NaN with fewer than 2 values; without spread, 1 when the
/// mean is 0 and 0 otherwise.
double pValueOfMean(const Interval &sample);

/// Holm's step-down procedure at family-wise error rate `alpha`: which of
/// the hypotheses with these p-values are rejected. The family is the
/// finite p-values; a NaN one is never rejected.
SmallVector<bool> holmRejections(ArrayRef<double> pValues, double alpha);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_CONFIDENCE_H
