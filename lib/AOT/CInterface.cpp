//===- CInterface.cpp - Functions callable from C -------------------------===//

#include "fp8/AOT/CInterface.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::aot;

bool aot::isCInterfaceType(Type type) {
  Type element = type;
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    element = tensor.getElementType();
  else if (isa<ShapedType>(type))
    return false;
  return element.isF32() || element.isF64() || element.isF16() ||
         element.isBF16() ||
         isa<Float8E4M3FNType, Float8E5M2Type, Float8E8M0FNUType>(element) ||
         element.isInteger(1) || element.isInteger(8) ||
         element.isInteger(16) || element.isInteger(32) ||
         element.isInteger(64) || element.isIndex();
}

bool aot::isCScalarType(Type type) {
  return isCInterfaceType(type) && !isa<ShapedType>(type) && !type.isF16() &&
         !type.isBF16();
}

void aot::prepareForCInterface(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
  auto llvmOnly = [](DictionaryAttr attrs) {
    SmallVector<NamedAttribute> kept;
    if (attrs)
      for (NamedAttribute attr : attrs)
        if (attr.getName().strref().starts_with("llvm."))
          kept.push_back(attr);
    return kept;
  };
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    func.setArgAttrs(i, llvmOnly(func.getArgAttrDict(i)));
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    func.setResultAttrs(i, llvmOnly(func.getResultAttrDict(i)));
  // One-Shot Bufferize would otherwise update a tensor argument in place
  // (an optimizer step writing its weights into the input buffer).
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes()))
    if (isa<TensorType>(type))
      func.setArgAttr(index, "bufferization.writable",
                      BoolAttr::get(context, false));
}

std::string aot::toCIdentifier(StringRef text) {
  std::string name = text.str();
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return name;
}

bool aot::isCIdentifier(StringRef text) {
  return !text.empty() && !llvm::isDigit(text.front()) &&
         toCIdentifier(text) == text;
}

LogicalResult
aot::addStateAccessors(ModuleOp module, StringRef prefix,
                       SmallVectorImpl<StateAccessor> &accessors) {
  SymbolTable symbols(module);
  llvm::StringMap<std::string> taken;
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  for (auto global : module.getOps<ml_program::GlobalOp>()) {
    auto type = dyn_cast<RankedTensorType>(global.getType());
    if (!type || !type.hasStaticShape() || !isCInterfaceType(type))
      continue;
    std::string name = toCIdentifier(global.getSymName());
    StateAccessor accessor{global.getSymName().str(),
                           (prefix + "state_get_" + name).str(),
                           (prefix + "state_set_" + name).str(), type};
    for (const std::string &fn : {accessor.getName, accessor.setName}) {
      if (auto [it, inserted] = taken.try_emplace(fn, accessor.global);
          !inserted)
        return global.emitError()
               << "state accessor '" << fn << "' of @" << global.getSymName()
               << " collides with that of @" << it->second
               << ": rename one of the globals";
      if (symbols.lookup(fn))
        return global.emitError()
               << "state accessor '" << fn << "' of @" << global.getSymName()
               << " collides with a symbol of the module: choose another "
                  "prefix";
    }
    Location loc = global.getLoc();
    auto symbol = FlatSymbolRefAttr::get(global.getSymNameAttr());

    auto get = func::FuncOp::create(builder, loc, accessor.getName,
                                    builder.getFunctionType({}, {type}));
    OpBuilder body = OpBuilder::atBlockBegin(get.addEntryBlock());
    Value value =
        ml_program::GlobalLoadOp::create(body, loc, type, symbol).getResult();
    func::ReturnOp::create(body, loc, value);

    auto set = func::FuncOp::create(builder, loc, accessor.setName,
                                    builder.getFunctionType({type}, {}));
    body = OpBuilder::atBlockBegin(set.addEntryBlock());
    ml_program::GlobalStoreOp::create(body, loc, symbol,
                                      set.getArgument(0));
    func::ReturnOp::create(body, loc);
    // A stored global must be mutable; a private one is kept reachable.
    global.setIsMutable(true);
    accessors.push_back(std::move(accessor));
  }
  return success();
}

