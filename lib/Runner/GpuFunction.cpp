//===- GpuFunction.cpp - Run an FP8 function on a CUDA GPU ----------------===//
//
// The host function fp8-lower-to-nvvm makes is straight-line and small
// (docs/hopper-lowering.md): instead of lowering it further (gpu-to-llvm +
// the mgpu* runtime wrappers + a second JIT), it is interpreted here, op by
// op, over runtime::CudaRuntime: memrefs are device buffers, index / integer
// arithmetic is evaluated, gpu.launch_func becomes cuLaunchKernel. compile()
// checks every op first, so an unsupported one is reported (with its
// location) before any CUDA call.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/GpuFunction.h"
#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Pipelines/LowerToNVVM.h"
#include "fp8/Runtime/CudaRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using runtime::CudaRuntime;
using runtime::DevicePtr;

/// The runtime's Status / Result as llvm::Error / llvm::Expected.
static llvm::Error toError(runtime::Status status) {
  if (!status)
    return llvm::Error::success();
  return llvm::createStringError(status.message());
}

template <typename T>
static llvm::Expected<T> toExpected(runtime::Result<T> result) {
  if (!result)
    return toError(result.takeStatus());
  return std::move(*result);
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// "file:line:col" of the first file location in `loc`, else its printed
/// form.
static std::string formatLocation(Location loc) {
  std::string text;
  loc->walk([&](Location nested) {
    if (auto file = dyn_cast<FileLineColLoc>(nested)) {
      text = llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                           file.getLine(), file.getColumn())
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (text.empty()) {
    llvm::raw_string_ostream os(text);
    loc.print(os);
  }
  return text;
}

static std::string describeOp(Operation *op) {
  return ("'" + op->getName().getStringRef() + "' at " +
          formatLocation(op->getLoc()))
      .str();
}

//===----------------------------------------------------------------------===//
// The host program: what is supported
//===----------------------------------------------------------------------===//

static bool isScalarType(Type type) {
  return type.isIndex() || type.isSignlessInteger() || type.isF32() ||
         isa<LLVM::LLVMPointerType>(type);
}

static bool isDeviceMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.getLayout().isIdentity() &&
         memref.getElementType().isIntOrFloat() &&
         memref.getElementTypeBitWidth() % 8 == 0 && !memref.getMemorySpace();
}

static unsigned widthOf(Type type) {
  if (type.isIndex() || isa<LLVM::LLVMPointerType>(type))
    return 64;
  return type.getIntOrFloatBitWidth();
}

/// Why `op` cannot be interpreted, or "" when it can.
static std::string checkHostOp(Operation *op,
                               const llvm::StringMap<std::string> &images) {
  auto allScalar = [](TypeRange types) {
    return llvm::all_of(types, isScalarType);
  };
  return TypeSwitch<Operation *, std::string>(op)
      .Case([&](arith::ConstantOp constant) -> std::string {
        Type type = constant.getType();
        if (type.isF32() || type.isIndex() || type.isSignlessInteger())
          if (widthOf(type) <= 64)
            return "";
        return "only index, integer and f32 constants are supported";
      })
      .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivUIOp,
            arith::DivSIOp, arith::RemUIOp, arith::RemSIOp,
            arith::CeilDivUIOp, arith::CeilDivSIOp, arith::FloorDivSIOp,
            arith::MaxUIOp, arith::MinUIOp, arith::MaxSIOp, arith::MinSIOp,
            arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::ShLIOp,
            arith::ShRUIOp, arith::ShRSIOp, arith::IndexCastOp,
            arith::IndexCastUIOp, arith::ExtUIOp, arith::ExtSIOp,
            arith::TruncIOp, arith::CmpIOp, arith::SelectOp,
            LLVM::IntToPtrOp, LLVM::PtrToIntOp, LLVM::ZeroOp>(
          [&](Operation *op) -> std::string {
            if (allScalar(op->getOperandTypes()) &&
                allScalar(op->getResultTypes()))
              return "";
            return "only scalar operands are supported";
          })
      .Case([&](memref::DimOp) { return ""; })
      .Case([&](memref::ExtractAlignedPointerAsIndexOp) { return ""; })
      .Case([&](memref::ExtractStridedMetadataOp) { return ""; })
      .Case([&](gpu::AllocOp alloc) -> std::string {
        if (alloc.getAsyncToken() || alloc.getHostShared() ||
            !alloc.getSymbolOperands().empty())
          return "only synchronous device allocations are supported";
        return "";
      })
      .Case([&](gpu::DeallocOp dealloc) -> std::string {
        return dealloc.getAsyncToken() ? "async deallocation" : "";
      })
      .Case([&](gpu::MemsetOp memset) -> std::string {
        if (memset.getAsyncToken())
          return "async memset";
        if (widthOf(memset.getValue().getType()) != 32)
          return "only 32-bit memsets are supported";
        return "";
      })
      .Case([&](gpu::MemcpyOp memcpy) -> std::string {
        return memcpy.getAsyncToken() ? "async memcpy" : "";
      })
      .Case([&](gpu::WaitOp wait) -> std::string {
        return wait.getAsyncToken() ? "async wait" : "";
      })
      .Case([&](gpu::LaunchFuncOp launch) -> std::string {
        if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
            launch.getAsyncObject())
          return "async launches are not supported";
        if (launch.hasClusterSize())
          return "cluster launches are not supported";
        if (!images.count(launch.getKernelModuleName().getValue()))
          return ("no gpu.binary @" + launch.getKernelModuleName().getValue() +
                  " with a PTX or cubin object")
              .str();
        for (Type type : launch.getKernelOperands().getTypes())
          if (!isScalarType(type) || widthOf(type) % 8)
            return "kernel operands must be pointers, integers or f32";
        return "";
      })
      .Case([&](func::ReturnOp ret) -> std::string {
        return ret.getNumOperands() ? "the host function returns values" : "";
      })
      .Default([](Operation *) {
        return std::string("the GPU runner does not interpret this op");
      });
}

//===----------------------------------------------------------------------===//
// compile
//===----------------------------------------------------------------------===//

GpuFunction::GpuFunction() = default;
GpuFunction::~GpuFunction() {
  if (!cuda)
    return;
  for (auto &entry : modules)
    (void)cuda->unloadModule(static_cast<runtime::ModuleHandle>(entry.second));
}

std::unique_ptr<GpuFunction>
GpuFunction::compile(ModuleOp module, StringRef name, std::string &error) {
  auto fail = [&](const Twine &message) {
    error = ("cannot run @" + name + " on the GPU: " + message).str();
    return nullptr;
  };
  OwningOpRef<ModuleOp> clone = module.clone();
  auto func = clone->lookupSymbol<func::FuncOp>(name);
  if (!func || func.isExternal())
    return fail("no function with a body in the module");
  // Other functions are not run: drop those @name does not use, so that
  // one the GPU lowering rejects does not stop this one.
  for (auto other : llvm::make_early_inc_range(clone->getOps<func::FuncOp>()))
    if (other != func && SymbolTable::symbolKnownUseEmpty(other, *clone))
      other.erase();

  // fp8-lower-to-nvvm leaves a function without fp8 ops as it is.
  bool usesFP8 = false;
  func.walk([&](Operation *op) {
    if (isa_and_present<FP8Dialect>(op->getDialect()))
      usesFP8 = true;
  });
  if (!usesFP8) {
    for (Operation &op : func.getBody().front())
      if (!isa<func::ReturnOp>(op))
        return fail("it has no fp8 ops (the FP8 pipeline rewrote nothing), "
                    "and its first op, " +
                    describeOp(&op) + ", has no GPU lowering");
    return fail("it has no fp8 ops: nothing to run on the GPU");
  }

  std::unique_ptr<GpuFunction> gpu(new GpuFunction());
  gpu->name = name.str();
  gpu->signature = func.getFunctionType();
  gpu->original = clone->clone();

  MLIRContext *context = clone->getContext();
  {
    DialectRegistry registry;
    registry.insert<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                    memref::MemRefDialect>();
    registerFP8ToNVVMDialectExtensions(registry);
    context->appendDialectRegistry(registry);
  }

  // The kernels as PTX: the driver compiles it, no toolkit needed.
  PassManager pm(context);
  LowerToNVVMOptions options;
  options.format = "isa";
  buildLowerToNVVMPipeline(pm, options);
  std::string diagnostics;
  bool first = true;
  {
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return success();
      if (!first)
        os << "\n";
      first = false;
      os << formatLocation(diag.getLocation()) << ": " << diag;
      return success();
    });
    if (failed(pm.run(*clone)))
      return fail(diagnostics.empty() ? "fp8-lower-to-nvvm failed"
                                      : diagnostics);
  }

  for (auto binary : clone->getOps<gpu::BinaryOp>()) {
    for (Attribute attr : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attr);
      if (!object || object.getFormat() == gpu::CompilationTarget::Offload)
        continue;
      gpu->images[binary.getName()] = object.getObject().getValue().str();
      break;
    }
  }

  func = clone->lookupSymbol<func::FuncOp>(name);
  if (!func || !func.getBody().hasOneBlock())
    return fail("the lowered host function is not straight-line");
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (!isDeviceMemRef(type))
      return fail(llvm::formatv(
          "argument #{0} of the host function has type {1}, not a device "
          "memref",
          i, type));
  if (func.getNumArguments() !=
      gpu->signature.getNumInputs() + gpu->signature.getNumResults())
    return fail("the host function does not take one memref per argument "
                "and result");
  for (Operation &op : func.getBody().front()) {
    std::string why = checkHostOp(&op, gpu->images);
    if (!why.empty())
      return fail("unsupported op " + describeOp(&op) + ": " + why);
  }
  gpu->lowered = std::move(clone);
  return gpu;
}

