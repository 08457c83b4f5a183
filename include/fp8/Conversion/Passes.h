//===- Passes.h - fp8 conversion passes -------------------------*- C++ -*-===//

#ifndef FP8_CONVERSION_PASSES_H
#define FP8_CONVERSION_PASSES_H

#include "fp8/Conversion/FP8ToLinalg/FP8ToLinalg.h"
#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"

#include "mlir/Pass/Pass.h"

namespace mlir::fp8 {

#define GEN_PASS_DECL
#include "fp8/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fp8/Conversion/Passes.h.inc"

} // namespace mlir::fp8

#endif // FP8_CONVERSION_PASSES_H
