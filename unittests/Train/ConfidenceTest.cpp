//===- ConfidenceTest.cpp - Means, t quantiles, intervals, verdicts -------===//
//
// fp8-train --seeds's statistics against textbook values and hand-computed
// numbers: the t table's critical values, a sample's mean, standard
// deviation and interval, NaN left out, the paired gap, each verdict, the
// t test's p-values, Holm's procedure and the recipes told apart.
//
//===----------------------------------------------------------------------===//

#include "fp8/Train/Confidence.h"
#include "fp8/Train/Report.h"

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

TEST(Confidence, TwoSidedPOfTheTablesCriticalValues) {
  // The 0.975 quantiles are where p = 0.05 (printed to 3 decimals, so p is
  // 0.05 to about 1e-4), and the 0.995 and 0.9995 quantiles of the same
  // tables where p = 0.01 and 0.001.
  for (unsigned df = 1; df <= 30; ++df)
    EXPECT_NEAR(studentTwoSidedP(studentT975(df), df), 0.05, 1e-4) << df;
  EXPECT_NEAR(studentTwoSidedP(63.657, 1), 0.01, 1e-5);
  EXPECT_NEAR(studentTwoSidedP(4.604, 4), 0.01, 1e-5);
  EXPECT_NEAR(studentTwoSidedP(4.032, 5), 0.01, 1e-5);
  EXPECT_NEAR(studentTwoSidedP(3.169, 10), 0.01, 1e-5);
  EXPECT_NEAR(studentTwoSidedP(2.756, 29), 0.01, 1e-5);
  EXPECT_NEAR(studentTwoSidedP(8.610, 4), 0.001, 1e-6);
  EXPECT_NEAR(studentTwoSidedP(-8.610, 4), 0.001, 1e-6);
}

TEST(Confidence, TwoSidedPInClosedForm) {
  // df = 1 is Cauchy: P(|T| >= 1) = 1/2. df = 2: 1 - t / sqrt(2 + t^2).
  // df = 3 at t = sqrt(3) (theta = pi/4): 1/2 - 1/pi.
  EXPECT_NEAR(studentTwoSidedP(1, 1), 0.5, 1e-15);
  EXPECT_NEAR(studentTwoSidedP(std::sqrt(2.0), 2), 1 - 1 / std::sqrt(2.0),
              1e-15);
  EXPECT_NEAR(studentTwoSidedP(std::sqrt(3.0), 3), 0.5 - 1 / M_PI, 1e-15);
  EXPECT_DOUBLE_EQ(studentTwoSidedP(0, 7), 1);
  EXPECT_DOUBLE_EQ(studentTwoSidedP(INFINITY, 7), 0);
  EXPECT_TRUE(std::isnan(studentTwoSidedP(NAN, 7)));
  EXPECT_TRUE(std::isnan(studentTwoSidedP(2, 0)));
  // Decreasing in |t| at every df, to the absolute error of 1 - P(|T| < t)
  // in doubles (about 1e-16: p-values that small read as 0).
  for (unsigned df = 1; df < 40; ++df) {
    for (double t = 0; t < 20; t += 0.5) {
      double p = studentTwoSidedP(t, df), next = studentTwoSidedP(t + 0.5, df);
      if (next > 1e-12)
        EXPECT_GT(p, next) << df << " " << t;
      else
        EXPECT_LE(next, p + 1e-15) << df << " " << t;
    }
  }
}

TEST(Confidence, PValueOfAPairedSample) {
  // 0.01, 0.02, 0.03: mean 0.02, s = 0.01, t = 2 sqrt(3), df = 2:
  // p = 1 - t / sqrt(2 + t^2) = 1 - sqrt(12 / 14).
  EXPECT_NEAR(pValueOfMean(summarize({0.01, 0.02, 0.03})),
              1 - std::sqrt(12.0 / 14), 1e-12);
  // No spread: certain when the mean is not 0, no evidence when it is.
  EXPECT_DOUBLE_EQ(pValueOfMean(summarize({0.01, 0.01})), 0);
  EXPECT_DOUBLE_EQ(pValueOfMean(summarize({0.0, 0.0, 0.0})), 1);
  EXPECT_TRUE(std::isnan(pValueOfMean(summarize({0.01, NAN}))));
}

