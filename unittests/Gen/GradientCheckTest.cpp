//===- GradientCheckTest.cpp - fp8-gen's backward against finite differences //
//
// The training step of tiny f64 models is JIT-compiled (fp8-lower-to-cpu) and
// run: the analytic gradient of every weight element, read back from AdamW's
// first moment (m' = (1 - beta1) g when m = 0), must match the central finite
// difference of the loss the same function returns.
//
//===----------------------------------------------------------------------===//

#include "fp8/Gen/TransformerGen.h"
#include "fp8/InitAllFP8.h"
#include "fp8/Runner/Runner.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gen;
using runner::HostTensor;

namespace {

struct GradCase {
  const char *name;
  Arch arch;
  int64_t vocab;
  int64_t kvHeads;
  int64_t layers;
};

class GradientCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradientCheck, MatchesCentralDifferences) {
  const GradCase &c = GetParam();
  TransformerOptions options;
  options.arch = c.arch;
  options.layers = c.layers;
  options.hidden = 8;
  options.heads = 2;
  options.kvHeads = c.kvHeads;
  options.ffn = 12;
  options.seq = 4;
  options.batch = 2;
  options.vocab = c.vocab;
  options.dtype = DType::F64;
  options.mode = Mode::Train;
  ASSERT_FALSE(bool(validateOptions(options)));

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerGeneratorDialects(registry);
  registerAllFP8Dialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = buildTransformer(context, options);
  std::string error;
  auto compiled =
      runner::CompiledFunction::compile(*module, "train_step", error);
  ASSERT_TRUE(compiled) << error;

  // Arguments: input, targets, loss_grad, step, then weights, m, v.
  ArrayRef<Type> argTypes = compiled->getSignature().getInputs();
  size_t numParams = (argTypes.size() - 4) / 3;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<HostTensor> args;
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    if (!isa<RankedTensorType>(type)) {
      HostTensor step(type, {});
      step.set(0, 1.0);
      args.push_back(std::move(step));
      continue;
    }
    auto tensorType = cast<RankedTensorType>(type);
    HostTensor t(tensorType.getElementType(), tensorType.getShape());
    for (int64_t e = 0; e < t.getNumElements(); ++e) {
      if (tensorType.getElementType().isInteger(64)) {
        t.set(e, double(rng() % c.vocab));
        continue;
      }
      if (i == 2)
        t.set(e, 1.0); // loss_grad
      else if (i >= 4 + numParams)
        t.set(e, 0.0); // moments
      else if (i >= 4 && tensorType.getRank() == 1)
        t.set(e, 1.0 + 0.3 * uniform(rng)); // norm gains and biases
      else
        t.set(e, 0.5 * uniform(rng));
    }
    args.push_back(std::move(t));
  }

  // The loss, or NaN when the call fails (and the test with it).
  auto run = [&](SmallVectorImpl<HostTensor> *results) {
    auto out = compiled->call(args, error);
    EXPECT_TRUE(succeeded(out)) << error;
    if (failed(out))
      return std::nan("");
    double loss = (*out)[0].get(0);
    if (results)
      *results = std::move(*out);
    return loss;
  };
  SmallVector<HostTensor> results;
  double loss0 = run(&results);
  ASSERT_TRUE(std::isfinite(loss0));
  if (c.vocab > 0) {
    // Cross entropy of near-uniform predictions.
    EXPECT_NEAR(loss0, std::log(double(c.vocab)), 1.5);
  }

  const double oneMinusBeta1 = 1.0 - options.beta1, h = 1e-5;
  int64_t checked = 0;
  double worst = 0;
  for (size_t p = 0; p < numParams; ++p) {
    HostTensor &weight = args[4 + p];
    const HostTensor &newM = results[1 + numParams + p];
    for (int64_t e = 0; e < weight.getNumElements(); ++e) {
      double analytic = newM.get(e) / oneMinusBeta1;
      double original = weight.get(e);
      weight.set(e, original + h);
      double plus = run(nullptr);
      weight.set(e, original - h);
      double minus = run(nullptr);
      weight.set(e, original);
      double numeric = (plus - minus) / (2 * h);
      double err = std::abs(analytic - numeric) /
                   std::max(1e-3, std::abs(numeric));
      worst = std::max(worst, err);
      EXPECT_LT(err, 1e-5) << "weight #" << p << " element " << e
                           << ": analytic " << analytic << ", numeric "
                           << numeric;
      ++checked;
    }
  }
  EXPECT_EQ(checked, countWeightElements(options));
  RecordProperty("checked", std::to_string(checked));
  RecordProperty("worst_relative_error", std::to_string(worst));
  std::printf("%s: %lld gradient elements, worst relative error %.3g\n",
              c.name, static_cast<long long>(checked), worst);
}

INSTANTIATE_TEST_SUITE_P(
    TinyModels, GradientCheck,
    ::testing::Values(GradCase{"gpt2_lm", Arch::GPT2, 11, 2, 1},
                      GradCase{"llama_gqa_lm", Arch::Llama, 11, 1, 2},
                      GradCase{"llama_mse", Arch::Llama, 0, 2, 1},
                      GradCase{"gpt2_mse", Arch::GPT2, 0, 2, 1}),
    [](const ::testing::TestParamInfo<GradCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
