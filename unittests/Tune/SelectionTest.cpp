//===- SelectionTest.cpp - fp8-tune's noise model and subset search -------===//
//
// Noise powers and the subsets fp8-tune chooses, against values derived by
// hand: dB <-> noise power, the additive prediction, the optimum of small
// knapsacks worked out on paper (one where the greedy order alone misses
// it, one its swaps repair), several outputs, excluded and broken GEMMs,
// and an unreachable budget.
//
//===----------------------------------------------------------------------===//

#include "fp8/Tune/Selection.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::fp8::tune;

namespace {

SmallVector<bool> bits(std::initializer_list<int> values) {
  SmallVector<bool> result;
  for (int v : values)
    result.push_back(v != 0);
  return result;
}

TEST(Selection, DecibelsAndNoisePowers) {
  EXPECT_DOUBLE_EQ(noiseFromDb(20), 0.01);
  EXPECT_DOUBLE_EQ(noiseFromDb(30), 0.001);
  EXPECT_DOUBLE_EQ(noiseFromDb(0), 1.0);
  EXPECT_EQ(noiseFromDb(INFINITY), 0.0);
  EXPECT_TRUE(std::isinf(noiseFromDb(NAN)));
  EXPECT_TRUE(std::isinf(noiseFromDb(-INFINITY)));
  EXPECT_DOUBLE_EQ(dbFromNoise(0.01), 20);
  EXPECT_TRUE(std::isinf(dbFromNoise(0)) && dbFromNoise(0) > 0);
}

TEST(Selection, NoisePowersAdd) {
  // Two GEMMs at 23 dB each: 2 * 10^-2.3 = 0.0100237, 19.99 dB (twice the
  // noise: 3.01 dB less); with a baseline at 40 dB (1e-4) 0.0101237, 19.95.
  SelectionProblem problem;
  problem.baseline = {0};
  problem.limit = {1};
  problem.flops = {1, 1};
  problem.cost = {{noiseFromDb(23)}, {noiseFromDb(23)}};
  SmallVector<double> noise = predictNoise(problem, bits({1, 1}));
  ASSERT_EQ(noise.size(), 1u);
  EXPECT_NEAR(noise[0], 0.0100237, 1e-7);
  EXPECT_NEAR(dbFromNoise(noise[0]), 23 - 10 * std::log10(2.0), 1e-12);
  problem.baseline = {1e-4};
  EXPECT_NEAR(dbFromNoise(predictNoise(problem, bits({1, 1}))[0]), 19.9466,
              1e-4);
  EXPECT_NEAR(predictNoise(problem, bits({0, 0}))[0], 1e-4, 1e-18);
}

// Budget 25 dB: 10^-2.5 = 0.0031623. A (100 FLOPs, 0.002) fits alone; A + B
// (0.0035) and A + C do not; B + C (0.003) does and carries 110 FLOPs. The
// FLOPs-per-noise order takes A first (50000 against 40000 and 33333) and
// then nothing fits: 100 FLOPs. No single swap repairs it (B and C are each
// smaller than A), which is why fp8-tune searches exactly when it can.
SelectionProblem knapsack() {
  SelectionProblem problem;
  problem.baseline = {0};
  problem.limit = {noiseFromDb(25)};
  problem.flops = {100, 60, 50};
  problem.cost = {{0.002}, {0.0015}, {0.0015}};
  return problem;
}

TEST(Selection, ExactFindsTheOptimum) {
  Selection exact = selectExact(knapsack());
  EXPECT_EQ(exact.chosen, bits({0, 1, 1}));
  EXPECT_DOUBLE_EQ(exact.flops, 110);
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(selectSubset(knapsack()).chosen, bits({0, 1, 1}));
}

TEST(Selection, GreedyTakesTheBestRatioFirst) {
  Selection greedy = selectGreedy(knapsack());
  EXPECT_EQ(greedy.chosen, bits({1, 0, 0}));
  EXPECT_DOUBLE_EQ(greedy.flops, 100);
  EXPECT_FALSE(greedy.exact);
}

TEST(Selection, GreedySwapsASmallGemmForALargerOne) {
  // Limit 1: A (10 FLOPs, 0.1: ratio 100) goes first, then B (50 FLOPs,
  // 0.95: ratio 52.6) no longer fits (1.05). Swapping A out for B: 50.
  SelectionProblem problem;
  problem.baseline = {0};
  problem.limit = {1};
  problem.flops = {10, 50};
  problem.cost = {{0.1}, {0.95}};
  EXPECT_EQ(selectGreedy(problem).chosen, bits({0, 1}));
  EXPECT_EQ(selectExact(problem).chosen, bits({0, 1}));
}

TEST(Selection, EveryOutputHasItsOwnBudget) {
  // A and B each load one output to 0.8 of its limit: both fit; C loads
  // output 0 to 0.3 and does not fit next to A, though it would alone.
  SelectionProblem problem;
  problem.baseline = {0, 0};
  problem.limit = {1, 1};
  problem.flops = {40, 40, 30};
  problem.cost = {{0.8, 0}, {0, 0.8}, {0.3, 0}};
  Selection best = selectExact(problem);
  EXPECT_EQ(best.chosen, bits({1, 1, 0}));
  EXPECT_TRUE(fitsBudget(problem, best.chosen));
  EXPECT_FALSE(fitsBudget(problem, bits({1, 1, 1})));
}

TEST(Selection, BrokenAndExcludedGemmsAreNeverChosen) {
  SelectionProblem problem;
  problem.baseline = {0};
  problem.limit = {1};
  problem.flops = {1000, 10, 20};
  problem.cost = {{INFINITY}, {0.1}, {0.1}};
  EXPECT_EQ(selectExact(problem).chosen, bits({0, 1, 1}));
  EXPECT_EQ(selectGreedy(problem).chosen, bits({0, 1, 1}));
  problem.allowed = bits({1, 1, 0});
  EXPECT_EQ(selectExact(problem).chosen, bits({0, 1, 0}));
  EXPECT_EQ(selectGreedy(problem).chosen, bits({0, 1, 0}));
}

TEST(Selection, NothingWhenTheBaselineMissesTheBudget) {
  SelectionProblem problem;
  problem.baseline = {0.02}; // 17 dB before any FP8
  problem.limit = {0.01};    // 20 dB asked
  problem.flops = {10};
  problem.cost = {{0}};
  EXPECT_EQ(selectExact(problem).chosen, bits({0}));
  EXPECT_EQ(selectGreedy(problem).chosen, bits({0}));
  EXPECT_FALSE(fitsBudget(problem, bits({0})));
}

TEST(Selection, GreedyNeverBeatsExactAndBothFit) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 200; ++trial) {
    SelectionProblem problem;
    unsigned n = 1 + trial % 12, metrics = 1 + trial % 3;
    problem.baseline.assign(metrics, 0.05);
    problem.limit.assign(metrics, 1);
    for (unsigned i = 0; i < n; ++i) {
      problem.flops.push_back(std::round(1 + 100 * unit(rng)));
      SmallVector<double> cost;
      for (unsigned m = 0; m < metrics; ++m)
        cost.push_back(0.5 * unit(rng));
      problem.cost.push_back(cost);
    }
    Selection exact = selectExact(problem), greedy = selectGreedy(problem);
    EXPECT_TRUE(fitsBudget(problem, exact.chosen));
    EXPECT_TRUE(fitsBudget(problem, greedy.chosen));
    EXPECT_LE(greedy.flops, exact.flops);
    // Exhaustive check of the optimum.
    double best = 0;
    for (unsigned subset = 0; subset < (1u << n); ++subset) {
      SmallVector<bool> chosen(n);
      double flops = 0;
      for (unsigned i = 0; i < n; ++i)
        if ((chosen[i] = subset >> i & 1))
          flops += problem.flops[i];
      if (fitsBudget(problem, chosen))
        best = std::max(best, flops);
    }
    EXPECT_DOUBLE_EQ(exact.flops, best);
  }
}

} // namespace

