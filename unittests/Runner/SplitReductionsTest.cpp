//===- SplitReductionsTest.cpp - Split reductions compute the same values ===//
//
// fp8-split-reductions-for-gpu rewrites every full reduction for the GPU:
// partials by lanes, a masked split over zero padding for dynamic and odd
// lengths, finals on one thread, parallel loops moved outermost. Run on the
// CPU, the rewritten functions must compute what the reductions mean. The
// inputs are half-integers in [-4, 4]: every sum, sum of squares and
// weighted sum below is exact in f32 in any order, so the results are
// compared for equality with sums computed here, on lengths that are empty,
// shorter than a lane group, multiples of one and neither, static and
// dynamic.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Runner/Runner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::fp8::runner;

namespace {

/// Sum, max, sum of squares, sum of x[i] * (i mod 7) and sum of x[i] + 1
/// (which a padding element would change: the masked split must leave it
/// out) of a vector of type `vector`, the total and column sums of a
/// [33, 130] matrix, and its total again as a dynamic matrix (130 partials
/// of dynamic length: a masked split of them).
std::string getModule(StringRef vector) {
  std::string text = R"mlir(
#id = affine_map<(i) -> (i)>
#scalar = affine_map<(i) -> ()>
func.func @f(%x: VECTOR, %m: tensor<33x130xf32>, %dm: tensor<?x?xf32>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>,
        tensor<130xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %n = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%x : VECTOR) outs(%z : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %max = linalg.reduce ins(%x : VECTOR) outs(%n : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.maximumf %a, %acc : f32
      linalg.yield %r : f32
    }
  %squares = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%x : VECTOR) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %s : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %weighted = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%x : VECTOR) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 0 : index
    %c7 = arith.constant 7 : index
    %k = arith.remui %i, %c7 : index
    %k32 = arith.index_cast %k : index to i32
    %w = arith.sitofp %k32 : i32 to f32
    %p = arith.mulf %a, %w : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %shifted = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%x : VECTOR) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %a, %one : f32
    %r = arith.addf %acc, %s : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %total = linalg.reduce ins(%m : tensor<33x130xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %ce = tensor.empty() : tensor<130xf32>
  %cz = linalg.fill ins(%zero : f32) outs(%ce : tensor<130xf32>) -> tensor<130xf32>
  %columns = linalg.reduce ins(%m : tensor<33x130xf32>) outs(%cz : tensor<130xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %dtotal = linalg.reduce ins(%dm : tensor<?x?xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  return %sum, %max, %squares, %weighted, %shifted, %total, %columns, %dtotal
      : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>,
        tensor<130xf32>, tensor<f32>
}
)mlir";
  for (size_t at; (at = text.find("VECTOR")) != std::string::npos;)
    text.replace(at, 6, vector.str());
  return text;
}

/// Half-integers in [-4, 4].
void fill(HostTensor &tensor, std::mt19937 &random) {
  std::uniform_int_distribution<int> halves(-8, 8);
  for (int64_t i = 0; i < tensor.getNumElements(); ++i)
    tensor.set(i, halves(random) / 2.0);
}

class SplitReductions : public ::testing::TestWithParam<int64_t> {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  SplitReductions() {
    DialectRegistry registry;
    registerRunnerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// @f of getModule(vector) after fp8-split-reductions-for-gpu, run on x
  /// and a matrix, against sums taken here.
  void check(StringRef vector, int64_t length) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(getModule(vector), &context);
    ASSERT_TRUE(module);
    PassManager pm(&context);
    pm.addNestedPass<func::FuncOp>(fp8::createFP8SplitReductionsForGPU());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    // The rewrite happened: nothing is left to reduce whole in one loop
    // nest but the finals, which have a unit parallel loop.
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    EXPECT_EQ(text.find("linalg.reduce"), std::string::npos) << text;

    std::string error;
    auto function = CompiledFunction::compile(*module, "f", error,
                                              {/*vectorize=*/false});
    ASSERT_TRUE(function) << error;

    std::mt19937 random(length);
    Type f32 = Float32Type::get(&context);
    HostTensor x(f32, {length}), m(f32, {33, 130});
    fill(x, random);
    fill(m, random);
    auto results = function->call({x, m, m}, error);
    ASSERT_TRUE(succeeded(results)) << error;
    ASSERT_EQ(results->size(), 8u);

    double sum = 0, squares = 0, weighted = 0, total = 0;
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < length; ++i) {
      double v = x.get(i);
      sum += v;
      max = std::max(max, v);
      squares += v * v;
      weighted += v * double(i % 7);
    }
    std::vector<double> columns(130, 0.0);
    for (int64_t r = 0; r < 33; ++r)
      for (int64_t c = 0; c < 130; ++c) {
        total += m.get(r * 130 + c);
        columns[c] += m.get(r * 130 + c);
      }
    EXPECT_EQ((*results)[0].get(0), sum);
    EXPECT_EQ((*results)[1].get(0), max);
    EXPECT_EQ((*results)[2].get(0), squares);
    EXPECT_EQ((*results)[3].get(0), weighted);
    EXPECT_EQ((*results)[4].get(0), sum + double(length));
    EXPECT_EQ((*results)[5].get(0), total);
    for (int64_t c = 0; c < 130; ++c)
      EXPECT_EQ((*results)[6].get(c), columns[c]) << "column " << c;
    EXPECT_EQ((*results)[7].get(0), total);
  }

  MLIRContext context;
};

TEST_P(SplitReductions, StaticLength) {
  int64_t length = GetParam();
  check(llvm::formatv("tensor<{0}xf32>", length).str(), length);
}

TEST_P(SplitReductions, DynamicLength) {
  check("tensor<?xf32>", GetParam());
}

// Empty, one element, at most 256 (one thread), a multiple of a power of
// two (split by lanes; 4096 with a second stage), odd ones (masked), and
// one above 65,536.
INSTANTIATE_TEST_SUITE_P(Lengths, SplitReductions,
                         ::testing::Values(0, 1, 100, 256, 257, 1001, 4096,
                                           65539));

} // namespace