FailureOr<SmallVector<func::FuncOp>>
aot::getExportedFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> functions;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    if (!isCIdentifier(func.getSymName()))
      return func.emitError()
             << "@" << func.getSymName()
             << " is not a C identifier: its C interface cannot be declared "
                "(rename the function, or make it private)";
    auto check = [&](Type type, StringRef what, unsigned index) {
      if (isa<ShapedType>(type) ? isCInterfaceType(type)
                                : isCScalarType(type))
        return success();
      InFlightDiagnostic diag = func.emitError()
                                << "@" << func.getSymName() << " " << what
                                << " #" << index << " has type " << type
                                << ", which the C interface does not take";
      if (type.isF16() || type.isBF16())
        diag << ": pass an f16 or bf16 scalar as a rank-0 tensor";
      else
        diag << " (ranked tensors and scalars of f32, f64, f16, bf16, FP8, "
                "E8M0, i1-i64 and index)";
      return failure();
    };
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
      if (failed(check(type, "argument", i)))
        return failure();
    for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
      if (failed(check(type, "result", i)))
        return failure();
    functions.push_back(func);
  }
  return functions;
}

static constexpr StringLiteral kInternalPrefix = "fp8.fn.";
static constexpr StringLiteral kCInterfacePrefix = "_mlir_ciface_";

/// Renames `op` to `name` in `symbols`, or fails with an error at the
/// symbol that holds `name`.
static LogicalResult renameSymbol(SymbolTable &symbols, Operation *op,
                                  const Twine &name) {
  auto newName = StringAttr::get(op->getContext(), name);
  StringRef oldName = SymbolTable::getSymbolName(op).getValue();
  if (Operation *taken = symbols.lookup(newName))
    return taken->emitError()
           << "@" << newName.getValue() << " is the name that @" << oldName
           << " gets in the library: rename this symbol";
  if (failed(symbols.rename(op, newName)))
    return op->emitError() << "cannot rename @" << oldName;
  return success();
}

LogicalResult aot::renameFunctionsForLowering(ModuleOp module) {
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> functions;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      functions.push_back(func);
  for (func::FuncOp func : functions)
    if (failed(renameSymbol(symbols, func, kInternalPrefix + func.getSymName())))
      return failure();
  return success();
}

LogicalResult aot::renameInternalFunctions(ModuleOp module) {
  SymbolTable symbols(module);
  // The lowering declares the external functions it calls (malloc, free,
  // the GPU runtime's); where a graph function holds the name, MLIR gives
  // the declaration a unique one, "malloc_0", which no library defines.
  for (auto decl : module.getOps<LLVM::LLVMFuncOp>()) {
    auto [base, suffix] = decl.getName().rsplit('_');
    if (!decl.isExternal() || suffix.empty() ||
        !llvm::all_of(suffix, llvm::isDigit))
      continue;
    if (auto func = symbols.lookup<LLVM::LLVMFuncOp>(base);
        func && !func.isExternal())
      return func.emitError()
             << "@" << base << " has the name of an external function that "
             << "the compiled code calls: rename the function";
  }
  SmallVector<LLVM::LLVMFuncOp> functions;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal() && !func.getName().starts_with(kInternalPrefix))
      functions.push_back(func);
  for (LLVM::LLVMFuncOp func : functions) {
    StringRef name = func.getName();
    if (!name.consume_front(kCInterfacePrefix)) {
      if (failed(renameSymbol(symbols, func, kInternalPrefix + name)))
        return failure();
    } else if (name.consume_front(kInternalPrefix)) {
      if (failed(renameSymbol(symbols, func, kCInterfacePrefix + name)))
        return failure();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The C header
//===----------------------------------------------------------------------===//

namespace {
/// How one element type is spelled in C and in descriptor names.
struct CElement {
  StringRef cType;
  StringRef tag;
};
} // namespace

static CElement getCElement(Type type) {
  if (type.isF32())
    return {"float", "f32"};
  if (type.isF64())
    return {"double", "f64"};
  // Bit patterns: C has no portable 16-bit or 8-bit float types.
  if (type.isF16())
    return {"uint16_t", "f16"};
  if (type.isBF16())
    return {"uint16_t", "bf16"};
  if (isa<Float8E4M3FNType>(type))
    return {"uint8_t", "f8e4m3fn"};
  if (isa<Float8E5M2Type>(type))
    return {"uint8_t", "f8e5m2"};
  if (isa<Float8E8M0FNUType>(type))
    return {"uint8_t", "f8e8m0fnu"};
  if (type.isIndex())
    return {"int64_t", "index"};
  switch (type.getIntOrFloatBitWidth()) {
  case 1:
    return {"bool", "i1"};
  case 8:
    return {"int8_t", "i8"};
  case 16:
    return {"int16_t", "i16"};
  case 32:
    return {"int32_t", "i32"};
  default:
    return {"int64_t", "i64"};
  }
}

static std::string getDescriptorName(RankedTensorType type) {
  return ("fp8_memref_" + getCElement(type.getElementType()).tag + "_" +
          Twine(type.getRank()) + "d")
      .str();
}

/// The C type of a value of `type` in a result struct or argument list.
static std::string getCType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return getDescriptorName(tensor);
  return getCElement(type).cType.str();
}

/// `type` as the header's comments spell it: generated here from the shape
/// and the element type (one of isCInterfaceType's), never MLIR's printed
/// form, whose tensor encodings are arbitrary attributes (their text could
/// close the comment).
static std::string getCommentType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (tensor) {
    os << "tensor<";
    for (int64_t size : tensor.getShape()) {
      if (ShapedType::isDynamic(size))
        os << "?";
      else
        os << size;
      os << "x";
    }
    type = tensor.getElementType();
  }
  if (isCInterfaceType(type))
    type.print(os);
  else
    os << "?";
  if (tensor)
    os << ">";
  return text;
}

