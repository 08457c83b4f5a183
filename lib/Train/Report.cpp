//===- Report.cpp - The runs' losses as a table, JSON and CSV -------------===//

#include "fp8/Train/Report.h"

#include "fp8/Runner/JSON.h"
#include "fp8/Train/Run.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;

std::string train::formatPercent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.2f%%", 100 * fraction);
  return text;
}

std::string train::formatNumber(double value) {
  if (!std::isfinite(value))
    return "";
  char text[32];
  std::snprintf(text, sizeof(text), "%.7g", value);
  return text;
}

std::optional<double> train::gapToBF16(const Run &run, ArrayRef<Run> runs) {
  auto *bf16 = llvm::find_if(runs, [&](const Run &r) {
    return r.recipe.kind == Recipe::BF16 && r.seed == run.seed;
  });
  if (bf16 == runs.end() || !std::isfinite(bf16->finalValLoss) ||
      !std::isfinite(run.finalValLoss))
    return std::nullopt;
  return (run.finalValLoss - bf16->finalValLoss) / bf16->finalValLoss;
}

/// The final validation (or train) loss of every run of `recipe`, in seed
/// order: NaN for a divergent run, so that no mean includes it.
static SmallVector<double> finalLosses(const RecipeSummary &recipe,
                                       bool validation) {
  SmallVector<double> values;
  for (const Run *run : recipe.runs)
    values.push_back(run->divergedAt() ? NAN
                     : validation      ? run->finalValLoss
                                       : run->finalLoss);
  return values;
}

std::vector<RecipeSummary> train::summarizeRecipes(ArrayRef<Run> runs,
                                                   double tolerance) {
  std::vector<RecipeSummary> result;
  for (const Run &run : runs) {
    auto it = llvm::find_if(result, [&](const RecipeSummary &r) {
      return r.label == run.recipe.label;
    });
    if (it == result.end()) {
      RecipeSummary &added = result.emplace_back();
      added.label = run.recipe.label;
      added.kind = run.recipe.kind;
      added.runs.push_back(&run);
    } else {
      it->runs.push_back(&run);
    }
  }
  auto bf16Entry = llvm::find_if(
      result, [](const RecipeSummary &r) { return r.kind == Recipe::BF16; });
  std::optional<SmallVector<double>> reference;
  if (bf16Entry != result.end())
    reference = finalLosses(*bf16Entry, true);
  for (RecipeSummary &r : result) {
    r.finalLoss = summarize(finalLosses(r, false));
    r.finalValLoss = summarize(finalLosses(r, true));
    if (!reference) {
      r.verdict = "no bf16 run: no gap";
      continue;
    }
    // Pair by seed: every recipe ran the same seeds in the same order.
    r.gaps = pairedGaps(finalLosses(r, true), *reference);
    r.gap = summarize(r.gaps);
    r.verdict =
        r.kind == Recipe::BF16
            ? "reference"
            : describeVerdict(judge(*r.gap, tolerance, r.runs.size()), *r.gap);
  }
  return result;
}

std::vector<RecipeComparison>
train::compareRecipes(ArrayRef<RecipeSummary> recipes, double alpha) {
  std::vector<RecipeComparison> result;
  for (size_t j = 0; j < recipes.size(); ++j) {
    for (size_t i = j + 1; i < recipes.size(); ++i) {
      const RecipeSummary *first = &recipes[i], *second = &recipes[j];
      if (first->kind == Recipe::BF16)
        std::swap(first, second);
      RecipeComparison comparison;
      comparison.first = first->label;
      comparison.second = second->label;
      comparison.difference = summarize(
          pairedGaps(finalLosses(*first, true), finalLosses(*second, true)));
      if (comparison.difference.used < 2)
        continue;
      comparison.p = pValueOfMean(comparison.difference);
      result.push_back(std::move(comparison));
    }
  }
  SmallVector<double> pValues = llvm::map_to_vector(
      result, [](const RecipeComparison &c) { return c.p; });
  for (auto [comparison, rejected] :
       llvm::zip_equal(result, holmRejections(pValues, alpha)))
    comparison.toldApart = rejected;
  return result;
}

