//===- TransformerGen.h - Transformer graph generator -----------*- C++ -*-===//
//
// Builds GPT-2 and Llama style transformer graphs (forward, or a full training
// step with an explicit backward and AdamW) as func + linalg / tensor / arith /
// math / tosa / ml_program IR, spelled the ways ML exporters spell them. Used
// by the fp8-gen tool and by tests that need graphs of a given size and form.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_GEN_TRANSFORMERGEN_H
#define FP8_GEN_TRANSFORMERGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class DialectRegistry;
namespace fp8::gen {

enum class Arch { GPT2, Llama };
/// How GEMMs are spelled: named linalg ops (`linalg.matmul` /
/// `linalg.batch_matmul`, transposed operands through `indexing_maps`),
/// `linalg.generic` contractions (f32 accumulation through `arith.extf`), or
/// `tosa.matmul` with `tosa.transpose` / `tosa.add` / `tosa.cast` around it.
enum class Form { Named, Generic, Tosa };
/// Where the weights come from.
enum class Weights { Args, Globals, Constants };
enum class Mode { Forward, Train };
/// Element type of activations and weights; norms, softmax and the loss are
/// computed in f32 (f64 for F64, which exists for gradient checks).
enum class DType { F32, BF16, F16, F64 };

/// A batch or sequence size of ShapedType::kDynamic is a `?` dimension.
struct TransformerOptions {
  Arch arch = Arch::Llama;
  int64_t layers = 1;
  int64_t hidden = 64;
  int64_t heads = 4;
  /// 0: as many as `heads` (multi-head attention).
  int64_t kvHeads = 0;
  /// 0: 4 * hidden for GPT-2, the Llama rule (2/3 of 4 * hidden, rounded up
  /// to a multiple of 32) for Llama.
  int64_t ffn = 0;
  int64_t seq = 16;
  int64_t batch = 1;
  /// > 0 adds the token embedding and the LM head.
  int64_t vocab = 0;
  /// Rows of GPT-2's learned position table; 0: `seq`, or 1024 when `seq` is
  /// dynamic.
  int64_t maxPositions = 0;
  DType dtype = DType::F32;
  Form form = Form::Named;
  Weights weights = Weights::Args;
  Mode mode = Mode::Forward;
  /// AdamW hyperparameters of the training step.
  double learningRate = 1e-3;
  double weightDecay = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double adamEps = 1e-8;
  /// Random weights (`--weights=constants`) are drawn from this seed.
  uint64_t seed = 0;
  /// > 1: the training step of one of this many data-parallel ranks
  /// (`shard.grid @dp`): it takes its `batch / dataParallel` rows of the
  /// batch (`fp8.sharded = @dp` on tokens and targets) and averages the loss
  /// and the gradients over the ranks with `shard.all_reduce` before AdamW.
  /// A data-parallel step (>= 1) computes its weight gradients in f32, so
  /// that they are averaged before they are rounded; 1 is the single-rank
  /// step of the same arithmetic, without collectives. 0: not data-parallel.
  int64_t dataParallel = 0;
};

/// Largest model, in weight elements, that `Weights::Constants` accepts: dense
/// constants of real sizes make files no tool wants to read.
constexpr int64_t kMaxConstantWeightElements = int64_t(1) << 20;

/// The options with their defaults (0 sizes) resolved.
TransformerOptions resolveDefaults(const TransformerOptions &options);

/// Checks the options; the error names the offending command-line option
/// (`--heads`, `--kv-heads`, ...).
llvm::Error validateOptions(const TransformerOptions &options);

/// Number of weight elements of the model; INT64_MAX when it overflows.
int64_t countWeightElements(const TransformerOptions &options);

/// The dialects the generated IR uses.
void registerGeneratorDialects(DialectRegistry &registry);

/// Builds the model; the options must have passed validateOptions. Forward:
/// `func.func @forward`. Train: `func.func @train_step` whose `loss_grad`
/// argument carries `fp8.role = "grad"` (the upstream gradient of the loss:
/// 1.0, or the loss scale), so that every backward value is a gradient to the
/// fp8 passes.
OwningOpRef<ModuleOp> buildTransformer(MLIRContext &context,
                                       const TransformerOptions &options);

} // namespace fp8::gen
} // namespace mlir

#endif // FP8_GEN_TRANSFORMERGEN_H