//===----------------------------------------------------------------------===//
// connect
//===----------------------------------------------------------------------===//

LogicalResult GpuFunction::connect(std::string &error, int device) {
  if (cuda)
    return success();
  runtime::Result<std::unique_ptr<CudaRuntime>> created =
      CudaRuntime::create(device);
  if (!created) {
    error = "--device=cuda: " + created.takeStatus().message();
    return failure();
  }
  std::unique_ptr<CudaRuntime> runtime = std::move(*created);
  llvm::StringMap<void *> loaded;
  for (auto &entry : images) {
    runtime::Result<runtime::ModuleHandle> handle =
        runtime->loadModule(entry.second);
    if (!handle) {
      for (auto &done : loaded)
        (void)runtime->unloadModule(
            static_cast<runtime::ModuleHandle>(done.second));
      error = ("loading the kernels of @" + entry.first() + " on " +
               runtime->getDeviceName() +
               " failed: " + handle.takeStatus().message())
                  .str();
      return failure();
    }
    loaded[entry.first()] = *handle;
  }
  modules = std::move(loaded);
  cuda = std::move(runtime);
  return success();
}

std::string GpuFunction::getDeviceName() const {
  if (!cuda)
    return "";
  return llvm::formatv("{0} (sm_{1})", cuda->getDeviceName(),
                       cuda->getComputeCapability())
      .str();
}

