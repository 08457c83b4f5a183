//===- RunnerTest.cpp - fp8-run's metrics and limits ----------------------===//
//
// The accuracy metrics against hand-derived values, with non-finite data on
// either side (W4 of the reliability probe), and the memory accounting and
// .npy limits behind --memory-budget (F5, S1).
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/Golden.h"
#include "fp8/Runner/Probes.h"
#include "fp8/Runner/Runner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Parser/Parser.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <limits>

using namespace mlir;
using namespace mlir::fp8::runner;

namespace {
class RunnerTest : public ::testing::Test {
protected:
  HostTensor f32Tensor(ArrayRef<double> values) {
    HostTensor tensor(Float32Type::get(&context),
                      {static_cast<int64_t>(values.size())});
    for (auto [i, value] : llvm::enumerate(values))
      tensor.set(i, value);
    return tensor;
  }

  MLIRContext context;
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST_F(RunnerTest, EqualOutputsAreExact) {
  Comparison c = compare(f32Tensor({1, -2, 3, 0}), f32Tensor({1, -2, 3, 0}));
  EXPECT_TRUE(c.isComparable());
  EXPECT_TRUE(std::isinf(c.sqnrDb) && c.sqnrDb > 0);
  EXPECT_EQ(c.maxAbsError, 0);
  EXPECT_EQ(c.nonFinite, 0);
}

TEST_F(RunnerTest, SqnrOfAKnownError) {
  // signal 3^2 + 4^2 = 25, noise 0.5^2: 10 log10(100) = 20 dB exactly.
  Comparison c = compare(f32Tensor({3, 4}), f32Tensor({3, 4.5}));
  EXPECT_DOUBLE_EQ(c.sqnrDb, 20.0);
  EXPECT_DOUBLE_EQ(c.maxAbsError, 0.5);
  EXPECT_DOUBLE_EQ(c.maxRelError, 0.125);
}

TEST_F(RunnerTest, NonFiniteOutputAgainstAFiniteReference) {
  Comparison c = compare(f32Tensor({3, 4, 5}), f32Tensor({3, kNaN, kInf}));
  EXPECT_TRUE(c.isComparable());
  EXPECT_EQ(c.nonFinite, 2);
  EXPECT_EQ(c.referenceNonFinite, 0);
  // The finite part agrees, but the output is broken: never "exact".
  EXPECT_TRUE(std::isinf(c.sqnrDb) && c.sqnrDb < 0);
}

TEST_F(RunnerTest, NonFiniteReferenceIsNotComparable) {
  for (double bad : {kNaN, kInf, -kInf}) {
    Comparison c = compare(f32Tensor({bad, 4}), f32Tensor({bad, 4}));
    EXPECT_FALSE(c.isComparable());
    EXPECT_EQ(c.referenceNonFinite, 1);
    EXPECT_TRUE(std::isnan(c.sqnrDb));
  }
  // All-NaN reference, as from an all-NaN input: nothing is compared.
  Comparison c = compare(f32Tensor({kNaN, kNaN}), f32Tensor({1, 2}));
  EXPECT_EQ(c.referenceNonFinite, 2);
  EXPECT_TRUE(std::isnan(c.sqnrDb));
  EXPECT_EQ(c.maxAbsError, 0);
}

TEST_F(RunnerTest, RowSqnr) {
  // Rows of [3, 4]: exact; 0.5 off (signal 25, noise 0.25: 20 dB); and
  // [1, 0] off by sqrt(0.1) in the zero (10 dB).
  HostTensor ref(Float64Type::get(&context), {3, 2});
  HostTensor out(Float64Type::get(&context), {3, 2});
  double refValues[] = {3, 4, 3, 4, 1, 0};
  double outValues[] = {3, 4, 3, 4.5, 1, std::sqrt(0.1)};
  for (int i = 0; i < 6; ++i) {
    ref.set(i, refValues[i]);
    out.set(i, outValues[i]);
  }
  Comparison c = compare(ref, out);
  EXPECT_NEAR(c.worstRowSqnrDb, 10.0, 1e-9);
  EXPECT_NEAR(c.medianRowSqnrDb, 20.0, 1e-9);
  // Whole tensor: signal 51, noise 0.35.
  EXPECT_NEAR(c.sqnrDb, 10 * std::log10(51 / 0.35), 1e-9);
  // Rank 1: the rows are the tensor.
  Comparison flat = compare(f32Tensor({3, 4}), f32Tensor({3, 4.5}));
  EXPECT_DOUBLE_EQ(flat.worstRowSqnrDb, flat.sqnrDb);
  EXPECT_DOUBLE_EQ(flat.medianRowSqnrDb, flat.sqnrDb);
}

TEST_F(RunnerTest, GoldenWidensEveryNarrowFloat) {
  DialectRegistry registry;
  registry.insert<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                  ml_program::MLProgramDialect, tensor::TensorDialect>();
  context.appendDialectRegistry(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    ml_program.global private @w(dense<1.5> : tensor<4xbf16>) : tensor<4xbf16>
    func.func @f(%x: tensor<4xbf16>, %h: f16) -> (tensor<4xbf16>, f32) {
      %c = arith.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xbf16>
      %w = ml_program.global_load_const @w : tensor<4xbf16>
      %s = arith.addf %x, %c : tensor<4xbf16>
      %y = arith.mulf %s, %w : tensor<4xbf16>
      %h32 = arith.extf %h : f16 to f32
      %t = arith.truncf %h32 : f32 to f16
      %r = arith.extf %t : f16 to f32
      return %y, %r : tensor<4xbf16>, f32
    }
  )mlir", &context);
  ASSERT_TRUE(module);
  std::string error;
  FailureOr<bool> changed =
      widenFloats(*module, Float32Type::get(&context), error);
  ASSERT_TRUE(succeeded(changed)) << error;
  EXPECT_TRUE(*changed);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  EXPECT_EQ(text.find("bf16"), std::string::npos) << text;
  EXPECT_EQ(text.find("f16"), std::string::npos) << text;
  EXPECT_EQ(text.find("arith.extf"), std::string::npos) << text;
  EXPECT_EQ(text.find("arith.truncf"), std::string::npos) << text;
  // bf16 0.1 is 0x3DCD = 0.10009765625 exactly; widening keeps the value.
  EXPECT_NE(text.find("0.100097656"), std::string::npos) << text;
  EXPECT_NE(text.find("(%arg0: tensor<4xf32>, %arg1: f32) -> (tensor<4xf32>, f32)"),
            std::string::npos)
      << text;
  // A second widening finds nothing to do; f64 widens the f32 too.
  EXPECT_FALSE(*widenFloats(*module, Float32Type::get(&context), error));
  EXPECT_TRUE(*widenFloats(*module, Float64Type::get(&context), error));
}

TEST_F(RunnerTest, GoldenRefusesWhatWouldNotVerify) {
  DialectRegistry registry;
  registry.insert<arith::ArithDialect, func::FuncDialect>();
  context.appendDialectRegistry(registry);
  // A bf16's bits reinterpreted as i16: there is no f32 equivalent.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%x: bf16) -> i16 {
      %b = arith.bitcast %x : bf16 to i16
      return %b : i16
    }
  )mlir", &context);
  ASSERT_TRUE(module);
  std::string error;
  EXPECT_TRUE(
      failed(widenFloats(*module, Float32Type::get(&context), error)));
  EXPECT_NE(error.find("does not verify"), std::string::npos) << error;
}

