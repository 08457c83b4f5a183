//===- ExactRoundingTest.cpp - GPU rounding expansions against libm -------===//
//
// PTX has no instruction for math.round (halves away from zero) nor for
// copysign, and convert-gpu-to-nvvm would call libdevice for both:
// fp8-expand-math-for-gpu rewrites them (populateExactRoundingPatterns).
// Run on the CPU, the rewritten functions must agree bit for bit with
// std::round and std::copysign on the inputs where rounding is delicate
// (the float just under 1/2, halves, the last fractional floats below 2^23
// and 2^52, -0, denormals, infinities, NaN) and on random floats of every
// magnitude, in f32 and f64.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/LowerToGPU.h"
#include "fp8/Runner/Runner.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::fp8::runner;

namespace {

/// round(x) and copysign(x, y), elementwise over tensor<size x type>.
std::string getModule(StringRef type, int64_t size) {
  std::string text = R"mlir(
#id = affine_map<(i) -> (i)>
!t = tensor<SIZExTYPE>
func.func @f(%x: !t, %y: !t) -> (!t, !t) {
  %e = tensor.empty() : !t
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : !t, !t) outs(%e, %e : !t, !t) {
  ^bb0(%a: TYPE, %b: TYPE, %o: TYPE, %p: TYPE):
    %rounded = math.round %a : TYPE
    %signed = math.copysign %a, %b : TYPE
    linalg.yield %rounded, %signed : TYPE, TYPE
  } -> (!t, !t)
  return %r#0, %r#1 : !t, !t
}
)mlir";
  auto replaceAll = [&](StringRef from, StringRef to) {
    for (size_t at; (at = text.find(from.str())) != std::string::npos;)
      text.replace(at, from.size(), to.str());
  };
  replaceAll("SIZE", std::to_string(size));
  replaceAll("TYPE", type);
  return text;
}

/// The inputs where round is easy to get wrong, then random bit patterns.
template <typename F>
std::vector<F> getInputs(size_t count) {
  using limits = std::numeric_limits<F>;
  F big = std::ldexp(F(1), limits::digits - 1); // 2^23 / 2^52: all integers
  std::vector<F> values = {F(0), -F(0), F(0.5), -F(0.5), F(1.5), F(2.5),
                           -F(2.5), F(3.5), std::nextafter(F(0.5), F(0)),
                           -std::nextafter(F(0.5), F(0)),
                           std::nextafter(F(1.5), F(0)),
                           std::nextafter(F(1.5), F(2)), big - F(0.5),
                           -(big - F(0.5)), big, big + F(1), -big,
                           std::nextafter(big, F(0)), limits::denorm_min(),
                           -limits::denorm_min(), limits::min(),
                           limits::max(), -limits::max(), limits::infinity(),
                           -limits::infinity(), limits::quiet_NaN()};
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  std::mt19937_64 random(42);
  std::uniform_int_distribution<Bits> bits;
  // Random floats of every exponent, and random values near integers.
  std::uniform_real_distribution<double> near(-100, 100);
  while (values.size() < count) {
    Bits pattern = bits(random);
    F value;
    std::memcpy(&value, &pattern, sizeof(F));
    values.push_back(value);
    values.push_back(F(std::round(near(random) * 2) / 2) +
                     F(near(random) * 1e-6));
  }
  values.resize(count);
  return values;
}

/// Equal bits, or both NaN (the NaN round returns need not be libm's).
template <typename F>
bool sameBits(F a, F b) {
  if (std::isnan(a) && std::isnan(b))
    return true;
  return std::memcmp(&a, &b, sizeof(F)) == 0;
}

class ExactRounding : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  ExactRounding() {
    DialectRegistry registry;
    registerRunnerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  template <typename F>
  void check(StringRef typeName, Type type) {
    constexpr int64_t size = 4096;
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(getModule(typeName, size), &context);
    ASSERT_TRUE(module);
    RewritePatternSet patterns(&context);
    fp8::populateExactRoundingPatterns(patterns);
    ASSERT_TRUE(succeeded(applyPatternsGreedily(*module, std::move(patterns))));
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    ASSERT_EQ(text.find("math.round"), std::string::npos) << text;
    ASSERT_EQ(text.find("math.copysign"), std::string::npos) << text;

    std::string error;
    auto function = CompiledFunction::compile(*module, "f", error,
                                              {/*vectorize=*/false});
    ASSERT_TRUE(function) << error;
    std::vector<F> xs = getInputs<F>(size), ys = getInputs<F>(size + 7);
    std::rotate(ys.begin(), ys.begin() + 7, ys.end()); // other signs
    HostTensor x(type, {size}), y(type, {size});
    std::memcpy(x.data(), xs.data(), size * sizeof(F));
    std::memcpy(y.data(), ys.data(), size * sizeof(F));
    auto results = function->call({x, y}, error);
    ASSERT_TRUE(succeeded(results)) << error;
    ASSERT_EQ(results->size(), 2u);
    const F *rounded = reinterpret_cast<const F *>((*results)[0].data());
    const F *signed_ = reinterpret_cast<const F *>((*results)[1].data());
    for (int64_t i = 0; i < size; ++i) {
      EXPECT_TRUE(sameBits(rounded[i], std::round(xs[i])))
          << "round(" << xs[i] << ") = " << rounded[i] << ", libm "
          << std::round(xs[i]);
      // Bit for bit, NaNs included: the sign of copysign(NaN, y) is y's.
      F expected = std::copysign(xs[i], ys[i]);
      EXPECT_EQ(std::memcmp(&signed_[i], &expected, sizeof(F)), 0)
          << "copysign(" << xs[i] << ", " << ys[i] << ") = " << signed_[i];
    }
  }

  MLIRContext context;
};

TEST_F(ExactRounding, F32) {
  check<float>("f32", Float32Type::get(&context));
}

TEST_F(ExactRounding, F64) {
  check<double>("f64", Float64Type::get(&context));
}

} // namespace