//===----------------------------------------------------------------------===//
// call: the interpreter
//===----------------------------------------------------------------------===//

namespace {
/// A value of the host program: a scalar (its bits, zero-extended) or a
/// device buffer.
struct RtValue {
  uint64_t bits = 0;
  bool isBuffer = false;
  DevicePtr ptr = 0;
  SmallVector<int64_t> sizes;
};

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

/// Keeps the value in `width` bits (zero-extended).
uint64_t truncate(uint64_t v, unsigned width) {
  return width >= 64 ? v : v & ((uint64_t(1) << width) - 1);
}
int64_t signExtend(uint64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<int64_t>(v);
  return llvm::SignExtend64(v, width);
}

/// Device buffers of one call, freed at the end whatever happens.
struct Allocations {
  CudaRuntime &cuda;
  llvm::DenseSet<DevicePtr> live;
  ~Allocations() {
    for (DevicePtr ptr : live)
      (void)cuda.free(ptr);
  }
  llvm::Expected<DevicePtr> allocate(int64_t bytes) {
    // cuMemAlloc rejects 0 bytes; 256 keeps every buffer vector-aligned.
    llvm::Expected<DevicePtr> ptr =
        toExpected(cuda.allocate(std::max<int64_t>(bytes, 256)));
    if (ptr)
      live.insert(*ptr);
    return ptr;
  }
  llvm::Error release(DevicePtr ptr) {
    if (!live.erase(ptr))
      return llvm::createStringError("freeing a buffer that is not live");
    return toError(cuda.free(ptr));
  }
};
} // namespace

