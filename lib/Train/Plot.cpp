//===- Plot.cpp - The runs' loss curves through gnuplot -------------------===//
//
// Nothing that names a file or a run is pasted into the gnuplot script as
// code: the step file's name reaches gnuplot as an argument (ARG1 of
// `gnuplot -c`), recipe labels as quoted strings, and gnuplot draws into a
// temporary file of ours that is then copied to --plot's path, so a quote or
// a newline in any of them can neither run a command nor break the plot.
//
//
// With several seeds a recipe is drawn as the mean training curve over its
// seeds that did not diverge, in a band from the lowest to the highest of
// their losses at each step, and its mean validation points.
//
//===----------------------------------------------------------------------===//

#include "fp8/Train/Report.h"

#include "fp8/Train/Run.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::train;
namespace fs = llvm::sys::fs;

/// `text` as a gnuplot single-quoted string: a quote doubled, control
/// characters (a newline would end the command) replaced by '?'.
static std::string quote(StringRef text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'')
      quoted += "''";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      quoted += '?';
    else
      quoted += c;
  }
  return quoted + "'";
}

static std::string number(double value) {
  return std::isfinite(value) ? formatNumber(value) : "NaN";
}

/// One data block per recipe: step, mean, min and max training loss over
/// the seeds that did not diverge (all of them when every one did), mean
/// validation loss.
static void writeBands(raw_ostream &data, ArrayRef<RecipeSummary> recipes) {
  for (const RecipeSummary &recipe : recipes) {
    SmallVector<const Run *> kept;
    for (const Run *run : recipe.runs)
      if (!run->divergedAt())
        kept.push_back(run);
    if (kept.empty())
      kept = recipe.runs;
    size_t rows = 0;
    for (const Run *run : kept)
      rows = std::max(rows, run->rows.size());
    for (size_t i = 0; i < rows; ++i) {
      double sum = 0, low = INFINITY, high = -INFINITY, valSum = 0;
      unsigned n = 0, valN = 0;
      uint64_t step = 0;
      for (const Run *run : kept) {
        if (i >= run->rows.size() || !std::isfinite(run->rows[i].loss))
          continue;
        const Run::Row &row = run->rows[i];
        step = row.step;
        sum += row.loss;
        low = std::min(low, row.loss);
        high = std::max(high, row.loss);
        ++n;
        if (std::isfinite(row.valLoss)) {
          valSum += row.valLoss;
          ++valN;
        }
      }
      if (n == 0)
        continue;
      data << step << " " << number(sum / n) << " " << number(low) << " "
           << number(high) << " " << (valN ? number(valSum / valN) : "NaN")
           << "\n";
    }
    data << "\n\n";
  }
}

