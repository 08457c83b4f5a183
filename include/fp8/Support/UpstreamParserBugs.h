//===- UpstreamParserBugs.h - Inputs that crash MLIR 22's parser -*- C++ -*-===//
//
// Text that makes upstream MLIR 22 crash while parsing, for the tools that
// parse arbitrary text (the fuzzer, the fold-vs-lowering test on its grown
// corpus) to skip. docs/reliability.md (F8) has the bug.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_SUPPORT_UPSTREAMPARSERBUGS_H
#define FP8_SUPPORT_UPSTREAMPARSERBUGS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Regex.h"

namespace mlir::fp8 {

/// MLIR 22's linalg.transpose / linalg.broadcast parsers crash when their
/// `permutation = [...]` / `dimensions = [...]` list does not parse (they
/// store a null attribute); mlir-opt crashes too. True when either keyword
/// is not followed by a list of integers.
inline bool hitsLinalgParserCrash(llvm::StringRef input) {
  static const llvm::Regex wellFormed(
      "^[[:space:]]*=[[:space:]]*\\[[[:space:]]*(-?[0-9]{1,18}([[:space:]]*,"
      "[[:space:]]*-?[0-9]{1,18})*)?[[:space:]]*]");
  for (llvm::StringRef keyword : {"permutation", "dimensions"}) {
    for (size_t pos = input.find(keyword); pos != llvm::StringRef::npos;
         pos = input.find(keyword, pos + 1)) {
      if (!wellFormed.match(input.substr(pos + keyword.size())))
        return true;
    }
  }
  return false;
}

} // namespace mlir::fp8

#endif // FP8_SUPPORT_UPSTREAMPARSERBUGS_H
