//===- Recipe.cpp - How each run's step is compiled -----------------------===//

#include "fp8/Train/Contract.h"
#include "fp8/Train/Run.h"

#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Runner/Golden.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::train;

FailureOr<SmallVector<Recipe>> train::parseRecipes(StringRef list,
                                                   std::string &error) {
  SmallVector<Recipe> result;
  for (StringRef item : llvm::split(list, ',')) {
    item = item.trim();
    if (item.empty())
      continue;
    Recipe r;
    if (item == "fp32") {
      r = {"fp32", Recipe::FP32, ""};
    } else if (item == "bf16") {
      r = {"bf16", Recipe::BF16, ""};
    } else if (item == "delayed" || item == "current") {
      r = {item.str(), Recipe::FP8, ("scaling=" + item).str()};
    } else if (item.contains('=')) {
      auto [label, options] = item.split('=');
      r = {label.trim().str(), Recipe::FP8, options.trim().str()};
    } else {
      error = ("unknown recipe '" + item +
               "' (fp32, bf16, delayed, current, or LABEL=OPTIONS)")
                  .str();
      return failure();
    }
    // The label names the run's checkpoint directory.
    if (r.label.empty() || r.label == "." || r.label == ".." ||
        llvm::any_of(r.label, [](char c) {
          return c == '/' || static_cast<unsigned char>(c) < 0x20;
        })) {
      error = "recipe label '" + r.label +
              "' is not a file name (it names the run's checkpoint)";
      return failure();
    }
    if (llvm::any_of(result,
                     [&](const Recipe &o) { return o.label == r.label; })) {
      error = "recipe '" + r.label + "' is listed twice";
      return failure();
    }
    result.push_back(r);
  }
  if (result.empty()) {
    error = "--recipes names no run";
    return failure();
  }
  return result;
}

/// Whether the step computes in bf16 anywhere (fp8-gen --dtype=bf16).
static bool computesInBF16(func::FuncOp func) {
  bool found = false;
  func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (getElementTypeOrSelf(type).isBF16())
        found = true;
  });
  return found;
}

FailureOr<OwningOpRef<ModuleOp>>
train::transformForRecipe(ModuleOp input, const Contract &contract, Run &run,
                          std::string &error) {
  OwningOpRef<ModuleOp> module = input.clone();
  auto func = module->lookupSymbol<func::FuncOp>(contract.name);
  switch (run.recipe.kind) {
  case Recipe::FP32:
    if (failed(runner::widenFloats(
            *module, Float32Type::get(module->getContext()), error)))
      return failure();
    break;
  case Recipe::BF16:
    if (!computesInBF16(func)) {
      error = "recipe bf16 needs a step that computes in bf16 from f32 "
              "master weights (fp8-gen --dtype=bf16); @" +
              contract.name + " computes in f32";
      return failure();
    }
    break;
  case Recipe::FP8: {
    std::unique_ptr<FP8PipelineOptions> options =
        FP8PipelineOptions::createFromString(run.recipe.pipeline);
    if (!options) {
      error = "bad fp8-pipeline options '" + run.recipe.pipeline +
              "' in recipe " + run.recipe.label;
      return failure();
    }
    if (options->state != "globals") {
      error = "recipe " + run.recipe.label +
              ": fp8-train keeps the scaling state in the module's globals "
              "(state=globals)";
      return failure();
    }
    auto countAmaxCollectives = [&] {
      unsigned count = 0;
      module->walk([&](shard::AllReduceOp op) {
        count += op.getReduction() == shard::ReductionKind::Max;
      });
      return count;
    };
    unsigned before = countAmaxCollectives();
    PassManager pm(module->getContext());
    buildFP8Pipeline(pm, *options);
    if (failed(pm.run(*module))) {
      error = "fp8-pipeline failed for recipe " + run.recipe.label;
      return failure();
    }
    run.amaxCollectives = countAmaxCollectives() - before;
    run.probes = runner::addQuantizeProbes(*module);
    run.scalingState = runner::findScalingState(*module);
    break;
  }
  }
  return module;
}

LogicalResult train::compileRun(ModuleOp module, const Contract &contract,
                                Run &run, const runner::CompileOptions &options,
                                std::string &error) {
  run.fn =
      runner::CompiledFunction::compile(module, contract.name, error, options);
  return success(run.fn != nullptr);
}
