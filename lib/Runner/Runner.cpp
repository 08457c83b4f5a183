//===- Runner.cpp - JIT-run functions on host data ------------------------===//

#include "fp8/Runner/Runner.h"

#include "fp8/AOT/CInterface.h"
#include "fp8/AOT/InputDialects.h"
#include "fp8/AOT/ObjectEmitter.h"
#include "fp8/Numerics/Float8.h"
#include "fp8/Numerics/Scaling.h"
#include "fp8/InitAllFP8.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/LowerToGPU.h"


#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

static unsigned getElementStorageBytes(Type type) {
  if (type.isIndex())
    return 8;
  return std::max(1u, (type.getIntOrFloatBitWidth() + 7) / 8);
}

HostTensor::HostTensor(Type elementType, ArrayRef<int64_t> shape)
    : elementType(elementType), shape(shape) {
  // Callers check shapes from programs and files (getStorageBytes); one that
  // did not must not get a wrapped, too small buffer.
  int64_t size = getElementBytes();
  bool overflow = false;
  for (int64_t extent : shape)
    overflow |= extent < 0 || llvm::MulOverflow(size, extent, size);
  if (overflow)
    llvm::report_fatal_error("a host tensor of " + Twine(shape.size()) +
                                 " dimensions has a negative size or more "
                                 "bytes than 2^63",
                             /*gen_crash_diag=*/false);
  bytes.assign(size, 0);
}

int64_t HostTensor::getNumElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

unsigned HostTensor::getElementBytes() const {
  return getElementStorageBytes(elementType);
}

double HostTensor::get(int64_t i) const {
  const char *p = bytes.data() + i * getElementBytes();
  if (elementType.isF32()) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (elementType.isF64()) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (elementType.isF16() || elementType.isBF16()) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    uint32_t wide = elementType.isF16() ? numerics::f16BitsToF32Bits(bits)
                                        : numerics::bf16BitsToF32Bits(bits);
    float v;
    std::memcpy(&v, &wide, 4);
    return v;
  }
  if (isa<Float8E8M0FNUType>(elementType))
    // Not through APFloat: LLVM 22 converts the E8M0 NaN to +Inf.
    return numerics::e8m0ToF32(static_cast<uint8_t>(*p));
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    // FP8 (and other narrow floats): exact through APFloat.
    uint64_t raw = 0;
    std::memcpy(&raw, p, getElementBytes());
    llvm::APFloat value(floatType.getFloatSemantics(),
                        llvm::APInt(floatType.getWidth(), raw));
    return value.convertToDouble();
  }
  int64_t v = 0;
  std::memcpy(&v, p, getElementBytes());
  unsigned width = elementType.isIndex() ? 64 : elementType.getIntOrFloatBitWidth();
  if (width < 64 && width > 1 && (v >> (width - 1) & 1))
    v |= static_cast<int64_t>(~uint64_t(0) << width); // sign-extend
  return static_cast<double>(v);
}

/// The f32 bits of `value` rounded toward zero, with the lowest bit set
/// when that was inexact ("round to odd"). Rounding those bits to nearest
/// even at 22 or fewer fraction bits gives what rounding `value` once gives.
static uint32_t roundToOddF32Bits(double value) {
  float rounded = static_cast<float>(value); // to nearest even
  uint32_t bits;
  std::memcpy(&bits, &rounded, 4);
  double back = rounded;
  if (back == value)
    return bits;
  if (std::fabs(back) > std::fabs(value))
    --bits; // one step toward zero (sign-magnitude): infinity -> max
  return bits | 1;
}

void HostTensor::set(int64_t i, double value) {
  char *p = bytes.data() + i * getElementBytes();
  if (elementType.isF64()) {
    std::memcpy(p, &value, 8);
    return;
  }
  // Fast exact paths for the common types (a real model's weights are
  // hundreds of millions of elements); the rest go through APFloat.
  if (elementType.isF32()) {
    float narrow = static_cast<float>(value); // once, to nearest even
    std::memcpy(p, &narrow, 4);
    return;
  }
  if (elementType.isBF16()) {
    uint16_t half;
    if (std::isnan(value)) {
      half = std::signbit(value) ? 0xFFC0 : 0x7FC0;
    } else {
      uint32_t bits = roundToOddF32Bits(value);
      bits += 0x7FFF + ((bits >> 16) & 1);
      half = static_cast<uint16_t>(bits >> 16);
    }
    std::memcpy(p, &half, 2);
    return;
  }
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    // Round once, to nearest even, from the double.
    llvm::APFloat converted(value);
    bool losesInfo;
    converted.convert(floatType.getFloatSemantics(),
                      llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    uint64_t raw = converted.bitcastToAPInt().getZExtValue();
    std::memcpy(p, &raw, getElementBytes());
    return;
  }
  // Saturated: a double outside int64's range (or NaN) has no conversion.
  int64_t v = std::isnan(value)        ? 0
              : value >= 0x1p63        ? std::numeric_limits<int64_t>::max()
              : value < -0x1p63        ? std::numeric_limits<int64_t>::min()
                                       : static_cast<int64_t>(value);
  std::memcpy(p, &v, getElementBytes());
}

