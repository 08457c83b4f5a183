//===- InputDialects.h - What compiled modules may contain -------*- C++ -*-===//

#ifndef FP8_AOT_INPUTDIALECTS_H
#define FP8_AOT_INPUTDIALECTS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::fp8::aot {

/// The dialects of the modules fp8-run runs and fp8-compile compiles: the
/// fp8 dialect (with everything registerAllFP8Dialects brings), linalg on
/// tensors, TOSA, ml_program state, and what their lowerings produce.
void registerInputDialects(DialectRegistry &registry);

/// Whether `attr` is a resource whose data the file does not hold: what
/// MLIR prints as `dense_resource<__elided__>` (exports printed with
/// -mlir-elide-resource-strings-if-larger), or a handle with no blob.
bool isElidedResource(Attribute attr);

/// Fails, with an error at the first op that has one, when an attribute
/// under `module` is an elided resource: its values cannot be compiled in.
LogicalResult checkNoElidedResources(ModuleOp module);

} // namespace mlir::fp8::aot

#endif // FP8_AOT_INPUTDIALECTS_H