/// `text` safe inside a C block comment: characters outside printable ASCII
/// become '?', and a space separates '*' and '/' wherever they would meet
/// (so that neither "*/" nor "/*" appears).
static std::string sanitizeComment(StringRef text) {
  std::string safe;
  for (char c : text) {
    if (c < 0x20 || c > 0x7e)
      c = '?';
    if (!safe.empty() && ((safe.back() == '*' && c == '/') ||
                          (safe.back() == '/' && c == '*')))
      safe.push_back(' ');
    safe.push_back(c);
  }
  return safe;
}

/// `text` as a C string literal, quotes included: printable ASCII as it is
/// but for '"', '\\' and '?' (trigraphs), escaped; every other byte as a
/// three-digit octal escape.
static std::string quoteC(StringRef text) {
  std::string quoted = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\' || c == '?') {
      quoted.push_back('\\');
      quoted.push_back(c);
    } else if (c >= 0x20 && c <= 0x7e) {
      quoted.push_back(c);
    } else {
      quoted.push_back('\\');
      quoted.push_back('0' + (c >> 6));
      quoted.push_back('0' + ((c >> 3) & 7));
      quoted.push_back('0' + (c & 7));
    }
  }
  quoted.push_back('"');
  return quoted;
}

static void emitDescriptor(raw_ostream &os, RankedTensorType type) {
  std::string name = getDescriptorName(type);
  std::string macro = StringRef(name).upper();
  StringRef element = getCElement(type.getElementType()).cType;
  os << "#ifndef " << macro << "\n#define " << macro << "\n"
     << "typedef struct " << name << " {\n"
     << "  " << element << " *allocated;\n"
     << "  " << element << " *aligned;\n"
     << "  int64_t offset;\n";
  if (type.getRank() > 0)
    os << "  int64_t sizes[" << type.getRank() << "];\n"
       << "  int64_t strides[" << type.getRank() << "];\n";
  os << "} " << name << ";\n#endif\n\n";
}

