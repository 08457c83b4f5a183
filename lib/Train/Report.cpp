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
  auto *bf16 = llvm::find_if(
      runs, [](const Run &r) { return r.recipe.kind == Recipe::BF16; });
  if (bf16 == runs.end() || !std::isfinite(bf16->finalValLoss) ||
      !std::isfinite(run.finalValLoss))
    return std::nullopt;
  return (run.finalValLoss - bf16->finalValLoss) / bf16->finalValLoss;
}

std::string train::describeBF16(Accumulation accumulation) {
  return accumulation == Accumulation::F32
             ? "bf16: bf16 operands, GEMMs accumulating in f32 and rounded "
               "once (autocast BF16, as GPUs compute it; --accumulation=f32)"
             : "bf16: every GEMM multiply-add rounded to bf16, as linalg "
               "defines it (--accumulation=as-written)";
}

void train::printSummary(raw_ostream &os, ArrayRef<Run> runs, bool json,
                         int64_t ranks, Accumulation accumulation) {
  os << llvm::formatv("{0,-14} {1,6} {2,11} {3,11} {4,12} {5,9}\n", "recipe",
                      "steps", "final loss", "final val", "val vs bf16",
                      "s/step");
  llvm::json::Array jsonRuns;
  for (const Run &run : runs) {
    double seconds = 0;
    for (const Run::Row &row : run.rows)
      seconds += row.seconds;
    seconds /= std::max<size_t>(1, run.rows.size());
    std::optional<double> gap = gapToBF16(run, runs);
    os << llvm::formatv("{0,-14} {1,6} {2,11:f4} {3,11:f4} {4,12} {5,9:f3}\n",
                        run.recipe.label, run.lastStep, run.finalLoss,
                        run.finalValLoss,
                        gap ? formatPercent(*gap) : std::string("-"), seconds);
    llvm::json::Object entry{{"recipe", run.recipe.label},
                             {"final_loss", jsonNumber(run.finalLoss)},
                             {"final_val_loss", jsonNumber(run.finalValLoss)},
                             {"steps", run.lastStep},
                             {"seconds_per_step", seconds},
                             {"stopped", run.stopped}};
    if (!run.recipe.pipeline.empty()) {
      entry["fp8_pipeline"] = run.recipe.pipeline;
      entry["amax_collectives_per_step"] = int64_t(run.amaxCollectives);
    }
    if (gap)
      entry["val_gap_to_bf16"] = jsonNumber(*gap);
    llvm::json::Array events;
    for (const std::string &event : run.events)
      events.push_back(event);
    entry["events"] = std::move(events);
    jsonRuns.push_back(std::move(entry));
  }
  if (llvm::any_of(runs,
                   [](const Run &run) { return run.recipe.kind != Recipe::FP32; }))
    os << describeBF16(accumulation) << "\n";
  for (const Run &run : runs)
    for (const std::string &event : run.events)
      os << "event: " << event << "\n";
  if (json) {
    // With several ranks, their parameters and FP8 state were checked equal
    // bit for bit after every run.
    llvm::json::Object result{
        {"ranks", ranks},
        {"accumulation", stringifyAccumulation(accumulation)},
        {"runs", std::move(jsonRuns)}};
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
  os << "recipe,step,train_loss,val_loss,grad_norm,seconds,accumulation\n";
  for (const Run &run : runs)
    for (const Run::Row &row : run.rows)
      os << run.recipe.label << "," << row.step << "," << formatNumber(row.loss)
         << "," << formatNumber(row.valLoss) << ","
         << formatNumber(row.gradNorm) << "," << formatNumber(row.seconds)
         << "," << stringifyAccumulation(accumulation) << "\n";
  if (failed(closeOutput(os, path, error)))
    return failure();
  std::string tensorsPath = (path + ".tensors.csv").str();
  llvm::raw_fd_ostream tensors(tensorsPath, ec);
  if (ec) {
    error = "cannot write '" + tensorsPath + "': " + ec.message();
    return failure();
  }
  tensors << "recipe,step,tensor,amax,scale,saturated,flushed\n";
  for (const Run &run : runs)
    for (const Run::TensorRow &row : run.tensorRows)
      tensors << run.recipe.label << "," << row.step << "," << row.tensor << ","
              << formatNumber(row.amax) << "," << formatNumber(row.scale) << ","
              << formatNumber(row.saturated) << "," << formatNumber(row.flushed)
              << "\n";
  return closeOutput(tensors, tensorsPath, error);
}
