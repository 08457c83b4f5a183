//===- Confidence.cpp - Means and 95% intervals over seeds ----------------===//

#include "fp8/Train/Confidence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::train;

double train::studentT975(unsigned df) {
  // t(0.975, df) for df = 1..30, to the 3 decimals every table prints.
  static const double table[] = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0)
    return NAN;
  if (df <= 30)
    return table[df - 1];
  // Cornish-Fisher expansion of t in 1/df around z (Abramowitz & Stegun
  // 26.7.5); its fourth term is below 1e-5 past df = 30.
  double z = 1.959963984540054, z2 = z * z, n = df;
  double g1 = (z2 + 1) * z / 4;
  double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  return z + g1 / n + g2 / (n * n) + g3 / (n * n * n);
}

Interval train::summarize(ArrayRef<double> values) {
  Interval result;
  double sum = 0;
  for (double v : values) {
    if (!std::isfinite(v)) {
      ++result.excluded;
      continue;
    }
    ++result.used;
    sum += v;
  }
  if (result.used == 0) {
    result.mean = NAN;
    return result;
  }
  result.mean = sum / result.used;
  if (result.used < 2)
    return result;
  double squares = 0;
  for (double v : values)
    if (std::isfinite(v))
      squares += (v - result.mean) * (v - result.mean);
  result.stddev = std::sqrt(squares / (result.used - 1));
  double half =
      studentT975(result.used - 1) * result.stddev / std::sqrt(result.used);
  result.lo = result.mean - half;
  result.hi = result.mean + half;
  return result;
}

SmallVector<double> train::pairedGaps(ArrayRef<double> values,
                                      ArrayRef<double> reference) {
  SmallVector<double> gaps;
  for (size_t i = 0; i < values.size(); ++i) {
    double r = i < reference.size() ? reference[i] : NAN;
    gaps.push_back(std::isfinite(values[i]) && std::isfinite(r) && r != 0
                       ? (values[i] - r) / r
                       : NAN);
  }
  return gaps;
}

Verdict train::judge(const Interval &gap, double tolerance, unsigned seeds) {
  if (!gap.lo)
    return seeds <= 1 ? Verdict::OneSeed : Verdict::TooFewSeeds;
  double lo = *gap.lo, hi = *gap.hi;
  if (lo >= -tolerance && hi <= tolerance)
    return Verdict::Within;
  if (lo > 0 && hi > tolerance)
    return Verdict::Worse;
  if (hi < 0 && lo < -tolerance)
    return Verdict::Better;
  return Verdict::Undecided;
}

std::string train::describeVerdict(Verdict verdict, const Interval &gap) {
  switch (verdict) {
  case Verdict::OneSeed:
    return "one seed";
  case Verdict::TooFewSeeds:
    return "fewer than 2 finite seeds";
  case Verdict::Worse:
    return "worse than BF16";
  case Verdict::Better:
    return "better than BF16";
  case Verdict::Undecided:
    return "not distinguishable";
  case Verdict::Within:
    break;
  }
  // The largest |bound| in percent, rounded up to 0.1% (a tiny epsilon so
  // that 0.8% computed as 0.8000000001 does not print as 0.9%).
  double bound = std::max(std::fabs(*gap.lo), std::fabs(*gap.hi)) * 100;
  double shown = std::ceil(bound * 10 - 1e-9) / 10;
  char text[48];
  std::snprintf(text, sizeof(text), "within %.1f%% at 95%%", shown);
  return text;
}
