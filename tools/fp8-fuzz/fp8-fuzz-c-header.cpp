//===- fp8-fuzz-c-header.cpp - libFuzzer target for fp8-compile's header --===//
//
// Each input is parsed as MLIR (fp8-compile's input dialects); a module that
// parses gets its exported functions and state accessors as fp8-compile
// makes them, and the C header written for them (CPU or GPU, picked by the
// input's length) is read back as a C compiler would: every comment and
// string literal must close where the writer closed it and hold nothing
// that could end it early, and every line of code outside them must be one
// of the shapes the writer produces (declarations, descriptor structs, the
// state X-macro, include guards). Module text that escapes into code, a
// broken literal, a crash or a sanitizer report is a finding.
//
//===----------------------------------------------------------------------===//

#include "fp8/AOT/CInterface.h"
#include "fp8/AOT/InputDialects.h"
#include "fp8/Support/UpstreamParserBugs.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {
[[noreturn]] void finding(StringRef what, StringRef header) {
  llvm::errs() << "fp8-fuzz-c-header finding: " << what << "\nheader:\n"
               << header << "\n";
  std::abort();
}

/// `header` with each comment replaced by a space and each string literal
/// by S, checking them as they go: a comment holds printable ASCII and
/// newlines and no "/*"; a string literal holds printable ASCII but '"',
/// '\\' and '?', and the escapes \", \\, \? and three octal digits.
std::string stripCommentsAndStrings(StringRef header) {
  std::string code;
  size_t i = 0, n = header.size();
  while (i < n) {
    StringRef rest = header.drop_front(i);
    if (rest.starts_with("/*")) {
      size_t end = header.find("*/", i + 2);
      if (end == StringRef::npos)
        finding("a comment does not end", header);
      StringRef body = header.slice(i + 2, end);
      if (body.contains("/*"))
        finding("a comment holds \"/*\"", header);
      for (char c : body)
        if (c != '\n' && !llvm::isPrint(c))
          finding("a comment holds a byte that is not printable", header);
      code += ' ';
      i = end + 2;
      continue;
    }
    if (rest.starts_with("//") || rest.front() == '\'')
      finding("a line comment or a character literal", header);
    if (rest.front() != '"') {
      code += rest.front();
      ++i;
      continue;
    }
    for (++i;;) {
      if (i >= n || !llvm::isPrint(header[i]))
        finding("a string literal does not end on its line or holds a byte "
                "that is not printable",
                header);
      char c = header[i];
      if (c == '"') {
        ++i;
        break;
      }
      if (c == '?')
        finding("an unescaped '?' in a string literal (trigraphs)", header);
      if (c != '\\') {
        ++i;
        continue;
      }
      StringRef escape = header.substr(i + 1, 3);
      if (!escape.empty() && StringRef("\"\\?").contains(escape.front()))
        i += 2;
      else if (escape.size() == 3 &&
               llvm::all_of(escape, [](char d) { return d >= '0' && d <= '7'; }))
        i += 4;
      else
        finding("a string literal holds an escape the writer does not make",
                header);
    }
    code += 'S';
  }
  return code;
}

/// Whether `line` (code, comments and strings stripped) is one the writer
/// produces.
bool isWriterLine(StringRef line) {
#define ID "[A-Za-z_][A-Za-z0-9_]*"
#define PARAM ID " \\*?" ID
  static const llvm::Regex shapes[] = {
      llvm::Regex("^$"),
      llvm::Regex("^#(ifndef|define|ifdef|endif)( " ID ")?$"),
      llvm::Regex("^#define " ID " 1$"),
      llvm::Regex("^#include <[a-z]+\\.h>$"),
      llvm::Regex("^extern S \\{$"),
      llvm::Regex("^\\}$"),
      llvm::Regex("^typedef struct " ID " \\{$"),
      llvm::Regex("^  " PARAM "(\\[[0-9]+\\])?;$"),
      llvm::Regex("^\\} " ID ";$"),
      llvm::Regex("^(const )?" PARAM "\\((void|" PARAM "(, " PARAM ")*)\\);$"),
      llvm::Regex("^#define " ID "\\(X\\) \\\\$"),
      llvm::Regex("^  X\\(" ID ", " ID ", S, " ID "\\)( \\\\)?$"),
  };
#undef PARAM
#undef ID
  line = line.rtrim(' ');
  return llvm::any_of(shapes,
                      [&](const llvm::Regex &shape) { return shape.match(line); });
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    fp8::aot::registerInputDialects(*r);
    return r;
  }();
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  // MLIR's lexer stops at a NUL, as in the buffers fp8-compile reads.
  std::string text(reinterpret_cast<const char *>(data), size);
  if (fp8::hitsLinalgParserCrash(text))
    return 0;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    return 0;
  FailureOr<SmallVector<func::FuncOp>> functions =
      fp8::aot::getExportedFunctions(*module);
  SmallVector<fp8::aot::StateAccessor> state;
  if (failed(functions) ||
      failed(fp8::aot::addStateAccessors(*module, "fuzz_", state)))
    return 0;
  std::string header =
      fp8::aot::emitCHeader(*functions, state, "fuzz_", "FUZZ_H",
                            "libfuzz.so", /*gpu=*/size % 2 == 1);

  std::string code = stripCommentsAndStrings(header);
  for (StringRef line : llvm::split(code, '\n'))
    if (!isWriterLine(line))
      finding(("a line the writer does not write: '" + line + "'").str(),
              header);
  for (func::FuncOp func : *functions)
    if (!StringRef(header).contains(
            ("_mlir_ciface_" + func.getSymName() + "(").str()))
      finding("an exported function is not declared", header);
  return 0;
}
