//===- fp8-fuzz-npy.cpp - libFuzzer target for the .npy reader ------------===//
//
// Each input is the bytes of a .npy file, parsed by runner::parseNpy (what
// fp8-run --arg=I:file.npy and fp8-train --resume read) into an element
// type that the input's length picks. Errors are fine; a crash, a sanitizer
// report, or a tensor whose size disagrees with its shape is a finding.
// Allocations are capped at 1 MiB, as a memory budget would.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/Runner.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static MLIRContext *context = new MLIRContext();
  Builder builder(context);
  Type types[] = {builder.getF32Type(),   builder.getF64Type(),
                  builder.getBF16Type(),  builder.getF16Type(),
                  builder.getI64Type(),   builder.getI32Type(),
                  builder.getI8Type(),    builder.getI1Type(),
                  builder.getType<Float8E4M3FNType>()};
  Type elementType = types[size % std::size(types)];
  std::string error;
  StringRef bytes(reinterpret_cast<const char *>(data), size);
  FailureOr<fp8::runner::HostTensor> tensor = fp8::runner::parseNpy(
      bytes, "input", elementType, error, /*maxBytes=*/1 << 20);
  if (failed(tensor)) {
    if (error.empty()) {
      llvm::errs() << "fp8-fuzz-npy finding: a failure without a message\n";
      std::abort();
    }
    return 0;
  }
  int64_t elements = 1;
  for (int64_t extent : tensor->getShape())
    elements *= extent;
  if (tensor->getElementType() != elementType ||
      tensor->getNumElements() != elements) {
    llvm::errs() << "fp8-fuzz-npy finding: the tensor does not have the "
                    "header's shape or the requested type\n";
    std::abort();
  }
  // Every element reads back (the conversion wrote all of them).
  double sum = 0;
  for (int64_t i = 0; i < elements; ++i)
    sum += tensor->get(i);
  (void)sum;
  return 0;
}
