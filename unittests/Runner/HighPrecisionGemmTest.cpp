//===- HighPrecisionGemmTest.cpp - Whole-graph wgmma contractions compute ===//
//
// convert-fp8-scaled-matmul-to-wgmma{whole-graph} rebuilds a program's
// high-precision contractions for the wgmma kernels: f32 ones as tf32,
// by default split into 3xTF32 terms over a tripled K, and ones into a
// non-zero init as a product into zero plus an elementwise add. The
// rewritten IR (the kernels themselves dropped) is run here on the CPU,
// with the tensor cores' reading of tf32 operands (the low 13 mantissa
// bits ignored) put into the contraction's body, against products taken
// in f64: 3xTF32 must be as accurate as an f32 GEMM, plain tf32 must not
// be (so the emulation is not vacuous), NaN and Inf must stay non-finite,
// and an accumulation into an init must add it exactly.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"
#include "fp8/Runner/Runner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::fp8::runner;

namespace {

constexpr int64_t kM = 33, kK = 100, kN = 17;

/// C = A x B (f32, zero init), as a linalg.matmul on `lhs` x `rhs` types.
std::string getF32Module(StringRef lhs, StringRef rhs, StringRef out) {
  return llvm::formatv(R"mlir(
func.func @f(%a: {0}, %b: {1}) -> {2} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : {0}
  %n = tensor.dim %b, %c1 : {1}
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %c = linalg.matmul ins(%a, %b : {0}, {1}) outs(%z : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = tensor.cast %c : tensor<?x?xf32> to {2}
  return %r : {2}
}
)mlir",
                       lhs, rhs, out)
      .str();
}

class HighPrecisionGemm : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  HighPrecisionGemm() {
    DialectRegistry registry;
    registerRunnerDialects(registry);
    registry.insert<gpu::GPUDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// `text` after the whole-graph pass (`f32Mode`), with the kernels
  /// dropped and, in the contraction the kernel would run, every operand
  /// read as the tensor cores read tf32 (`emulateTF32`); compiled for the
  /// CPU. Also says how many contractions the pass took.
  std::unique_ptr<CompiledFunction> rewriteAndCompile(StringRef text,
                                                      StringRef f32Mode,
                                                      bool emulateTF32,
                                                      int &taken) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    if (!module)
      return nullptr;
    PassManager pm(&context);
    fp8::ConvertFP8ScaledMatmulToWGMMAOptions options;
    options.wholeGraph = true;
    options.f32Contractions = f32Mode.str();
    pm.addPass(fp8::createConvertFP8ScaledMatmulToWGMMA(options));
    EXPECT_TRUE(succeeded(pm.run(*module)));
    taken = 0;
    SmallVector<Operation *> kernels;
    module->walk([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op)) {
        kernels.push_back(op);
        return;
      }
      if (!op->hasAttr("fp8.wgmma_kernel"))
        return;
      ++taken;
      op->removeAttr("fp8.wgmma_kernel");
      op->removeAttr("fp8.wgmma_tile");
      op->removeAttr("fp8.wgmma_pad_k");
      if (!emulateTF32)
        return;
      op->walk([&](arith::MulFOp mul) {
        OpBuilder b(mul);
        Type i32 = b.getI32Type();
        Value mask = arith::ConstantOp::create(
            b, mul.getLoc(), b.getIntegerAttr(i32, int32_t(0xFFFFE000u)));
        for (OpOperand &operand : mul->getOpOperands()) {
          Value bits = arith::BitcastOp::create(b, mul.getLoc(), i32,
                                                operand.get());
          Value kept = arith::AndIOp::create(b, mul.getLoc(), bits, mask);
          operand.set(arith::BitcastOp::create(b, mul.getLoc(),
                                               b.getF32Type(), kept));
        }
      });
    });
    for (Operation *op : kernels)
      op->erase();
    std::string error;
    auto function = CompiledFunction::compile(*module, "f", error,
                                              {/*vectorize=*/false});
    EXPECT_TRUE(function) << error;
    return function;
  }

  /// init + A x B in f64, A [rows, k], B [k, n] (batch dimensions of A
  /// folded into its rows), no init when null.
  static HostTensor referenceProduct(const HostTensor &a, const HostTensor &b,
                                     Type f64, const HostTensor *init = nullptr) {
    int64_t k = b.getShape()[0], n = b.getShape()[1];
    int64_t rows = a.getNumElements() / k;
    HostTensor c(f64, {rows, n});
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = init ? init->get(i * n + j) : 0;
        for (int64_t l = 0; l < k; ++l)
          sum += a.get(i * k + l) * b.get(l * n + j);
        c.set(i * n + j, sum);
      }
    return c;
  }

  /// SQNR of A x B against f64 for normal inputs, run as `f32Mode`.
  double sqnr(StringRef lhs, StringRef rhs, StringRef f32Mode,
              bool emulateTF32) {
    int taken = 0;
    auto function = rewriteAndCompile(
        getF32Module(lhs, rhs, llvm::formatv("tensor<{0}x{1}xf32>", kM, kN)
                                   .str()),
        f32Mode, emulateTF32, taken);
    if (!function)
      return NAN;
    EXPECT_EQ(taken, f32Mode == "none" ? 0 : 1);
    Type f32 = Float32Type::get(&context);
    HostTensor a(f32, {kM, kK}), b(f32, {kK, kN});
    std::mt19937_64 random(7);
    fill(a, Distribution::Normal, 1.0, 0, random);
    fill(b, Distribution::Normal, 1.0, 0, random);
    std::string error;
    auto results = function->call({a, b}, error);
    EXPECT_TRUE(succeeded(results)) << error;
    if (failed(results))
      return NAN;
    return compare(referenceProduct(a, b, Float64Type::get(&context)),
                   (*results)[0])
        .sqnrDb;
  }

  MLIRContext context;
};

