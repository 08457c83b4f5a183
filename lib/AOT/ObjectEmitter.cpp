//===- ObjectEmitter.cpp - LLVM dialect to a native object ----------------===//

#include "fp8/AOT/ObjectEmitter.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::fp8;

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
aot::createTargetMachine(StringRef cpu, StringRef features,
                         unsigned optLevel) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no code generator for " + triple.str() +
                                   ": " + error);
  std::string cpuName = cpu.str();
  std::string featureString = features.str();
  if (cpu == "host") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures hostFeatures;
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      hostFeatures.AddFeature(feature, enabled);
    featureString = hostFeatures.getString() +
                    (features.empty() ? "" : "," + features.str());
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, featureString, options, llvm::Reloc::PIC_,
      std::nullopt, static_cast<llvm::CodeGenOptLevel>(optLevel)));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   triple.str() + " " + cpuName);
  // An unknown CPU name only warns (on stderr) in LLVM; refuse it here.
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpuName))
    return llvm::createStringError("unknown CPU '" + cpuName + "' for " +
                                   triple.str());
  return machine;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
aot::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                       llvm::TargetMachine &machine, unsigned optLevel) {
  MLIRContext *mlirContext = module.getContext();
  // GPU programs: gpu.binary and gpu.launch_func become the embedded
  // kernels and their mgpu* calls.
  DialectRegistry registry;
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  mlirContext->appendDialectRegistry(registry);
  registerBuiltinDialectTranslation(*mlirContext);
  registerLLVMDialectTranslation(*mlirContext);
  registerOpenMPDialectTranslation(*mlirContext);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  // A library exports its C interface and nothing else: any other symbol
  // (a graph function named like a C library's, its state, the lowering's
  // helpers) would interpose or clash in the programs that link it.
  for (llvm::GlobalValue &value : llvmModule->global_values()) {
    if (value.isDeclaration() || value.hasLocalLinkage() ||
        value.getName().starts_with("llvm.") ||
        value.getName().starts_with("_mlir_ciface_"))
      continue;
    value.setLinkage(llvm::GlobalValue::InternalLinkage);
    value.setVisibility(llvm::GlobalValue::DefaultVisibility);
  }
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());
  auto optimize =
      makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, &machine);
  if (llvm::Error error = optimize(llvmModule.get()))
    return std::move(error);
  return llvmModule;
}

llvm::Error aot::emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                            llvm::raw_pwrite_stream &os) {
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, /*DwoOut=*/nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot write object files");
  passes.run(module);
  return llvm::Error::success();
}

std::string aot::getGpuRuntimeLibraryPath() {
  if (const char *path = std::getenv("FP8_GPU_RUNTIME"); path && *path)
    return path;
  SmallString<256> path(llvm::sys::fs::getMainExecutable(
      "fp8", reinterpret_cast<void *>(&aot::getGpuRuntimeLibraryPath)));
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "..", "lib", "libfp8_gpu_runtime.so");
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return path.str().str();
}
