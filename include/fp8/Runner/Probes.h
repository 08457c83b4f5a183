//===- Probes.h - What the FP8 version of a graph did -----------*- C++ -*-===//

#ifndef FP8_RUNNER_PROBES_H
#define FP8_RUNNER_PROBES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir::fp8::runner {

/// Where one fp8.quantize's statistics are kept in the FP8 module.
struct QuantizeProbe {
  /// The quantized tensor: its scaling state's name, or "quantize#<i>".
  std::string name;
  /// A tensor<3xi64> global: saturated, flushed, elements.
  std::string global;
  /// A tensor<4xf64> global: the sums of x, x^2, x^3 and x^4 over the
  /// quantization's high-precision input (its kurtosis: momentKurtosis).
  std::string moments;
};

/// The kurtosis m4 / m2^2 (central moments; 3 for a Gaussian, 1.8 for a
/// uniform distribution, 1 for +-1 with equal odds) of `count` values from
/// their power sums {sum x, sum x^2, sum x^3, sum x^4}. NaN when the values
/// do not vary (m2 = 0) or there are none. FOG (arXiv 2505.20524) watches it
/// on the activations as an early sign of FP8 divergence.
double momentKurtosis(ArrayRef<double> powerSums, double count);

/// The scaling state a quantization's scale was loaded from, without its
/// ".scale" suffix: a global (state=globals) or a function argument named by
/// `fp8.state` (state=arguments).
std::optional<std::string> getScalingStateName(Value scale);

/// Adds, after every fp8.quantize, the power sums of its input (in f64) and
/// the counts of elements saturated (clipped
/// to +-max where a non-saturating cast would overflow: |x * scale| > 464 for
/// E4M3, >= 61440 for E5M2; values that merely round to max are not counted)
/// and flushed (x != 0 but quantized to 0), stored with the element count in
/// a tensor<3xi64> global the caller reads back after each call (the sums in
/// a tensor<4xf64> one).
SmallVector<QuantizeProbe> addQuantizeProbes(ModuleOp module);

/// The delayed-scaling state globals the FP8 pipeline created (scales and
/// amax histories) and their types, by name.
llvm::StringMap<RankedTensorType> findScalingState(ModuleOp module);

/// The static size of a dimension that `root` (integer data: token ids,
/// positions) indexes: followed through integer casts, views and the bodies
/// of linalg ops to a tensor.extract that uses it as an index.
std::optional<int64_t> findIndexedExtent(Value root);

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_PROBES_H