std::string train::describeBF16(Accumulation accumulation) {
  return accumulation == Accumulation::F32
             ? "bf16: bf16 operands, GEMMs accumulating in f32 and rounded "
               "once (autocast BF16, as GPUs compute it; --accumulation=f32)"
             : "bf16: every GEMM multiply-add rounded to bf16, as linalg "
               "defines it (--accumulation=as-written)";
}

static llvm::json::Value jsonInterval(const Interval &interval) {
  if (!interval.lo)
    return nullptr;
  return llvm::json::Array{jsonNumber(*interval.lo), jsonNumber(*interval.hi)};
}

/// "3.1234 ± 0.0123" (or "3.1234" without an interval); with `percent`, a
/// gap as "+0.12% ± 0.30%".
static std::string formatMean(const Interval &interval, bool percent) {
  if (interval.used == 0)
    return "-";
  std::string text = percent ? formatPercent(interval.mean)
                             : llvm::formatv("{0:f4}", interval.mean).str();
  if (interval.lo)
    text += percent
                ? llvm::formatv(" ± {0:f2}%", 100 * interval.halfWidth()).str()
                : llvm::formatv(" ± {0:f4}", interval.halfWidth()).str();
  return text;
}

void train::printSummary(raw_ostream &os, ArrayRef<Run> runs, bool json,
                         int64_t ranks, Accumulation accumulation,
                         unsigned seeds, double tolerance) {
  std::vector<RecipeSummary> recipes = summarizeRecipes(runs, tolerance);
  if (seeds <= 1)
    os << llvm::formatv("{0,-14} {1,6} {2,11} {3,11} {4,12} {5,9}\n", "recipe",
                        "steps", "final loss", "final val", "val vs bf16",
                        "s/step");
  else
    os << llvm::formatv("{0,-14} {1,5} {2,19} {3,19} {4,18} {5}\n", "recipe",
                        "seeds", "final loss", "final val", "val vs bf16",
                        "verdict");
  llvm::json::Array jsonRuns;
  for (const RecipeSummary &recipe : recipes) {
    const Run &first = *recipe.runs.front();
    double seconds = 0;
    size_t rows = 0;
    uint64_t lastStep = 0;
    bool stopped = false;
    for (const Run *run : recipe.runs) {
      for (const Run::Row &row : run->rows)
        seconds += row.seconds;
      rows += run->rows.size();
      lastStep = std::max(lastStep, run->lastStep);
      stopped |= run->stopped;
    }
    seconds /= std::max<size_t>(1, rows);
    std::optional<double> gap = gapToBF16(first, runs);
    if (seeds <= 1)
      os << llvm::formatv(
          "{0,-14} {1,6} {2,11:f4} {3,11:f4} {4,12} {5,9:f3}\n", recipe.label,
          first.lastStep, first.finalLoss, first.finalValLoss,
          gap ? formatPercent(*gap) : std::string("-"), seconds);
    else
      os << llvm::formatv(
          "{0,-14} {1,5} {2,19} {3,19} {4,18} {5}\n", recipe.label,
          recipe.finalLoss.used, formatMean(recipe.finalLoss, false),
          formatMean(recipe.finalValLoss, false),
          recipe.gap ? formatMean(*recipe.gap, true) : "-", recipe.verdict);
    // With one seed the run's own numbers; with several, the means.
    bool one = seeds <= 1;
    llvm::json::Object entry{
        {"recipe", recipe.label},
        {"final_loss",
         jsonNumber(one ? first.finalLoss : recipe.finalLoss.mean)},
        {"final_val_loss",
         jsonNumber(one ? first.finalValLoss : recipe.finalValLoss.mean)},
        {"steps", lastStep},
        {"seconds_per_step", seconds},
        {"stopped", stopped},
        {"seeds", int64_t(recipe.runs.size())},
        {"final_loss_mean", jsonNumber(recipe.finalLoss.mean)},
        {"final_loss_ci", jsonInterval(recipe.finalLoss)},
        {"final_loss_seeds_used", int64_t(recipe.finalLoss.used)},
        {"final_val_loss_mean", jsonNumber(recipe.finalValLoss.mean)},
        {"final_val_loss_ci", jsonInterval(recipe.finalValLoss)},
        {"final_val_loss_seeds_used", int64_t(recipe.finalValLoss.used)},
        {"verdict", recipe.verdict}};
    if (!first.recipe.pipeline.empty()) {
      entry["fp8_pipeline"] = first.recipe.pipeline;
      entry["amax_collectives_per_step"] = int64_t(first.amaxCollectives);
    }
    if (one && gap)
      entry["val_gap_to_bf16"] = jsonNumber(*gap);
    if (recipe.gap) {
      if (!one)
        entry["val_gap_to_bf16"] = jsonNumber(recipe.gap->mean);
      entry["val_gap_to_bf16_mean"] = jsonNumber(recipe.gap->mean);
      entry["val_gap_to_bf16_ci"] = jsonInterval(*recipe.gap);
      entry["val_gap_to_bf16_seeds_used"] = int64_t(recipe.gap->used);
    }
    llvm::json::Array events, perSeed, divergent;
    for (auto [i, run] : llvm::enumerate(recipe.runs)) {
      for (const std::string &event : run->events)
        events.push_back(event);
      llvm::json::Object seedEntry{
          {"seed", int64_t(run->seed)},
          {"steps", run->lastStep},
          {"final_loss", jsonNumber(run->finalLoss)},
          {"final_val_loss", jsonNumber(run->finalValLoss)},
          {"final_val_loss_stderr", jsonNumber(run->finalValStdErr)},
          {"stopped", run->stopped}};
      if (recipe.gap)
        seedEntry["val_gap_to_bf16"] = jsonNumber(recipe.gaps[i]);
      if (std::optional<uint64_t> step = run->divergedAt()) {
        seedEntry["diverged_at"] = int64_t(*step);
        divergent.push_back(llvm::json::Object{{"seed", int64_t(run->seed)},
                                               {"step", int64_t(*step)}});
      }
      perSeed.push_back(std::move(seedEntry));
    }
    entry["events"] = std::move(events);
    entry["per_seed"] = std::move(perSeed);
    entry["divergent"] = std::move(divergent);
    jsonRuns.push_back(std::move(entry));
  }
  if (seeds <= 1)
    os << "one seed: no interval (--seeds=N for 95% intervals and verdicts)\n";
  else
    os << llvm::formatv("mean ± half-width of the 95% Student-t interval over "
                        "the finite seeds; val vs bf16 paired by seed; "
                        "verdicts at ±{0:f1}% (--parity-tolerance)\n",
                        100 * tolerance);
  if (llvm::none_of(recipes, [](const RecipeSummary &r) {
        return r.kind == Recipe::BF16;
      }))
    os << "no bf16 recipe in --recipes: no gap to BF16 and no verdict\n";
  if (llvm::any_of(
          runs, [](const Run &run) { return run.recipe.kind != Recipe::FP32; }))
    os << describeBF16(accumulation) << "\n";
  for (const Run &run : runs)
    for (const std::string &event : run.events)
      os << "event: " << event << "\n";
  for (const Run &run : runs)
    if (std::optional<uint64_t> step = run.divergedAt())
      os << llvm::formatv("event: {0} seed {1} diverged at step {2}: left out "
                          "of the means\n",
                          run.recipe.label, run.seed, *step);
  std::vector<RecipeComparison> comparisons;
  if (seeds > 1)
    comparisons = compareRecipes(recipes);
  if (!comparisons.empty()) {
    // Which recipes differ, not only from BF16: Holm's procedure keeps the
    // chance of any false "told apart" among all the pairs under 5%.
    size_t apart = llvm::count_if(
        comparisons, [](const RecipeComparison &c) { return c.toldApart; });
    os << llvm::formatv("recipes told apart at 5% (paired t tests of the "
                        "final val, Holm over {0} pairs): ",
                        comparisons.size());
    if (apart) {
      os << "\n";
    } else {
      // How near the closest pair came: Holm's first threshold is 5% / m.
      const RecipeComparison *closest = nullptr;
      for (const RecipeComparison &c : comparisons)
        if (!std::isnan(c.p) && (!closest || c.p < closest->p))
          closest = &c;
      os << "none";
      if (closest)
        os << llvm::formatv(" (the closest, {0} vs {1}: {2}, p = {3:e2}; "
                            "the first needs p <= {4:e2})",
                            closest->first, closest->second,
                            formatMean(closest->difference, true), closest->p,
                            0.05 / comparisons.size());
      os << "\n";
    }
    for (const RecipeComparison &c : comparisons)
      if (c.toldApart)
        os << llvm::formatv("  {0} vs {1}: {2} (p = {3:e2})\n", c.first,
                            c.second, formatMean(c.difference, true), c.p);
  }
  if (json) {
    // With several ranks, their parameters and FP8 state were checked equal
    // bit for bit after every run.
    llvm::json::Object result{
        {"ranks", ranks},
        {"seeds", int64_t(seeds)},
        {"parity_tolerance", tolerance},
        {"accumulation", stringifyAccumulation(accumulation)},
        {"runs", std::move(jsonRuns)}};
    if (!comparisons.empty()) {
      llvm::json::Array pairs;
      for (const RecipeComparison &c : comparisons)
        pairs.push_back(llvm::json::Object{
            {"first", c.first},
            {"second", c.second},
            {"val_difference_mean", jsonNumber(c.difference.mean)},
            {"val_difference_ci", jsonInterval(c.difference)},
            {"seeds_used", int64_t(c.difference.used)},
            {"p", jsonNumber(c.p)},
            {"told_apart", c.toldApart}});
      result["comparisons"] = std::move(pairs);
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(result))) << "\n";
  }
}