/// The gnuplot data of every run and the script that plots it into
/// `outputFile` (the title's file name is ARG1).
static LogicalResult writeScript(StringRef dataFile, StringRef scriptFile,
                                 StringRef outputFile, ArrayRef<Run> runs,
                                 std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream data(dataFile, ec);
  if (ec) {
    error = ("cannot write '" + dataFile + "': " + ec.message()).str();
    return failure();
  }
  bool bands = llvm::any_of(
      runs, [&](const Run &run) { return run.seed != runs.front().seed; });
  std::vector<RecipeSummary> recipes = summarizeRecipes(runs, 0.01);
  // One gnuplot data block per run (two blank lines apart): step, train
  // loss, validation loss ("NaN" where not measured).
  if (bands)
    writeBands(data, recipes);
  else
    for (const Run &run : runs) {
      for (const Run::Row &row : run.rows)
        data << row.step << " " << row.loss << " "
             << (std::isfinite(row.valLoss) ? formatNumber(row.valLoss) : "NaN")
             << "\n";
      data << "\n\n";
    }
  if (failed(closeOutput(data, dataFile, error)))
    return failure();

  llvm::raw_fd_ostream script(scriptFile, ec);
  if (ec) {
    error = ("cannot write '" + scriptFile + "': " + ec.message()).str();
    return failure();
  }
  if (bands) {
    script << "set terminal pngcairo size 1100,700 noenhanced\n"
           << "set output " << quote(outputFile) << "\n"
           << "set title 'Training loss, mean over seeds, band min-max (' . "
              "ARG1 . ')'\n"
           << "set xlabel 'step'\nset ylabel 'cross entropy (nats)'\n"
           << "set key top right\nset grid\nset datafile missing 'NaN'\n"
           << "set style fill transparent solid 0.2 noborder\n"
           << "plot ";
    for (auto [i, recipe] : llvm::enumerate(recipes)) {
      std::string label =
          recipe.label + " (" + std::to_string(recipe.runs.size()) + " seeds";
      if (recipe.gap && recipe.gap->used && recipe.kind != Recipe::BF16)
        label += ", val " + formatPercent(recipe.gap->mean) + " vs bf16, " +
                 recipe.verdict;
      label += ")";
      script << (i ? ", " : "") << quote(dataFile) << " index " << i
             << " using 1:3:4 with filledcurves lc " << i + 1 << " notitle, "
             << quote(dataFile) << " index " << i
             << " using 1:2 with lines lw 1 lc " << i + 1 << " title "
             << quote(label + " train") << ", " << quote(dataFile) << " index "
             << i << " using 1:5 with linespoints pt 7 ps 0.6 lw 2 lc " << i + 1
             << " title " << quote(recipe.label + " val");
    }
    script << "\n";
    return closeOutput(script, scriptFile, error);
  }
  script << "set terminal pngcairo size 1100,700 noenhanced\n"
         << "set output " << quote(outputFile) << "\n"
         << "set title 'Training loss (' . ARG1 . ')'\n"
         << "set xlabel 'step'\nset ylabel 'cross entropy (nats)'\n"
         << "set key top right\nset grid\nset datafile missing 'NaN'\n"
         << "plot ";
  for (auto [i, run] : llvm::enumerate(runs)) {
    std::optional<double> gap = gapToBF16(run, runs);
    std::string label = run.recipe.label;
    if (gap && run.recipe.kind != Recipe::BF16)
      label += " (val " + formatPercent(*gap) + " vs bf16)";
    script << (i ? ", " : "") << quote(dataFile) << " index " << i
           << " using 1:2 with lines lw 1 lc " << i + 1 << " title "
           << quote(label + " train") << ", " << quote(dataFile) << " index "
           << i << " using 1:3 with linespoints pt 7 ps 0.6 lw 2 lc " << i + 1
           << " title " << quote(run.recipe.label + " val");
  }
  script << "\n";
  return closeOutput(script, scriptFile, error);
}

/// Runs gnuplot on `scriptFile` and copies the PNG it drew to `plotFile`.
static LogicalResult draw(StringRef gnuplot, StringRef scriptFile,
                          StringRef outputFile, StringRef plotFile,
                          StringRef title, std::string &error) {
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(gnuplot, {gnuplot, "-c", scriptFile, title},
                                std::nullopt, {}, 0, 0, &message);
  if (status != 0) {
    error = "gnuplot failed" + (message.empty() ? "" : ": " + message);
    return failure();
  }
  auto png = llvm::MemoryBuffer::getFile(outputFile);
  if (!png || (*png)->getBufferSize() == 0) {
    error = "gnuplot wrote no plot";
    return failure();
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(plotFile, ec);
  if (ec) {
    error = ("cannot write '" + plotFile + "': " + ec.message()).str();
    return failure();
  }
  os << (*png)->getBuffer();
  return closeOutput(os, plotFile, error);
}

LogicalResult train::writePlot(StringRef plotFile, StringRef title,
                               ArrayRef<Run> runs, std::string &error) {
  auto gnuplot = llvm::sys::findProgramByName("gnuplot");
  if (!gnuplot) {
    error = "--plot needs gnuplot (Debian: gnuplot-nox)";
    return failure();
  }
  SmallString<128> dataFile, scriptFile, outputFile;
  if (fs::createTemporaryFile("fp8-train", "dat", dataFile) ||
      fs::createTemporaryFile("fp8-train", "gp", scriptFile) ||
      fs::createTemporaryFile("fp8-train", "png", outputFile)) {
    error = "cannot create temporary files for gnuplot";
    for (StringRef file : {dataFile, scriptFile})
      if (!file.empty())
        fs::remove(file);
    return failure();
  }
  LogicalResult result =
      succeeded(writeScript(dataFile, scriptFile, outputFile, runs, error)) &&
              succeeded(draw(*gnuplot, scriptFile, outputFile, plotFile, title,
                             error))
          ? success()
          : failure();
  for (StringRef file : {dataFile, scriptFile, outputFile})
    fs::remove(file);
  return result;
}