std::optional<uint64_t> runner::getStorageBytes(Type type,
                                                int64_t dynamicSize) {
  auto tensor = dyn_cast<ShapedType>(type);
  Type element = tensor ? tensor.getElementType() : type;
  if (!element.isIntOrIndexOrFloat())
    return std::nullopt;
  uint64_t bytes = getElementStorageBytes(element);
  if (tensor)
    for (int64_t size : tensor.getShape()) {
      uint64_t extent = ShapedType::isDynamic(size) ? dynamicSize : size;
      bool overflow = false;
      bytes = llvm::SaturatingMultiply(bytes, extent, &overflow);
      if (overflow)
        return std::nullopt;
    }
  return bytes;
}

uint64_t runner::getDefaultMemoryBudget() {
  uint64_t budget = UINT64_MAX;
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    budget = static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit limit;
    if (::getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      budget = std::min<uint64_t>(budget, limit.rlim_cur);
  }
  return budget;
}

Type runner::getGlobalType(Operation *op) {
  if (auto global = dyn_cast<ml_program::GlobalOp>(op))
    return global.getType();
  if (auto global = dyn_cast<memref::GlobalOp>(op))
    return global.getType();
  return {};
}

SmallVector<std::string> runner::stubUnresolvedExternals(ModuleOp module) {
  SmallVector<std::string> stubs;
  module.walk([&](func::FuncOp func) {
    if (!func.isExternal() || func.getNumResults() != 0 ||
        llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
            func.getName().str()))
      return;
    stubs.push_back(func.getName().str());
    OpBuilder builder(func.getContext());
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToEnd(body);
    func::ReturnOp::create(builder, func.getLoc());
    func.setPrivate();
  });
  return stubs;
}

std::optional<uint64_t> runner::parseByteSize(StringRef text) {
  // A K, M, G or T suffix: 2^10 steps.
  unsigned shift = 0;
  if (!text.empty())
    if (size_t unit = StringRef("KMGT").find(llvm::toUpper(text.back()));
        unit != StringRef::npos) {
      shift = 10 * (unit + 1);
      text = text.drop_back();
    }
  uint64_t value;
  if (text.getAsInteger(10, value) || value == 0 ||
      value > (UINT64_MAX >> shift))
    return std::nullopt;
  return value << shift;
}

std::string runner::formatBytes(uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB",
                                      "EiB"};
  double value = bytes;
  unsigned unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return llvm::formatv(unit == 0 ? "{0:f0} {1}" : "{0:f1} {1}", value,
                       units[unit])
      .str();
}

std::optional<Distribution> runner::parseDistribution(StringRef name) {
  return llvm::StringSwitch<std::optional<Distribution>>(name)
      .Case("normal", Distribution::Normal)
      .Case("uniform", Distribution::Uniform)
      .Case("outliers", Distribution::Outliers)
      .Case("zeros", Distribution::Zeros)
      .Default(std::nullopt);
}

void runner::fill(HostTensor &tensor, Distribution distribution, double scale,
                  int64_t integerRange, std::mt19937_64 &rng) {
  int64_t count = tensor.getNumElements();
  if (!isa<FloatType>(tensor.getElementType())) {
    std::uniform_int_distribution<int64_t> uniform(
        0, std::max<int64_t>(integerRange, 1) - 1);
    for (int64_t i = 0; i < count; ++i)
      tensor.set(i, distribution == Distribution::Zeros ? 0 : uniform(rng));
    return;
  }
  std::normal_distribution<double> normal(0.0, scale);
  std::uniform_real_distribution<double> uniform(-scale, scale);
  for (int64_t i = 0; i < count; ++i) {
    switch (distribution) {
    case Distribution::Normal:
    case Distribution::Outliers:
      tensor.set(i, normal(rng));
      break;
    case Distribution::Uniform:
      tensor.set(i, uniform(rng));
      break;
    case Distribution::Zeros:
      tensor.set(i, 0.0);
      break;
    }
  }
  if (distribution == Distribution::Outliers && count > 0) {
    std::uniform_int_distribution<int64_t> index(0, count - 1);
    for (int64_t n = 0, e = std::max<int64_t>(1, count / 1000); n < e; ++n) {
      int64_t i = index(rng);
      tensor.set(i, tensor.get(i) * 100.0);
    }
  }
}

