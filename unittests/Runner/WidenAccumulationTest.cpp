//===- WidenAccumulationTest.cpp - 16-bit GEMMs against references --------===//
//
// bf16 and f16 GEMMs compiled by fp8-lower-to-cpu under both accumulation
// semantics (DESIGN.md decision 15), on random operands, odd sizes that
// leave partial tiles, named and generic, batched and transposed forms,
// into a zero fill or an init:
//  - accumulation=f32 (vectorized and scalar loops) against the f32 sum in
//    K order rounded once by APFloat, bit for bit (each product of two
//    16-bit values is exact in f32, so a fused multiply-add gives the same
//    bits), and against the f64 sum within the rounding bound;
//  - accumulation=as-written (scalar loops) against linalg's semantics
//    computed with APFloat in bf16 / f16: every product and every sum
//    rounded; further from the f64 sum than f32 accumulation.
//
//===----------------------------------------------------------------------===//

#include "fp8/InitAllFP8.h"
#include "fp8/Runner/Runner.h"

#include "mlir/Parser/Parser.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;

namespace {

enum class Form { Named, Generic };

struct AccumulationCase {
  SmallVector<int64_t> batch; ///< empty or one batch dimension
  int64_t m, k, n;
  bool transposeRhs; ///< B as [.., N, K]
  Form form;
  StringRef type;  ///< bf16 | f16
  bool accumulate; ///< into the %c argument, not a zero fill
  bool dynamic = false;
};

void PrintTo(const AccumulationCase &c, std::ostream *os) {
  *os << (c.form == Form::Named ? "named " : "generic ") << c.type.str();
  for (int64_t size : c.batch)
    *os << " batch " << size;
  *os << " " << c.m << "x" << c.k << "x" << c.n
      << (c.transposeRhs ? " B [N, K]" : "")
      << (c.accumulate ? " into an init" : " into a zero fill")
      << (c.dynamic ? " dynamic" : "");
}

std::string tensorType(ArrayRef<int64_t> shape, StringRef element,
                       bool dynamic) {
  std::string text = "tensor<";
  for (int64_t size : shape)
    text += (dynamic ? std::string("?") : std::to_string(size)) + "x";
  return text + element.str() + ">";
}

/// @f(%a, %b, %c) = the GEMM of `c`.
std::string gemmText(const AccumulationCase &c, ArrayRef<int64_t> lhs,
                     ArrayRef<int64_t> rhs, ArrayRef<int64_t> result) {
  std::string a = tensorType(lhs, c.type, c.dynamic);
  std::string b = tensorType(rhs, c.type, c.dynamic);
  std::string r = tensorType(result, c.type, c.dynamic);
  bool batched = !c.batch.empty();
  StringRef dims = batched ? "(d0, d1, d2, d3)" : "(d0, d1, d2)";
  std::string bIndex = batched ? "d0, " : "";
  std::string m = batched ? "d1" : "d0", n = batched ? "d2" : "d1",
              k = batched ? "d3" : "d2";
  std::string maps = llvm::formatv(
      "[affine_map<{0} -> ({1}{2}, {4})>, affine_map<{0} -> ({1}{5})>, "
      "affine_map<{0} -> ({1}{2}, {3})>]",
      dims, bIndex, m, n, k, c.transposeRhs ? n + ", " + k : k + ", " + n);
  std::string init = "%c";
  std::string prologue;
  if (!c.accumulate) {
    std::string sizes;
    if (c.dynamic) {
      for (size_t i = 0; i < result.size(); ++i) {
        prologue += llvm::formatv("  %i{0} = arith.constant {0} : index\n"
                                  "  %s{0} = tensor.dim %c, %i{0} : {1}\n",
                                  i, r);
        sizes += (i ? ", %s" : "%s") + std::to_string(i);
      }
    }
    prologue += llvm::formatv(
        "  %zero = arith.constant 0.0 : {0}\n"
        "  %e = tensor.empty({1}) : {2}\n"
        "  %init = linalg.fill ins(%zero : {0}) outs(%e : {2}) -> {2}\n",
        c.type, sizes, r);
    init = "%init";
  }
  std::string gemm;
  if (c.form == Form::Named) {
    gemm =
        llvm::formatv("  %r = linalg.{0} indexing_maps = {1} ins(%a, %b "
                      ": {2}, {3}) outs({4} : {5}) -> {5}\n",
                      batched ? "batch_matmul" : "matmul", maps, a, b, init, r);
  } else {
    gemm = llvm::formatv(
        "  %r = linalg.generic {indexing_maps = {0}, iterator_types = "
        "[{1}\"parallel\", \"parallel\", \"reduction\"]} ins(%a, %b : {2}, "
        "{3}) outs({4} : {5}) {\n"
        "  ^bb0(%x: {6}, %y: {6}, %acc: {6}):\n"
        "    %p = arith.mulf %x, %y : {6}\n"
        "    %s = arith.addf %acc, %p : {6}\n"
        "    linalg.yield %s : {6}\n"
        "  } -> {5}\n",
        maps, batched ? "\"parallel\", " : "", a, b, init, r, c.type);
  }
  return llvm::formatv("func.func @f(%a: {0}, %b: {1}, %c: {2}) -> {2} {\n"
                       "{3}{4}  return %r : {2}\n}\n",
                       a, b, r, prologue, gemm);
}

class WidenAccumulation : public ::testing::TestWithParam<AccumulationCase> {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  WidenAccumulation() {
    DialectRegistry registry;
    registerRunnerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  FailureOr<HostTensor> run(ModuleOp module, ArrayRef<HostTensor> inputs,
                            bool vectorize, Accumulation accumulation) {
    CompileOptions options;
    options.vectorize = vectorize;
    options.optLevel = 0;
    options.accumulation = accumulation;
    std::string error;
    auto compiled = CompiledFunction::compile(module, "f", error, options);
    EXPECT_TRUE(compiled) << error;
    if (!compiled)
      return failure();
    auto results = compiled->call(inputs, error);
    EXPECT_TRUE(succeeded(results)) << error;
    if (failed(results))
      return failure();
    return std::move((*results)[0]);
  }