TEST(Confidence, HolmStepsDown) {
  // m = 4 at 5%: 0.005 <= 0.05/4 and 0.01 <= 0.05/3 are rejected; 0.03 >
  // 0.05/2 stops, so 0.04 is kept although it is under 0.05.
  SmallVector<bool> rejected = holmRejections({0.01, 0.04, 0.03, 0.005}, 0.05);
  EXPECT_EQ(rejected, (SmallVector<bool>{true, false, false, true}));
  // A NaN p-value is not in the family: m = 2, so 0.02 <= 0.05/1 is
  // rejected, which Bonferroni over 3 (0.0167) would not.
  rejected = holmRejections({0.001, NAN, 0.02}, 0.05);
  EXPECT_EQ(rejected, (SmallVector<bool>{true, false, true}));
  EXPECT_TRUE(holmRejections({}, 0.05).empty());
}

/// A finished run of `label` with final losses `loss` (NaN: diverged).
mlir::fp8::train::Run finishedRun(StringRef label, Recipe::Kind kind, uint64_t seed,
                double loss) {
  mlir::fp8::train::Run run;
  run.recipe = {label.str(), kind, ""};
  run.seed = seed;
  run.lastStep = 10;
  run.finalLoss = run.finalValLoss = loss;
  return run;
}

TEST(Confidence, RecipesToldApart) {
  // fp32 equals BF16 seed by seed; delayed is 0.5%, 0.55%, 0.6% above both
  // (t = 0.0055 / (0.0005 / sqrt 3) = 19.05, df 2, p = 0.0027); current
  // diverged on seed 3, and its two finite seeds are compared.
  std::vector<mlir::fp8::train::Run> runs;
  double bf16[] = {2.0, 2.2, 1.8};
  double above[] = {1.005, 1.0055, 1.006};
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    double base = bf16[seed - 1];
    runs.push_back(finishedRun("fp32", Recipe::FP32, seed, base));
    runs.push_back(finishedRun("bf16", Recipe::BF16, seed, base));
    runs.push_back(
        finishedRun("delayed", Recipe::FP8, seed, base * above[seed - 1]));
    runs.push_back(finishedRun("current", Recipe::FP8, seed,
                               seed == 3 ? NAN : base * (1 + 0.01 * seed)));
  }
  std::vector<RecipeSummary> recipes = summarizeRecipes(runs, 0.01);
  std::vector<RecipeComparison> pairs = compareRecipes(recipes);
  // All 6 pairs, the later recipe first and BF16 always second.
  ASSERT_EQ(pairs.size(), 6u);
  auto find = [&](StringRef first, StringRef second) {
    auto it = llvm::find_if(pairs, [&](const RecipeComparison &c) {
      return c.first == first && c.second == second;
    });
    return it == pairs.end() ? nullptr : &*it;
  };
  const RecipeComparison *fp32 = find("fp32", "bf16");
  const RecipeComparison *delayed = find("delayed", "bf16");
  const RecipeComparison *delayedFp32 = find("delayed", "fp32");
  const RecipeComparison *current = find("current", "bf16");
  ASSERT_TRUE(fp32 && delayed && delayedFp32 && current &&
              find("current", "fp32") && find("current", "delayed"));
  EXPECT_DOUBLE_EQ(fp32->p, 1);
  EXPECT_FALSE(fp32->toldApart);
  double t = 0.0055 / (0.0005 / std::sqrt(3.0));
  EXPECT_NEAR(delayed->difference.mean, 0.0055, 1e-12);
  EXPECT_NEAR(delayed->p, 1 - t / std::sqrt(2 + t * t), 1e-9);
  // Holm over 6: 0.0027 <= 0.05/6 for both of delayed's pairs.
  EXPECT_TRUE(delayed->toldApart);
  EXPECT_TRUE(delayedFp32->toldApart);
  // current: +1%, +2% on the finite seeds: t = 3, df 1, p = 0.205.
  EXPECT_EQ(current->difference.used, 2u);
  EXPECT_EQ(current->difference.excluded, 1u);
  EXPECT_NEAR(current->p, 1 - 2 / M_PI * std::atan(3.0), 1e-12);
  EXPECT_FALSE(current->toldApart);
  // The pair with BF16 is the recipe's gap to BF16.
  EXPECT_DOUBLE_EQ(delayed->difference.mean, recipes[2].gap->mean);
}

} // namespace
