//===- Confidence.cpp - Means and 95% intervals over seeds ----------------===//

#include "fp8/Train/Confidence.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

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

double train::studentTwoSidedP(double t, unsigned df) {
  if (df == 0 || std::isnan(t))
    return NAN;
  if (std::isinf(t))
    return 0;
  // A(t | df) = P(|T| < t) as a finite series in theta = atan(t / sqrt(df)):
  // for even df, sin(theta) (1 + 1/2 c + 1*3/(2*4) c^2 + ...), with c the
  // squared cosine, up to the power (df - 2) / 2; for odd df,
  // 2/pi (theta + sin(theta) cos(theta) (1 + 2/3 c + 2*4/(3*5) c^2 + ...)),
  // up to the power (df - 3) / 2, and 2/pi theta for df = 1.
  double theta = std::atan(std::fabs(t) / std::sqrt(double(df)));
  double sine = std::sin(theta), cosine = std::cos(theta);
  double c = cosine * cosine, term = 1, series = 1;
  double inside;
  if (df % 2 == 0) {
    for (unsigned k = 2; k + 2 <= df; k += 2) {
      term *= double(k - 1) / k * c;
      series += term;
    }
    inside = sine * series;
  } else {
    for (unsigned k = 3; k + 2 <= df; k += 2) {
      term *= double(k - 1) / k * c;
      series += term;
    }
    double sum = df == 1 ? theta : theta + sine * cosine * series;
    inside = 2 / M_PI * sum;
  }
  return std::clamp(1 - inside, 0.0, 1.0);
}

double train::pValueOfMean(const Interval &sample) {
  if (sample.used < 2 || !std::isfinite(sample.mean))
    return NAN;
  if (sample.stddev == 0)
    return sample.mean == 0 ? 1 : 0;
  double t = sample.mean / (sample.stddev / std::sqrt(double(sample.used)));
  return studentTwoSidedP(t, sample.used - 1);
}

SmallVector<bool> train::holmRejections(ArrayRef<double> pValues,
                                        double alpha) {
  SmallVector<bool> rejected(pValues.size(), false);
  SmallVector<size_t> order;
  for (size_t i = 0; i < pValues.size(); ++i)
    if (!std::isnan(pValues[i]))
      order.push_back(i);
  llvm::sort(order, [&](size_t a, size_t b) {
    return std::tie(pValues[a], a) < std::tie(pValues[b], b);
  });
  // The i-th smallest p-value (from 0) is compared with alpha / (m - i);
  // the first that fails stops the procedure.
  for (auto [i, index] : llvm::enumerate(order)) {
    if (pValues[index] > alpha / double(order.size() - i))
      break;
    rejected[index] = true;
  }
  return rejected;
}
