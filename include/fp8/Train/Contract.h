//===- Contract.h - What a training step's arguments are --------*- C++ -*-===//
//
// The training-step contract of docs/fp8-train.md: a function marked
// `fp8.train_step` whose arguments and results carry `fp8.train` roles
// (tokens, targets, loss_scale, step, parameters and AdamW moments in; the
// loss, the updated parameters and moments, the gradient norm out).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TRAIN_CONTRACT_H
#define FP8_TRAIN_CONTRACT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace mlir::fp8::train {

/// What each argument and result of the step is.
struct Contract {
  /// The step, in the module the contract was read from.
  func::FuncOp func;
  std::string name;
  FunctionType type;
  unsigned tokens = 0, targets = 0, lossScale = 0, step = 0;
  SmallVector<unsigned> parameters, moment1, moment2;
  unsigned loss = 0;
  SmallVector<unsigned> newParameters, newMoment1, newMoment2;
  std::optional<unsigned> gradNorm;
  /// Tokens per sequence and sequences per batch (per rank).
  int64_t batch = 0, seq = 0;
  /// Ranks the step is written for: the size of the grid its inputs are
  /// sharded over (`fp8.sharded`), 1 without one.
  int64_t ranks = 1;
  /// How each parameter starts: "zeros", "ones" or a standard deviation.
  SmallVector<Attribute> init;
};

/// Reads the contract of the step in `module` (nested modules included):
/// the function named `functionName`, or without a name the one marked
/// `fp8.train_step`. Fails with `error` saying what is missing or wrong.
FailureOr<Contract> readContract(ModuleOp module, StringRef functionName,
                                 std::string &error);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_CONTRACT_H