LogicalResult runner::writeNpy(StringRef path, const HostTensor &tensor,
                               std::string &error) {
  Type element = tensor.getElementType();
  // Narrow floats are stored as f4: exact, and what numpy reads everywhere.
  bool widen = element.isBF16() || element.isF16();
  std::string descr;
  if (element.isF32() || widen)
    descr = "<f4";
  else if (element.isF64())
    descr = "<f8";
  else if (element.isInteger(64) || element.isIndex())
    descr = "<i8";
  else if (element.isInteger(32))
    descr = "<i4";
  else if (element.isInteger(8) || element.isInteger(1))
    descr = "|i1";
  if (descr.empty()) {
    error = "cannot write elements of this type to a .npy file";
    return failure();
  }
  std::string shape;
  for (int64_t size : tensor.getShape())
    shape += std::to_string(size) + ", ";
  if (tensor.getShape().size() > 1)
    shape.resize(shape.size() - 1); // "(2, 3)" and "(4,)"
  else if (!shape.empty())
    shape.pop_back();
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': (" + shape +
                       "), }";
  // Magic, version 1.0, then the header padded with spaces to a multiple of
  // 64 bytes (including the newline).
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = ("cannot write '" + path + "': " + ec.message()).str();
    return failure();
  }
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xFF)
     << char(header.size() >> 8) << header;
  if (widen) {
    for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
      float value = static_cast<float>(tensor.get(i));
      os.write(reinterpret_cast<const char *>(&value), 4);
    }
  } else {
    os.write(tensor.data(),
             tensor.getNumElements() * int64_t(tensor.getElementBytes()));
  }
  os.close();
  if (os.has_error()) {
    error = ("cannot write '" + path + "': " + os.error().message()).str();
    os.clear_error();
    return failure();
  }
  return success();
}

FailureOr<HostTensor> runner::readNpy(StringRef path, Type elementType,
                                      std::string &error, uint64_t maxBytes) {
  // Before reading: /dev/zero or a FIFO would be read until memory runs out.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    error = ("cannot read '" + path + "': " + ec.message()).str();
    return failure();
  }
  if (!llvm::sys::fs::is_regular_file(status)) {
    error = ("'" + path + "' is not a regular file").str();
    return failure();
  }
  if (status.getSize() > maxBytes) {
    error = ("'" + path + "' (" + formatBytes(status.getSize()) +
             ") is larger than the memory budget (" + formatBytes(maxBytes) +
             ")")
                .str();
    return failure();
  }
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file) {
    error = ("cannot read '" + path + "': " + file.getError().message()).str();
    return failure();
  }
  return parseNpy((*file)->getBuffer(), path, elementType, error, maxBytes);
}

FailureOr<HostTensor> runner::parseNpy(StringRef data, StringRef path,
                                       Type elementType, std::string &error,
                                       uint64_t maxBytes) {
  if (!data.starts_with("\x93NUMPY") || data.size() < 10) {
    error = ("'" + path + "' is not a .npy file").str();
    return failure();
  }
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(data[8]) |
                   static_cast<unsigned char>(data[9]) << 8;
    headerStart = 10;
  } else {
    if (data.size() < 12) {
      error = ("'" + path + "': truncated .npy header").str();
      return failure();
    }
    uint32_t length;
    std::memcpy(&length, data.data() + 8, 4);
    headerLength = length;
    headerStart = 12;
  }
  if (headerStart + headerLength > data.size()) {
    error = ("'" + path + "': truncated .npy header").str();
    return failure();
  }
  StringRef header = data.substr(headerStart, headerLength);
  auto field = [&](StringRef key) -> StringRef {
    size_t at = header.find(("'" + key + "':").str());
    if (at == StringRef::npos)
      return {};
    return header.drop_front(at + key.size() + 3).ltrim();
  };
  StringRef descr = field("descr");
  if (!descr.consume_front("'")) {
    error = ("'" + path + "': no dtype in the .npy header").str();
    return failure();
  }
  descr = descr.take_until([](char c) { return c == '\''; });
  if (field("fortran_order").starts_with("True")) {
    error = ("'" + path + "': Fortran-order arrays are not supported").str();
    return failure();
  }
  StringRef shapeText = field("shape");
  if (!shapeText.consume_front("(")) {
    error = ("'" + path + "': no shape in the .npy header").str();
    return failure();
  }
  shapeText = shapeText.take_until([](char c) { return c == ')'; });
  SmallVector<int64_t> shape;
  for (StringRef dim : llvm::split(shapeText, ',')) {
    dim = dim.trim();
    if (dim.empty())
      continue;
    int64_t size;
    if (dim.getAsInteger(10, size) || size < 0) {
      error = ("'" + path + "': bad shape in the .npy header").str();
      return failure();
    }
    shape.push_back(size);
  }

  unsigned width;
  char kind;
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|') ||
      descr.drop_front(2).getAsInteger(10, width) ||
      !StringRef("fi").contains(kind = descr[1]) ||
      (kind == 'f' && width != 2 && width != 4 && width != 8) ||
      (kind == 'i' && width != 4 && width != 8)) {
    error = ("'" + path + "': unsupported dtype '" + descr +
             "' (expected little-endian f2, f4, f8, i4 or i8)")
                .str();
    return failure();
  }
  // Checked before anything is allocated: the header's shape is untrusted
  // and its element count may overflow.
  StringRef payload = data.drop_front(headerStart + headerLength);
  int64_t payloadBytes = width;
  bool overflow = false;
  for (int64_t size : shape)
    overflow |= llvm::MulOverflow(payloadBytes, size, payloadBytes);
  if (overflow || payload.size() < static_cast<uint64_t>(payloadBytes)) {
    error = ("'" + path + "': fewer elements than its shape says").str();
    return failure();
  }
  // Without making a type of the untrusted shape (types live as long as
  // the context); in HostTensor's order, which refuses any overflow.
  int64_t tensorBytes = getElementStorageBytes(elementType);
  bool tooLarge = false;
  for (int64_t size : shape)
    tooLarge |= llvm::MulOverflow(tensorBytes, size, tensorBytes);
  if (tooLarge || static_cast<uint64_t>(tensorBytes) > maxBytes) {
    error = ("'" + path + "' converted to " +
             llvm::formatv("{0}", elementType).str() +
             " is larger than the memory budget (" + formatBytes(maxBytes) +
             ")")
                .str();
    return failure();
  }
  HostTensor tensor(elementType, shape);
  Builder builder(elementType.getContext());
  Type fileType = kind == 'i' ? Type(builder.getIntegerType(width * 8))
                  : width == 2 ? Type(builder.getF16Type())
                  : width == 4 ? Type(builder.getF32Type())
                               : Type(builder.getF64Type());
  HostTensor raw(fileType, shape);
  if (raw.getNumElements() > 0)
    std::memcpy(raw.data(), payload.data(), raw.getNumElements() * width);
  // Into an integer type: converting what int64 cannot hold (NaN, 1e300,
  // or an i8 near INT64_MAX, which the double rounds up to 2^63) is
  // undefined.
  bool toInteger = !isa<FloatType>(elementType);
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
    double value = raw.get(i);
    if (toInteger && !(value > -0x1p63 && value < 0x1p63)) {
      std::string shown = llvm::formatv("{0}", value).str();
      if (kind == 'i' && width == 8) {
        int64_t exact;
        std::memcpy(&exact, payload.data() + i * width, width);
        shown = std::to_string(exact);
      }
      error = ("'" + path + "': element " + Twine(i) + " (" + shown +
               ") is not an integer of " + llvm::formatv("{0}", elementType))
                  .str();
      return failure();
    }
    tensor.set(i, value);
  }
  return tensor;
}