std::string staticType(int64_t rows, int64_t cols) {
  return llvm::formatv("tensor<{0}x{1}xf32>", rows, cols).str();
}

// The 3xTF32 split is as accurate as the f32 GEMM (within 6 dB; both about
// 135 dB on N(0,1) data, K = 100); tf32 alone loses 2^-11 per operand
// (about 70 dB): the tensor-core emulation bites, and the split undoes it.
TEST_F(HighPrecisionGemm, ThreeTF32IsAsAccurateAsF32) {
  std::string lhs = staticType(kM, kK), rhs = staticType(kK, kN);
  double f32 = sqnr(lhs, rhs, "none", /*emulateTF32=*/false);
  double split = sqnr(lhs, rhs, "3xtf32", /*emulateTF32=*/true);
  double tf32 = sqnr(lhs, rhs, "tf32", /*emulateTF32=*/true);
  llvm::errs() << llvm::formatv("SQNR vs f64, [{0}x{1}] x [{1}x{2}] N(0,1): "
                                "f32 {3:F1} dB, 3xtf32 {4:F1} dB, tf32 "
                                "{5:F1} dB\n",
                                kM, kK, kN, f32, split, tf32);
  EXPECT_GT(f32, 120.0);
  EXPECT_GE(split, f32 - 6.0) << "f32 " << f32 << " dB";
  EXPECT_LT(tf32, 80.0);
  EXPECT_GT(tf32, 50.0);
}

// The same with every extent dynamic: the split's [?, 3, ?] and K = 3 x ?.
TEST_F(HighPrecisionGemm, ThreeTF32DynamicShapes) {
  double f32 = sqnr("tensor<?x?xf32>", "tensor<?x?xf32>", "none", false);
  double split = sqnr("tensor<?x?xf32>", "tensor<?x?xf32>", "3xtf32", true);
  EXPECT_GT(f32, 120.0);
  EXPECT_GE(split, f32 - 6.0) << "f32 " << f32 << " dB";
}

// A NaN in A makes its row of C NaN, a signaling one too; an Inf makes it
// non-finite (NaN where Inf meets a zero lo term); every other element
// stays as accurate.
TEST_F(HighPrecisionGemm, NonFiniteInputsStayNonFinite) {
  int taken = 0;
  auto function = rewriteAndCompile(
      getF32Module(staticType(kM, kK), staticType(kK, kN),
                   staticType(kM, kN)),
      "3xtf32", /*emulateTF32=*/true, taken);
  ASSERT_TRUE(function);
  EXPECT_EQ(taken, 1);
  Type f32 = Float32Type::get(&context);
  HostTensor a(f32, {kM, kK}), b(f32, {kK, kN});
  std::mt19937_64 random(11);
  fill(a, Distribution::Normal, 1.0, 0, random);
  fill(b, Distribution::Normal, 1.0, 0, random);
  a.set(3 * kK + 5, std::numeric_limits<double>::quiet_NaN());
  a.set(7 * kK + 9, std::numeric_limits<double>::infinity());
  // A signaling NaN whose payload is only in the bits tf32 drops: it must
  // not read as Inf.
  uint32_t signaling = 0x7F800001u;
  std::memcpy(a.data() + (12 * kK + 2) * sizeof(float), &signaling, 4);
  std::string error;
  auto results = function->call({a, b}, error);
  ASSERT_TRUE(succeeded(results)) << error;
  HostTensor ref = referenceProduct(a, b, Float64Type::get(&context));
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t j = 0; j < kN; ++j) {
      double out = (*results)[0].get(i * kN + j), want = ref.get(i * kN + j);
      if (i == 3 || i == 12) {
        EXPECT_TRUE(std::isnan(out)) << i << ", " << j;
        continue;
      }
      if (i == 7) {
        EXPECT_FALSE(std::isfinite(out)) << i << ", " << j;
        continue;
      }
      double scale = 0;
      for (int64_t k = 0; k < kK; ++k)
        scale += std::fabs(a.get(i * kK + k) * b.get(k * kN + j));
      EXPECT_LE(std::fabs(out - want), 1e-6 * scale) << i << ", " << j;
    }
}

