//===- State.cpp - The FP8 scaling state of a run -------------------------===//

#include "fp8/Train/Run.h"

#include "fp8/Runner/Mpi.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;

FailureOr<StateSnapshot> train::snapshotState(const Run &run,
                                              std::string &error) {
  return run.fn->readGlobals(run.scalingState, error);
}

LogicalResult train::restoreState(Run &run, const StateSnapshot &state,
                                  std::string &error) {
  return run.fn->writeGlobals(state, error);
}

FailureOr<uint64_t> train::digestState(const Run &run, std::string &error) {
  FailureOr<StateSnapshot> state = snapshotState(run, error);
  if (failed(state))
    return failure();
  llvm::sort(*state,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  uint64_t digest = digestBytes(nullptr, 0);
  auto add = [&](const HostTensor &tensor) {
    digest =
        digestBytes(tensor.data(),
                    tensor.getNumElements() * tensor.getElementBytes(), digest);
  };
  for (const auto &[name, value] : *state) {
    digest = digestBytes(name.data(), name.size(), digest);
    add(value);
  }
  for (const HostTensor &parameter : run.parameters)
    add(parameter);
  return digest;
}
