//===- InputDefaults.h - How a graph's inputs are drawn ----------*- C++ -*-===//
//
// fp8-run's and fp8-tune's role-based inputs: weights drawn like a trained
// layer's, integer indices over the dimension they index, masks by what they
// select; chosen from what the program does with each input.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNNER_INPUTDEFAULTS_H
#define FP8_RUNNER_INPUTDEFAULTS_H

#include "fp8/Runner/Runner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir::fp8::runner {

/// How an input (argument or extern global) is drawn when the user says
/// nothing: chosen from what the program does with it.
struct InputDefault {
  /// Weights: N(0, 1/K) for the K of the GEMM that reads them, so that the
  /// products keep the activations' scale.
  std::optional<double> scale;
  /// Integers used as indices (token ids, positions): uniform over the
  /// dimension they index.
  std::optional<int64_t> integerRange;
  std::string why;
  /// Boolean masks: causal (true where the key position j <= the query
  /// position i, over the last two dimensions) where they select what a
  /// softmax reads, all true otherwise.
  enum class Mask { None, Causal, AllTrue } mask = Mask::None;
};

/// The defaults of `func`'s arguments ("arg<i>") and of globals ("global
/// @name"), from the GEMM analysis and the uses of integer and boolean
/// inputs; inputs without one are drawn as the caller's generic
/// distribution says.
llvm::StringMap<InputDefault> chooseInputDefaults(ModuleOp module,
                                                  func::FuncOp func);

/// A boolean mask: all true, or causal over the last two dimensions (query
/// i sees keys j <= i + keys - queries: the last query sees every key).
void fillMask(HostTensor &tensor, bool causal);

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_INPUTDEFAULTS_H