// A [2, 33, K] activation times an unbatched [K, N] weight into a
// non-zero init: B and S collapsed into one M for the kernel, the result
// expanded back, the init added after; 3xTF32 with emulated tf32 reading.
TEST_F(HighPrecisionGemm, BatchedActivationTimesWeight) {
  std::string text = llvm::formatv(R"mlir(
#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @f(%a: tensor<2x{0}x{1}xf32>, %b: tensor<{1}x{2}xf32>, %c: tensor<2x{0}x{2}xf32>) -> tensor<2x{0}x{2}xf32> {{
  %r = linalg.generic {{indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x{0}x{1}xf32>, tensor<{1}x{2}xf32>) outs(%c : tensor<2x{0}x{2}xf32>) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x{0}x{2}xf32>
  return %r : tensor<2x{0}x{2}xf32>
}
)mlir", kM, kK, kN).str();
  int taken = 0;
  auto function = rewriteAndCompile(text, "3xtf32", /*emulateTF32=*/true,
                                    taken);
  ASSERT_TRUE(function);
  EXPECT_EQ(taken, 1);
  Type f32 = Float32Type::get(&context);
  HostTensor a(f32, {2, kM, kK}), b(f32, {kK, kN}), c(f32, {2, kM, kN});
  std::mt19937_64 random(5);
  fill(a, Distribution::Normal, 1.0, 0, random);
  fill(b, Distribution::Normal, 1.0, 0, random);
  fill(c, Distribution::Normal, 1.0, 0, random);
  std::string error;
  auto results = function->call({a, b, c}, error);
  ASSERT_TRUE(succeeded(results)) << error;
  HostTensor ref = referenceProduct(a, b, Float64Type::get(&context), &c);
  EXPECT_GT(compare(ref, (*results)[0]).sqnrDb, 120.0);
}

// bf16 operands into a bf16 init that is not a zero fill: init + A x B
// with small integers (every sum exact in bf16), for equality.
TEST_F(HighPrecisionGemm, AccumulatesIntoAnInit) {
  std::string text = R"mlir(
func.func @f(%a: tensor<33x16xbf16>, %b: tensor<16x17xbf16>, %c: tensor<33x17xbf16>) -> tensor<33x17xbf16> {
  %r = linalg.matmul ins(%a, %b : tensor<33x16xbf16>, tensor<16x17xbf16>)
                     outs(%c : tensor<33x17xbf16>) -> tensor<33x17xbf16>
  return %r : tensor<33x17xbf16>
}
)mlir";
  int taken = 0;
  auto function = rewriteAndCompile(text, "3xtf32", /*emulateTF32=*/false,
                                    taken);
  ASSERT_TRUE(function);
  EXPECT_EQ(taken, 1);
  Type bf16 = BFloat16Type::get(&context);
  HostTensor a(bf16, {33, 16}), b(bf16, {16, 17}), c(bf16, {33, 17});
  std::mt19937 random(3);
  std::uniform_int_distribution<int> small(-2, 2);
  for (HostTensor *t : {&a, &b, &c})
    for (int64_t i = 0; i < t->getNumElements(); ++i)
      t->set(i, small(random));
  std::string error;
  auto results = function->call({a, b, c}, error);
  ASSERT_TRUE(succeeded(results)) << error;
  HostTensor want =
      referenceProduct(a, b, Float64Type::get(&context), &c);
  for (int64_t i = 0; i < want.getNumElements(); ++i)
    EXPECT_EQ((*results)[0].get(i), want.get(i)) << "element " << i;
}

} // namespace