  MLIRContext context;
  std::mt19937_64 rng{20261204};
};

TEST_P(WidenAccumulation, MatchesReferences) {
  const AccumulationCase &c = GetParam();
  SmallVector<int64_t> lhs(c.batch), rhs(c.batch), result(c.batch);
  lhs.append({c.m, c.k});
  rhs.append(c.transposeRhs ? SmallVector<int64_t>{c.n, c.k}
                            : SmallVector<int64_t>{c.k, c.n});
  result.append({c.m, c.n});
  std::string text = gemmText(c, lhs, rhs, result);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module) << text;

  Type element = c.type == "bf16" ? Type(BFloat16Type::get(&context))
                                  : Type(Float16Type::get(&context));
  const llvm::fltSemantics &semantics =
      c.type == "bf16" ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf();
  HostTensor a(element, lhs), b(element, rhs), init(element, result);
  std::normal_distribution<double> normal(0, 1);
  for (HostTensor *tensor : {&a, &b, &init})
    for (int64_t i = 0; i < tensor->getNumElements(); ++i)
      tensor->set(i, normal(rng));

  auto f32 = run(*module, {a, b, init}, /*vectorize=*/true, Accumulation::F32);
  auto f32Loops =
      run(*module, {a, b, init}, /*vectorize=*/false, Accumulation::F32);
  auto strict =
      run(*module, {a, b, init}, /*vectorize=*/false, Accumulation::AsWritten);
  ASSERT_TRUE(succeeded(f32) && succeeded(f32Loops) && succeeded(strict))
      << text;

