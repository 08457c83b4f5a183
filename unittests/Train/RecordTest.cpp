//===- RecordTest.cpp - Finished runs kept on disk ------------------------===//
//
// saveRecord / loadRecord round trips of a run's report fields, NaN and
// infinities included (a diverged run must stay diverged), stale keys,
// malformed files, and the per-tensor rows a record keeps.
//
//===----------------------------------------------------------------------===//

#include "fp8/Train/Record.h"
#include "fp8/Train/Run.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::train;

namespace {

class RecordTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("fp8-record-test", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  static train::Run sample() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    train::Run run;
    run.recipe = {"delayed", Recipe::FP8, "scaling=delayed"};
    run.seed = 3;
    run.name = "delayed seed 3";
    run.rows = {{1, 5.5, 2.25, 5.75, 0.5},
                {2, 4.0, 1.0, nan, 0.25},
                {3, nan, inf, -inf, 0.125}};
    run.tensorRows = {{1, "gemm0.lhs", 3.0, 0.5, 0.0, 0.125, 3.5},
                      {2, "gemm0.lhs", 4.0, 0.25, 0.0, 0.0, nan},
                      {3, "gemm0.lhs", 5.0, 0.125, 0.5, 0.0, 2.0}};
    run.events = {"step 3: non-finite loss"};
    run.firstStep = 1;
    run.lastStep = 3;
    run.stopped = true;
    run.finalLoss = nan;
    run.finalValLoss = -inf;
    run.finalValStdErr = 0.0625;
    run.amaxCollectives = 2;
    return run;
  }

  train::Run fresh() const {
    train::Run run;
    run.recipe = {"delayed", Recipe::FP8, "scaling=delayed"};
    run.seed = 3;
    return run;
  }

  SmallString<128> dir;
};

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

TEST_F(RecordTest, RoundTripsNonFiniteValues) {
  std::string error;
  train::Run run = sample();
  ASSERT_TRUE(succeeded(saveRecord(dir, "key", run, error))) << error;
  EXPECT_EQ(llvm::sys::path::filename(recordPath(dir, run)),
            "delayed.seed3.json");
  train::Run loaded = fresh();
  FailureOr<bool> found = loadRecord(dir, "key", loaded, error);
  ASSERT_TRUE(succeeded(found)) << error;
  EXPECT_TRUE(*found);
  EXPECT_EQ(loaded.name, "delayed seed 3");
  ASSERT_EQ(loaded.rows.size(), 3u);
  for (auto [a, b] : llvm::zip(loaded.rows, run.rows)) {
    EXPECT_EQ(a.step, b.step);
    EXPECT_TRUE(same(a.loss, b.loss));
    EXPECT_TRUE(same(a.gradNorm, b.gradNorm));
    EXPECT_TRUE(same(a.valLoss, b.valLoss));
    EXPECT_TRUE(same(a.seconds, b.seconds));
  }
  EXPECT_TRUE(std::isinf(loaded.rows[2].gradNorm) && loaded.rows[2].gradNorm > 0);
  EXPECT_TRUE(std::isinf(loaded.rows[2].valLoss) && loaded.rows[2].valLoss < 0);
  EXPECT_TRUE(std::isnan(loaded.finalLoss));
  EXPECT_EQ(loaded.finalValLoss, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(loaded.finalValStdErr, 0.0625);
  EXPECT_TRUE(loaded.stopped);
  EXPECT_EQ(loaded.firstStep, 1u);
  EXPECT_EQ(loaded.lastStep, 3u);
  EXPECT_EQ(loaded.amaxCollectives, 2u);
  EXPECT_EQ(loaded.events, run.events);
  // The diverged run is still diverged, at the same step.
  EXPECT_EQ(loaded.divergedAt(), run.divergedAt());
}

TEST_F(RecordTest, KeepsTensorRowsOfTheFirstAndValidationSteps) {
  std::string error;
  train::Run run = sample();
  ASSERT_TRUE(succeeded(saveRecord(dir, "key", run, error))) << error;
  train::Run loaded = fresh();
  ASSERT_TRUE(succeeded(loadRecord(dir, "key", loaded, error))) << error;
  // Step 1 is the first, step 3 validated (-inf is a validation loss);
  // step 2 did not validate.
  ASSERT_EQ(loaded.tensorRows.size(), 2u);
  EXPECT_EQ(loaded.tensorRows[0].step, 1u);
  EXPECT_EQ(loaded.tensorRows[0].tensor, "gemm0.lhs");
  EXPECT_EQ(loaded.tensorRows[0].flushed, 0.125);
  EXPECT_EQ(loaded.tensorRows[0].kurtosis, 3.5);
  EXPECT_EQ(loaded.tensorRows[1].step, 3u);
  EXPECT_EQ(loaded.tensorRows[1].saturated, 0.5);
}

TEST_F(RecordTest, AnotherKeyIsStale) {
  std::string error;
  ASSERT_TRUE(succeeded(saveRecord(dir, "steps 10", sample(), error)));
  train::Run loaded = fresh();
  FailureOr<bool> found = loadRecord(dir, "steps 20", loaded, error);
  ASSERT_TRUE(succeeded(found)) << error;
  EXPECT_FALSE(*found);
  EXPECT_TRUE(loaded.rows.empty());
}

TEST_F(RecordTest, AbsentIsNotAnError) {
  std::string error;
  train::Run loaded = fresh();
  FailureOr<bool> found = loadRecord(dir, "key", loaded, error);
  ASSERT_TRUE(succeeded(found));
  EXPECT_FALSE(*found);
}

TEST_F(RecordTest, MalformedRecordsAreErrors) {
  train::Run run = fresh();
  for (StringRef text :
       {"{", "[]", R"({"key": "key"})",
        R"({"key": "key", "seed": 3, "first_step": 1, "last_step": 1,
            "amax_collectives": 0, "stopped": false, "name": "",
            "final_loss": 1, "final_val_loss": 1, "final_val_stderr": "nan",
            "rows": [[1, 2, 3]], "tensor_rows": [], "events": []})",
        R"({"key": "key", "seed": 4, "first_step": 1, "last_step": 1,
            "amax_collectives": 0, "stopped": false, "name": "",
            "final_loss": 1, "final_val_loss": 1, "final_val_stderr": "nan",
            "rows": [], "tensor_rows": [], "events": []})"}) {
    std::error_code ec;
    {
      llvm::raw_fd_ostream os(recordPath(dir, run), ec);
      ASSERT_FALSE(ec);
      os << text;
    }
    std::string error;
    EXPECT_TRUE(failed(loadRecord(dir, "key", run, error))) << text.str();
    EXPECT_NE(error.find("is malformed"), std::string::npos) << error;
  }
}

TEST_F(RecordTest, AFailedSaveSaysWhere) {
  std::string error;
  // A file where the directory should be.
  SmallString<128> file(dir);
  llvm::sys::path::append(file, "file");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    ASSERT_FALSE(ec);
  }
  EXPECT_TRUE(failed(saveRecord(file, "key", sample(), error)));
  EXPECT_NE(error.find("file"), std::string::npos) << error;
}

} // namespace