/// Result shapes of the original function for these input shapes: static
/// types as they are; a dynamic result takes the shape of the op's first
/// shaped operand of the same rank (the fp8 ops are element-wise), reversed
/// for cast_transpose's transposed result.
static FailureOr<SmallVector<SmallVector<int64_t>>>
inferResultShapes(func::FuncOp func, ArrayRef<HostTensor> inputs,
                  std::string &error) {
  DenseMap<Value, SmallVector<int64_t>> shapes;
  for (auto [arg, input] : llvm::zip(func.getArguments(), inputs))
    shapes[arg] = SmallVector<int64_t>(input.getShape());
  auto shapeOf = [&](Value value) -> std::optional<SmallVector<int64_t>> {
    auto type = dyn_cast<ShapedType>(value.getType());
    if (!type)
      return SmallVector<int64_t>{};
    if (type.hasStaticShape())
      return SmallVector<int64_t>(type.getShape());
    auto it = shapes.find(value);
    if (it != shapes.end())
      return it->second;
    return std::nullopt;
  };
  for (Operation &op : func.getBody().front()) {
    for (Value result : op.getResults()) {
      auto type = dyn_cast<ShapedType>(result.getType());
      if (!type || type.hasStaticShape())
        continue;
      std::optional<SmallVector<int64_t>> shape;
      if (auto ct = dyn_cast<CastTransposeOp>(op);
          ct && result == ct.getTransposed()) {
        shape = shapeOf(ct.getInput());
        if (shape)
          std::reverse(shape->begin(), shape->end());
      } else {
        for (Value operand : op.getOperands()) {
          auto operandType = dyn_cast<ShapedType>(operand.getType());
          if (operandType && operandType.getRank() == type.getRank() &&
              (shape = shapeOf(operand)))
            break;
        }
      }
      if (!shape) {
        error = "cannot infer the dynamic shape of a result of " +
                describeOp(&op);
        return failure();
      }
      shapes[result] = *shape;
    }
  }
  SmallVector<SmallVector<int64_t>> results;
  for (Value value :
       func.getBody().front().getTerminator()->getOperands()) {
    std::optional<SmallVector<int64_t>> shape = shapeOf(value);
    if (!shape) {
      error = "cannot infer the shape of a result";
      return failure();
    }
    results.push_back(*shape);
  }
  return results;
}

