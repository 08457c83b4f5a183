//===- fp8-fuzz-checkpoint.cpp - libFuzzer target for fp8-train --resume ---===//
//
// Each input is a checkpoint of a two-parameter run (`step`, then
// parameter.0.npy, moment1.0.npy, moment2.0.npy, parameter.1.npy,
// moment1.1.npy, moment2.1.npy), the files separated by the line
// "--fp8-fuzz-file--" and written into a scratch directory, then restored
// by train::loadCheckpoint as `fp8-train --resume` does. The parameters are
// f32 of shapes (4,) and (2, 3). Errors are fine; a failure without a
// message, a crash, a sanitizer report, a restored tensor of another shape
// or type, or a step beyond what fp8-train counts to is a finding.
//
//===----------------------------------------------------------------------===//

#include "fp8/Train/Checkpoint.h"
#include "fp8/Train/Run.h"
#include "fp8/Train/Trainer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;
using namespace mlir::fp8;

[[noreturn]] static void finding(const Twine &what) {
  llvm::errs() << "fp8-fuzz-checkpoint finding: " << what << "\n";
  std::abort();
}

/// The scratch checkpoint directory (DIR/fuzz/), made once per process.
static const std::string &scratchDir() {
  static std::string dir = [] {
    SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("fp8-fuzz-checkpoint", path))
      finding("cannot create a scratch directory");
    llvm::sys::path::append(path, "fuzz");
    if (llvm::sys::fs::create_directories(path))
      finding("cannot create a scratch directory");
    return std::string(llvm::sys::path::parent_path(path));
  }();
  return dir;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static MLIRContext *context = new MLIRContext();
  static const char *const files[] = {
      "step",          "parameter.0.npy", "moment1.0.npy", "moment2.0.npy",
      "parameter.1.npy", "moment1.1.npy",   "moment2.1.npy"};
  const std::string &dir = scratchDir();

  // Write the input's parts; a part the input lacks is a missing file.
  StringRef rest(reinterpret_cast<const char *>(data), size);
  for (const char *file : files) {
    SmallString<128> path(dir);
    llvm::sys::path::append(path, "fuzz", file);
    if (rest.data() == nullptr) {
      llvm::sys::fs::remove(path);
      continue;
    }
    auto [part, tail] = rest.split("\n--fp8-fuzz-file--\n");
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec)
      finding("cannot write " + path);
    out << part;
    out.close();
    if (out.has_error())
      finding("cannot write " + path);
    rest = part.size() == rest.size() ? StringRef() : tail;
  }

  Builder builder(context);
  Type f32 = builder.getF32Type();
  SmallVector<SmallVector<int64_t>> shapes = {{4}, {2, 3}};
  train::Run run;
  run.recipe = {"fuzz", train::Recipe::FP32, ""};
  for (ArrayRef<int64_t> shape : shapes) {
    run.parameters.emplace_back(f32, shape);
    run.moment1.emplace_back(f32, shape);
    run.moment2.emplace_back(f32, shape);
  }
  std::string error;
  FailureOr<uint64_t> step =
      train::loadCheckpoint(dir, run, error, /*maxBytes=*/1 << 16);
  if (failed(step)) {
    if (error.empty())
      finding("a refused checkpoint without a message");
    return 0;
  }
  if (*step > train::kMaxSteps)
    finding("a step of " + Twine(*step) + " was accepted");
  for (auto *values : {&run.parameters, &run.moment1, &run.moment2})
    for (auto [value, shape] : llvm::zip_equal(*values, shapes))
      if (value.getElementType() != f32 || value.getShape() != ArrayRef<int64_t>(shape))
        finding("a restored tensor has another shape or type");
  return 0;
}