//===----------------------------------------------------------------------===//
// CompiledFunction
//===----------------------------------------------------------------------===//

CompiledFunction::~CompiledFunction() = default;

OwningOpRef<ModuleOp> runner::parseModuleFile(StringRef path,
                                              llvm::SourceMgr &sourceMgr,
                                              MLIRContext &context,
                                              std::string &error) {
  auto file = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!file) {
    error = ("cannot read '" + path + "': " + file.getError().message()).str();
    return {};
  }
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    error = ("cannot parse '" + path + "'").str();
  return module;
}

void runner::registerRunnerDialects(DialectRegistry &registry) {
  aot::registerInputDialects(registry);
  registerLowerToCPUDialectExtensions(registry);
}

/// Loads LLVM's OpenMP runtime into the process, once, for the threads of
/// fp8-lower-to-cpu; without it, programs are compiled single-threaded.
static bool loadOpenMPRuntime() {
  static const bool loaded = [] {
#ifdef FP8_OPENMP_RUNTIME
    return !llvm::sys::DynamicLibrary::LoadLibraryPermanently(
        FP8_OPENMP_RUNTIME);
#else
    return false;
#endif
  }();
  return loaded;
}

namespace {
/// The function being run, for the report of a failed assertion.
std::atomic<const char *> runningFunction{nullptr};

/// What a failed `cf.assert` of the compiled code calls instead of `puts`
/// then `abort` (its lowering): one line that names the function, on
/// stderr, then exit status 1. Not a message lost in a redirected stdout's
/// buffer, nor a stack dump as if the compiler had crashed. The first
/// thread to fail reports; others (OpenMP workers) wait for the exit.
constexpr llvm::StringLiteral kAssertFailed = "fp8_runner_assert_failed";

[[noreturn]] void reportFailedAssertion(const char *message) {
  static std::atomic_flag reported = ATOMIC_FLAG_INIT;
  if (reported.test_and_set())
    for (;;)
      ::pause();
  std::fflush(stdout);
  const char *name = runningFunction.load();
  std::fprintf(stderr,
               "error: @%s: an assertion failed in the compiled code: %s\n",
               name ? name : "?", message);
  std::fflush(stderr);
  std::_Exit(EXIT_FAILURE);
}

/// Points the `puts` of each failed `cf.assert` at reportFailedAssertion:
/// convert-cf-to-llvm prints the message with puts and calls abort right
/// after (canonicalization may merge the failure blocks of several
/// asserts, the message a block argument). Other calls of puts and abort
/// are left alone.
void retargetAssertions(ModuleOp module) {
  SmallVector<LLVM::CallOp> calls;
  module.walk([&](LLVM::CallOp call) {
    auto next = dyn_cast_or_null<LLVM::CallOp>(call->getNextNode());
    if (call.getCallee() == "puts" && call.getNumOperands() == 1 && next &&
        next.getCallee() == "abort" &&
        isa_and_present<LLVM::UnreachableOp>(next->getNextNode()))
      calls.push_back(call);
  });
  if (calls.empty() || module.lookupSymbol(kAssertFailed))
    return;
  auto builder = OpBuilder::atBlockEnd(module.getBody());
  MLIRContext *context = module.getContext();
  LLVM::LLVMFuncOp::create(
      builder, module.getLoc(), kAssertFailed,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                  {LLVM::LLVMPointerType::get(context)}));
  for (LLVM::CallOp call : calls)
    call.setCallee(kAssertFailed);
}

