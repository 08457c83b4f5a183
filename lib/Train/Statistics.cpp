//===- Statistics.cpp - Per-tensor statistics of an FP8 run ---------------===//

#include "fp8/Train/Statistics.h"

#include "fp8/Train/Run.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;

LogicalResult train::recordTensorStatistics(Run &run, uint64_t step,
                                            std::string &error) {
  for (const QuantizeProbe &probe : run.probes) {
    Run::TensorRow row{step, probe.name, NAN, NAN, NAN, NAN};
    auto history = run.scalingState.find(probe.name + ".amax_history");
    auto scale = run.scalingState.find(probe.name + ".scale");
    if (history != run.scalingState.end()) {
      FailureOr<HostTensor> value =
          run.fn->readGlobal(history->getKey(), history->getValue(), error);
      if (failed(value))
        return failure();
      // fp8.roll_history moved the step's amax to the back (TE's order);
      // a history of one keeps none.
      int64_t length = value->getNumElements();
      if (length > 1)
        row.amax = value->get(length - 1);
    }
    if (scale != run.scalingState.end()) {
      FailureOr<HostTensor> value =
          run.fn->readGlobal(scale->getKey(), scale->getValue(), error);
      if (failed(value))
        return failure();
      row.scale = value->get(0);
    }
    // The probe's counters: saturated, flushed, elements.
    auto type = RankedTensorType::get(
        {3}, IntegerType::get(run.fn->getSignature().getContext(), 64));
    FailureOr<HostTensor> counts =
        run.fn->readGlobal(probe.global, type, error);
    if (failed(counts))
      return failure();
    double total = std::max(1.0, counts->get(2));
    row.saturated = counts->get(0) / total;
    row.flushed = counts->get(1) / total;
    auto momentsType = RankedTensorType::get(
        {4}, Float64Type::get(run.fn->getSignature().getContext()));
    FailureOr<HostTensor> moments =
        run.fn->readGlobal(probe.moments, momentsType, error);
    if (failed(moments))
      return failure();
    double sums[4] = {moments->get(0), moments->get(1), moments->get(2),
                      moments->get(3)};
    row.kurtosis = momentKurtosis(sums, counts->get(2));
    run.tensorRows.push_back(row);
  }
  return success();
}

std::string train::largestAmaxJump(const Run &run) {
  size_t n = run.probes.size();
  if (n == 0 || run.tensorRows.size() < 2 * n)
    return "";
  std::string best;
  double bestRatio = 1;
  for (size_t i = 0; i < n; ++i) {
    const Run::TensorRow &now = run.tensorRows[run.tensorRows.size() - n + i];
    const Run::TensorRow &before =
        run.tensorRows[run.tensorRows.size() - 2 * n + i];
    double ratio = now.amax / before.amax;
    if (std::isfinite(ratio) && ratio > bestRatio) {
      bestRatio = ratio;
      best = llvm::formatv("{0} (amax {1:e} -> {2:e})", now.tensor, before.amax,
                           now.amax)
                 .str();
    }
  }
  return best;
}
