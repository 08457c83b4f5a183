//===- Selection.cpp - Which GEMMs go to FP8 under a noise budget ---------===//

#include "fp8/Tune/Selection.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::tune;

double tune::noiseFromDb(double db) {
  if (std::isnan(db))
    return std::numeric_limits<double>::infinity();
  return std::pow(10.0, -db / 10.0);
}

double tune::dbFromNoise(double noise) {
  if (noise <= 0)
    return std::numeric_limits<double>::infinity();
  return -10.0 * std::log10(noise);
}

SmallVector<double> tune::predictNoise(const SelectionProblem &problem,
                                       ArrayRef<bool> chosen) {
  SmallVector<double> noise(problem.baseline);
  for (auto [i, isChosen] : llvm::enumerate(chosen))
    if (isChosen)
      for (auto [m, cost] : llvm::enumerate(problem.cost[i]))
        noise[m] += cost;
  return noise;
}

bool tune::fitsBudget(const SelectionProblem &problem, ArrayRef<bool> chosen) {
  return llvm::all_of_zip(predictNoise(problem, chosen), problem.limit,
                          [](double noise, double limit) {
                            return noise <= limit;
                          });
}

static bool isAllowed(const SelectionProblem &problem, unsigned i) {
  return problem.allowed.empty() || problem.allowed[i];
}

/// Whether `cost` still fits on top of `noise`.
static bool fits(ArrayRef<double> noise, ArrayRef<double> cost,
                 ArrayRef<double> limit) {
  for (auto [n, c, l] : llvm::zip_equal(noise, cost, limit))
    if (!(n + c <= l))
      return false;
  return true;
}

/// What `cost` uses of the budget: its largest share of any metric's slack
/// (the metric it exhausts first).
static double budgetShare(ArrayRef<double> cost, ArrayRef<double> baseline,
                          ArrayRef<double> limit) {
  double share = 0;
  for (auto [c, base, l] : llvm::zip_equal(cost, baseline, limit)) {
    double slack = l - base;
    share = std::max(share, slack > 0 ? c / slack : (c > 0 ? INFINITY : 0.0));
  }
  return share;
}

static double sumFlops(const SelectionProblem &problem, ArrayRef<bool> chosen) {
  double total = 0;
  for (auto [i, isChosen] : llvm::enumerate(chosen))
    if (isChosen)
      total += problem.flops[i];
  return total;
}

Selection tune::selectExact(const SelectionProblem &problem) {
  unsigned n = problem.flops.size();
  Selection best;
  best.chosen.assign(n, false);
  best.exact = true;
  if (!fitsBudget(problem, best.chosen))
    return best;

  SmallVector<unsigned> order;
  for (unsigned i = 0; i < n; ++i)
    if (isAllowed(problem, i))
      order.push_back(i);
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return problem.flops[a] > problem.flops[b];
  });
  // remaining[k]: the FLOPs of order[k..], the most the rest can add.
  SmallVector<double> remaining(order.size() + 1, 0);
  for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k)
    remaining[k] = remaining[k + 1] + problem.flops[order[k]];

  SmallVector<bool> chosen(n, false);
  SmallVector<double> noise(problem.baseline);
  double bestFlops = 0;
  // Depth first over "take order[k]" / "leave it", taking first.
  std::function<void(unsigned, double)> search = [&](unsigned k,
                                                     double flops) {
    if (flops > bestFlops) {
      bestFlops = flops;
      best.chosen = chosen;
    }
    if (k == order.size() || flops + remaining[k] <= bestFlops)
      return;
    unsigned i = order[k];
    if (fits(noise, problem.cost[i], problem.limit)) {
      chosen[i] = true;
      for (auto [m, c] : llvm::enumerate(problem.cost[i]))
        noise[m] += c;
      search(k + 1, flops + problem.flops[i]);
      for (auto [m, c] : llvm::enumerate(problem.cost[i]))
        noise[m] -= c;
      chosen[i] = false;
    }
    search(k + 1, flops);
  };
  search(0, 0);
  best.flops = sumFlops(problem, best.chosen);
  return best;
}