// HostTensor::set rounds a double once, to nearest even, into f32 and bf16
// by fast paths; APFloat's conversion is the reference: doubles on every
// rounding boundary of bf16 and f32, halfway cases, subnormals, overflow,
// infinities, NaNs, zeros and random bit patterns.
TEST_F(RunnerTest, SetRoundsOnceLikeAPFloat) {
  std::vector<double> values = {0.0,     -0.0,    1.0,     -1.0,   INFINITY,
                                -INFINITY, kNaN,  -kNaN,   1e-300, -1e-300,
                                1e300,   -1e300,  3.4e38,  3.39e38, 3.3961e38,
                                1e-40,   1e-45,   7e-46,   1.4e-45, 2.8e-45};
  // Each bf16 and f32 boundary, and one ulp of double either side.
  for (int exponent = -140; exponent <= 128; exponent += 3)
    for (double mantissa : {1.0, 1.00390625, 1.005859375, 1.0078125,
                            1.9921875, 1.99609375, 1.5000000596046448}) {
      double v = std::ldexp(mantissa, exponent);
      values.insert(values.end(), {v, std::nextafter(v, 0.0),
                                   std::nextafter(v, INFINITY), -v});
    }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, 8);
    if (!std::isfinite(v))
      continue;
    // Exponents around f32's range: few overflows, many subnormals.
    int exponent;
    double fraction = std::frexp(v, &exponent);
    values.push_back(std::ldexp(fraction, i % 300 - 150));
  }
  for (Type type : {Type(Float32Type::get(&context)),
                    Type(BFloat16Type::get(&context))}) {
    const llvm::fltSemantics &semantics =
        cast<FloatType>(type).getFloatSemantics();
    unsigned width = cast<FloatType>(type).getWidth();
    HostTensor tensor(type, {static_cast<int64_t>(values.size())});
    for (auto [i, v] : llvm::enumerate(values))
      tensor.set(i, v);
    for (auto [i, v] : llvm::enumerate(values)) {
      llvm::APFloat expected(v);
      bool losesInfo;
      expected.convert(semantics, llvm::APFloat::rmNearestTiesToEven,
                       &losesInfo);
      uint64_t want = expected.bitcastToAPInt().getZExtValue(), got = 0;
      std::memcpy(&got, tensor.data() + i * (width / 8), width / 8);
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(tensor.get(i))) << v;
        continue;
      }
      ASSERT_EQ(got, want) << llvm::formatv("{0:e} -> {1}", v, width).str();
    }
  }
}

