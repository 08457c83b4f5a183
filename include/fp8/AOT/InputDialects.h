//===- InputDialects.h - What compiled modules may contain -------*- C++ -*-===//

#ifndef FP8_AOT_INPUTDIALECTS_H
#define FP8_AOT_INPUTDIALECTS_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::fp8::aot {

/// The dialects of the modules fp8-run runs and fp8-compile compiles: the
/// fp8 dialect (with everything registerAllFP8Dialects brings), linalg on
/// tensors, TOSA, ml_program state, and what their lowerings produce.
void registerInputDialects(DialectRegistry &registry);

} // namespace mlir::fp8::aot

#endif // FP8_AOT_INPUTDIALECTS_H
