//===- JSON.h - Numbers in the runners' JSON reports ------------*- C++ -*-===//

#ifndef FP8_RUNNER_JSON_H
#define FP8_RUNNER_JSON_H

#include "llvm/Support/JSON.h"

#include <cmath>

namespace mlir::fp8::runner {

/// A JSON number, or null when not finite: JSON has no inf or NaN, and
/// llvm::json would print them as `inf` / `nan`, which no parser reads.
inline llvm::json::Value jsonNumber(double value) {
  return std::isfinite(value) ? llvm::json::Value(value) : nullptr;
}

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_JSON_H
