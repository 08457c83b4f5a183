//===- Checkpoint.cpp - Saving and resuming a run -------------------------===//

#include "fp8/Train/Checkpoint.h"

#include "fp8/Train/Run.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;

static std::string checkpointPath(StringRef dir, const Run &run,
                                  const Twine &file) {
  SmallString<256> path(dir);
  llvm::sys::path::append(path, run.recipe.label, file);
  return std::string(path);
}

LogicalResult train::saveCheckpoint(StringRef checkpointDir, const Run &run,
                                    uint64_t step, std::string &error) {
  SmallString<256> dir(checkpointDir);
  llvm::sys::path::append(dir, run.recipe.label);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = ("cannot create '" + dir + "': " + ec.message()).str();
    return failure();
  }
  auto save = [&](ArrayRef<HostTensor> values, StringRef kind) {
    for (auto [i, value] : llvm::enumerate(values))
      if (failed(writeNpy(checkpointPath(checkpointDir, run,
                                         kind + "." + Twine(i) + ".npy"),
                          value, error)))
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
        failed(writeNpy(
            checkpointPath(checkpointDir, run, entry.getKey() + ".npy"), *value,
            error)))
      return failure();
  }
  std::error_code ec;
  llvm::raw_fd_ostream meta(checkpointPath(checkpointDir, run, "step"), ec);
  if (ec) {
    error = "cannot write the checkpoint's step: " + ec.message();
    return failure();
  }
  meta << step << "\n";
  return success();
}

FailureOr<uint64_t> train::loadCheckpoint(StringRef resumeDir, Run &run,
                                          std::string &error) {
  auto file =
      llvm::MemoryBuffer::getFile(checkpointPath(resumeDir, run, "step"));
  unsigned step;
  if (!file || (*file)->getBuffer().trim().getAsInteger(10, step)) {
    error = ("no checkpoint of recipe " + run.recipe.label + " in '" +
             resumeDir + "'")
                .str();
    return failure();
  }
  auto load = [&](SmallVector<HostTensor> &values, StringRef kind) {
    for (auto [i, value] : llvm::enumerate(values)) {
      FailureOr<HostTensor> read = readNpy(
          checkpointPath(resumeDir, run, kind + "." + Twine(i) + ".npy"),
          value.getElementType(), error);
      if (failed(read))
        return failure();
      if (read->getShape() != value.getShape()) {
        error = ("the checkpoint's " + kind + " #" + Twine(i) +
                 " does not have the step's shape")
                    .str();
        return failure();
      }
      value = std::move(*read);
    }
    return success();
  };
  if (failed(load(run.parameters, "parameter")) ||
      failed(load(run.moment1, "moment1")) ||
      failed(load(run.moment2, "moment2")))
    return failure();
  for (const auto &entry : run.scalingState) {
    FailureOr<HostTensor> value =
        readNpy(checkpointPath(resumeDir, run, entry.getKey() + ".npy"),
                entry.getValue().getElementType(), error);
    if (failed(value) ||
        failed(run.fn->writeGlobal(entry.getKey(), *value, error)))
      return failure();
  }
  return uint64_t(step);
}