llvm::orc::SymbolMap assertionSymbols(llvm::orc::MangleAndInterner mangle) {
  llvm::orc::SymbolMap symbols;
  symbols[mangle(kAssertFailed)] = {
      llvm::orc::ExecutorAddr::fromPtr(&reportFailedAssertion),
      llvm::JITSymbolFlags::Exported};
  return symbols;
}
} // namespace

std::unique_ptr<CompiledFunction>
CompiledFunction::compile(ModuleOp module, StringRef name, std::string &error,
                          const CompileOptions &compileOptions) {
  if (compileOptions.optLevel > 3) {
    error = "optimization level " + std::to_string(compileOptions.optLevel) +
            " is not one of 0-3";
    return nullptr;
  }
  OwningOpRef<ModuleOp> clone = module.clone();
  auto func = clone->lookupSymbol<func::FuncOp>(name);
  if (!func || func.isExternal()) {
    error = ("no function @" + name + " with a body in the module").str();
    return nullptr;
  }
  for (Type type : llvm::concat<const Type>(func.getArgumentTypes(),
                                            func.getResultTypes())) {
    if (!aot::isCInterfaceType(type)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "@" << name << " has an argument or result of unsupported type "
         << type << " (ranked tensors and scalars of f32, f64, f16, bf16 and "
         << "integers are supported)";
      error = text;
      return nullptr;
    }
  }
  std::unique_ptr<CompiledFunction> compiled(new CompiledFunction());
  compiled->name = name.str();
  compiled->signature = func.getFunctionType();
  clone->walk([&](Operation *op) {
    Type type = getGlobalType(op);
    if (!type)
      return;
    if (std::optional<uint64_t> bytes = getStorageBytes(type, 0);
        bytes && cast<ShapedType>(type).hasStaticShape())
      compiled->globalBytes[cast<SymbolOpInterface>(op).getName()] = *bytes;
  });
  aot::prepareForCInterface(func);

  MLIRContext *context = clone->getContext();
  bool gpu = compileOptions.target == CompileOptions::Target::CUDA;
  PassManager pm(context);
  pm.enableVerifier(compileOptions.verifyEachPass);
  if (gpu) {
    LowerToGPUOptions options;
    options.accumulation = compileOptions.accumulation;
    buildLowerToGPUPipeline(pm, options);
  } else {
    LowerToCPUOptions options;
    options.vectorize = compileOptions.vectorize;
    options.threads = compileOptions.vectorize && loadOpenMPRuntime();
    options.accumulation = compileOptions.accumulation;
    buildLowerToCPUPipeline(pm, options);
  }
  std::string diagnostics;
  {
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      os << diag.getLocation() << ": " << diag << "\n";
      return success();
    });
    if (failed(pm.run(*clone)) || failed(verify(*clone))) {
      error = std::string(gpu ? "lowering to the GPU" : "lowering to the CPU") +
              " failed:\n" + diagnostics;
      return nullptr;
    }
  }

  retargetAssertions(*clone);

  std::string runtimeLibrary;
  if (gpu) {
    runtimeLibrary = aot::getGpuRuntimeLibraryPath();
    if (!llvm::sys::fs::exists(runtimeLibrary)) {
      error = "no GPU runtime library at '" + runtimeLibrary + "'";
      return nullptr;
    }
    // gpu.binary and gpu.launch_func: the embedded kernels and mgpu* calls.
    DialectRegistry registry;
    registerGPUDialectTranslation(registry);
    gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
    context->appendDialectRegistry(registry);
  }
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  registerOpenMPDialectTranslation(*context);
  // LLVM's optimizer sees the host's vector widths and features, as the
  // JIT's code generator does.
  std::unique_ptr<llvm::TargetMachine> host;
  if (auto builder = llvm::orc::JITTargetMachineBuilder::detectHost()) {
    if (auto machine = builder->createTargetMachine())
      host = std::move(*machine);
    else
      llvm::consumeError(machine.takeError());
  } else {
    llvm::consumeError(builder.takeError());
  }
  ExecutionEngineOptions engineOptions;
  engineOptions.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(compileOptions.optLevel);
  auto transformer = makeOptimizingTransformer(
      compileOptions.optLevel, /*sizeLevel=*/0, host.get());
  engineOptions.transformer = transformer;
  // No perf jitdump: every run left a file in /tmp/.debug/jit, and a write
  // to it that failed (a full disk) ended the process with a fatal error.
  engineOptions.enablePerfNotificationListener = false;
  SmallVector<StringRef, 1> libraries;
  if (gpu) {
    libraries.push_back(runtimeLibrary);
    engineOptions.sharedLibPaths = libraries;
  }
  auto engine = ExecutionEngine::create(*clone, engineOptions);
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  compiled->engine = std::move(*engine);
  compiled->engine->registerSymbols(assertionSymbols);
  compiled->freeBuffer = std::free;
  if (gpu) {
    // Loaded for good by the engine: its functions are in the process.
    auto lookup = [](const char *symbol) {
      return llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(symbol);
    };
    compiled->freeBuffer =
        reinterpret_cast<void (*)(void *)>(lookup("fp8GpuFree"));
    compiled->runtimeError =
        reinterpret_cast<const char *(*)()>(lookup("fp8GpuRuntimeError"));
    compiled->clearRuntimeError =
        reinterpret_cast<void (*)()>(lookup("fp8GpuRuntimeClearError"));
    if (!compiled->freeBuffer || !compiled->runtimeError ||
        !compiled->clearRuntimeError) {
      error = "'" + runtimeLibrary + "' is not the GPU runtime library";
      return nullptr;
    }
  }
  return compiled;
}

