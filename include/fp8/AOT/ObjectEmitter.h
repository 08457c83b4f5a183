//===- ObjectEmitter.h - LLVM dialect to a native object ---------*- C++ -*-===//
//
// Ahead-of-time code generation for the CPU: a module lowered to the LLVM
// dialect (fp8-lower-to-cpu) is translated to LLVM IR, optimized the way
// fp8-run's JIT optimizes it, and written as a position-independent object
// file for a target CPU.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_AOT_OBJECTEMITTER_H
#define FP8_AOT_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace mlir::fp8::aot {

/// A target machine for x86-64 or AArch64 Linux code, position-independent
/// (shared libraries). `cpu` "host" means this machine's CPU and features.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(StringRef cpu, StringRef features, unsigned optLevel);

/// `module` (LLVM dialect only) as optimized LLVM IR for `machine`. Only
/// the C interface (`_mlir_ciface_*` functions) keeps external linkage; every
/// other definition is internal to the library or object.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                  llvm::TargetMachine &machine, unsigned optLevel);

/// Writes `module` as an object file.
llvm::Error emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                       llvm::raw_pwrite_stream &os);

/// libfp8_gpu_runtime.so next to the running tool's libraries
/// (<bin>/../lib, in the build tree and an installation alike), or
/// $FP8_GPU_RUNTIME when set: what GPU programs link (fp8-compile) or load
/// (fp8-run's JIT).
std::string getGpuRuntimeLibraryPath();

} // namespace mlir::fp8::aot

#endif // FP8_AOT_OBJECTEMITTER_H