/// Runs the straight-line host function `func` with `args` bound to its
/// arguments.
static llvm::Error
interpret(func::FuncOp func, ArrayRef<RtValue> args, CudaRuntime &cuda,
          Allocations &allocations,
          const llvm::StringMap<void *> &modules,
          llvm::StringMap<void *> &functions) {
  DenseMap<Value, RtValue> values;
  for (auto [arg, value] : llvm::zip(func.getArguments(), args))
    values[arg] = value;
  auto get = [&](Value v) -> const RtValue & { return values[v]; };
  auto scalar = [&](Value result, uint64_t bits) {
    RtValue value;
    value.bits = truncate(bits, widthOf(result.getType()));
    values[result] = value;
  };
  auto located = [&](Operation *op, const Twine &message) {
    return llvm::createStringError(
        (describeOp(op) + ": " + message).str());
  };

  for (Operation &opRef : func.getBody().front()) {
    Operation *op = &opRef;
    if (isa<func::ReturnOp>(op))
      break;
    llvm::Error err = llvm::Error::success();
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      Attribute value = constant.getValue();
      if (auto f = dyn_cast<FloatAttr>(value))
        scalar(constant, llvm::bit_cast<uint32_t>(
                             static_cast<float>(f.getValueAsDouble())));
      else
        scalar(constant, cast<IntegerAttr>(value).getValue().getZExtValue());
      continue;
    }
    if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivUIOp,
            arith::DivSIOp, arith::RemUIOp, arith::RemSIOp,
            arith::CeilDivUIOp, arith::CeilDivSIOp, arith::FloorDivSIOp,
            arith::MaxUIOp, arith::MinUIOp, arith::MaxSIOp, arith::MinSIOp,
            arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::ShLIOp,
            arith::ShRUIOp, arith::ShRSIOp, arith::CmpIOp>(op)) {
      unsigned width = widthOf(op->getOperand(0).getType());
      uint64_t a = get(op->getOperand(0)).bits, b = get(op->getOperand(1)).bits;
      int64_t sa = signExtend(a, width), sb = signExtend(b, width);
      bool divides = isa<arith::DivUIOp, arith::DivSIOp, arith::RemUIOp,
                         arith::RemSIOp, arith::CeilDivUIOp,
                         arith::CeilDivSIOp, arith::FloorDivSIOp>(op);
      if (divides && b == 0)
        return located(op, "division by zero");
      uint64_t r =
          TypeSwitch<Operation *, uint64_t>(op)
              .Case([&](arith::AddIOp) { return a + b; })
              .Case([&](arith::SubIOp) { return a - b; })
              .Case([&](arith::MulIOp) { return a * b; })
              .Case([&](arith::DivUIOp) { return a / b; })
              .Case([&](arith::DivSIOp) { return uint64_t(sa / sb); })
              .Case([&](arith::RemUIOp) { return a % b; })
              .Case([&](arith::RemSIOp) { return uint64_t(sa % sb); })
              .Case([&](arith::CeilDivUIOp) { return a / b + (a % b != 0); })
              .Case([&](arith::CeilDivSIOp) {
                int64_t q = sa / sb;
                return uint64_t(q + ((sa % sb != 0) && ((sa < 0) == (sb < 0))));
              })
              .Case([&](arith::FloorDivSIOp) {
                int64_t q = sa / sb;
                return uint64_t(q - ((sa % sb != 0) && ((sa < 0) != (sb < 0))));
              })
              .Case([&](arith::MaxUIOp) { return std::max(a, b); })
              .Case([&](arith::MinUIOp) { return std::min(a, b); })
              .Case([&](arith::MaxSIOp) { return uint64_t(std::max(sa, sb)); })
              .Case([&](arith::MinSIOp) { return uint64_t(std::min(sa, sb)); })
              .Case([&](arith::AndIOp) { return a & b; })
              .Case([&](arith::OrIOp) { return a | b; })
              .Case([&](arith::XOrIOp) { return a ^ b; })
              .Case([&](arith::ShLIOp) { return b >= width ? 0 : a << b; })
              .Case([&](arith::ShRUIOp) { return b >= width ? 0 : a >> b; })
              .Case([&](arith::ShRSIOp) {
                return uint64_t(sa >> std::min<uint64_t>(b, width - 1));
              })
              .Case([&](arith::CmpIOp cmp) -> uint64_t {
                using P = arith::CmpIPredicate;
                switch (cmp.getPredicate()) {
                case P::eq: return a == b;
                case P::ne: return a != b;
                case P::slt: return sa < sb;
                case P::sle: return sa <= sb;
                case P::sgt: return sa > sb;
                case P::sge: return sa >= sb;
                case P::ult: return a < b;
                case P::ule: return a <= b;
                case P::ugt: return a > b;
                case P::uge: return a >= b;
                }
                return 0;
              });
      scalar(op->getResult(0), r);
      continue;
    }
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) {
      // Sign-extending casts (index_cast extends signed, truncates).
      Value in = op->getOperand(0);
      scalar(op->getResult(0),
             signExtend(get(in).bits, widthOf(in.getType())));
      continue;
    }
    if (isa<arith::IndexCastUIOp, arith::ExtUIOp, arith::TruncIOp,
            LLVM::IntToPtrOp, LLVM::PtrToIntOp>(op)) {
      scalar(op->getResult(0), get(op->getOperand(0)).bits);
      continue;
    }
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      scalar(select, get(select.getCondition()).bits & 1
                         ? get(select.getTrueValue()).bits
                         : get(select.getFalseValue()).bits);
      continue;
    }
    if (auto zero = dyn_cast<LLVM::ZeroOp>(op)) {
      scalar(zero, 0);
      continue;
    }
    if (auto dim = dyn_cast<memref::DimOp>(op)) {
      const RtValue &buffer = get(dim.getSource());
      uint64_t index = get(dim.getIndex()).bits;
      if (index >= buffer.sizes.size())
        return located(op, "dimension out of range");
      scalar(dim, buffer.sizes[index]);
      continue;
    }
    if (auto extract = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(op)) {
      scalar(extract, get(extract.getSource()).ptr);
      continue;
    }
    if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(op)) {
      // Identity layouts only (checked): offset 0, row-major strides.
      const RtValue buffer = get(meta.getSource());
      RtValue base;
      base.isBuffer = true;
      base.ptr = buffer.ptr;
      values[meta.getBaseBuffer()] = base;
      scalar(meta.getOffset(), 0);
      int64_t stride = 1;
      for (int64_t d = buffer.sizes.size() - 1; d >= 0; --d) {
        scalar(meta.getSizes()[d], buffer.sizes[d]);
        scalar(meta.getStrides()[d], stride);
        stride *= buffer.sizes[d];
      }
      continue;
    }
    if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      MemRefType type = alloc.getType();
      RtValue buffer;
      buffer.isBuffer = true;
      unsigned next = 0;
      for (int64_t size : type.getShape())
        buffer.sizes.push_back(ShapedType::isDynamic(size)
                                   ? signExtend(get(alloc.getDynamicSizes()
                                                        [next++])
                                                    .bits,
                                                64)
                                   : size);
      llvm::Expected<DevicePtr> ptr = allocations.allocate(
          product(buffer.sizes) * type.getElementTypeBitWidth() / 8);
      if (!ptr)
        return ptr.takeError();
      buffer.ptr = *ptr;
      values[alloc.getMemref()] = buffer;
      continue;
    }
    if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
      if (llvm::Error e = allocations.release(get(dealloc.getMemref()).ptr))
        return located(op, llvm::toString(std::move(e)));
      continue;
    }
    if (auto memset = dyn_cast<gpu::MemsetOp>(op)) {
      const RtValue &dst = get(memset.getDst());
      auto type = cast<MemRefType>(memset.getDst().getType());
      if (type.getElementTypeBitWidth() != 32)
        return located(op, "only memsets of 32-bit elements are supported");
      err = toError(cuda.memsetD32(dst.ptr, get(memset.getValue()).bits,
                           product(dst.sizes)));
    } else if (auto memcpy = dyn_cast<gpu::MemcpyOp>(op)) {
      const RtValue &dst = get(memcpy.getDst());
      auto type = cast<MemRefType>(memcpy.getDst().getType());
      err = toError(cuda.copyOnDevice(dst.ptr, get(memcpy.getSrc()).ptr,
                                      product(dst.sizes) *
                                          type.getElementTypeBitWidth() / 8));
    } else if (isa<gpu::WaitOp>(op)) {
      err = toError(cuda.synchronize());
    } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      StringRef moduleName = launch.getKernelModuleName().getValue();
      StringRef kernel = launch.getKernelName().getValue();
      std::string key = (moduleName + "::" + kernel).str();
      auto it = functions.find(key);
      if (it == functions.end()) {
        auto module = modules.find(moduleName);
        if (module == modules.end())
          return located(op, "kernel module @" + moduleName + " not loaded");
        runtime::Result<runtime::FunctionHandle> fn = cuda.getFunction(
            static_cast<runtime::ModuleHandle>(module->second), kernel);
        if (!fn)
          return located(op, fn.takeStatus().message());
        it = functions.insert({key, *fn}).first;
      }
      auto dim = [&](Value v) -> llvm::Expected<unsigned> {
        uint64_t n = get(v).bits;
        if (n == 0 || n > 0x7fffffffu)
          return located(op, "launch dimension " + Twine(n) +
                                 " out of range");
        return static_cast<unsigned>(n);
      };
      runtime::Dim3 grid, block;
      gpu::KernelDim3 g = launch.getGridSizeOperandValues();
      gpu::KernelDim3 t = launch.getBlockSizeOperandValues();
      for (auto [target, value] :
           {std::pair{&grid.x, g.x}, {&grid.y, g.y}, {&grid.z, g.z},
            {&block.x, t.x}, {&block.y, t.y}, {&block.z, t.z}}) {
        llvm::Expected<unsigned> n = dim(value);
        if (!n)
          return n.takeError();
        *target = *n;
      }
      unsigned shared = 0;
      if (Value smem = launch.getDynamicSharedMemorySize())
        shared = static_cast<unsigned>(get(smem).bits);
      runtime::KernelArgs kernelArgs;
      for (Value operand : launch.getKernelOperands()) {
        uint64_t bits = get(operand).bits;
        switch (widthOf(operand.getType())) {
        case 8:
          kernelArgs.add(static_cast<uint8_t>(bits));
          break;
        case 16:
          kernelArgs.add(static_cast<uint16_t>(bits));
          break;
        case 32:
          kernelArgs.add(static_cast<uint32_t>(bits));
          break;
        default:
          kernelArgs.add(bits);
          break;
        }
      }
      err = toError(cuda.launch(static_cast<runtime::FunctionHandle>(it->second),
                                grid, block, shared, kernelArgs));
    } else {
      return located(op, "the GPU runner does not interpret this op");
    }
    if (err)
      return located(op, llvm::toString(std::move(err)));
  }
  return toError(cuda.synchronize());
}

