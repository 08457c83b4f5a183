//===- GpuFunctionTest.cpp - fp8-run --device=cuda without a GPU ----------===//
//
// GpuFunction's error paths (a located error from the GPU lowering before
// any CUDA call), the compiled program over a fake driver
// (FakeCudaDriver.cpp: host memory, launches that do nothing), and the
// GPU-vs-CPU checks. A missing driver is fp8-run-cuda-errors.test's.
//
//===----------------------------------------------------------------------===//

#include "fp8/InitAllFP8.h"
#include "fp8/Runner/GpuFunction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::fp8::runner;

namespace {
class GpuFunctionTest : public ::testing::Test {
protected:
  GpuFunctionTest() {
    DialectRegistry registry;
    registry.insert<arith::ArithDialect, func::FuncDialect, math::MathDialect,
                    tensor::TensorDialect>();
    fp8::registerAllFP8Dialects(registry);
    context.appendDialectRegistry(registry);
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // The GPU runtime library of this build, not <bin>/../lib's.
    setenv("FP8_GPU_RUNTIME", FP8_GPU_RUNTIME_LIBRARY, 1);
    context.loadAllAvailableDialects();
  }
  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, ParserConfig(&context),
                                       "test.mlir");
  }
  MLIRContext context;
};

/// Sets FP8_CUDA_DRIVER for the scope.
struct DriverPath {
  explicit DriverPath(const char *path) { setenv("FP8_CUDA_DRIVER", path, 1); }
  ~DriverPath() { unsetenv("FP8_CUDA_DRIVER"); }
};

constexpr const char *kF64 = R"mlir(
func.func @f64(%x: tensor<64xf64>) -> tensor<64xf64> {
  %y = math.exp %x : tensor<64xf64>
  return %y : tensor<64xf64>
}
)mlir";

// Returns an input unchanged, a constant, an amax (a kernel: the fake
// driver leaves it 0) and a cast_transpose of dynamic shape.
constexpr const char *kPassthrough = R"mlir(
func.func @pass(%q: tensor<?xf8E4M3FN>, %x: tensor<?x?xf32>)
    -> (tensor<?xf8E4M3FN>, f32, f32, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E4M3FN>) {
  %c = arith.constant 0.25 : f32
  %a = fp8.amax %x : tensor<?x?xf32>
  %t, %tt = fp8.cast_transpose %x, %c
      : tensor<?x?xf32> -> tensor<?x?xf8E4M3FN>, tensor<?x?xf8E4M3FN>
  return %q, %c, %a, %t, %tt
      : tensor<?xf8E4M3FN>, f32, f32, tensor<?x?xf8E4M3FN>, tensor<?x?xf8E4M3FN>
}
)mlir";
} // namespace

// Only the fake-driver test calls into the GPU runtime library: its driver
// is the process's, chosen on first use.

