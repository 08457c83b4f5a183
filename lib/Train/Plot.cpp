//===- Plot.cpp - The runs' loss curves through gnuplot -------------------===//

#include "fp8/Train/Report.h"

#include "fp8/Train/Run.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::train;

LogicalResult train::writePlot(StringRef plotFile, StringRef title,
                               ArrayRef<Run> runs, std::string &error) {
  auto gnuplot = llvm::sys::findProgramByName("gnuplot");
  if (!gnuplot) {
    error = "--plot needs gnuplot (Debian: gnuplot-nox)";
    return failure();
  }
  SmallString<128> dataFile, scriptFile;
  if (llvm::sys::fs::createTemporaryFile("fp8-train", "dat", dataFile) ||
      llvm::sys::fs::createTemporaryFile("fp8-train", "gp", scriptFile)) {
    error = "cannot create temporary files for gnuplot";
    return failure();
  }
  std::error_code ec;
  {
    llvm::raw_fd_ostream data(dataFile, ec);
    // One gnuplot data block per run (two blank lines apart): step, train
    // loss, validation loss ("NaN" where not measured).
    for (const Run &run : runs) {
      for (const Run::Row &row : run.rows)
        data << row.step << " " << row.loss << " "
             << (std::isfinite(row.valLoss) ? formatNumber(row.valLoss) : "NaN")
             << "\n";
      data << "\n\n";
    }
  }
  {
    llvm::raw_fd_ostream script(scriptFile, ec);
    script << "set terminal pngcairo size 1100,700 noenhanced\n"
           << "set output '" << plotFile << "'\n"
           << "set title 'Training loss (" << title << ")'\n"
           << "set xlabel 'step'\nset ylabel 'cross entropy (nats)'\n"
           << "set key top right\nset grid\nset datafile missing 'NaN'\n"
           << "plot ";
    for (auto [i, run] : llvm::enumerate(runs)) {
      std::optional<double> gap = gapToBF16(run, runs);
      std::string label = run.recipe.label;
      if (gap && run.recipe.kind != Recipe::BF16)
        label += " (val " + formatPercent(*gap) + " vs bf16)";
      script << (i ? ", " : "") << "'" << dataFile << "' index " << i
             << " using 1:2 with lines lw 1 lc " << i + 1 << " title '" << label
             << " train', '" << dataFile << "' index " << i
             << " using 1:3 with linespoints pt 7 ps 0.6 lw 2 lc " << i + 1
             << " title '" << run.recipe.label << " val'";
    }
    script << "\n";
  }
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*gnuplot, {*gnuplot, scriptFile},
                                         std::nullopt, {}, 0, 0, &message);
  llvm::sys::fs::remove(dataFile);
  llvm::sys::fs::remove(scriptFile);
  if (status != 0) {
    error = "gnuplot failed" + (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}
