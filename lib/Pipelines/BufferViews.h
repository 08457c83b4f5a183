//===- BufferViews.h - The buffer a memref views ----------------*- C++ -*-===//
//
// Shared by the pipelines' buffer passes (staging for the GPU, copies, and
// deallocation): internal to FP8Pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_PIPELINES_BUFFERVIEWS_H
#define FP8_LIB_PIPELINES_BUFFERVIEWS_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::fp8 {

/// The buffer `value` views (through casts, subviews, reshapes, a
/// strided-metadata base).
inline Value getViewedBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

} // namespace mlir::fp8

#endif // FP8_LIB_PIPELINES_BUFFERVIEWS_H