std::string aot::emitCHeader(ArrayRef<func::FuncOp> functions,
                             ArrayRef<StateAccessor> state, StringRef prefix,
                             StringRef guard, StringRef library, bool gpu) {
  std::string text;
  llvm::raw_string_ostream os(text);
  assert(isCIdentifier(guard) && (prefix.empty() || isCIdentifier(prefix)) &&
         "the guard and the prefix must be C identifiers");
  os << "/* " << sanitizeComment(library)
     << ": generated by fp8-compile; do not edit.\n"
        " *\n"
        " * MLIR's C interface. A tensor crosses as a pointer to a memref\n"
        " * descriptor: the buffer as allocated, the aligned pointer to its\n"
        " * first element, an offset, sizes and strides in elements. Inputs\n"
        " * must be dense and row-major with offset 0: the code reads\n"
        " * `aligned` and the sizes (dynamic ones are taken from them), not\n"
        " * the offset or strides. f16, bf16, FP8 and E8M0 elements are their\n"
        " * bit patterns. A call reads its arguments and never writes them.\n"
        << (gpu ? " * The program runs on a GPU (libfp8_gpu_runtime.so): every\n"
                  " * tensor result is a fresh dense buffer of CUDA managed\n"
                  " * memory, which the caller frees with fp8GpuFree(allocated)\n"
                  " * (once, if two results share it). Inputs may be host,\n"
                  " * CUDA managed or device memory (cuMemAlloc, cudaMalloc, a\n"
                  " * PyTorch CUDA tensor). Managed memory is used where it is;\n"
                  " * device memory too where only kernels use the input, else\n"
                  " * the driver copies it to managed memory at each call; host\n"
                  " * memory that kernels use is copied to managed memory at\n"
                  " * each call. After a call, fp8GpuRuntimeError() is\n"
                  " * NULL or the first CUDA error (the results are then not\n"
                  " * valid); fp8GpuRuntimeClearError() clears it.\n"
                : " * Every tensor result is a fresh dense buffer from malloc:\n"
                  " * the caller frees `allocated` (once, if two results share\n"
                  " * it).\n")
     << " */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdbool.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  if (gpu)
    os << "#define FP8_GPU_PROGRAM 1\n"
          "void fp8GpuFree(void *allocated);\n"
          "const char *fp8GpuRuntimeError(void);\n"
          "void fp8GpuRuntimeClearError(void);\n\n";

  // Descriptors, each once (and once across headers, by their guards).
  llvm::StringSet<> emitted;
  auto collect = [&](Type type) {
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      if (emitted.insert(getDescriptorName(tensor)).second)
        emitDescriptor(os, tensor);
  };
  for (func::FuncOp func : functions)
    for (Type type : llvm::concat<const Type>(func.getArgumentTypes(),
                                              func.getResultTypes()))
      collect(type);
  for (const StateAccessor &accessor : state)
    collect(accessor.type);

  for (func::FuncOp func : functions) {
    assert(isCIdentifier(func.getSymName()) &&
           "getExportedFunctions checks the names");
    FunctionType signature = func.getFunctionType();
    os << "/* @" << func.getSymName() << "(";
    llvm::interleaveComma(signature.getInputs(), os,
                          [&](Type type) { os << getCommentType(type); });
    os << ") -> ";
    if (signature.getNumResults() != 1)
      os << "(";
    llvm::interleaveComma(signature.getResults(), os,
                          [&](Type type) { os << getCommentType(type); });
    if (signature.getNumResults() != 1)
      os << ")";
    os << " */\n";
    std::string resultParam;
    std::string returnType = "void";
    if (signature.getNumResults() == 1 &&
        !isa<ShapedType>(signature.getResult(0))) {
      returnType = getCType(signature.getResult(0));
    } else if (signature.getNumResults() == 1) {
      resultParam = getCType(signature.getResult(0)) + " *result";
    } else if (signature.getNumResults() > 1) {
      std::string results = (func.getSymName() + "_results").str();
      os << "typedef struct " << results << " {\n";
      for (auto [i, type] : llvm::enumerate(signature.getResults()))
        os << "  " << getCType(type) << " r" << i << ";\n";
      os << "} " << results << ";\n";
      resultParam = results + " *result";
    }
    SmallVector<std::string> params;
    if (!resultParam.empty())
      params.push_back(resultParam);
    for (auto [i, type] : llvm::enumerate(signature.getInputs()))
      params.push_back(getCType(type) + (isa<ShapedType>(type) ? " *" : " ") +
                       "arg" + std::to_string(i));
    os << returnType << " _mlir_ciface_" << func.getSymName() << "(";
    if (params.empty())
      os << "void";
    llvm::interleaveComma(params, os);
    os << ");\n\n";
  }

  if (!state.empty()) {
    os << "/* State (delayed-scaling histories and scales): get returns a\n"
          " * fresh copy (freed as a result is), set overwrites. X(get, set,\n"
          " * \"global\", descriptor type) once per global, for checkpoints. */\n";
    for (const StateAccessor &accessor : state) {
      std::string desc = getDescriptorName(accessor.type);
      os << "void _mlir_ciface_" << accessor.getName << "(" << desc
         << " *result);\n"
         << "void _mlir_ciface_" << accessor.setName << "(" << desc
         << " *value);\n";
    }
    os << "#define " << StringRef(prefix.str()).upper()
       << "FOR_EACH_STATE(X)";
    for (const StateAccessor &accessor : state)
      os << " \\\n  X(_mlir_ciface_" << accessor.getName << ", _mlir_ciface_"
         << accessor.setName << ", " << quoteC(accessor.global) << ", "
         << getDescriptorName(accessor.type) << ")";
    os << "\n\n";
  }
  os << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* "
     << guard << " */\n";
  return text;
}