namespace {
/// The C layout of one argument or result of an `llvm.emit_c_interface`
/// function: a memref descriptor {allocated, aligned, offset, sizes[rank],
/// strides[rank]} or a scalar.
struct Slot {
  size_t offset = 0, size = 0, align = 0;
};

Slot getSlot(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return {0, (3 + 2 * static_cast<size_t>(tensor.getRank())) * 8, 8};
  unsigned bytes = getElementStorageBytes(type);
  return {0, bytes, bytes};
}

/// Lays out `types` as the fields of a C struct.
size_t layoutStruct(TypeRange types, SmallVectorImpl<Slot> &slots) {
  size_t offset = 0, align = 1;
  for (Type type : types) {
    Slot slot = getSlot(type);
    offset = llvm::alignTo(offset, slot.align);
    slot.offset = offset;
    offset += slot.size;
    align = std::max(align, slot.align);
    slots.push_back(slot);
  }
  return llvm::alignTo(offset, align);
}
} // namespace

/// Copies a returned memref (any strides) into a dense host tensor. The
/// caller frees the buffer, once however many results alias it.
static HostTensor copyMemRef(const int64_t *descriptor,
                             RankedTensorType type) {
  int64_t rank = type.getRank();
  auto *aligned = reinterpret_cast<const char *>(descriptor[1]);
  int64_t offset = descriptor[2];
  ArrayRef<int64_t> sizes(descriptor + 3, rank);
  ArrayRef<int64_t> strides(descriptor + 3 + rank, rank);
  HostTensor tensor(type.getElementType(), sizes);
  unsigned bytes = tensor.getElementBytes();
  SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
    int64_t element = offset;
    for (int64_t d = 0; d < rank; ++d)
      element += index[d] * strides[d];
    std::memcpy(tensor.data() + i * bytes, aligned + element * bytes, bytes);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  return tensor;
}

