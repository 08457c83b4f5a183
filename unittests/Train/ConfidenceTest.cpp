//===- ConfidenceTest.cpp - Means, t quantiles, intervals, verdicts -------===//
//
// fp8-train --seeds's statistics against textbook values and hand-computed
// numbers: the t table's critical values, a sample's mean, standard
// deviation and interval, NaN left out, the paired gap, and each verdict.
//
//===----------------------------------------------------------------------===//

#include "fp8/Train/Confidence.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8::train;

namespace {

TEST(Confidence, StudentTQuantilesMatchTheTable) {
  EXPECT_NEAR(studentT975(1), 12.706, 5e-4);
  EXPECT_NEAR(studentT975(2), 4.303, 5e-4);
  EXPECT_NEAR(studentT975(4), 2.776, 5e-4);
  EXPECT_NEAR(studentT975(9), 2.262, 5e-4);
  EXPECT_NEAR(studentT975(29), 2.045, 5e-4);
  EXPECT_NEAR(studentT975(30), 2.042, 5e-4);
  // Past the table: the expansion meets the published 40, 60, 120 values
  // and tends to the normal's 1.960.
  EXPECT_NEAR(studentT975(40), 2.021, 5e-4);
  EXPECT_NEAR(studentT975(60), 2.000, 5e-4);
  EXPECT_NEAR(studentT975(120), 1.980, 5e-4);
  EXPECT_NEAR(studentT975(1000000), 1.960, 5e-4);
  EXPECT_TRUE(std::isnan(studentT975(0)));
  for (unsigned df = 1; df < 200; ++df)
    EXPECT_GT(studentT975(df), studentT975(df + 1)) << df;
}

TEST(Confidence, MeanStddevAndInterval) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, s = sqrt(32 / 7).
  Interval i = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(i.used, 8u);
  EXPECT_EQ(i.excluded, 0u);
  EXPECT_DOUBLE_EQ(i.mean, 5);
  EXPECT_NEAR(i.stddev, std::sqrt(32.0 / 7), 1e-12);
  double half = 2.365 * std::sqrt(32.0 / 7) / std::sqrt(8.0);
  ASSERT_TRUE(i.lo && i.hi);
  EXPECT_NEAR(*i.lo, 5 - half, 1e-9);
  EXPECT_NEAR(*i.hi, 5 + half, 1e-9);
  EXPECT_NEAR(i.halfWidth(), half, 1e-9);
}

TEST(Confidence, NonFiniteValuesAreLeftOut) {
  Interval i = summarize({1.0, NAN, 3.0, INFINITY});
  EXPECT_EQ(i.used, 2u);
  EXPECT_EQ(i.excluded, 2u);
  EXPECT_DOUBLE_EQ(i.mean, 2);
  // Two values: s = sqrt(2), t(0.975, 1) = 12.706, half = 12.706.
  ASSERT_TRUE(i.lo);
  EXPECT_NEAR(*i.hi, 2 + 12.706, 1e-9);

  Interval one = summarize({NAN, 4.0});
  EXPECT_EQ(one.used, 1u);
  EXPECT_DOUBLE_EQ(one.mean, 4);
  EXPECT_FALSE(one.lo);
  Interval none = summarize({NAN});
  EXPECT_EQ(none.used, 0u);
  EXPECT_TRUE(std::isnan(none.mean));
  EXPECT_FALSE(none.lo);
}

TEST(Confidence, PairedGaps) {
  SmallVector<double> gaps =
      pairedGaps({2.02, 1.98, NAN, 3.0}, {2.0, 2.0, 2.0, NAN});
  ASSERT_EQ(gaps.size(), 4u);
  EXPECT_NEAR(gaps[0], 0.01, 1e-12);
  EXPECT_NEAR(gaps[1], -0.01, 1e-12);
  EXPECT_TRUE(std::isnan(gaps[2]));
  EXPECT_TRUE(std::isnan(gaps[3]));
}

/// An interval [lo, hi] as summarize would give it.
Interval interval(double lo, double hi) {
  Interval i;
  i.used = 3;
  i.mean = (lo + hi) / 2;
  i.lo = lo;
  i.hi = hi;
  return i;
}

TEST(Confidence, Verdicts) {
  const double tol = 0.01;
  EXPECT_EQ(judge(interval(-0.004, 0.008), tol, 3), Verdict::Within);
  EXPECT_EQ(describeVerdict(Verdict::Within, interval(-0.004, 0.008)),
            "within 0.8% at 95%");
  // Rounded up to 0.1%: 0.81% shows as 0.9%.
  EXPECT_EQ(describeVerdict(Verdict::Within, interval(-0.0081, 0.002)),
            "within 0.9% at 95%");
  EXPECT_EQ(judge(interval(-0.01, 0.01), tol, 3), Verdict::Within);
  // Above 0 and reaching past the tolerance: BF16 is better.
  EXPECT_EQ(judge(interval(0.002, 0.03), tol, 3), Verdict::Worse);
  EXPECT_EQ(judge(interval(0.02, 0.03), tol, 3), Verdict::Worse);
  EXPECT_EQ(judge(interval(-0.03, -0.002), tol, 3), Verdict::Better);
  // Straddling 0 and past the tolerance: too wide to decide.
  EXPECT_EQ(judge(interval(-0.005, 0.02), tol, 3), Verdict::Undecided);
  EXPECT_EQ(describeVerdict(Verdict::Undecided, interval(-0.005, 0.02)),
            "not distinguishable");
  // A small but significant gap inside the tolerance is parity.
  EXPECT_EQ(judge(interval(0.001, 0.004), tol, 3), Verdict::Within);
  // A larger tolerance turns "worse" into "within".
  EXPECT_EQ(judge(interval(0.002, 0.03), 0.05, 3), Verdict::Within);

  Interval single = summarize({0.01});
  EXPECT_EQ(judge(single, tol, 1), Verdict::OneSeed);
  EXPECT_EQ(describeVerdict(Verdict::OneSeed, single), "one seed");
  EXPECT_EQ(judge(single, tol, 3), Verdict::TooFewSeeds);
}

TEST(Confidence, VerdictOfASampleWithADivergentSeed) {
  // Gaps of +0.2%, +0.4%, NaN (diverged), +0.3%: mean 0.3%, s = 0.1%,
  // half = 4.303 * 0.001 / sqrt(3) = 0.248%: within 0.6% at 95%.
  Interval gap =
      summarize(pairedGaps({1.002, 1.004, NAN, 1.003}, {1.0, 1.0, 1.0, 1.0}));
  EXPECT_EQ(gap.used, 3u);
  EXPECT_EQ(gap.excluded, 1u);
  EXPECT_NEAR(gap.mean, 0.003, 1e-12);
  EXPECT_NEAR(gap.halfWidth(), 4.303 * 0.001 / std::sqrt(3.0), 1e-9);
  EXPECT_EQ(judge(gap, 0.01, 4), Verdict::Within);
  EXPECT_EQ(describeVerdict(judge(gap, 0.01, 4), gap), "within 0.6% at 95%");
}

} // namespace