TEST_F(GpuFunctionTest, WhatDoesNotLowerIsNamedWithItsLocation) {
  // No driver at all: the error must come from compile(), not CUDA.
  DriverPath missing("/nonexistent/libcuda.so.1");
  OwningOpRef<ModuleOp> module = parse(kF64);
  ASSERT_TRUE(module);
  std::string error;
  EXPECT_EQ(GpuFunction::compile(*module, "f64", error), nullptr);
  EXPECT_NE(error.find("cannot run @f64 on the GPU: lowering to the GPU "
                       "failed"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("test.mlir\":3:8): 'math.exp' op has no lowering "
                       "without libdevice"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("CUDA"), std::string::npos) << error;
  EXPECT_EQ(GpuFunction::compile(*module, "nope", error), nullptr);
  EXPECT_NE(error.find("no function @nope with a body"), std::string::npos)
      << error;
}

TEST_F(GpuFunctionTest, RunsTheCompiledProgramOverAFakeDriver) {
  DriverPath fake(FP8_FAKE_CUDA_DRIVER);
  OwningOpRef<ModuleOp> module = parse(kPassthrough);
  ASSERT_TRUE(module);
  std::string error;
  CompileOptions options;
  options.optLevel = 0;
  std::unique_ptr<GpuFunction> gpu =
      GpuFunction::compile(*module, "pass", error, options);
  ASSERT_TRUE(gpu) << error;
  ASSERT_TRUE(succeeded(gpu->connect(error))) << error;
  EXPECT_EQ(gpu->getDeviceName(), "Fake GPU (sm_90)");

  HostTensor q(Float8E4M3FNType::get(&context), {5});
  for (int i = 0; i < 5; ++i)
    q.data()[i] = static_cast<char>(0x30 + i);
  HostTensor x(Float32Type::get(&context), {3, 70});
  for (int64_t i = 0; i < x.getNumElements(); ++i)
    x.set(i, i - 100.5);
  EXPECT_TRUE(failed(gpu->call({q}, error)));
  EXPECT_NE(error.find("takes 2 arguments, got 1"), std::string::npos);

  FailureOr<SmallVector<HostTensor>> results = gpu->call({q, x}, error);
  ASSERT_TRUE(succeeded(results)) << error;
  ASSERT_EQ(results->size(), 5u);
  // The input passed through, the constant; dynamic shapes from the
  // arguments (transposed for cast_transpose's second result).
  EXPECT_EQ(std::memcmp((*results)[0].data(), q.data(), 5), 0);
  EXPECT_EQ((*results)[1].get(0), 0.25);
  EXPECT_EQ((*results)[2].get(0), 0.0); // no kernel ran
  EXPECT_EQ((*results)[3].getShape(), ArrayRef<int64_t>({3, 70}));
  EXPECT_EQ((*results)[4].getShape(), ArrayRef<int64_t>({70, 3}));

  // Against a "CPU" run with the real amax: outputs 0 and 1 match bit for
  // bit, output 2 does not.
  HostTensor amax(Float32Type::get(&context), {});
  amax.set(0, 109.5);
  SmallVector<HostTensor> cpu{q, (*results)[1], amax, (*results)[3],
                              (*results)[4]};
  SmallVector<GpuOutputCheck> checks = checkGpuOutputs(cpu, *results);
  ASSERT_EQ(checks.size(), 5u);
  EXPECT_TRUE(checks[0].ok);
  EXPECT_EQ(checks[0].mode, "bits");
  EXPECT_EQ(checks[0].type, "tensor<5xf8E4M3FN>");
  EXPECT_TRUE(checks[1].ok);
  EXPECT_FALSE(checks[2].ok);
  EXPECT_EQ(checks[2].mismatches, 1);
  llvm::json::Object record = gpuChecksToJSON("Fake GPU", checks);
  EXPECT_EQ(record.getBoolean("ok"), false);
  std::string table;
  llvm::raw_string_ostream os(table);
  printGpuChecks(record, os);
  EXPECT_NE(table.find("MISMATCH"), std::string::npos) << table;
  EXPECT_NE(table.find("FAIL"), std::string::npos) << table;
}

TEST_F(GpuFunctionTest, WideOutputsWithinTolerance) {
  Type f32 = Float32Type::get(&context);
  HostTensor ref(f32, {4}), out(f32, {4});
  for (int i = 0; i < 4; ++i) {
    ref.set(i, i + 1.0);
    out.set(i, i + 1.0);
  }
  out.set(3, 4.001); // 2.5e-4 of max |ref|
  SmallVector<GpuOutputCheck> checks = checkGpuOutputs({ref}, {out}, 1e-3);
  EXPECT_EQ(checks[0].mode, "tolerance");
  EXPECT_EQ(checks[0].mismatches, 1);
  EXPECT_TRUE(checks[0].ok);
  EXPECT_FALSE(checkGpuOutputs({ref}, {out}, 1e-4)[0].ok);
  // NaN where the CPU has a number fails whatever the tolerance.
  out.set(3, NAN);
  EXPECT_FALSE(checkGpuOutputs({ref}, {out}, 1.0)[0].ok);
  // NaN on both sides matches (payloads may differ).
  ref.set(3, NAN);
  EXPECT_TRUE(checkGpuOutputs({ref}, {out}, 1e-6)[0].ok);
  // A shape difference fails.
  HostTensor other(f32, {2, 2});
  EXPECT_FALSE(checkGpuOutputs({ref}, {other})[0].ok);
}