FailureOr<SmallVector<HostTensor>>
CompiledFunction::call(ArrayRef<HostTensor> inputs, std::string &error) {
  ArrayRef<Type> argTypes = signature.getInputs();
  ArrayRef<Type> resultTypes = signature.getResults();
  if (inputs.size() != argTypes.size()) {
    error = "@" + name + " takes " + std::to_string(argTypes.size()) +
            " arguments, got " + std::to_string(inputs.size());
    return failure();
  }

  // Storage for every C parameter, then a pointer to each for invokePacked.
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> descriptorPointers;
  std::vector<int64_t> scalars(inputs.size());
  descriptors.reserve(inputs.size());
  descriptorPointers.reserve(inputs.size());
  SmallVector<void *> params;

  SmallVector<Slot> resultSlots;
  size_t resultBytes = layoutStruct(resultTypes, resultSlots);
  std::vector<int64_t> resultStorage(resultBytes / 8 + 1, 0);
  void *resultPointer = resultStorage.data();
  bool resultsByPointer =
      resultTypes.size() > 1 ||
      (resultTypes.size() == 1 && isa<RankedTensorType>(resultTypes[0]));
  if (resultsByPointer)
    params.push_back(&resultPointer);

  for (auto [index, input] : llvm::enumerate(inputs)) {
    Type type = argTypes[index];
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType) {
      if (input.getElementType() != type || !input.getShape().empty()) {
        error = "argument #" + std::to_string(index) +
                " does not match the function's type";
        return failure();
      }
      std::memcpy(&scalars[index], input.data(), input.getElementBytes());
      params.push_back(&scalars[index]);
      continue;
    }
    ArrayRef<int64_t> shape = input.getShape();
    if (input.getElementType() != tensorType.getElementType() ||
        static_cast<int64_t>(shape.size()) != tensorType.getRank() ||
        failed(verifyCompatibleShape(shape, tensorType.getShape()))) {
      error = "argument #" + std::to_string(index) +
              " does not match the function's type";
      return failure();
    }
    int64_t rank = tensorType.getRank();
    std::vector<int64_t> descriptor(3 + 2 * rank);
    auto *data = const_cast<char *>(input.data());
    descriptor[0] = descriptor[1] = reinterpret_cast<int64_t>(data);
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      descriptor[3 + d] = shape[d];
      descriptor[3 + rank + d] = stride;
      stride *= shape[d];
    }
    descriptors.push_back(std::move(descriptor));
    descriptorPointers.push_back(descriptors.back().data());
    params.push_back(&descriptorPointers.back());
  }
  if (!resultsByPointer && !resultTypes.empty())
    params.push_back(resultStorage.data());

  runningFunction.store(name.c_str());
  if (llvm::Error callError =
          engine->invokePacked("_mlir_ciface_" + name, params)) {
    error = "call failed: " + llvm::toString(std::move(callError));
    return failure();
  }
  // A GPU program that met a driver error ran on: its results are not what
  // it computes.
  std::string gpuError;
  if (runtimeError) {
    if (const char *message = runtimeError()) {
      gpuError = message;
      clearRuntimeError();
    }
  }

  // Returned buffers belong to the caller, but one buffer may come back as
  // several results (`return %y, %y`, views of one allocation) and a result
  // may be an argument passed through: free each allocation once, and never
  // the caller's own input storage.
  SmallVector<HostTensor> results;
  llvm::SmallPtrSet<void *, 8> owned, inputBuffers;
  for (const HostTensor &input : inputs)
    inputBuffers.insert(const_cast<char *>(input.data()));
  const char *base = reinterpret_cast<const char *>(resultStorage.data());
  for (auto [type, slot] : llvm::zip(resultTypes, resultSlots)) {
    if (auto tensorType = dyn_cast<RankedTensorType>(type)) {
      auto *descriptor = reinterpret_cast<const int64_t *>(base + slot.offset);
      results.push_back(copyMemRef(descriptor, tensorType));
      if (auto *allocated = reinterpret_cast<void *>(descriptor[0]);
          allocated && !inputBuffers.contains(allocated))
        owned.insert(allocated);
      continue;
    }
    HostTensor scalar(type, {});
    std::memcpy(scalar.data(), base + slot.offset, slot.size);
    results.push_back(std::move(scalar));
  }
  for (void *allocated : owned)
    freeBuffer(allocated);
  if (!gpuError.empty()) {
    error = "the GPU program failed: " + gpuError;
    return failure();
  }
  return results;
}

/// Where the value of `global` is in the JIT-compiled module: in a GPU
/// program, the device copy once a call made it (fp8::getDeviceStateSlot),
/// else the global itself; null with `error` when there is no such global.
static void *lookupGlobal(ExecutionEngine &engine, StringRef global,
                          bool gpu, std::string &error) {
  // Only globals that kernels use have a slot: a failed lookup is no error
  // (and would be logged by the JIT on a CPU program).
  if (gpu) {
    llvm::Expected<void *> slot =
        engine.lookup(fp8::getDeviceStateSlot(global));
    if (!slot)
      llvm::consumeError(slot.takeError());
    else if (void *copy = *static_cast<void **>(*slot))
      return copy;
  }
  llvm::Expected<void *> address = engine.lookup(global);
  if (address)
    return *address;
  error = ("no global @" + global + ": " + llvm::toString(address.takeError()))
              .str();
  return nullptr;
}

/// Fails unless the global `name` of the compiled module is a static tensor
/// of `bytes` bytes: copying another size reads or writes past it.
static LogicalResult checkGlobalSize(const llvm::StringMap<uint64_t> &globals,
                                     StringRef name,
                                     std::optional<uint64_t> bytes,
                                     std::string &error) {
  auto it = globals.find(name);
  if (it == globals.end()) {
    error = ("no tensor global @" + name + " of static shape in the module")
                .str();
    return failure();
  }
  if (bytes != it->second) {
    error = ("@" + name + " holds " + formatBytes(it->second) + ", not " +
             (bytes ? formatBytes(*bytes) : std::string("2^64 bytes or more")))
                .str();
    return failure();
  }
  return success();
}

FailureOr<HostTensor> CompiledFunction::readGlobal(StringRef global,
                                                   RankedTensorType type,
                                                   std::string &error) const {
  if (failed(checkGlobalSize(globalBytes, global, getStorageBytes(type, 0),
                             error)))
    return failure();
  void *address = lookupGlobal(*engine, global, runtimeError != nullptr, error);
  if (!address)
    return failure();
  HostTensor tensor(type.getElementType(), type.getShape());
  std::memcpy(tensor.data(), address,
              tensor.getNumElements() * tensor.getElementBytes());
  return tensor;
}