namespace {

// Options: the pipeline's recipe (option 0) and a finer one (option 1).
// Budget: noise 1.0 on one metric, baseline 0.
//   A (100 FLOPs): 0.8 under option 0, 0.3 under option 1;
//   B (60 FLOPs):  0.5 under option 0, 0.4 under option 1.
// With each GEMM's leanest option (0.3 + 0.4 = 0.7) both fit: 160 FLOPs.
// Then, A first (the larger): A under option 0 gives 0.8 + 0.4 = 1.2, too
// much, so A keeps option 1; B under option 0 gives 0.3 + 0.5 = 0.8: fits.
TEST(Selection, OptionsReachMoreFlopsThenPreferThePipelinesRecipe) {
  OptionProblem problem;
  problem.baseline = {0};
  problem.limit = {1};
  problem.flops = {100, 60};
  problem.cost = {{{0.8}, {0.3}}, {{0.5}, {0.4}}};
  OptionSelection selection = selectOptions(problem);
  EXPECT_EQ(selection.flops, 160);
  EXPECT_TRUE(selection.exact);
  ASSERT_EQ(selection.option.size(), 2u);
  EXPECT_EQ(selection.option[0], std::optional<unsigned>(1));
  EXPECT_EQ(selection.option[1], std::optional<unsigned>(0));
  EXPECT_NEAR(predictNoise(problem, selection.option)[0], 0.8, 1e-15);

  // Without the finer option only A fits (0.8; A + B is 1.3).
  problem.cost = {{{0.8}}, {{0.5}}};
  selection = selectOptions(problem);
  EXPECT_EQ(selection.flops, 100);
  EXPECT_EQ(selection.option[0], std::optional<unsigned>(0));
  EXPECT_EQ(selection.option[1], std::nullopt);
}

// An option excluded (by a failed verification) is never chosen, and a GEMM
// with no option left stays in high precision.
TEST(Selection, DisallowedOptionsAreNeverChosen) {
  OptionProblem problem;
  problem.baseline = {0};
  problem.limit = {1};
  problem.flops = {100, 60};
  problem.cost = {{{0.8}, {0.3}}, {{0.5}, {0.4}}};
  problem.allowed = {{true, false}, {false, false}};
  OptionSelection selection = selectOptions(problem);
  EXPECT_EQ(selection.option[0], std::optional<unsigned>(0));
  EXPECT_EQ(selection.option[1], std::nullopt);
  EXPECT_EQ(selection.flops, 100);

  // A broken option (infinite noise) is the leanest of none.
  problem.allowed.clear();
  problem.cost = {{{INFINITY}, {0.3}}, {{0.5}, {INFINITY}}};
  selection = selectOptions(problem);
  EXPECT_EQ(selection.option[0], std::optional<unsigned>(1));
  EXPECT_EQ(selection.option[1], std::optional<unsigned>(0));
}

} // namespace

namespace {

// Two metrics, limit 1 each. The leanest options by largest share, A's
// second (0.1, 0.45) and B's first (0.1, 0.6), sum to (0.2, 1.05) and do
// not fit together: 100 FLOPs. The preferred options, A's first (0.5, 0.1)
// and B's first, sum to (0.6, 0.7): both fit, 200 FLOPs, and win.
TEST(Selection, PreferredOptionsWinWhereTheLeanestFitLess) {
  OptionProblem problem;
  problem.baseline = {0, 0};
  problem.limit = {1, 1};
  problem.flops = {100, 100};
  problem.cost = {{{0.5, 0.1}, {0.1, 0.45}}, {{0.1, 0.6}, {0.65, 0.1}}};
  OptionSelection selection = selectOptions(problem);
  EXPECT_EQ(selection.flops, 200);
  EXPECT_EQ(selection.option[0], std::optional<unsigned>(0));
  EXPECT_EQ(selection.option[1], std::optional<unsigned>(0));
}

} // namespace