LogicalResult train::closeOutput(llvm::raw_fd_ostream &os, StringRef path,
                                 std::string &error) {
  os.close();
  if (!os.has_error())
    return success();
  error = ("cannot write '" + path + "': " + os.error().message()).str();
  os.clear_error();
  return failure();
}

LogicalResult train::writeCsv(StringRef path, ArrayRef<Run> runs,
                              Accumulation accumulation, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = ("cannot write '" + path + "': " + ec.message()).str();
    return failure();
  }
  os << "recipe,step,train_loss,val_loss,grad_norm,seconds,accumulation,"
        "seed\n";
  for (const Run &run : runs)
    for (const Run::Row &row : run.rows)
      os << run.recipe.label << "," << row.step << "," << formatNumber(row.loss)
         << "," << formatNumber(row.valLoss) << ","
         << formatNumber(row.gradNorm) << "," << formatNumber(row.seconds)
         << "," << stringifyAccumulation(accumulation) << "," << run.seed
         << "\n";
  if (failed(closeOutput(os, path, error)))
    return failure();
  std::string tensorsPath = (path + ".tensors.csv").str();
  llvm::raw_fd_ostream tensors(tensorsPath, ec);
  if (ec) {
    error = "cannot write '" + tensorsPath + "': " + ec.message();
    return failure();
  }
  tensors << "recipe,step,tensor,amax,scale,saturated,flushed,kurtosis,seed\n";
  for (const Run &run : runs)
    for (const Run::TensorRow &row : run.tensorRows)
      tensors << run.recipe.label << "," << row.step << "," << row.tensor << ","
              << formatNumber(row.amax) << "," << formatNumber(row.scale) << ","
              << formatNumber(row.saturated) << "," << formatNumber(row.flushed)
              << "," << formatNumber(row.kurtosis) << "," << run.seed << "\n";
  return closeOutput(tensors, tensorsPath, error);
}