Selection tune::selectGreedy(const SelectionProblem &problem) {
  unsigned n = problem.flops.size();
  Selection result;
  result.chosen.assign(n, false);
  if (!fitsBudget(problem, result.chosen))
    return result;

  // What a candidate uses of the budget.
  SmallVector<double> share(n, 0);
  for (unsigned i = 0; i < n; ++i)
    share[i] = budgetShare(problem.cost[i], problem.baseline, problem.limit);
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < n; ++i)
    if (isAllowed(problem, i))
      order.push_back(i);
  auto gain = [&](unsigned i) {
    return share[i] > 0 ? problem.flops[i] / share[i] : INFINITY;
  };
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    if (gain(a) != gain(b))
      return gain(a) > gain(b);
    return problem.flops[a] > problem.flops[b];
  });

  SmallVector<double> noise(problem.baseline);
  auto add = [&](unsigned i, double sign) {
    for (auto [m, c] : llvm::enumerate(problem.cost[i]))
      noise[m] += sign * c;
  };
  for (unsigned i : order)
    if (fits(noise, problem.cost[i], problem.limit)) {
      result.chosen[i] = true;
      add(i, +1);
    }

  // Fix-ups: the ratio order can leave a large GEMM out for small ones
  // that together use more budget than it would.
  for (bool improved = true; improved;) {
    improved = false;
    for (unsigned in : order) {
      if (result.chosen[in])
        continue;
      if (fits(noise, problem.cost[in], problem.limit)) {
        result.chosen[in] = true;
        add(in, +1);
        improved = true;
        continue;
      }
      for (unsigned out : order) {
        if (!result.chosen[out] || problem.flops[out] >= problem.flops[in])
          continue;
        add(out, -1);
        if (fits(noise, problem.cost[in], problem.limit)) {
          result.chosen[out] = false;
          result.chosen[in] = true;
          add(in, +1);
          improved = true;
          break;
        }
        add(out, +1);
      }
    }
  }
  result.flops = sumFlops(problem, result.chosen);
  return result;
}

Selection tune::selectSubset(const SelectionProblem &problem) {
  unsigned allowed = 0;
  for (unsigned i = 0, e = problem.flops.size(); i < e; ++i)
    allowed += isAllowed(problem, i);
  return allowed <= kExactSearchLimit ? selectExact(problem)
                                      : selectGreedy(problem);
}

SmallVector<double> tune::predictNoise(const OptionProblem &problem,
                                       const OptionChoice &choice) {
  SmallVector<double> noise(problem.baseline);
  for (auto [i, option] : llvm::enumerate(choice))
    if (option)
      for (auto [m, cost] : llvm::enumerate(problem.cost[i][*option]))
        noise[m] += cost;
  return noise;
}

OptionSelection tune::selectOptions(const OptionProblem &problem) {
  unsigned n = problem.flops.size();
  unsigned numMetrics = problem.limit.size();
  // As a 0/1 problem, with one option per candidate chosen by `pick`.
  auto solve = [&](function_ref<std::optional<unsigned>(unsigned)> pick,
                   OptionChoice &picked) {
    SelectionProblem binary;
    binary.flops = problem.flops;
    binary.baseline = problem.baseline;
    binary.limit = problem.limit;
    picked.assign(n, std::nullopt);
    for (unsigned i = 0; i < n; ++i) {
      picked[i] = pick(i);
      binary.cost.push_back(picked[i] ? problem.cost[i][*picked[i]]
                                      : SmallVector<double>(numMetrics, 0.0));
      binary.allowed.push_back(picked[i].has_value());
    }
    return selectSubset(binary);
  };
  // Each candidate's leanest allowed option: the one that uses the least of
  // the budget (the smallest largest share of any metric's slack).
  OptionChoice start;
  Selection subset = solve(
      [&](unsigned i) -> std::optional<unsigned> {
        std::optional<unsigned> best;
        double least = INFINITY;
        for (unsigned o = 0, e = problem.cost[i].size(); o < e; ++o) {
          if (!problem.isAllowed(i, o))
            continue;
          double share =
              budgetShare(problem.cost[i][o], problem.baseline, problem.limit);
          if (!best || share < least) {
            best = o;
            least = share;
          }
        }
        return best;
      },
      start);
  // With several metrics a smaller largest share is not a smaller cost on
  // every metric, so the leanest options can fit fewer FLOPs than the
  // preferred ones: the preferred ones are tried too, and win ties.
  OptionChoice preferred;
  Selection preferredSubset = solve(
      [&](unsigned i) -> std::optional<unsigned> {
        for (unsigned o = 0, e = problem.cost[i].size(); o < e; ++o)
          if (problem.isAllowed(i, o))
            return o;
        return std::nullopt;
      },
      preferred);
  if (preferredSubset.flops >= subset.flops) {
    subset = std::move(preferredSubset);
    start = std::move(preferred);
  }

  OptionSelection result;
  result.flops = subset.flops;
  result.exact = subset.exact;
  result.option.resize(n);
  SmallVector<unsigned> chosen;
  for (unsigned i = 0; i < n; ++i)
    if (subset.chosen[i]) {
      result.option[i] = start[i];
      chosen.push_back(i);
    }
  // The preferred options, where the budget allows, largest GEMMs first.
  llvm::stable_sort(chosen, [&](unsigned a, unsigned b) {
    return problem.flops[a] > problem.flops[b];
  });
  auto fitsAll = [&] {
    return llvm::all_of_zip(predictNoise(problem, result.option),
                            problem.limit,
                            [](double noise, double limit) {
                              return noise <= limit;
                            });
  };
  for (unsigned i : chosen)
    for (unsigned o = 0; o < *start[i]; ++o) {
      if (!problem.isAllowed(i, o))
        continue;
      result.option[i] = o;
      if (fitsAll())
        break;
      result.option[i] = start[i];
    }
  return result;
}