FailureOr<SmallVector<HostTensor>>
GpuFunction::call(ArrayRef<HostTensor> inputs, std::string &error) {
  if (failed(connect(error)))
    return failure();
  ArrayRef<Type> argTypes = signature.getInputs();
  ArrayRef<Type> resultTypes = signature.getResults();
  if (inputs.size() != argTypes.size()) {
    error = "@" + name + " takes " + std::to_string(argTypes.size()) +
            " arguments, got " + std::to_string(inputs.size());
    return failure();
  }
  for (auto [index, input] : llvm::enumerate(inputs)) {
    auto tensorType = dyn_cast<RankedTensorType>(argTypes[index]);
    Type element = tensorType ? tensorType.getElementType() : argTypes[index];
    if (input.getElementType() != element ||
        (tensorType &&
         (static_cast<int64_t>(input.getShape().size()) !=
              tensorType.getRank() ||
          failed(verifyCompatibleShape(input.getShape(),
                                       tensorType.getShape())))) ||
        (!tensorType && !input.getShape().empty())) {
      error = "argument #" + std::to_string(index) +
              " does not match the function's type";
      return failure();
    }
  }
  auto originalFunc = original->lookupSymbol<func::FuncOp>(name);
  FailureOr<SmallVector<SmallVector<int64_t>>> resultShapes =
      inferResultShapes(originalFunc, inputs, error);
  if (failed(resultShapes))
    return failure();

  auto onError = [&](llvm::Error err) {
    error = "running @" + name + " on the GPU failed: " +
            llvm::toString(std::move(err));
    return failure();
  };
  Allocations allocations{*cuda, {}};
  SmallVector<RtValue> args;
  for (const HostTensor &input : inputs) {
    RtValue buffer;
    buffer.isBuffer = true;
    buffer.sizes.assign(input.getShape().begin(), input.getShape().end());
    size_t bytes = input.getNumElements() * input.getElementBytes();
    llvm::Expected<DevicePtr> ptr = allocations.allocate(bytes);
    if (!ptr)
      return onError(ptr.takeError());
    buffer.ptr = *ptr;
    if (bytes)
      if (llvm::Error err =
              toError(cuda->copyToDevice(*ptr, input.data(), bytes)))
        return onError(std::move(err));
    args.push_back(std::move(buffer));
  }
  SmallVector<HostTensor> results;
  for (auto [type, shape] : llvm::zip(resultTypes, *resultShapes)) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    results.emplace_back(tensorType ? tensorType.getElementType() : type,
                         shape);
    RtValue buffer;
    buffer.isBuffer = true;
    buffer.sizes = shape;
    llvm::Expected<DevicePtr> ptr = allocations.allocate(
        results.back().getNumElements() * results.back().getElementBytes());
    if (!ptr)
      return onError(ptr.takeError());
    buffer.ptr = *ptr;
    args.push_back(std::move(buffer));
  }

  auto hostFunc = lowered->lookupSymbol<func::FuncOp>(name);
  if (llvm::Error err =
          interpret(hostFunc, args, *cuda, allocations, modules, functions))
    return onError(std::move(err));
  for (auto [index, result] : llvm::enumerate(results)) {
    size_t bytes = result.getNumElements() * result.getElementBytes();
    if (!bytes)
      continue;
    if (llvm::Error err = toError(cuda->copyToHost(
            result.data(), args[inputs.size() + index].ptr, bytes)))
      return onError(std::move(err));
  }
  return results;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

