//===- SymbolIdentity.h - What a function is, but for its name --*- C++ -*-===//
//
// Shared by the passes that keep one of several identical functions (GPU
// kernels, CPU loop nests outlined per layer): internal to FP8Pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_PIPELINES_SYMBOLIDENTITY_H
#define FP8_LIB_PIPELINES_SYMBOLIDENTITY_H

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <string>

namespace mlir::fp8 {

/// `symbol` printed under a placeholder name: two symbols that print the
/// same are the same but for their names (and locations). All of it is
/// printed (the command line's printing options may elide constants or add
/// locations), in generic form, numbered on its own. (Distinct attributes,
/// LLVM's access groups and alias scopes, print numbered per print: two
/// functions with different ones would compare equal. Neither the outlined
/// loop nests nor the kernels have them when they are compared.)
inline std::string printIdentity(Operation *symbol) {
  StringAttr name = SymbolTable::getSymbolName(symbol);
  SymbolTable::setSymbolName(symbol, "__fp8_identity");
  std::string text;
  llvm::raw_string_ostream os(text);
  constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
  symbol->print(os, OpPrintingFlags()
                        .elideLargeElementsAttrs(kNoLimit)
                        .elideLargeResourceString(kNoLimit)
                        .enableDebugInfo(false)
                        .skipRegions(false)
                        .printGenericOpForm()
                        .useLocalScope());
  SymbolTable::setSymbolName(symbol, name);
  return text;
}

} // namespace mlir::fp8

#endif // FP8_LIB_PIPELINES_SYMBOLIDENTITY_H