  auto toHalf = [&](const llvm::APFloat &value) {
    llvm::APFloat rounded = value;
    bool lost;
    rounded.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
    return rounded;
  };
  auto toDouble = [](llvm::APFloat value) {
    bool lost;
    value.convert(llvm::APFloat::IEEEdouble(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    return value.convertToDouble();
  };
  int64_t batches = c.batch.empty() ? 1 : c.batch.front();
  int64_t mismatches = 0, strictMismatches = 0, outOfBound = 0;
  double f32Error = 0, strictError = 0;
  std::string firstMismatch;
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        int64_t out = (batch * c.m + i) * c.n + j;
        double start = c.accumulate ? init.get(out) : 0.0;
        // f32 accumulation in K order, rounded once; the f64 sum; linalg's
        // 16-bit steps.
        float sum = static_cast<float>(start);
        double exact = start, magnitude = std::fabs(start);
        llvm::APFloat steps = toHalf(llvm::APFloat(start));
        for (int64_t kk = 0; kk < c.k; ++kk) {
          double x = a.get((batch * c.m + i) * c.k + kk);
          int64_t bIndex = c.transposeRhs ? (batch * c.n + j) * c.k + kk
                                          : (batch * c.k + kk) * c.n + j;
          double y = b.get(bIndex);
          sum += static_cast<float>(x) * static_cast<float>(y);
          exact += x * y;
          magnitude += std::fabs(x * y);
          llvm::APFloat product = toHalf(llvm::APFloat(x));
          product.multiply(toHalf(llvm::APFloat(y)),
                           llvm::APFloat::rmNearestTiesToEven);
          steps.add(product, llvm::APFloat::rmNearestTiesToEven);
        }
        double expected = toDouble(toHalf(llvm::APFloat(sum)));
        double actual = f32->get(out);
        if (actual != expected || f32Loops->get(out) != expected) {
          if (!mismatches++)
            firstMismatch = llvm::formatv(
                "[{0}, {1}, {2}]: {3} vectorized, {4} loops, {5} expected",
                batch, i, j, actual, f32Loops->get(out), expected);
        }
        if (strict->get(out) != toDouble(steps))
          ++strictMismatches;
        // |fl16(s) - exact| <= half an ulp of the 16-bit result plus the f32
        // sum's error, at most (K + 1) * 2^-24 * sum |terms|.
        if (expected != 0) {
          int exponent = llvm::ilogb(toHalf(llvm::APFloat(expected)));
          double halfUlp = std::ldexp(
              1.0,
              exponent - int(llvm::APFloat::semanticsPrecision(semantics)));
          double bound = halfUlp + (c.k + 1) * std::ldexp(magnitude, -24);
          if (std::fabs(actual - exact) > bound)
            ++outOfBound;
        }
        f32Error += (actual - exact) * (actual - exact);
        strictError += (strict->get(out) - exact) * (strict->get(out) - exact);
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "first: " << firstMismatch << "\n" << text;
  EXPECT_EQ(strictMismatches, 0) << text;
  EXPECT_EQ(outOfBound, 0) << text;
  if (c.k >= 32)
    EXPECT_GT(strictError, 4 * f32Error) << text;
}

INSTANTIATE_TEST_SUITE_P(
    Gemms, WidenAccumulation,
    ::testing::Values(
        AccumulationCase{{}, 1, 1, 1, false, Form::Named, "bf16", false},
        AccumulationCase{{}, 37, 61, 45, false, Form::Named, "bf16", true},
        AccumulationCase{{}, 130, 300, 257, true, Form::Named, "bf16", false},
        AccumulationCase{{3}, 17, 70, 33, false, Form::Named, "f16", true},
        AccumulationCase{{}, 37, 61, 45, false, Form::Generic, "f16", false},
        AccumulationCase{{2}, 9, 300, 40, true, Form::Generic, "bf16", true},
        AccumulationCase{{},
                         37,
                         61,
                         45,
                         false,
                         Form::Named,
                         "bf16",
                         true,
                         /*dynamic=*/true},
        AccumulationCase{{}, 20, 2100, 24, false, Form::Named, "f16", false}));

} // namespace
