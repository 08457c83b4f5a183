//===- Checkpoint.cpp - Saving and resuming a run -------------------------===//

#include "fp8/Train/Checkpoint.h"

#include "fp8/Train/Run.h"
#include "fp8/Train/Trainer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;
namespace fs = llvm::sys::fs;

static std::string filePath(StringRef dir, const Twine &file) {
  SmallString<256> path(dir);
  llvm::sys::path::append(path, file);
  return std::string(path);
}

/// Writes every file of the checkpoint into `dir`.
static LogicalResult writeFiles(StringRef dir, const Run &run, uint64_t step,
                                std::string &error) {
  auto save = [&](ArrayRef<HostTensor> values, StringRef kind) {
    for (auto [i, value] : llvm::enumerate(values))
      if (failed(writeNpy(filePath(dir, kind + "." + Twine(i) + ".npy"), value,
                          error)))
        return failure();
    return success();
  };
  if (failed(save(run.parameters, "parameter")) ||
      failed(save(run.moment1, "moment1")) ||
      failed(save(run.moment2, "moment2")))
    return failure();
  for (const auto &entry : run.scalingState) {
    FailureOr<HostTensor> value =
        run.fn->readGlobal(entry.getKey(), entry.getValue(), error);
    if (failed(value) ||
        failed(writeNpy(filePath(dir, entry.getKey() + ".npy"), *value, error)))
      return failure();
  }
  std::string stepPath = filePath(dir, "step");
  std::error_code ec;
  llvm::raw_fd_ostream meta(stepPath, ec);
  if (!ec) {
    meta << step << "\n";
    meta.close();
    ec = meta.error();
    meta.clear_error();
  }
  if (ec) {
    error = "cannot write '" + stepPath + "': " + ec.message();
    return failure();
  }
  return success();
}

LogicalResult train::saveCheckpoint(StringRef checkpointDir, const Run &run,
                                    uint64_t step, std::string &error) {
  if (std::error_code ec = fs::create_directories(checkpointDir)) {
    error = ("cannot create '" + checkpointDir + "': " + ec.message()).str();
    return failure();
  }
  std::string target = filePath(checkpointDir, run.recipe.label);
  SmallString<256> partial;
  if (std::error_code ec =
          fs::createUniqueDirectory(target + ".partial", partial)) {
    error =
        "cannot create a directory beside '" + target + "': " + ec.message();
    return failure();
  }
  if (failed(writeFiles(partial, run, step, error))) {
    fs::remove_directories(partial);
    return failure();
  }
  // The previous checkpoint moves aside (rename replaces an empty
  // directory), the new one into its place, then the previous one goes.
  SmallString<256> previous;
  bool replace = fs::exists(target);
  std::error_code ec;
  if (replace &&
      !(ec = fs::createUniqueDirectory(target + ".previous", previous)))
    ec = fs::rename(target, previous);
  if (!ec && (ec = fs::rename(partial, target)) && replace)
    fs::rename(previous, target);
  if (ec) {
    error = "cannot move the checkpoint into '" + target + "': " + ec.message();
    fs::remove_directories(partial);
    if (!previous.empty())
      fs::remove_directories(previous);
    return failure();
  }
  if (replace)
    fs::remove_directories(previous);
  return success();
}

/// "(1024,)", "(32, 32)": a shape as numpy writes it.
static std::string formatShape(ArrayRef<int64_t> shape) {
  SmallVector<std::string> sizes;
  for (int64_t size : shape)
    sizes.push_back(std::to_string(size));
  return "(" + llvm::join(sizes, ", ") + (shape.size() == 1 ? ",)" : ")");
}

/// Reads `path` into `value`'s place, which it must match exactly: a file of
/// another shape would restore part of the state, or write past it.
static LogicalResult readExactly(StringRef path, HostTensor &value,
                                 const Twine &what, uint64_t maxBytes,
                                 std::string &error) {
  FailureOr<HostTensor> read =
      readNpy(path, value.getElementType(), error, maxBytes);
  if (failed(read))
    return failure();
  if (read->getShape() != value.getShape()) {
    error = llvm::formatv("'{0}' has shape {1}; {2}, which it restores, has "
                          "shape {3}",
                          path, formatShape(read->getShape()), what.str(),
                          formatShape(value.getShape()))
                .str();
    return failure();
  }
  value = std::move(*read);
  return success();
}

/// The step number in the `step` file of `run`'s checkpoint in `resumeDir`.
static FailureOr<uint64_t> readStep(StringRef resumeDir, const Run &run,
                                    std::string &error) {
  std::string path = filePath(resumeDir, run.recipe.label + "/step");
  fs::file_status status;
  if (fs::status(path, status) || !fs::is_regular_file(status)) {
    error = ("no checkpoint of recipe " + run.recipe.label + " in '" +
             resumeDir + "'")
                .str();
    return failure();
  }
  // A step number and a newline; anything longer is not one.
  uint64_t step;
  auto file = llvm::MemoryBuffer::getFile(path);
  if (status.getSize() > 64 || !file ||
      (*file)->getBuffer().trim().getAsInteger(10, step)) {
    error = "'" + path + "' does not hold a step number";
    return failure();
  }
  if (step > kMaxSteps) {
    error = llvm::formatv("'{0}' says step {1}: more than the {2} steps "
                          "fp8-train counts to (the step function gets the "
                          "step as an f32)",
                          path, step, kMaxSteps)
                .str();
    return failure();
  }
  return step;
}

FailureOr<uint64_t> train::loadCheckpoint(StringRef resumeDir, Run &run,
                                          std::string &error,
                                          uint64_t maxBytes) {
  std::string dir = filePath(resumeDir, run.recipe.label);
  FailureOr<uint64_t> step = readStep(resumeDir, run, error);
  if (failed(step))
    return failure();
  auto load = [&](SmallVector<HostTensor> &values, StringRef kind) {
    for (auto [i, value] : llvm::enumerate(values))
      if (failed(readExactly(filePath(dir, kind + "." + Twine(i) + ".npy"),
                             value, "the step's " + kind + " #" + Twine(i),
                             maxBytes, error)))
        return failure();
    return success();
  };
  if (failed(load(run.parameters, "parameter")) ||
      failed(load(run.moment1, "moment1")) ||
      failed(load(run.moment2, "moment2")))
    return failure();
  for (const auto &entry : run.scalingState) {
    HostTensor value(entry.getValue().getElementType(),
                     entry.getValue().getShape());
    if (failed(readExactly(filePath(dir, entry.getKey() + ".npy"), value,
                           "the scaling state @" + entry.getKey(), maxBytes,
                           error)) ||
        failed(run.fn->writeGlobal(entry.getKey(), value, error)))
      return failure();
  }
  return *step;
}
