//===- FP8Plugin.cpp - fp8-mlir as an mlir-opt plugin ---------------------===//
//
// libFP8Plugin.so: the fp8 dialect, its passes and pipelines for an
// mlir-opt that was not built with them (Debian's mlir-opt-22, another
// compiler's driver):
//
//   mlir-opt-22 --load-dialect-plugin=libFP8Plugin.so \
//               --load-pass-plugin=libFP8Plugin.so \
//               --pass-pipeline='builtin.module(fp8-pipeline)' g.mlir
//
// The plugin links MLIR dynamically, so it shares the host's libMLIR.so
// (dialect and pass registries, TypeIDs); it is built only when the project
// itself links libMLIR.so (MLIR_LINK_MLIR_DYLIB).
//
//===----------------------------------------------------------------------===//

#include "fp8/InitAllFP8.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK LLVM_ATTRIBUTE_VISIBILITY_DEFAULT
DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FP8", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            fp8::registerAllFP8Dialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK LLVM_ATTRIBUTE_VISIBILITY_DEFAULT
PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "FP8Passes", LLVM_VERSION_STRING,
          []() { fp8::registerAllFP8Passes(); }};
}