TEST_F(RunnerTest, StorageBytes) {
  Builder b(&context);
  auto type = RankedTensorType::get({2, ShapedType::kDynamic, 3}, b.getF32Type());
  EXPECT_EQ(getStorageBytes(type, 5), std::optional<uint64_t>(2 * 5 * 3 * 4));
  EXPECT_EQ(getStorageBytes(b.getIndexType(), 1), std::optional<uint64_t>(8));
  EXPECT_EQ(getStorageBytes(b.getI1Type(), 1), std::optional<uint64_t>(1));
  auto bf16 = RankedTensorType::get({7}, b.getBF16Type());
  EXPECT_EQ(getStorageBytes(bf16, 0), std::optional<uint64_t>(14));
  // 2^62 * 2^62 elements overflow 64 bits.
  auto huge = RankedTensorType::get(
      {int64_t(1) << 62, ShapedType::kDynamic}, b.getF32Type());
  EXPECT_EQ(getStorageBytes(huge, int64_t(1) << 62), std::nullopt);
}

TEST_F(RunnerTest, FormatBytes) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(uint64_t(3) << 30), "3.0 GiB");
}

TEST_F(RunnerTest, DefaultBudgetIsPositive) {
  EXPECT_GT(getDefaultMemoryBudget(), uint64_t(1) << 20);
}

/// A little-endian f32 .npy of the given shape, all ones.
static std::string writeNpy(StringRef name, ArrayRef<int64_t> shape) {
  SmallString<128> path;
  llvm::sys::fs::createTemporaryFile(name, "npy", path);
  std::string dims;
  int64_t count = 1;
  for (int64_t d : shape) {
    dims += std::to_string(d) + ", ";
    count *= d;
  }
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       dims + "), }";
  header.resize(((header.size() + 11) / 64 + 1) * 64 - 11, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  for (int64_t i = 0; i < count; ++i) {
    float one = 1.0f;
    os.write(reinterpret_cast<const char *>(&one), 4);
  }
  return path.str().str();
}

TEST_F(RunnerTest, NpyWithinTheBudget) {
  std::string path = writeNpy("ok", {4, 8});
  std::string error;
  FailureOr<HostTensor> tensor =
      readNpy(path, Float32Type::get(&context), error, /*maxBytes=*/1 << 20);
  ASSERT_TRUE(succeeded(tensor)) << error;
  EXPECT_EQ(tensor->getNumElements(), 32);
  EXPECT_EQ(tensor->get(31), 1.0);
  // The file is 128 + 128 bytes; the budget is for the file and the tensor.
  FailureOr<HostTensor> tooBig =
      readNpy(path, Float32Type::get(&context), error, /*maxBytes=*/200);
  EXPECT_TRUE(failed(tooBig));
  EXPECT_NE(error.find("larger than the memory budget"), std::string::npos)
      << error;
  llvm::sys::fs::remove(path);
}

TEST_F(RunnerTest, EmptyNpy) {
  std::string path = writeNpy("empty", {0, 4});
  std::string error;
  FailureOr<HostTensor> tensor =
      readNpy(path, Float32Type::get(&context), error);
  ASSERT_TRUE(succeeded(tensor)) << error;
  EXPECT_EQ(tensor->getNumElements(), 0);
  llvm::sys::fs::remove(path);
}

TEST_F(RunnerTest, NpyMustBeARegularFile) {
  std::string error;
  EXPECT_TRUE(failed(readNpy("/dev/zero", Float32Type::get(&context), error)));
  EXPECT_EQ(error, "'/dev/zero' is not a regular file");
}
} // namespace

// Kurtosis from power sums against textbook values: +-1 with equal odds is
// 1; the discrete uniform on 1..n is 3 (3 n^2 - 7) / (5 (n^2 - 1)), 123/75
// for n = 4; Bernoulli(1/4) is (1 - 6 p q) / (p q) + 3 = 7/3.
TEST(MomentKurtosis, TextbookValues) {
  auto of = [](std::initializer_list<double> values) {
    double sums[4] = {0, 0, 0, 0};
    for (double x : values)
      for (int k = 0; k < 4; ++k)
        sums[k] += std::pow(x, k + 1);
    return mlir::fp8::runner::momentKurtosis(sums, values.size());
  };
  EXPECT_DOUBLE_EQ(of({-1, 1, 1, -1}), 1.0);
  EXPECT_NEAR(of({1, 2, 3, 4}), 123.0 / 75.0, 1e-12);
  EXPECT_NEAR(of({0, 0, 0, 1}), 7.0 / 3.0, 1e-12);
  // Shifted and scaled values have the same kurtosis.
  EXPECT_NEAR(of({1003, 1006, 1009, 1012}), 123.0 / 75.0, 1e-9);
  // Nothing varies, or nothing at all: no kurtosis.
  EXPECT_TRUE(std::isnan(of({2, 2, 2})));
  double none[4] = {0, 0, 0, 0};
  EXPECT_TRUE(std::isnan(mlir::fp8::runner::momentKurtosis(none, 0)));
}
