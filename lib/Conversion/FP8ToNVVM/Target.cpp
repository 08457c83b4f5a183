//===- Target.cpp - Which NVVM targets can run the FP8 kernels ------------===//

#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace {
/// A chip LLVM 22's NVPTX backend knows and the lowest PTX ISA it accepts
/// for it (read off `llc -mcpu=...`), for every chip with FP8 conversions.
struct ChipInfo {
  llvm::StringLiteral name;
  unsigned minPtx;
};
} // namespace

static constexpr ChipInfo kChips[] = {
    {"sm_89", 78},   {"sm_90", 78},   {"sm_90a", 80},  {"sm_100", 86},
    {"sm_100a", 86}, {"sm_100f", 88}, {"sm_101", 86},  {"sm_101a", 86},
    {"sm_101f", 88}, {"sm_103", 88},  {"sm_103a", 88}, {"sm_103f", 88},
    {"sm_110", 90},  {"sm_110a", 90}, {"sm_110f", 90}, {"sm_120", 87},
    {"sm_120a", 87}, {"sm_120f", 88}, {"sm_121", 88},  {"sm_121a", 88},
    {"sm_121f", 88},
};

std::optional<std::string> mlir::fp8::checkNVVMTarget(llvm::StringRef chip,
                                                      llvm::StringRef features,
                                                      bool needsWgmma) {
  const ChipInfo *info = llvm::find_if(
      kChips, [&](const ChipInfo &known) { return known.name == chip; });
  if (info == std::end(kChips))
    return ("chip '" + chip +
            "' cannot run the FP8 kernels: FP8 conversions need sm_89 or "
            "later (sm_89, sm_90, sm_90a, sm_100, ..., sm_121f)")
        .str();
  if (needsWgmma && chip != "sm_90a")
    return ("the FP8 wgmma GEMM needs chip sm_90a (wgmma and setmaxnreg are "
            "sm_90a features), not '" +
            chip + "'")
        .str();

  for (llvm::StringRef feature : llvm::split(features, ',')) {
    feature = feature.trim();
    if (feature.empty())
      continue;
    unsigned ptx = 0;
    if (!feature.consume_front("+ptx") || feature.getAsInteger(10, ptx))
      return ("unsupported NVVM feature '" + feature +
              "' (expected +ptxNN, e.g. +ptx80)")
          .str();
    if (ptx < info->minPtx)
      return ("PTX ISA " + llvm::Twine(ptx / 10) + "." + llvm::Twine(ptx % 10) +
              " is too old for " + chip + ": it needs +ptx" +
              llvm::Twine(info->minPtx) + " or later")
          .str();
  }
  return std::nullopt;
}

std::optional<std::string> mlir::fp8::checkNVVMFormat(llvm::StringRef format) {
  if (llvm::is_contained({"isa", "bin", "fatbin", "llvm"}, format))
    return std::nullopt;
  return ("unknown format '" + format + "' (expected isa, bin, fatbin or llvm)")
      .str();
}

std::optional<std::string>
mlir::fp8::checkNVVMToolkit(llvm::StringRef format, llvm::StringRef toolkit) {
  if (toolkit.empty())
    return std::nullopt;
  if (!llvm::sys::fs::is_directory(toolkit))
    return ("toolkit=" + toolkit +
            " is not a directory (the CUDA toolkit's root, holding "
            "bin/ptxas)")
        .str();
  // Upstream would take the tool from the PATH instead, silently.
  llvm::SmallVector<llvm::StringRef, 2> tools;
  if (format == "bin" || format == "fatbin")
    tools.push_back("ptxas");
  if (format == "fatbin")
    tools.push_back("fatbinary");
  for (llvm::StringRef tool : tools) {
    llvm::SmallString<128> path(toolkit);
    llvm::sys::path::append(path, "bin", tool);
    if (!llvm::sys::fs::can_execute(path))
      return ("toolkit=" + toolkit + " has no " + tool + " (" + path +
              ") for format=" + format)
          .str();
  }
  return std::nullopt;
}

FailureOr<gpu::GPUModuleOp>
mlir::fp8::getOrCreateKernelModule(ModuleOp module, llvm::StringRef name,
                                   llvm::StringRef chip,
                                   llvm::StringRef features) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(name))
    return existing;
  if (module.lookupSymbol(name))
    return module.emitError() << "already contains a symbol named '" << name
                              << "'";
  MLIRContext *ctx = module.getContext();
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                          "nvptx64-nvidia-cuda", chip,
                                          features);
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());
  return gpu::GPUModuleOp::create(builder, module.getLoc(), name,
                                  builder.getArrayAttr({target}));
}