SmallVector<GpuOutputCheck>
runner::checkGpuOutputs(ArrayRef<HostTensor> cpu, ArrayRef<HostTensor> gpu,
                        double tolerance) {
  SmallVector<GpuOutputCheck> checks;
  for (unsigned i = 0, e = std::max(cpu.size(), gpu.size()); i < e; ++i) {
    GpuOutputCheck check;
    check.output = i;
    if (i >= cpu.size() || i >= gpu.size()) {
      check.ok = false;
      check.note = "missing output";
      checks.push_back(check);
      continue;
    }
    const HostTensor &ref = cpu[i], &out = gpu[i];
    Type element = ref.getElementType();
    {
      llvm::raw_string_ostream os(check.type);
      if (ref.getShape().empty()) {
        os << element;
      } else {
        os << "tensor<";
        for (int64_t size : ref.getShape())
          os << size << "x";
        os << element << ">";
      }
    }
    bool wide = isa<FloatType>(element) && !ref.getShape().empty() &&
                !isa<Float8E4M3FNType, Float8E5M2Type>(element);
    check.mode = wide ? "tolerance" : "bits";
    check.elements = ref.getNumElements();
    if (out.getElementType() != element || out.getShape() != ref.getShape()) {
      check.ok = false;
      check.note = "type or shape differs";
      checks.push_back(check);
      continue;
    }
    unsigned bytes = ref.getElementBytes();
    double refMax = 0;
    int64_t nanMismatches = 0;
    for (int64_t j = 0; j < check.elements; ++j) {
      bool sameBits =
          std::memcmp(ref.data() + j * bytes, out.data() + j * bytes, bytes) ==
          0;
      double r = ref.get(j), o = out.get(j);
      bool bothNaN = std::isnan(r) && std::isnan(o);
      if (!sameBits && !(wide && bothNaN))
        ++check.mismatches;
      if (std::isnan(r) != std::isnan(o) ||
          (std::isinf(r) || std::isinf(o) ? r != o && !bothNaN : false))
        ++nanMismatches;
      if (std::isfinite(r)) {
        refMax = std::max(refMax, std::fabs(r));
        if (std::isfinite(o))
          check.maxAbsError = std::max(check.maxAbsError, std::fabs(r - o));
      }
    }
    check.maxNormalizedError =
        refMax > 0 ? check.maxAbsError / refMax
                   : (check.maxAbsError > 0 ? INFINITY : 0.0);
    if (!wide) {
      check.ok = check.mismatches == 0;
    } else {
      check.ok = nanMismatches == 0 && check.maxNormalizedError <= tolerance;
      if (nanMismatches)
        check.note = std::to_string(nanMismatches) +
                     " non-finite elements differ";
    }
    checks.push_back(check);
  }
  return checks;
}

