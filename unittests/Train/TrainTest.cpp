//===- TrainTest.cpp - The training contract and checkpoints --------------===//
//
// readContract on steps whose loss, grad_norm, loss_scale, step, parameters
// or tokens do not have the contract's types, on nested and duplicate steps;
// loadCheckpoint and CompiledFunction::writeGlobal on scaling state of
// another shape (issue 36: N1, N2, N3, N7, N8, N15, N16).
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/Runner.h"
#include "fp8/Train/Checkpoint.h"
#include "fp8/Train/Contract.h"
#include "fp8/Train/Run.h"
#include "fp8/Train/Trainer.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;

namespace {

/// A step with the given types (parameters, loss, step, tokens), its body
/// a placeholder: the contract is read before anything compiles.
std::string step(StringRef param = "tensor<4xf32>",
                 StringRef loss = "tensor<f32>", StringRef stepType = "f32",
                 StringRef tokens = "tensor<2x16xi64>",
                 StringRef name = "train_step") {
  return llvm::formatv(
             R"(func.func @{4}(%tok: {3} {{fp8.train = "tokens"}, %tgt: {3} {{fp8.train = "targets"},
    %ls: tensor<f32> {{fp8.train = "loss_scale"}, %step: {2} {{fp8.train = "step"},
    %w: {0} {{fp8.train = "parameter"}, %m: {0} {{fp8.train = "moment1"}, %v: {0} {{fp8.train = "moment2"})
    -> ({1} {{fp8.train = "loss"}, {0} {{fp8.train = "parameter"}, {0} {{fp8.train = "moment1"}, {0} {{fp8.train = "moment2"})
    attributes {{fp8.train_step} {{
  %l = tensor.empty() : {1}
  return %l, %w, %m, %v : {1}, {0}, {0}, {0}
})",
             param, loss, stepType, tokens, name)
      .str();
}

class TrainTest : public ::testing::Test {
protected:
  TrainTest() {
    registerRunnerDialects(registry);
    context.appendDialectRegistry(registry);
  }

  /// The error of reading the contract of `source` ("" when it is read).
  std::string contractError(StringRef source, StringRef function = "") {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source.str();
    if (!module)
      return "unparsed";
    std::string error;
    FailureOr<Contract> contract = readContract(*module, function, error);
    EXPECT_EQ(failed(contract), !error.empty());
    return error;
  }

  DialectRegistry registry;
  MLIRContext context;
};

TEST_F(TrainTest, ReadsTheContract) {
  EXPECT_EQ(contractError(step()), "");
  EXPECT_EQ(contractError(step("tensor<4xf32>", "tensor<f32>", "f32",
                               "tensor<2x16xi16>")),
            "");
}

TEST_F(TrainTest, ResultAndScalarTypesAreTheContracts) {
  EXPECT_EQ(contractError(step("tensor<4xf32>", "tensor<0xf32>")),
            "'loss' (result #0) is tensor<0xf32>; the contract makes it "
            "tensor<f32> (docs/fp8-train.md)");
  for (StringRef loss :
       {"tensor<2x3xf32>", "tensor<i32>", "tensor<1xf32>", "tensor<f64>"})
    EXPECT_NE(contractError(step("tensor<4xf32>", loss)).find("'loss'"),
              std::string::npos)
        << loss.str();
  for (StringRef type : {"tensor<?xf32>", "tensor<f32>", "f64", "i64"})
    EXPECT_NE(contractError(step("tensor<4xf32>", "tensor<f32>", type))
                  .find("'step' (argument #3) is"),
              std::string::npos)
        << type.str();
  std::string lossScale = step();
  lossScale.replace(lossScale.find("%ls: tensor<f32>"), 16, "%ls: f32");
  EXPECT_EQ(contractError(lossScale),
            "'loss_scale' (argument #2) is f32; the contract makes it "
            "tensor<f32> (docs/fp8-train.md)");
}

TEST_F(TrainTest, ParametersHaveElementsThatFit) {
  EXPECT_EQ(contractError(step("tensor<0x16xf32>")),
            "parameter #0 (argument #4) is tensor<0x16xf32>: it has no "
            "elements");
  EXPECT_EQ(contractError(step("tensor<4294967296x4294967296xf32>")),
            "parameter #0 (argument #4) is "
            "tensor<4294967296x4294967296xf32>: more than 2^64 bytes");
}

TEST_F(TrainTest, TokensHoldBytes) {
  for (StringRef type : {"tensor<2x16xi8>", "tensor<2x16xi1>"})
    EXPECT_NE(contractError(step("tensor<4xf32>", "tensor<f32>", "f32", type))
                  .find("byte tokens (0 to 255, as signed integers) need at "
                        "least 9 bits"),
              std::string::npos)
        << type.str();
}

TEST_F(TrainTest, TwoStepsAreNamed) {
  std::string two = step() + step("tensor<4xf32>", "tensor<f32>", "f32",
                                  "tensor<2x16xi64>", "other_step");
  EXPECT_EQ(contractError(two),
            "several functions are marked fp8.train_step: @train_step, "
            "@other_step (--function=NAME chooses one)");
  EXPECT_EQ(contractError(two, "other_step"), "");
}

TEST_F(TrainTest, NestedStepIsFound) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "module { module @inner {" + step() + "} }", &context);
  ASSERT_TRUE(module);
  std::string error;
  FailureOr<Contract> contract = readContract(*module, "", error);
  ASSERT_TRUE(succeeded(contract)) << error;
  EXPECT_NE(contract->func->getParentOfType<ModuleOp>(), *module);
  EXPECT_EQ(contract->func.getName(), "train_step");
}

TEST_F(TrainTest, GridOfNoDevices) {
  std::string sharded = "shard.grid @dp(shape = 0)\n" + step();
  for (StringRef arg : {"%tok", "%tgt"}) {
    size_t at = sharded.find("{fp8.train", sharded.find(arg.str() + ":"));
    sharded.insert(at + 1, "fp8.sharded = @dp, ");
  }
  EXPECT_EQ(contractError(sharded),
            "'tokens' are sharded over @dp, a shard.grid of 0 devices: a "
            "data-parallel step needs at least one (fp8-gen "
            "--data-parallel=N writes a grid of N)");
}

/// A run of the delayed recipe of a one-GEMM step, compiled, with a
/// checkpoint of it saved in a temporary directory.
class CheckpointTest : public TrainTest {
protected:
  void SetUp() override {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    module = parseSourceString<ModuleOp>(R"(
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> ()>
func.func @train_step(%tok: tensor<2x16xi64> {fp8.train = "tokens"}, %tgt: tensor<2x16xi64> {fp8.train = "targets"},
    %ls: tensor<f32> {fp8.train = "loss_scale"}, %step: f32 {fp8.train = "step"},
    %w: tensor<16x16xf32> {fp8.train = "parameter"}, %m: tensor<16x16xf32> {fp8.train = "moment1"}, %v: tensor<16x16xf32> {fp8.train = "moment2"})
    -> (tensor<f32> {fp8.train = "loss"}, tensor<16x16xf32> {fp8.train = "parameter"}, tensor<16x16xf32> {fp8.train = "moment1"}, tensor<16x16xf32> {fp8.train = "moment2"})
    attributes {fp8.train_step} {
  %e = tensor.empty() : tensor<2x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%tok : tensor<2x16xi64>) outs(%e : tensor<2x16xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<2x16xf32>
  %z = arith.constant 0.0 : f32
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x16xf32>) -> tensor<2x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x16xf32>, tensor<16x16xf32>) outs(%c : tensor<2x16xf32>) -> tensor<2x16xf32>
  %e0 = tensor.empty() : tensor<f32>
  %c0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<2x16xf32>) outs(%c0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l, %w, %m, %v : tensor<f32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
})",
                                         &context);
    ASSERT_TRUE(module);
    std::string error;
    FailureOr<Contract> read = readContract(*module, "", error);
    ASSERT_TRUE(succeeded(read)) << error;
    contract = *read;
    run.recipe = {"delayed", Recipe::FP8, "scaling=delayed history=16"};
    FailureOr<OwningOpRef<ModuleOp>> program =
        transformForRecipe(*module, contract, run, error);
    ASSERT_TRUE(succeeded(program)) << error;
    CompileOptions options;
    options.optLevel = 0;
    ASSERT_TRUE(succeeded(compileRun(**program, contract, run, options, error)))
        << error;
    startRun(run, initialParameters(contract, 1));
    ASSERT_FALSE(run.scalingState.empty());
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fp8-train-test", dir));
    ASSERT_TRUE(succeeded(saveCheckpoint(dir, run, 7, error))) << error;
  }

  void TearDown() override {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }

  std::string path(StringRef file) {
    SmallString<256> result(dir);
    llvm::sys::path::append(result, "delayed", file);
    return std::string(result);
  }

  /// The amax history global of the GEMM's weight and its type.
  std::pair<std::string, RankedTensorType> history() {
    for (const auto &entry : run.scalingState)
      if (entry.getKey().ends_with(".amax_history"))
        return {entry.getKey().str(), entry.getValue()};
    ADD_FAILURE() << "no amax history";
    return {};
  }

  OwningOpRef<ModuleOp> module;
  Contract contract;
  train::Run run;
  SmallString<256> dir;
};

TEST_F(CheckpointTest, ResumesTheStep) {
  std::string error;
  FailureOr<uint64_t> done = loadCheckpoint(dir, run, error);
  ASSERT_TRUE(succeeded(done)) << error;
  EXPECT_EQ(*done, 7u);
}

TEST_F(CheckpointTest, ScalingStateOfAnotherShapeIsRefused) {
  auto [name, type] = history();
  ASSERT_EQ(type.getShape(), ArrayRef<int64_t>({16}));
  for (SmallVector<int64_t> shape :
       {SmallVector<int64_t>{17}, {1}, {0}, {4, 4}, {100000}}) {
    HostTensor wrong(type.getElementType(), shape);
    std::string error;
    ASSERT_TRUE(succeeded(writeNpy(path(name + ".npy"), wrong, error)));
    EXPECT_TRUE(failed(loadCheckpoint(dir, run, error)));
    EXPECT_NE(error.find(name + ".npy' has shape ("), std::string::npos)
        << error;
    EXPECT_NE(error.find("which it restores, has shape (16,)"),
              std::string::npos)
        << error;
  }
}

TEST_F(CheckpointTest, WriteGlobalRefusesAnotherSize) {
  auto [name, type] = history();
  std::string error;
  HostTensor larger(type.getElementType(), {17});
  EXPECT_TRUE(failed(run.fn->writeGlobal(name, larger, error)));
  EXPECT_EQ(error, "@" + name + " holds 64 B, not 68 B");
  HostTensor exact(type.getElementType(), {16});
  EXPECT_TRUE(succeeded(run.fn->writeGlobal(name, exact, error))) << error;
  EXPECT_TRUE(failed(run.fn->writeGlobal("no.such.global", exact, error)));
  EXPECT_TRUE(failed(run.fn->readGlobal(
      name, RankedTensorType::get({1024}, type.getElementType()), error)));
}

TEST_F(CheckpointTest, StepCounterIsRangeChecked) {
  for (auto [text, message] :
       {std::pair<StringRef, StringRef>{"4294967295\n", "says step 4294967295"},
        {"16777217", "says step 16777217"},
        {"18446744073709551616", "does not hold a step number"},
        {"-1", "does not hold a step number"},
        {"", "does not hold a step number"}}) {
    std::error_code ec;
    {
      llvm::raw_fd_ostream os(path("step"), ec);
      ASSERT_FALSE(ec);
      os << text;
    }
    std::string error;
    EXPECT_TRUE(failed(loadCheckpoint(dir, run, error)));
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

TEST_F(CheckpointTest, FailedSaveLeavesThePreviousOne) {
  // A scaling-state global that cannot be read fails the save after the
  // parameters were written.
  run.scalingState["no.such.global"] = history().second;
  std::string error;
  EXPECT_TRUE(failed(saveCheckpoint(dir, run, 9, error)));
  run.scalingState.erase("no.such.global");
  FailureOr<uint64_t> done = loadCheckpoint(dir, run, error);
  ASSERT_TRUE(succeeded(done)) << error;
  EXPECT_EQ(*done, 7u);
  std::error_code ec;
  unsigned entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 1u);
}

} // namespace
