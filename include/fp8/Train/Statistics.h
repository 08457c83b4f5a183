//===- Statistics.h - Per-tensor statistics of an FP8 run --------*- C++
//-*-===//

#ifndef FP8_TRAIN_STATISTICS_H
#define FP8_TRAIN_STATISTICS_H

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir::fp8::train {

struct Run;

/// Appends a row per quantized tensor after `step`: amax (newest history
/// entry) and scale from the delayed-scaling state, and the probes' counts
/// of saturated and flushed elements of the last call.
LogicalResult recordTensorStatistics(Run &run, uint64_t step,
                                     std::string &error);

/// The quantized tensor whose amax grew the most at the last step, for a
/// spike report ("" when none grew).
std::string largestAmaxJump(const Run &run);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_STATISTICS_H