llvm::json::Object runner::gpuChecksToJSON(StringRef device,
                                           ArrayRef<GpuOutputCheck> checks) {
  llvm::json::Array outputs;
  bool ok = true;
  for (const GpuOutputCheck &c : checks) {
    ok &= c.ok;
    llvm::json::Object record{
        {"output", static_cast<int64_t>(c.output)},
        {"type", c.type},
        {"mode", c.mode},
        {"mismatches", c.mismatches},
        {"elements", c.elements},
        {"max_abs_error", c.maxAbsError},
        {"max_normalized_error", std::isinf(c.maxNormalizedError)
                                     ? llvm::json::Value(nullptr)
                                     : llvm::json::Value(c.maxNormalizedError)},
        {"ok", c.ok}};
    if (!c.note.empty())
      record["note"] = c.note;
    outputs.push_back(std::move(record));
  }
  return llvm::json::Object{
      {"device", device.str()}, {"ok", ok}, {"outputs", std::move(outputs)}};
}

void runner::printGpuChecks(const llvm::json::Object &record,
                            llvm::raw_ostream &os) {
  std::optional<bool> ok = record.getBoolean("ok");
  os << "  GPU " << record.getString("device").value_or("") << " vs CPU, "
     << "same FP8 module: " << (ok && *ok ? "match" : "MISMATCH") << "\n";
  os << llvm::formatv("  {0,-8} {1,-28} {2,-10} {3,13} {4,13} {5,6}\n",
                      "output", "type", "check", "mismatches",
                      "max abs err", "");
  const llvm::json::Array *outputs = record.getArray("outputs");
  if (!outputs)
    return;
  for (const llvm::json::Value &value : *outputs) {
    const llvm::json::Object &o = *value.getAsObject();
    std::string counts =
        llvm::formatv("{0}/{1}", o.getInteger("mismatches").value_or(0),
                      o.getInteger("elements").value_or(0))
            .str();
    bool passed = o.getBoolean("ok").value_or(false);
    os << llvm::formatv("  {0,-8} {1,-28} {2,-10} {3,13} {4,13:e3} {5,6}",
                        o.getInteger("output").value_or(0),
                        o.getString("type").value_or(""),
                        o.getString("mode") == "bits" ? "bit-exact"
                                                      : "tolerance",
                        counts, o.getNumber("max_abs_error").value_or(0),
                        passed ? "ok" : "FAIL");
    if (std::optional<StringRef> note = o.getString("note"))
      os << "  (" << *note << ")";
    os << "\n";
  }
}