LogicalResult CompiledFunction::writeGlobal(StringRef global,
                                            const HostTensor &value,
                                            std::string &error) {
  if (failed(checkGlobalSize(
          globalBytes, global,
          uint64_t(value.getNumElements()) * value.getElementBytes(), error)))
    return failure();
  void *address = lookupGlobal(*engine, global, runtimeError != nullptr, error);
  if (!address)
    return failure();
  std::memcpy(address, value.data(),
              value.getNumElements() * value.getElementBytes());
  return success();
}

FailureOr<CompiledFunction::GlobalSnapshot>
CompiledFunction::readGlobals(const llvm::StringMap<RankedTensorType> &globals,
                              std::string &error) const {
  GlobalSnapshot snapshot;
  for (const auto &entry : globals) {
    FailureOr<HostTensor> value =
        readGlobal(entry.getKey(), entry.getValue(), error);
    if (failed(value))
      return failure();
    snapshot.push_back({entry.getKey().str(), std::move(*value)});
  }
  return snapshot;
}

LogicalResult CompiledFunction::writeGlobals(const GlobalSnapshot &snapshot,
                                             std::string &error) {
  for (const auto &[name, value] : snapshot)
    if (failed(writeGlobal(name, value, error)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Metrics
//===----------------------------------------------------------------------===//

namespace {
/// Element i of a tensor as a double, f32 and f64 read without going
/// through HostTensor::get's type dispatch: comparing the large outputs of
/// a model (fp8-tune compares every output once per trial) spent three
/// quarters of its time there.
class ElementReader {
public:
  explicit ElementReader(const HostTensor &tensor)
      : tensor(tensor), data(tensor.data()),
        kind(tensor.getElementType().isF32()   ? Kind::F32
             : tensor.getElementType().isF64() ? Kind::F64
                                               : Kind::Other) {}

  double operator()(int64_t i) const {
    switch (kind) {
    case Kind::F32: {
      float v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
    case Kind::F64: {
      double v;
      std::memcpy(&v, data + 8 * i, 8);
      return v;
    }
    case Kind::Other:
      return tensor.get(i);
    }
    llvm_unreachable("unknown element kind");
  }

private:
  enum class Kind { F32, F64, Other };
  const HostTensor &tensor;
  const char *data;
  Kind kind;
};
} // namespace

Comparison runner::compare(const HostTensor &refTensor,
                           const HostTensor &outTensor) {
  ElementReader ref(refTensor), out(outTensor);
  Comparison result;
  double signal = 0, noise = 0, refMax = 0;
  int64_t count =
      std::min(refTensor.getNumElements(), outTensor.getNumElements());
  for (int64_t i = 0; i < count; ++i)
    if (std::isfinite(ref(i)))
      refMax = std::max(refMax, std::fabs(ref(i)));
  for (int64_t i = 0; i < count; ++i) {
    double r = ref(i), o = out(i);
    if (!std::isfinite(r)) {
      ++result.referenceNonFinite;
      continue;
    }
    if (!std::isfinite(o)) {
      ++result.nonFinite;
      continue;
    }
    double diff = std::fabs(r - o);
    signal += r * r;
    noise += diff * diff;
    result.maxAbsError = std::max(result.maxAbsError, diff);
    if (std::fabs(r) > 1e-6 * refMax)
      result.maxRelError = std::max(result.maxRelError, diff / std::fabs(r));
  }
  auto sqnr = [&](double signal, double noise, int64_t nonFinite) {
    if (!result.isComparable())
      return double(NAN);
    if (nonFinite > 0)
      return -double(INFINITY); // Finite reference, broken output.
    return noise == 0 ? INFINITY : 10.0 * std::log10(signal / noise);
  };
  result.sqnrDb = sqnr(signal, noise, result.nonFinite);

  // Per row: every dimension but the last indexes rows.
  ArrayRef<int64_t> shape = refTensor.getShape();
  int64_t rowLength = shape.empty() ? count : shape.back();
  if (shape.size() < 2 || rowLength == 0 || count == 0 ||
      count % rowLength != 0) {
    result.worstRowSqnrDb = result.medianRowSqnrDb = result.sqnrDb;
    return result;
  }
  SmallVector<double> rows;
  for (int64_t start = 0; start < count; start += rowLength) {
    double rowSignal = 0, rowNoise = 0;
    int64_t rowNonFinite = 0;
    for (int64_t i = start; i < start + rowLength; ++i) {
      double r = ref(i), o = out(i);
      if (!std::isfinite(r))
        continue;
      if (!std::isfinite(o)) {
        ++rowNonFinite;
        continue;
      }
      rowSignal += r * r;
      rowNoise += (r - o) * (r - o);
    }
    rows.push_back(sqnr(rowSignal, rowNoise, rowNonFinite));
  }
  llvm::sort(rows, [](double a, double b) {
    return std::isnan(b) ? !std::isnan(a) : a < b;
  });
  result.worstRowSqnrDb = rows.front();
  result.medianRowSqnrDb = rows[(rows.size() - 1) / 2];
  return result;
}
