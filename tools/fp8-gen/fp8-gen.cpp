//===- fp8-gen.cpp - Transformer graph generator ---------------------------===//
//
// Writes a GPT-2 or Llama style transformer (forward, or a training step with
// backward and AdamW) as MLIR: linalg on tensors, generic contractions or TOSA,
// with weights as arguments, ml_program globals or dense constants.
//
//   fp8-gen --arch=llama --layers=2 --hidden=256 --heads=8 --kv-heads=2 \
//           --seq=64 --batch=? --dtype=bf16 --form=named > model.mlir
//
//===----------------------------------------------------------------------===//

#include "fp8/Gen/TransformerGen.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp8::gen;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("fp8-gen options");

cl::opt<Arch> arch("arch", cl::desc("Model architecture"),
                   cl::values(clEnumValN(Arch::GPT2, "gpt2",
                                         "LayerNorm, GELU (tanh), learned "
                                         "positions, multi-head attention"),
                              clEnumValN(Arch::Llama, "llama",
                                         "RMSNorm, RoPE, grouped-query "
                                         "attention, SwiGLU")),
                   cl::init(Arch::Llama), cl::cat(category));
cl::opt<int64_t> layers("layers", cl::desc("Transformer blocks"), cl::init(1),
                        cl::cat(category));
cl::opt<int64_t> hidden("hidden", cl::desc("Model width"), cl::init(64),
                        cl::cat(category));
cl::opt<int64_t> heads("heads", cl::desc("Attention (query) heads"),
                       cl::init(4), cl::cat(category));
cl::opt<int64_t> kvHeads("kv-heads",
                         cl::desc("Key/value heads (default: --heads)"),
                         cl::init(0), cl::cat(category));
cl::opt<int64_t> ffn("ffn",
                     cl::desc("FFN width (default: 4*hidden for gpt2, "
                              "Llama's 8/3*hidden rounded to 32)"),
                     cl::init(0), cl::cat(category));
cl::opt<std::string> seq("seq", cl::desc("Sequence length, or ? (dynamic)"),
                         cl::init("16"), cl::cat(category));
cl::opt<std::string> batch("batch", cl::desc("Batch size, or ? (dynamic)"),
                           cl::init("1"), cl::cat(category));
cl::opt<int64_t> vocab("vocab",
                       cl::desc("Vocabulary; > 0 adds the token embedding "
                                "and the LM head"),
                       cl::init(0), cl::cat(category));
cl::opt<int64_t> maxPositions(
    "max-positions",
    cl::desc("Rows of GPT-2's position table (default: --seq, or 1024)"),
    cl::init(0), cl::cat(category));
cl::opt<DType> dtype(
    "dtype", cl::desc("Element type of weights and activations"),
    cl::values(clEnumValN(DType::F32, "f32", "float32"),
               clEnumValN(DType::BF16, "bf16", "bfloat16"),
               clEnumValN(DType::F16, "f16", "float16"),
               clEnumValN(DType::F64, "f64", "float64 (gradient checks)")),
    cl::init(DType::F32), cl::cat(category));
cl::opt<Form> form(
    "form", cl::desc("How GEMMs are spelled"),
    cl::values(clEnumValN(Form::Named, "named",
                          "linalg.matmul / linalg.batch_matmul"),
               clEnumValN(Form::Generic, "generic",
                          "linalg.generic contractions, f32 accumulation"),
               clEnumValN(Form::Tosa, "tosa", "tosa.matmul and tosa ops")),
    cl::init(Form::Named), cl::cat(category));
cl::opt<Weights> weights(
    "weights", cl::desc("Where the weights come from"),
    cl::values(clEnumValN(Weights::Args, "args", "function arguments"),
               clEnumValN(Weights::Globals, "globals", "ml_program globals"),
               clEnumValN(Weights::Constants, "constants",
                          "dense random constants (small models only)")),
    cl::init(Weights::Args), cl::cat(category));
cl::opt<Mode> mode(
    "mode", cl::desc("What to generate"),
    cl::values(clEnumValN(Mode::Forward, "forward", "the forward pass"),
               clEnumValN(Mode::Train, "train",
                          "forward, loss, backward and an AdamW update")),
    cl::init(Mode::Forward), cl::cat(category));
cl::opt<double> lr("lr", cl::desc("AdamW learning rate"), cl::init(1e-3),
                   cl::cat(category));
cl::opt<double> weightDecay("weight-decay", cl::desc("AdamW weight decay"),
                            cl::init(0.01), cl::cat(category));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of --weights=constants"),
                       cl::init(0), cl::cat(category));
cl::opt<int64_t> dataParallel(
    "data-parallel",
    cl::desc("With --mode=train: the step of one of N data-parallel ranks "
             "(shard.grid @dp; --batch is the global batch; weight gradients "
             "in f32); 1: the single-rank step of the same arithmetic"),
    cl::init(0), cl::cat(category));
cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                    cl::value_desc("filename"), cl::init("-"),
                                    cl::cat(category));

/// A size that may be `?`.
bool parseSize(const char *flag, StringRef text, int64_t &out) {
  if (text == "?") {
    out = ShapedType::kDynamic;
    return true;
  }
  // kDynamic is a number too: only `?` may spell it.
  if (text.getAsInteger(10, out) || ShapedType::isDynamic(out)) {
    llvm::WithColor::error(llvm::errs(), "fp8-gen")
        << flag << "=" << text << ": expected a number or '?'\n";
    return false;
  }
  return true;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "fp8-mlir transformer generator\n");

  TransformerOptions options;
  options.arch = arch;
  options.layers = layers;
  options.hidden = hidden;
  options.heads = heads;
  options.kvHeads = kvHeads;
  options.ffn = ffn;
  options.vocab = vocab;
  options.maxPositions = maxPositions;
  options.dtype = dtype;
  options.form = form;
  options.weights = weights;
  options.mode = mode;
  options.learningRate = lr;
  options.weightDecay = weightDecay;
  options.seed = seed;
  options.dataParallel = dataParallel;
  if (!parseSize("--seq", seq, options.seq) ||
      !parseSize("--batch", batch, options.batch))
    return 1;
  if (llvm::Error err = validateOptions(options)) {
    llvm::WithColor::error(llvm::errs(), "fp8-gen")
        << llvm::toString(std::move(err)) << "\n";
    return 1;
  }

  DialectRegistry registry;
  registerGeneratorDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = buildTransformer(context, options);
  if (failed(verify(*module))) {
    llvm::WithColor::error(llvm::errs(), "fp8-gen")
        << "internal error: the generated module does not verify\n";
    return 1;
  }

  std::string error;
  auto output = openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::WithColor::error(llvm::errs(), "fp8-gen") << error << "\n";
    return 1;
  }
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
