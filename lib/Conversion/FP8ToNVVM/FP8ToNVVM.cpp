//===- FP8ToNVVM.cpp - fp8 ops to Hopper kernels and a host launcher ------===//
//
// convert-fp8-to-nvvm: every function that computes with fp8 ops becomes a
// host function on memrefs that launches one kernel per op, in program
// order, from `gpu.module @fp8_kernels`. The kernels are gpu.funcs on
// memrefs (ElementwiseKernels.cpp, ScalingKernels.cpp, BlockKernels.cpp,
// BlockCastTranspose.cpp); KernelABI.h is the contract, so a host without
// MLIR can launch them too. Their numerics are those of lib/Numerics, which
// the GPU bench checks byte for byte. This file holds the host side and the
// kernels' shared recipe pieces (createBlockScale, createFloat8Pair).
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"
#include "fp8/Conversion/FP8ToNVVM/AttentionKernelABI.h"
#include "Kernels.h"
#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"
#include "fp8/Conversion/FP8ToNVVM/ScaledMatmulToWGMMA.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Conversion/ScaleArith.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Numerics/Float8.h"
#include "fp8/Numerics/Scaling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>


namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8TONVVM
#define GEN_PASS_DEF_CONVERTFP8TOGPULAUNCHES
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
namespace abi = mlir::fp8::nvvm_abi;
namespace num = mlir::fp8::numerics;
namespace gabi = mlir::fp8::gemm_abi;

static constexpr unsigned kGlobalSpace =
    static_cast<unsigned>(NVVM::NVVMMemorySpace::Global);

StringRef mlir::fp8::getKernelTypeTag(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (isa<Float8E4M3FNType>(type))
    return "e4m3";
  if (isa<Float8E5M2Type>(type))
    return "e5m2";
  if (isa<Float8E8M0FNUType>(type))
    return "e8m0";
  return "";
}

float mlir::fp8::getFloat8MaxFinite(Type float8Type) {
  assert((isa<Float8E4M3FNType, Float8E5M2Type>(float8Type)) &&
         "an FP8 cast type");
  return num::getFormatInfo(isa<Float8E4M3FNType>(float8Type)
                                ? num::Format::E4M3FN
                                : num::Format::E5M2)
      .maxFinite;
}

std::string mlir::fp8::BlockRecipe::getSuffix() const {
  if (mx)
    return "_mx";
  std::string suffix = powerOfTwo ? "_pow2" : "";
  if (epsilon != 0.0f)
    suffix += "_eps" + llvm::utohexstr(llvm::bit_cast<uint32_t>(epsilon),
                                       /*LowerCase=*/true, /*Width=*/8);
  return suffix;
}

std::pair<Value, Value> mlir::fp8::createBlockScale(OpBuilder &builder,
                                                    Location loc, Value amax,
                                                    Type float8Type,
                                                    const BlockRecipe &recipe) {
  float maxFinite = getFloat8MaxFinite(float8Type);
  if (recipe.mx) {
    Value code = createMXScaleCode(builder, loc, amax, maxFinite);
    return {createMXScaleFromCode(builder, loc, code),
            arith::TruncIOp::create(builder, loc, builder.getI8Type(), code)};
  }
  Value scale = createCurrentScale(builder, loc, amax,
                                   createF32Constant(builder, loc, maxFinite),
                                   recipe.epsilon, recipe.powerOfTwo);
  return {scale, arith::DivFOp::create(
                     builder, loc, createF32Constant(builder, loc, 1.0f),
                     scale)};
}

Value mlir::fp8::createFloat8Pair(OpBuilder &builder, Location loc, Value hi,
                                  Value lo, Type float8Type) {
  return NVVM::ConvertF32x2ToF8x2Op::create(
      builder, loc, builder.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, float8Type);
}

static Type getElementType(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

/// The memref that carries `type` on the device: tensors keep their shape,
/// f32 scalars become memref<f32>.
static MemRefType getDeviceType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    // i1: an attention's boolean mask, one byte per element.
    if (getKernelTypeTag(tensor.getElementType()).empty() &&
        !tensor.getElementType().isInteger(1))
      return {};
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  }
  if (type.isF32())
    return MemRefType::get({}, type);
  return {};
}

namespace {
/// A tensor with per-block scales as the block kernels see it (KernelABI.h):
/// [batch, rows, cols] in blocks of br x bc.
struct BlockGeometry {
  int64_t batch = 1, rows = 1, cols = 1, br = 1, bc = 1;

  int64_t getNumBlocks() const {
    return batch * llvm::divideCeil(rows, br) * llvm::divideCeil(cols, bc);
  }
};
} // namespace

/// The geometry of `type` in `block`s, or a located error when no block
/// kernel takes it.
static FailureOr<BlockGeometry> getBlockGeometry(Operation *op, Type type,
                                                 ArrayRef<int64_t> block) {
  auto tensor = cast<RankedTensorType>(type);
  if (!tensor.hasStaticShape())
    return op->emitOpError("with per-block scales needs static shapes, got ")
           << type;
  int64_t rank = tensor.getRank();
  BlockGeometry geometry;
  geometry.cols = tensor.getDimSize(rank - 1);
  geometry.bc = block[rank - 1];
  if (rank >= 2) {
    geometry.rows = tensor.getDimSize(rank - 2);
    geometry.br = block[rank - 2];
  }
  for (int64_t d = 0; d + 2 < rank; ++d) {
    if (block[d] != 1)
      return op->emitOpError("has blocks of ")
             << block[d] << " elements along dimension " << d
             << "; the GPU block kernels take blocks over the last two "
                "dimensions only";
    geometry.batch *= tensor.getDimSize(d);
  }
  if (abi::blockGroupSize(geometry.br, geometry.bc) == 0)
    return op->emitOpError("has blocks of ")
           << geometry.br << "x" << geometry.bc
           << " elements, which no GPU kernel takes (1xN with N a power of "
              "two from 4 to 128, or MxN with N a power of two from 4 to "
              "1024 and M*N a multiple of 1024 up to 16384, such as 1x32, "
              "1x128 and 128x128)";
  return geometry;
}

static BlockRecipe getBlockRecipe(ComputeBlockScalesOp op) {
  BlockRecipe recipe;
  recipe.mx = op.isMX();
  recipe.powerOfTwo = op.getPowerOfTwo();
  recipe.epsilon = op.getEpsilon().convertToFloat();
  return recipe;
}

namespace {
/// Rewrites one function into its host launcher.
///
/// For convert-fp8-to-nvvm, `func` is a whole function of fp8 ops: it
/// becomes a host function with out-parameters over device memory
/// (gpu.alloc). For convert-fp8-to-gpu-launches (`launcher`), `func` is a
/// group of fp8 ops outlined from a larger program: it allocates and
/// returns its results with memref.alloc (managed memory in
/// fp8-lower-to-gpu; the caller's buffer deallocation frees them), the
/// host zeroes amax accumulators with a store, and fp8.scaled_matmul
/// launches the wgmma kernel its `fp8.wgmma_kernel` names.
class HostLowering {
public:
  HostLowering(func::FuncOp func, gpu::GPUModuleOp kernels,
               bool launcher = false)
      : func(func), kernels(kernels), launcher(launcher) {}

  LogicalResult run();

private:
  LogicalResult checkSupported();
  LogicalResult lower(Operation *op);
  /// A device buffer for `result`: the out-parameter when the function
  /// returns it (first use), a gpu.alloc otherwise.
  Value allocate(Value result, ValueRange dynamicSizes);
  Value dims(Value memref, int64_t dim);
  Value numElements(Value memref);
  Value pointer(Value memref);
  Value computePointer(Value memref);
  /// A scalar or 1-D buffer as the memref<?xT> a gpu.func kernel takes.
  Value asVector(Value memref);
  /// A buffer of any rank as the flat memref<?xT> a gpu.func kernel takes,
  /// 8-bit floats as i8 (the unrealized cast goes away when
  /// fp8-expand-float8 makes them i8 on the host too).
  Value flat(Value memref);
  /// `memref` with 8-bit float elements as the i8 memref a kernel takes.
  Value asBytes(Value memref);
  Value toI64(Value index);
  Value toI32(Value index);
  Value constIndex(int64_t v);
  /// max(extent, minimum), folded where the extent is known (a tensor map
  /// must describe at least one element; a grid of 0 is not launched).
  Value atLeast(Value extent, int64_t minimum);
  /// The kernels' i32 causal_offset: min(offset, sk), exact (from sk - 1
  /// on, the causal mask masks nothing) and free of i32 overflow.
  Value causalOffsetArg(uint64_t offset, Value sk);
  /// A launch on a grid of gridX (x gridY) blocks of blockX threads.
  void launch(StringRef kernel, Value gridX, int64_t blockX,
              ArrayRef<Value> args, Value gridY = {});
  void launch(SymbolRefAttr kernel, Value gridX, int64_t blockX,
              int64_t sharedBytes, ArrayRef<Value> args, Value gridY = {});
  Value elementwiseGrid(Value n);
  void zeroAmax(Value amax);
  /// What a wgmma-kernel pass recorded on `op`: the kernel and its launch
  /// shape [tile, tile, threads, dynamic shared bytes]; a located error
  /// naming `pass` when there is none (or this is no launcher).
  struct WgmmaLaunch {
    SymbolRefAttr kernel;
    std::array<int64_t, 2> tile;
    int64_t threads, sharedBytes;
  };
  FailureOr<WgmmaLaunch> getWgmmaLaunch(Operation *op, StringRef pass);
  /// A call of the runtime function `name`, declared on first use.
  func::CallOp runtimeCall(StringRef name, TypeRange results, ValueRange args);
  /// A 3-D CUtensorMap of `memref` ({cols, rows, layers}, rows `rowPitch`
  /// elements apart, boxes of boxCols x boxRows, 128-byte swizzle) encoded
  /// by the runtime, as the value a kernel takes.
  Value encodeTensorMap(Value memref, Value cols, Value rows, Value layers,
                        Value rowPitch, int64_t boxCols, int64_t boxRows);
  /// The flash attention kernel `op` names (AttentionKernelABI.h), after
  /// the transposed copy of its value.
  LogicalResult lowerAttention(AttentionOp op);
  /// Its backward kernel, between delta = rowsum(dO * O) and the transposed
  /// copies before it and dQ = round(scale * dQaccum) after.
  LogicalResult lowerAttentionGrad(AttentionGradOp op);
  /// `memref` [b, h, rows, D] as [b, h, D, pitch] (memref copies the rest
  /// of the program lowers): rows padded with zeros to `pitch`, a multiple
  /// of 16 (16-byte TMA rows), and with `permuteKeys` permuted within each
  /// 16 (attention_abi::valueKeyAt).
  Value transposeRows(Value memref, Value &pitch, bool permuteKeys);
  LogicalResult lowerScaledMatmul(ScaledMatmulOp op);
  LogicalResult lowerContraction(linalg::LinalgOp op);
  /// The wgmma GEMM (GemmKernelABI.h) `op` names, on these operands; the
  /// scales, bias and amax are optional.
  LogicalResult lowerWgmmaGemm(Operation *op, Value lhs, Value rhs,
                               Value lhsScale, Value rhsScale, Value bias,
                               Value result, Value resultAmax);
  /// A view of `memref` whose last dimension is zero-padded to `k`.
  Value padLastDim(Value memref, int64_t k);
  Value padLastDimIfNeeded(Value memref, Value k, Value paddedK,
                           Value aligned);
  /// Zeros `padded`, then copies `source` into its leading `extents`.
  void copyIntoZeroedRows(Value source, Value padded,
                          ArrayRef<OpFoldResult> extents);
  LogicalResult lowerBlockAmax(BlockAmaxOp op);
  LogicalResult lowerBlockCastTranspose(BlockAmaxOp op, Value source);
  void mapFusedBlockCast(ComputeBlockScalesOp scales, QuantizeOp quantize,
                         Value scale, Value scaleInv, Value q);
  LogicalResult lowerBlockScales(ComputeBlockScalesOp op);
  LogicalResult lowerBlockQuantize(QuantizeOp op);
  LogicalResult lowerBlockDequantize(DequantizeOp op);
  /// A per-block kernel on these buffers (data and per-block tensors),
  /// each as its flat view, and the geometry.
  void launchBlockKernel(StringRef kernel, const BlockGeometry &geometry,
                         ArrayRef<Value> buffers);

  func::FuncOp func;
  gpu::GPUModuleOp kernels;
  bool launcher;
  std::optional<ImplicitLocOpBuilder> b;
  IRMapping buffers;
  llvm::DenseMap<Value, Value> outParams;
  llvm::DenseMap<Value, Value> pointers;
  /// x^T -> x for the transposes a block_cast_transpose reads through.
  llvm::DenseMap<Value, Value> transposedInputs;
  /// Ops a fused kernel already computed.
  llvm::SmallPtrSet<Operation *, 8> done;
  SmallVector<Value> temporaries;
};
} // namespace

LogicalResult HostLowering::checkSupported() {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError()
           << "has control flow; fp8-lower-to-nvvm lowers straight-line "
              "functions only";
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (!getDeviceType(type))
      return func.emitOpError() << "argument #" << i << " has type " << type
                                << ", which the GPU lowering does not support "
                                   "(tensors of f32, bf16, f16, f8E4M3FN, "
                                   "f8E5M2, f8E8M0FNU, i1 and f32 scalars)";
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (!getDeviceType(type))
      return func.emitOpError() << "result #" << i << " has type " << type
                                << ", which the GPU lowering does not support "
                                   "(tensors of f32, bf16, f16, f8E4M3FN, "
                                   "f8E5M2, f8E8M0FNU, i1 and f32 scalars)";
  for (Operation &op : func.getBody().front()) {
    if (launcher && (op.hasAttr(kWgmmaKernelAttr) ||
                     isa<ub::PoisonOp, linalg::TransposeOp>(op)))
      continue;
    if (isa<ScaledMatmulOp>(op))
      return op.emitOpError()
             << "is not lowered by fp8-lower-to-nvvm: the Hopper wgmma GEMM is "
                "fp8-lower-gemm-to-nvvm's, and a whole graph (GEMMs and every "
                "other op) is fp8-lower-to-gpu's; use fp8-lower-to-cpu for "
                "reference runs";
    if (isa_and_present<FP8Dialect>(op.getDialect()) || isa<func::ReturnOp>(op))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (constant.getType().isF32())
        continue;
    return op.emitOpError()
           << "cannot run in a function lowered by fp8-lower-to-nvvm: only "
              "fp8 ops and f32 constants become GPU kernels; "
              "--fp8-lower-to-gpu lowers a whole program (every op) to the "
              "GPU";
  }
  return success();
}

Value HostLowering::constIndex(int64_t v) {
  return arith::ConstantIndexOp::create(*b, v);
}

Value HostLowering::toI64(Value index) {
  return arith::IndexCastOp::create(*b, b->getI64Type(), index);
}

Value HostLowering::toI32(Value index) {
  return arith::IndexCastOp::create(*b, b->getI32Type(), index);
}

Value HostLowering::causalOffsetArg(uint64_t offset, Value sk) {
  Value limit = constIndex(static_cast<int64_t>(
      std::min<uint64_t>(offset, std::numeric_limits<int32_t>::max())));
  return toI32(b->createOrFold<arith::MinUIOp>(limit, sk));
}

Value HostLowering::atLeast(Value extent, int64_t minimum) {
  return b->createOrFold<arith::MaxUIOp>(extent, constIndex(minimum));
}

Value HostLowering::dims(Value memref, int64_t dim) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(dim))
    return constIndex(type.getDimSize(dim));
  return memref::DimOp::create(*b, memref, dim);
}

Value HostLowering::numElements(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Value n = constIndex(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    n = arith::MulIOp::create(*b, n, dims(memref, d));
  return n;
}

/// The device address of a memref's first element.
Value HostLowering::pointer(Value memref) {
  Value &cached = pointers[memref];
  if (!cached)
    cached = computePointer(memref);
  return cached;
}

Value HostLowering::computePointer(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(*b, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(*b, memref);
  // i1 is stored as one byte.
  Value bytes = constIndex(
      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8));
  Value offset = arith::MulIOp::create(*b, meta.getOffset(), bytes);
  Value address = toI64(arith::AddIOp::create(*b, base, offset));
  return LLVM::IntToPtrOp::create(
      *b, LLVM::LLVMPointerType::get(b->getContext(), kGlobalSpace), address);
}

Value HostLowering::asVector(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 0)
    memref = memref::ExpandShapeOp::create(
        *b, MemRefType::get({1}, type.getElementType()), memref,
        ArrayRef<ReassociationIndices>{});
  MemRefType vector = getDynamicVectorType(type.getElementType());
  if (memref.getType() == vector)
    return memref;
  return memref::CastOp::create(*b, vector, memref);
}

Value HostLowering::asBytes(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getElementTypeBitWidth() != 8 || type.getElementType().isInteger())
    return memref;
  return UnrealizedConversionCastOp::create(
             *b, type.clone(b->getI8Type()), memref)
      .getResult(0);
}

Value HostLowering::flat(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() > 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    memref = memref::CollapseShapeOp::create(*b, memref,
                                             ArrayRef<ReassociationIndices>{all});
  }
  return asBytes(asVector(memref));
}

Value HostLowering::allocate(Value result, ValueRange dynamicSizes) {
  MemRefType type = getDeviceType(result.getType());
  if (launcher)
    return memref::AllocOp::create(*b, type, dynamicSizes);
  auto it = outParams.find(result);
  if (it != outParams.end() && it->second) {
    Value out = it->second;
    it->second = Value();
    return out;
  }
  Value buffer = gpu::AllocOp::create(*b, type, Type(), ValueRange{},
                                      dynamicSizes, ValueRange{})
                     .getMemref();
  temporaries.push_back(buffer);
  return buffer;
}

void HostLowering::launch(StringRef kernel, Value gridX, int64_t blockX,
                          ArrayRef<Value> args, Value gridY) {
  auto symbol = SymbolRefAttr::get(
      b->getContext(), abi::kKernelModuleName,
      {FlatSymbolRefAttr::get(b->getContext(), kernel)});
  launch(symbol, gridX, blockX, /*sharedBytes=*/0, args, gridY);
}

void HostLowering::launch(SymbolRefAttr kernel, Value gridX, int64_t blockX,
                          int64_t sharedBytes, ArrayRef<Value> args,
                          Value gridY) {
  Value one = constIndex(1);
  Value shared;
  if (sharedBytes)
    shared = arith::ConstantOp::create(*b, b->getI32IntegerAttr(sharedBytes));
  gpu::LaunchFuncOp::create(*b, kernel,
                            gpu::KernelDim3{gridX, gridY ? gridY : one, one},
                            gpu::KernelDim3{constIndex(blockX), one, one},
                            shared, args, Value());
}

void HostLowering::zeroAmax(Value amax) {
  Value zero = arith::ConstantOp::create(*b, b->getF32FloatAttr(0));
  if (launcher) {
    // Managed memory, and every earlier launch has completed: a host store.
    memref::StoreOp::create(*b, zero, amax, ValueRange{});
    return;
  }
  gpu::MemsetOp::create(*b, Type(), ValueRange{}, amax, zero);
}

FailureOr<HostLowering::WgmmaLaunch>
HostLowering::getWgmmaLaunch(Operation *op, StringRef pass) {
  auto kernel = op->getAttrOfType<SymbolRefAttr>(kWgmmaKernelAttr);
  auto tile = op->getAttrOfType<DenseI64ArrayAttr>(kWgmmaTileAttr);
  if (!launcher || !kernel || !tile || tile.size() != 4)
    return op->emitOpError() << "has no wgmma launch: run " << pass
                             << " first";
  return WgmmaLaunch{kernel, {tile[0], tile[1]}, tile[2], tile[3]};
}

func::CallOp HostLowering::runtimeCall(StringRef name, TypeRange results,
                                       ValueRange args) {
  auto module = func->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol(name)) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    auto decl = func::FuncOp::create(
        top, module.getLoc(), name,
        FunctionType::get(b->getContext(), args.getTypes(), results));
    decl.setPrivate();
  }
  return func::CallOp::create(*b, name, results, args);
}

Value HostLowering::encodeTensorMap(Value memref, Value cols, Value rows,
                                    Value layers, Value rowPitch,
                                    int64_t boxCols, int64_t boxRows) {
  MLIRContext *ctx = b->getContext();
  auto genericPtr = LLVM::LLVMPointerType::get(ctx);
  auto mapType = LLVM::LLVMArrayType::get(b->getI64Type(), 16);
  int64_t elementBytes =
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  auto i32Const = [&](int64_t v) {
    return arith::ConstantOp::create(*b, b->getI32IntegerAttr(v));
  };
  Value one = arith::ConstantOp::create(*b, b->getI64IntegerAttr(1));
  Value map = LLVM::AllocaOp::create(*b, genericPtr, mapType, one,
                                     /*alignment=*/64);
  Value base = LLVM::AddrSpaceCastOp::create(*b, genericPtr, pointer(memref));
  Value bytes = arith::MulIOp::create(*b, rowPitch, constIndex(elementBytes));
  runtimeCall(kEncodeTensorMapFunction, {},
              {map, base, toI64(cols), toI64(rows), toI64(layers),
               toI64(bytes), i32Const(boxCols), i32Const(boxRows),
               i32Const(elementBytes), i32Const(/*swizzle128=*/1)});
  return LLVM::LoadOp::create(*b, mapType, map);
}

Value HostLowering::elementwiseGrid(Value n) {
  Value perBlock = constIndex(abi::kBlockSize * abi::kChunk);
  Value grid = arith::CeilDivUIOp::create(*b, n, perBlock);
  grid = arith::MaxUIOp::create(*b, grid, constIndex(1));
  return arith::MinUIOp::create(*b, grid, constIndex(abi::kMaxGridSize));
}

void HostLowering::launchBlockKernel(StringRef kernel,
                                     const BlockGeometry &geometry,
                                     ArrayRef<Value> buffers) {
  SmallVector<Value> args;
  for (Value buffer : buffers)
    args.push_back(flat(buffer));
  for (int64_t v : {geometry.batch, geometry.rows, geometry.cols})
    args.push_back(constIndex(v));
  int64_t grid = abi::blockKernelGridSize(
      geometry.getNumBlocks(), abi::blockGroupSize(geometry.br, geometry.bc));
  launch(kernel, constIndex(grid), abi::kBlockSize, args);
}

/// The compute_block_scales and quantize that follow `op` on the same
/// tensor and blocks (what fp8-quantize emits): one pass of block_cast.
static std::optional<std::pair<ComputeBlockScalesOp, QuantizeOp>>
getFusedBlockCast(BlockAmaxOp op) {
  for (Operation *user : op.getAmax().getUsers()) {
    auto scales = dyn_cast<ComputeBlockScalesOp>(user);
    if (!scales || !scales.getScale().hasOneUse())
      continue;
    auto quantize = dyn_cast<QuantizeOp>(*scales.getScale().user_begin());
    // The kernel computes the scales for the format it casts to.
    if (!quantize || quantize.getInput() != op.getInput() ||
        quantize.getBlockShape() != op.getBlockShape() ||
        quantize.getScale() != scales.getScale() ||
        quantize.getResult().getType().getElementType() !=
            scales.getFp8Type())
      continue;
    return std::make_pair(scales, quantize);
  }
  return std::nullopt;
}

/// A fused block cast (getFusedBlockCast) of x^T, a 2-D linalg.transpose
/// that only the cast reads, in 1 x bc blocks that block_cast_transpose
/// takes: one pass over x writes the cast transposed. What
/// convert-fp8-scaled-matmul-to-wgmma makes of a block-scaled operand whose
/// blocks run along the tokens. Null otherwise.
static linalg::TransposeOp getTransposingBlockCast(BlockAmaxOp op) {
  auto transpose = op.getInput().getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
    return {};
  auto fused = getFusedBlockCast(op);
  if (!fused)
    return {};
  QuantizeOp quantize = fused->second;
  auto type = cast<RankedTensorType>(op.getInput().getType());
  ArrayRef<int64_t> block = op.getBlockShape();
  // The grid is (ceil(cols / 32), ceil(rows / bc)) over x = [rows, cols]
  // (x^T is [cols, rows]): no empty grid, y within the launch limit.
  if (!type.hasStaticShape() || type.getNumElements() == 0 || block[0] != 1 ||
      !abi::isTransposeCastBlock(block[1]) ||
      llvm::divideCeil(type.getDimSize(1), block[1]) >
          abi::kMaxTransposeCastGridY ||
      getKernelTypeTag(type.getElementType()).empty() ||
      type.getElementType().getIntOrFloatBitWidth() == 8)
    return {};
  bool onlyTheCast = llvm::all_of(op.getInput().getUsers(), [&](Operation *u) {
    return u == op.getOperation() || u == quantize.getOperation();
  });
  return onlyTheCast ? transpose : linalg::TransposeOp();
}

/// block_amax -> compute_block_scales -> quantize of the same tensor and
/// blocks is one pass of block_cast over the tensor; anything else, one
/// kernel per op.
LogicalResult HostLowering::lowerBlockAmax(BlockAmaxOp op) {
  FailureOr<BlockGeometry> geometry = getBlockGeometry(
      op, op.getInput().getType(), op.getBlockShape());
  if (failed(geometry))
    return failure();
  if (Value source = transposedInputs.lookup(op.getInput()))
    return lowerBlockCastTranspose(op, source);
  Value x = buffers.lookup(op.getInput());
  Type in = getElementType(x);
  Value amax = allocate(op.getAmax(), {});
  buffers.map(op.getAmax(), amax);
  if (auto fused = getFusedBlockCast(op)) {
    auto [scales, quantize] = *fused;
    Value scale = allocate(scales.getScale(), {});
    Value scaleInv = allocate(scales.getScaleInv(), {});
    Value q = allocate(quantize.getResult(), {});
    Type out = getElementType(q);
    launchBlockKernel(getOrCreateBlockCast(kernels, in, out,
                                           geometry->br, geometry->bc,
                                           getBlockRecipe(scales)),
                      *geometry, {x, q, amax, scale, scaleInv});
    mapFusedBlockCast(scales, quantize, scale, scaleInv, q);
    return success();
  }
  launchBlockKernel(getOrCreateBlockAmax(kernels, in,
                                         geometry->br, geometry->bc),
                    *geometry, {x, amax});
  return success();
}

/// The fused block cast of x^T (getTransposingBlockCast) as one
/// block_cast_transpose over x: a gpu.func on memrefs, launched on a 2-D
/// grid of bc x 32 tiles.
LogicalResult HostLowering::lowerBlockCastTranspose(BlockAmaxOp op,
                                                    Value source) {
  auto [scales, quantize] = *getFusedBlockCast(op);
  Value amax = allocate(op.getAmax(), {});
  Value scale = allocate(scales.getScale(), {});
  Value scaleInv = allocate(scales.getScaleInv(), {});
  Value q = allocate(quantize.getResult(), {});
  auto sourceType = cast<MemRefType>(source.getType());
  int64_t bc = op.getBlockShape()[1];
  StringRef kernel = getOrCreateBlockCastTranspose(
      kernels, sourceType.getElementType(), getElementType(q), bc,
      getBlockRecipe(scales));
  // Dynamic shapes; FP8 and E8M0 as the bytes the kernel takes (the cast
  // goes away when fp8-expand-float8 makes them i8 on the host too).
  SmallVector<Value> args;
  for (Value buffer : {source, q, amax, scale, scaleInv})
    args.push_back(asBytes(memref::CastOp::create(
        *b, getDynamicMatrixType(getElementType(buffer)), buffer)));
  int64_t rows = sourceType.getDimSize(0), cols = sourceType.getDimSize(1);
  launch(kernel, constIndex(llvm::divideCeil(cols, abi::kTransposeCastColumns)),
         abi::kBlockSize, args, constIndex(llvm::divideCeil(rows, bc)));
  buffers.map(op.getAmax(), amax);
  mapFusedBlockCast(scales, quantize, scale, scaleInv, q);
  return success();
}

/// The buffers one fused kernel wrote for the rest of a block cast, whose
/// ops need no lowering of their own.
void HostLowering::mapFusedBlockCast(ComputeBlockScalesOp scales,
                                     QuantizeOp quantize, Value scale,
                                     Value scaleInv, Value q) {
  buffers.map(scales.getScale(), scale);
  buffers.map(scales.getScaleInv(), scaleInv);
  buffers.map(quantize.getResult(), q);
  done.insert(scales);
  done.insert(quantize);
}

LogicalResult HostLowering::lowerBlockScales(ComputeBlockScalesOp op) {
  if (!op.getAmax().getType().hasStaticShape())
    return op.emitOpError("with per-block scales needs static shapes, got ")
           << op.getAmax().getType();
  Value amax = buffers.lookup(op.getAmax());
  Value scale = allocate(op.getScale(), {});
  Value scaleInv = allocate(op.getScaleInv(), {});
  Value n = numElements(amax);
  launch(getOrCreateBlockScales(kernels, op.getFp8Type(),
                                getBlockRecipe(op)),
         elementwiseGrid(n), abi::kBlockSize,
         {flat(amax), flat(scale), flat(scaleInv)});
  buffers.map(op.getScale(), scale);
  buffers.map(op.getScaleInv(), scaleInv);
  return success();
}

LogicalResult HostLowering::lowerBlockQuantize(QuantizeOp op) {
  FailureOr<BlockGeometry> geometry = getBlockGeometry(
      op, op.getInput().getType(), *op.getBlockShape());
  if (failed(geometry))
    return failure();
  Value x = buffers.lookup(op.getInput());
  Value scale = buffers.lookup(op.getScale());
  Value q = allocate(op.getResult(), {});
  launchBlockKernel(getOrCreateBlockQuantize(kernels,
                                             getElementType(x),
                                             getElementType(q), geometry->br,
                                             geometry->bc),
                    *geometry, {x, q, scale});
  buffers.map(op.getResult(), q);
  return success();
}

LogicalResult HostLowering::lowerBlockDequantize(DequantizeOp op) {
  FailureOr<BlockGeometry> geometry = getBlockGeometry(
      op, op.getInput().getType(), *op.getBlockShape());
  if (failed(geometry))
    return failure();
  Value q = buffers.lookup(op.getInput());
  Value scaleInv = buffers.lookup(op.getScaleInv());
  Value y = allocate(op.getResult(), {});
  bool mx = isa<Float8E8M0FNUType>(getElementType(scaleInv));
  launchBlockKernel(getOrCreateBlockDequantize(kernels,
                                               getElementType(q),
                                               getElementType(y), geometry->br,
                                               geometry->bc, mx),
                    *geometry, {q, y, scaleInv});
  buffers.map(op.getResult(), y);
  return success();
}

Value HostLowering::padLastDim(Value memref, int64_t k) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = k;
  SmallVector<Value> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(dims(memref, d));
  auto padded = memref::AllocOp::create(
      *b, MemRefType::get(shape, type.getElementType()), sizes);
  SmallVector<OpFoldResult> extents;
  for (int64_t d = 0; d < rank; ++d)
    extents.push_back(type.isDynamicDim(d) ? OpFoldResult(dims(memref, d))
                                           : b->getIndexAttr(type.getDimSize(d)));
  copyIntoZeroedRows(memref, padded, extents);
  return padded;
}

void HostLowering::copyIntoZeroedRows(Value source, Value padded,
                                      ArrayRef<OpFoldResult> extents) {
  auto type = cast<MemRefType>(padded.getType());
  Value zero =
      arith::ConstantOp::create(*b, b->getZeroAttr(type.getElementType()));
  linalg::FillOp::create(*b, ValueRange{zero}, ValueRange{padded});
  SmallVector<OpFoldResult> offsets(type.getRank(), b->getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b->getIndexAttr(1));
  Value rows = memref::SubViewOp::create(*b, padded, offsets, extents, strides);
  linalg::CopyOp::create(*b, source, rows);
}

/// `memref` (rows of a dynamic K) itself when `aligned`, else a copy in
/// rows of `paddedK` zero-padded elements. No control flow (the launcher
/// stays one block): when aligned, the copy has no rows, so its kernels
/// have empty grids and are not launched, and its allocation is empty.
Value HostLowering::padLastDimIfNeeded(Value memref, Value k, Value paddedK,
                                       Value aligned) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  Value zero = constIndex(0);
  SmallVector<Value> extents;
  for (int64_t d = 0; d + 1 < rank; ++d)
    extents.push_back(dims(memref, d));
  // No rows when aligned: the first dimension of the copy is 0.
  extents.front() = arith::SelectOp::create(*b, aligned, zero, extents.front());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (type.isDynamicDim(d) || d == 0)
      sizes.push_back(extents[d]);
  sizes.push_back(paddedK);
  SmallVector<int64_t> shape(type.getShape());
  shape.front() = ShapedType::kDynamic;
  auto paddedType = MemRefType::get(shape, type.getElementType());
  Value padded = memref::AllocOp::create(*b, paddedType, sizes);
  SmallVector<OpFoldResult> offsets(rank, b->getIndexAttr(0));
  SmallVector<OpFoldResult> copyExtents(extents.begin(), extents.end()),
      strides(rank, b->getIndexAttr(1));
  copyExtents.push_back(k);
  Value source =
      memref::SubViewOp::create(*b, memref, offsets, copyExtents, strides);
  copyIntoZeroedRows(source, padded, copyExtents);
  Value operand = memref;
  if (operand.getType() != paddedType)
    operand = memref::CastOp::create(*b, paddedType, operand);
  return arith::SelectOp::create(*b, aligned, operand, padded);
}

/// The wgmma GEMM (GemmKernelABI.h): operands K-major (the wgmma pass made
/// them so), tensor maps encoded by the runtime, a persistent grid of
/// min(SMs, tiles) blocks.
LogicalResult HostLowering::lowerScaledMatmul(ScaledMatmulOp op) {
  if (op.getTransposeLhs() || !op.getTransposeRhs())
    return op.emitOpError("has no wgmma launch: run "
                          "convert-fp8-scaled-matmul-to-wgmma first");
  return lowerWgmmaGemm(op, op.getLhs(), op.getRhs(), op.getLhsScaleInv(),
                        op.getRhsScaleInv(), op.getBias(), op.getResult(),
                        op.getResultAmax());
}

/// A high-precision contraction that convert-fp8-scaled-matmul-to-wgmma
/// planned (bf16 / f16 operands [batch..., M, K] and [batch'..., N, K], a
/// zero init): the 16-bit wgmma kernel, which reads no scales.
LogicalResult HostLowering::lowerContraction(linalg::LinalgOp op) {
  return lowerWgmmaGemm(op, op.getDpsInputs()[0], op.getDpsInputs()[1],
                        Value(), Value(), Value(), op->getResult(0), Value());
}

LogicalResult HostLowering::lowerWgmmaGemm(Operation *op, Value lhsValue,
                                           Value rhsValue, Value lhsScale,
                                           Value rhsScale, Value biasValue,
                                           Value result, Value resultAmax) {
  FailureOr<WgmmaLaunch> shape =
      getWgmmaLaunch(op, "convert-fp8-scaled-matmul-to-wgmma");
  if (failed(shape))
    return failure();
  MLIRContext *ctx = b->getContext();
  auto [kernel, tile, threads, sharedBytes] = *shape;
  int64_t blockM = tile[0], blockN = tile[1];
  Value lhs = buffers.lookup(lhsValue);
  Value rhs = buffers.lookup(rhsValue);
  auto resultType = cast<RankedTensorType>(result.getType());
  int64_t rank = resultType.getRank();
  int64_t rhsRank = cast<ShapedType>(rhsValue.getType()).getRank();
  // TMA boxes are one 128-byte swizzle span of K: 128 FP8 or 64 16-bit
  // elements.
  int64_t elementBytes = cast<MemRefType>(lhs.getType()).getElementTypeBitWidth() / 8;
  int64_t boxK = gabi::kRowBytes / elementBytes;
  Value m = dims(lhs, rank - 2), k = dims(lhs, rank - 1);
  Value n = dims(rhs, rhsRank - 2);
  Value batch = constIndex(1);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    Value extent = dims(lhs, d);
    batch = arith::MulIOp::create(*b, batch, extent);
    if (resultType.isDynamicDim(d))
      sizes.push_back(extent);
  }
  if (resultType.isDynamicDim(rank - 2))
    sizes.push_back(m);
  if (resultType.isDynamicDim(rank - 1))
    sizes.push_back(n);
  Value out = allocate(result, sizes);
  buffers.map(result, out);

  // TMA needs rows of 16-byte multiples: such operands get zero-padded
  // copies; the tensor maps keep the true K, so the pad is never read.
  Value pitch = k;
  if (auto padK = op->getAttrOfType<IntegerAttr>(kWgmmaPadKAttr)) {
    lhs = padLastDim(lhs, padK.getInt());
    rhs = padLastDim(rhs, padK.getInt());
    pitch = constIndex(padK.getInt());
  } else if (cast<MemRefType>(lhs.getType()).isDynamicDim(rank - 1) &&
             cast<MemRefType>(lhs.getType()).getLayout().isIdentity() &&
             cast<MemRefType>(rhs.getType()).getLayout().isIdentity()) {
    // K known at run time only: padded there when it needs to be.
    Value align = constIndex(16 / elementBytes);
    Value paddedK = arith::MulIOp::create(
        *b, arith::CeilDivUIOp::create(*b, k, align), align);
    Value aligned =
        arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, paddedK, k);
    lhs = padLastDimIfNeeded(lhs, k, paddedK, aligned);
    rhs = padLastDimIfNeeded(rhs, k, paddedK, aligned);
    pitch = paddedK;
  }
  Value amax;
  if (resultAmax) {
    amax = allocate(resultAmax, {});
    zeroAmax(amax);
    buffers.map(resultAmax, amax);
  }

  // Pointers are cached for the ops after this one: made here, where
  // those can use them.
  for (Value buffer : {lhs, rhs, out, amax})
    if (buffer)
      pointer(buffer);
  for (Value value : {lhsScale, rhsScale, biasValue})
    if (value)
      pointer(buffers.lookup(value));

  // An empty result (M, N or the batch 0 at run time) has no tiles, so a
  // grid of 0 blocks, which the runtime does not launch (MgpuRuntime.cpp);
  // the tensor maps, never read then, describe at least one element (TMA
  // cannot describe an empty operand). No control flow: the launcher
  // stays one block, which fp8-async-gpu-host inlines into the caller's
  // stream.

  auto globalPtr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  auto mapType = LLVM::LLVMArrayType::get(b->getI64Type(), 16);
  Type i32 = b->getI32Type();
  auto i32Const = [&](int64_t v) {
    return arith::ConstantOp::create(*b, b->getI32IntegerAttr(v));
  };
  bool rhsBatched = rhsRank == rank;
  Value mapK = atLeast(k, 1), mapPitch = atLeast(pitch, 16 / elementBytes);
  Value mapA = encodeTensorMap(lhs, mapK, atLeast(m, 1), atLeast(batch, 1),
                               mapPitch, boxK, blockM);
  Value mapB = encodeTensorMap(rhs, mapK, atLeast(n, 1),
                               rhsBatched ? atLeast(batch, 1) : constIndex(1),
                               mapPitch, boxK, blockN);
  Value null = LLVM::ZeroOp::create(*b, globalPtr);
  auto pointerOrNull = [&](Value value) {
    return value ? pointer(buffers.lookup(value)) : null;
  };
  Value amaxPtr = amax ? pointer(amax) : null;
  // Only _tmastore kernels read the result's map; whole-graph GEMMs store
  // from the registers.
  Value mapOut = LLVM::ZeroOp::create(*b, mapType);

  SmallVector<Value> args(gabi::kNumParams);
  args[gabi::kTensorMapA] = mapA;
  args[gabi::kTensorMapB] = mapB;
  args[gabi::kOut] = pointer(out);
  args[gabi::kLhsScaleInv] = pointerOrNull(lhsScale);
  args[gabi::kRhsScaleInv] = pointerOrNull(rhsScale);
  args[gabi::kBias] = pointerOrNull(biasValue);
  args[gabi::kAmax] = amaxPtr;
  args[gabi::kM] = toI32(m);
  args[gabi::kN] = toI32(n);
  args[gabi::kK] = toI32(k);
  args[gabi::kBatch] = toI32(batch);
  args[gabi::kRhsBatched] = i32Const(rhsBatched ? 1 : 0);
  args[gabi::kTensorMapOut] = mapOut;

  // One block per SM, each looping over output tiles; none without tiles.
  Value tiles = arith::MulIOp::create(
      *b, batch,
      arith::MulIOp::create(
          *b, arith::CeilDivUIOp::create(*b, m, constIndex(blockM)),
          arith::CeilDivUIOp::create(*b, n, constIndex(blockN))));
  Value sms = arith::IndexCastOp::create(
      *b, b->getIndexType(),
      runtimeCall("fp8GpuMultiprocessorCount", {i32}, {}).getResult(0));
  Value grid = arith::MinUIOp::create(*b, sms, tiles);
  launch(kernel, grid, threads, sharedBytes, args);
  return success();
}

Value HostLowering::transposeRows(Value memref, Value &pitch,
                                  bool permuteKeys) {
  auto type = cast<MemRefType>(memref.getType());
  Type element = type.getElementType();
  int64_t depth = type.getDimSize(3);
  auto extent = [&](int64_t d) -> OpFoldResult {
    if (type.isDynamicDim(d))
      return dims(memref, d);
    return b->getIndexAttr(type.getDimSize(d));
  };
  Value sixteen = constIndex(16);
  pitch = arith::MulIOp::create(
      *b, arith::CeilDivUIOp::create(*b, dims(memref, 2), sixteen), sixteen);
  auto transposedType = MemRefType::get(
      {type.getDimSize(0), type.getDimSize(1), depth, ShapedType::kDynamic},
      element);
  SmallVector<Value> sizes;
  for (int64_t d : {0, 1})
    if (type.isDynamicDim(d))
      sizes.push_back(dims(memref, d));
  sizes.push_back(pitch);
  // Zeros, then the rows transposed into the first columns.
  Value zero = arith::ConstantOp::create(*b, b->getZeroAttr(element));
  Value transposed = memref::AllocOp::create(*b, transposedType, sizes);
  linalg::FillOp::create(*b, ValueRange{zero}, ValueRange{transposed});
  SmallVector<OpFoldResult> offsets(4, b->getIndexAttr(0));
  SmallVector<OpFoldResult> strides(4, b->getIndexAttr(1));
  SmallVector<OpFoldResult> extents{extent(0), extent(1),
                                    b->getIndexAttr(depth), extent(2)};
  Value rows =
      memref::SubViewOp::create(*b, transposed, offsets, extents, strides);
  linalg::TransposeOp::create(*b, memref, rows, ArrayRef<int64_t>{0, 1, 3, 2});
  if (!permuteKeys)
    return transposed;
  // Key 16g + 8a + 2t + e to column 16g + 4t + 2a + e: the pitch viewed as
  // [g, a, t, e] copied into [g, t, a, e].
  Value permuted = memref::AllocOp::create(*b, transposedType, sizes);
  Value groups = arith::DivUIOp::create(*b, pitch, sixteen);
  auto expand = [&](Value buffer, ArrayRef<int64_t> inner) {
    SmallVector<int64_t> shape{type.getDimSize(0), type.getDimSize(1), depth,
                               ShapedType::kDynamic};
    shape.append(inner.begin(), inner.end());
    SmallVector<OpFoldResult> outSizes{extent(0), extent(1),
                                       b->getIndexAttr(depth), groups};
    for (int64_t size : inner)
      outSizes.push_back(b->getIndexAttr(size));
    return memref::ExpandShapeOp::create(
        *b, MemRefType::get(shape, element), buffer,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4, 5, 6}}, outSizes);
  };
  linalg::TransposeOp::create(*b, expand(transposed, {2, 4, 2}),
                              expand(permuted, {4, 2, 2}),
                              ArrayRef<int64_t>{0, 1, 2, 3, 5, 4, 6});
  return permuted;
}

/// fp8.attention on the flash kernel convert-fp8-attention-to-wgmma named.
/// The value goes in transposed, [b, hkv, D, pitch] with its keys padded
/// with zeros to 16-byte rows (and, FP8, permuted within each 16:
/// attention_abi::valueKeyAt): memref copies the rest of the program
/// lowers, as the padded GEMM operands. Launchers only (fp8-lower-to-gpu).
LogicalResult HostLowering::lowerAttention(AttentionOp op) {
  FailureOr<WgmmaLaunch> shape =
      getWgmmaLaunch(op, "convert-fp8-attention-to-wgmma");
  if (failed(shape))
    return failure();
  MLIRContext *ctx = b->getContext();
  auto [kernel, tile, threads, sharedBytes] = *shape;
  int64_t blockM = tile[0], blockN = tile[1];
  Value query = buffers.lookup(op.getQuery());
  Value key = buffers.lookup(op.getKey());
  Value value = buffers.lookup(op.getValue());
  auto valueType = cast<MemRefType>(value.getType());
  bool fp8Values = valueType.getElementTypeBitWidth() == 8;
  int64_t headDim = valueType.getDimSize(3);
  Value batch = dims(query, 0), heads = dims(query, 1), sq = dims(query, 2);
  Value kvHeads = dims(key, 1), sk = dims(key, 2);

  SmallVector<Value> outSizes;
  auto outType = cast<RankedTensorType>(op.getOutput().getType());
  for (int64_t d : {0, 1, 2})
    if (outType.isDynamicDim(d))
      outSizes.push_back(dims(query, d));
  Value out = allocate(op.getOutput(), outSizes);
  buffers.map(op.getOutput(), out);
  Value lse;
  if (op.getLse()) {
    outSizes.clear();
    auto lseType = cast<RankedTensorType>(op.getLse().getType());
    for (int64_t d : {0, 1, 2})
      if (lseType.isDynamicDim(d))
        outSizes.push_back(dims(query, d));
    lse = allocate(op.getLse(), outSizes);
    buffers.map(op.getLse(), lse);
  }

  Value pitch;
  Value transposed = transposeRows(value, pitch, fp8Values);

  Value layers = arith::MulIOp::create(*b, batch, heads);
  Value kvLayers = arith::MulIOp::create(*b, batch, kvHeads);
  int64_t qkBytes =
      cast<MemRefType>(query.getType()).getElementTypeBitWidth() / 8;
  int64_t vBytes = valueType.getElementTypeBitWidth() / 8;
  Value d = constIndex(headDim);
  Value mapQ = encodeTensorMap(query, d, atLeast(sq, 1), atLeast(layers, 1), d,
                               gemm_abi::kRowBytes / qkBytes, blockM);
  Value mapK = encodeTensorMap(key, d, atLeast(sk, 1), atLeast(kvLayers, 1),
                               d, gemm_abi::kRowBytes / qkBytes, blockN);
  Value mapV = encodeTensorMap(transposed, atLeast(pitch, 16), d,
                               atLeast(kvLayers, 1), atLeast(pitch, 16),
                               gemm_abi::kRowBytes / vBytes, headDim);

  Value null = LLVM::ZeroOp::create(
      *b, LLVM::LLVMPointerType::get(ctx, kGlobalSpace));
  auto pointerOrNull = [&](Value v) {
    return v ? pointer(buffers.lookup(v)) : null;
  };
  auto f32Const = [&](float v) {
    return arith::ConstantOp::create(*b, b->getF32FloatAttr(v));
  };
  SmallVector<Value> args(attention_abi::kNumParams);
  args[attention_abi::kTensorMapQ] = mapQ;
  args[attention_abi::kTensorMapK] = mapK;
  args[attention_abi::kTensorMapV] = mapV;
  args[attention_abi::kOut] = pointer(out);
  args[attention_abi::kLse] = lse ? pointer(lse) : null;
  args[attention_abi::kQueryScaleInv] = pointerOrNull(op.getQueryScaleInv());
  args[attention_abi::kKeyScaleInv] = pointerOrNull(op.getKeyScaleInv());
  args[attention_abi::kValueScaleInv] = pointerOrNull(op.getValueScaleInv());
  args[attention_abi::kQueries] = toI32(sq);
  args[attention_abi::kKeys] = toI32(sk);
  args[attention_abi::kHeads] = toI32(heads);
  args[attention_abi::kGroup] =
      toI32(arith::DivUIOp::create(*b, heads, atLeast(kvHeads, 1)));
  args[attention_abi::kBatch] = toI32(batch);
  args[attention_abi::kCausalOffset] =
      causalOffsetArg(op.getCausalOffset(), sk);
  args[attention_abi::kScale] = f32Const(op.getScale().convertToFloat());
  args[attention_abi::kProbabilityScale] = f32Const(
      op.getProbabilityScale() ? op.getProbabilityScale()->convertToFloat()
                               : 1.0f);
  // The mask (a kernel `_mask<m>` reads it; a neutral one is never passed):
  // its element strides, 0 along the dimensions it broadcasts.
  Value zero64 = arith::ConstantOp::create(*b, b->getI64IntegerAttr(0));
  args[attention_abi::kMask] = null;
  for (unsigned p = attention_abi::kMaskStrideBatch;
       p <= attention_abi::kMaskStrideKey; ++p)
    args[p] = zero64;
  if (Value mask = op.getMask(); mask && !isNeutralAttentionMask(mask)) {
    Value buffer = buffers.lookup(mask);
    args[attention_abi::kMask] = pointer(buffer);
    auto meta = memref::ExtractStridedMetadataOp::create(*b, buffer);
    for (int64_t d = 0; d < 4; ++d) {
      Value broadcast = arith::CmpIOp::create(
          *b, arith::CmpIPredicate::eq, dims(buffer, d), constIndex(1));
      args[attention_abi::kMaskStrideBatch + d] = arith::SelectOp::create(
          *b, broadcast, zero64, toI64(meta.getStrides()[d]));
    }
  }
  Value grid = arith::MulIOp::create(
      *b, layers,
      arith::CeilDivUIOp::create(*b, sq, constIndex(blockM)));
  launch(kernel, grid, threads, sharedBytes, args);
  return success();
}

/// fp8.attention_grad on the backward kernel convert-fp8-attention-to-wgmma
/// named (AttentionKernelABI.h, "The backward"). Around the launch, memref
/// ops the rest of the program lowers: delta = rowsum(dO * O) in f32, the
/// transposed K, Q and dO, the zeroed f32 dQ the kernel adds into, and
/// grad_query = round(scale * dQ) after. Launchers only.
LogicalResult HostLowering::lowerAttentionGrad(AttentionGradOp op) {
  FailureOr<WgmmaLaunch> shape =
      getWgmmaLaunch(op, "convert-fp8-attention-to-wgmma");
  if (failed(shape))
    return failure();
  MLIRContext *ctx = b->getContext();
  auto [kernel, tile, threads, sharedBytes] = *shape;
  int64_t blockN = tile[0], blockM = tile[1];
  Value query = buffers.lookup(op.getQuery());
  Value key = buffers.lookup(op.getKey());
  Value value = buffers.lookup(op.getValue());
  Value output = buffers.lookup(op.getOutput());
  Value gradOutput = buffers.lookup(op.getGradOutput());
  Value lse = buffers.lookup(op.getLse());
  auto queryType = cast<MemRefType>(query.getType());
  int64_t headDim = queryType.getDimSize(3);
  Type f32 = b->getF32Type();
  Value batch = dims(query, 0), heads = dims(query, 1), sq = dims(query, 2);
  Value kvHeads = dims(key, 1), sk = dims(key, 2);
  auto sizesOf = [&](Value memref, ArrayRef<int64_t> which) {
    SmallVector<Value> sizes;
    auto type = cast<MemRefType>(memref.getType());
    for (int64_t d : which)
      if (type.isDynamicDim(d))
        sizes.push_back(dims(memref, d));
    return sizes;
  };
  auto widen = [&](OpBuilder &nested, Location loc, Value x) -> Value {
    return x.getType().isF32() ? x : arith::ExtFOp::create(nested, loc, f32, x);
  };
  Value zero = arith::ConstantOp::create(*b, b->getF32FloatAttr(0));

  // delta = rowsum(dO * O), f32.
  auto rowType = MemRefType::get(
      {queryType.getDimSize(0), queryType.getDimSize(1),
       queryType.getDimSize(2)},
      f32);
  Value delta = memref::AllocOp::create(*b, rowType, sizesOf(query, {0, 1, 2}));
  linalg::FillOp::create(*b, ValueRange{zero}, ValueRange{delta});
  {
    MLIRContext *c = ctx;
    AffineMap all = AffineMap::getMultiDimIdentityMap(4, c);
    AffineMap rows = AffineMap::get(
        4, 0, {getAffineDimExpr(0, c), getAffineDimExpr(1, c),
               getAffineDimExpr(2, c)}, c);
    SmallVector<utils::IteratorType> iterators(3,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    linalg::GenericOp::create(
        *b, TypeRange{}, ValueRange{gradOutput, output}, ValueRange{delta},
        ArrayRef<AffineMap>{all, all, rows}, iterators,
        [&](OpBuilder &nested, Location loc, ValueRange args) {
          Value product = arith::MulFOp::create(nested, loc,
                                                widen(nested, loc, args[0]),
                                                widen(nested, loc, args[1]));
          linalg::YieldOp::create(
              nested, loc,
              ValueRange{arith::AddFOp::create(nested, loc, args[2], product)});
        });
  }
  Value keyPitch, queryPitch, gradPitch;
  Value keyT = transposeRows(key, keyPitch, /*permuteKeys=*/false);
  Value queryT = transposeRows(query, queryPitch, /*permuteKeys=*/false);
  Value gradOutputT = transposeRows(gradOutput, gradPitch,
                                    /*permuteKeys=*/false);
  auto accumType = MemRefType::get(queryType.getShape(), f32);
  Value gradQueryAccum =
      memref::AllocOp::create(*b, accumType, sizesOf(query, {0, 1, 2, 3}));
  linalg::FillOp::create(*b, ValueRange{zero}, ValueRange{gradQueryAccum});

  Value gradKey = allocate(op.getGradKey(), sizesOf(key, {0, 1, 2}));
  Value gradValue = allocate(op.getGradValue(), sizesOf(value, {0, 1, 2}));
  buffers.map(op.getGradKey(), gradKey);
  buffers.map(op.getGradValue(), gradValue);

  Value layers = arith::MulIOp::create(*b, batch, heads);
  Value kvLayers = arith::MulIOp::create(*b, batch, kvHeads);
  int64_t bytes = queryType.getElementTypeBitWidth() / 8;
  int64_t box = gemm_abi::kRowBytes / bytes;
  Value d = constIndex(headDim);
  auto rowsMap = [&](Value memref, Value rows, Value layerCount,
                     int64_t boxRows) {
    return encodeTensorMap(memref, d, atLeast(rows, 1),
                           atLeast(layerCount, 1), d, box, boxRows);
  };
  auto transposedMap = [&](Value memref, Value pitch, Value layerCount) {
    return encodeTensorMap(memref, atLeast(pitch, 16), d,
                           atLeast(layerCount, 1), atLeast(pitch, 16), box,
                           headDim);
  };
  SmallVector<Value> args(attention_abi::kGradNumParams);
  args[attention_abi::kGradTensorMapK] = rowsMap(key, sk, kvLayers, blockN);
  args[attention_abi::kGradTensorMapV] = rowsMap(value, sk, kvLayers, blockN);
  args[attention_abi::kGradTensorMapKT] = transposedMap(keyT, keyPitch,
                                                        kvLayers);
  args[attention_abi::kGradTensorMapQ] = rowsMap(query, sq, layers, blockM);
  args[attention_abi::kGradTensorMapDO] =
      rowsMap(gradOutput, sq, layers, blockM);
  args[attention_abi::kGradTensorMapQT] = transposedMap(queryT, queryPitch,
                                                        layers);
  args[attention_abi::kGradTensorMapDOT] =
      transposedMap(gradOutputT, gradPitch, layers);
  args[attention_abi::kGradKey] = pointer(gradKey);
  args[attention_abi::kGradValue] = pointer(gradValue);
  args[attention_abi::kGradQueryAccum] = pointer(gradQueryAccum);
  args[attention_abi::kGradLse] = pointer(lse);
  args[attention_abi::kGradDelta] = pointer(delta);
  args[attention_abi::kGradQueries] = toI32(sq);
  args[attention_abi::kGradKeys] = toI32(sk);
  args[attention_abi::kGradHeads] = toI32(heads);
  args[attention_abi::kGradGroup] =
      toI32(arith::DivUIOp::create(*b, heads, atLeast(kvHeads, 1)));
  args[attention_abi::kGradBatch] = toI32(batch);
  args[attention_abi::kGradCausalOffset] =
      causalOffsetArg(op.getCausalOffset(), sk);
  float scaleValue = op.getScale().convertToFloat();
  args[attention_abi::kGradScale] =
      arith::ConstantOp::create(*b, b->getF32FloatAttr(scaleValue));
  Value grid = arith::MulIOp::create(
      *b, kvLayers, arith::CeilDivUIOp::create(*b, sk, constIndex(blockN)));
  launch(kernel, grid, threads, sharedBytes, args);

  // grad_query = round(scale * dQ).
  Value gradQuery = allocate(op.getGradQuery(), sizesOf(query, {0, 1, 2}));
  buffers.map(op.getGradQuery(), gradQuery);
  {
    AffineMap all = AffineMap::getMultiDimIdentityMap(4, ctx);
    Type element = queryType.getElementType();
    linalg::GenericOp::create(
        *b, TypeRange{}, ValueRange{gradQueryAccum}, ValueRange{gradQuery},
        ArrayRef<AffineMap>{all, all},
        SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
        [&](OpBuilder &nested, Location loc, ValueRange values) {
          Value scaled = arith::MulFOp::create(
              nested, loc, values[0],
              arith::ConstantOp::create(nested, loc,
                                        nested.getF32FloatAttr(scaleValue)));
          linalg::YieldOp::create(
              nested, loc,
              ValueRange{arith::TruncFOp::create(nested, loc, element,
                                                 scaled)});
        });
  }
  return success();
}

/// The indices of the dynamic dimensions of `type`.
static SmallVector<int64_t> dynamicDims(ShapedType type) {
  SmallVector<int64_t> result;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      result.push_back(d);
  return result;
}

LogicalResult HostLowering::lower(Operation *op) {
  auto sizesLike = [&](Value memref, Type resultType, bool transposed) {
    SmallVector<Value> sizes;
    auto shaped = cast<ShapedType>(resultType);
    for (int64_t d : dynamicDims(shaped))
      sizes.push_back(dims(memref, transposed ? 1 - d : d));
    return sizes;
  };
  auto f32Const = [&](float v) {
    return arith::ConstantOp::create(*b, b->getF32FloatAttr(v));
  };

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp constant) {
        Value buffer = allocate(constant.getResult(), {});
        gpu::MemsetOp::create(*b, Type(), ValueRange{}, buffer,
                              arith::ConstantOp::create(*b, constant.getValue()));
        buffers.map(constant.getResult(), buffer);
        return success();
      })
      .Case([&](AmaxOp amax) {
        Value x = buffers.lookup(amax.getInput());
        Value out = allocate(amax.getResult(), {});
        zeroAmax(out);
        Value n = numElements(x);
        launch(getOrCreateAmax(kernels, getElementType(x)),
               elementwiseGrid(n), abi::kBlockSize, {flat(x), out});
        buffers.map(amax.getResult(), out);
        return success();
      })
      .Case([&](BlockAmaxOp amax) { return lowerBlockAmax(amax); })
      // The input of a transposing block cast: its kernel reads x itself.
      .Case([&](linalg::TransposeOp transpose) -> LogicalResult {
        BlockAmaxOp cast;
        for (Operation *user : transpose->getResult(0).getUsers())
          if (auto amax = dyn_cast<BlockAmaxOp>(user))
            cast = amax;
        if (!launcher || !cast || getTransposingBlockCast(cast) != transpose)
          return transpose.emitOpError() << "has no GPU lowering";
        transposedInputs[transpose->getResult(0)] =
            buffers.lookup(transpose.getInput());
        return success();
      })
      .Case([&](ScaledMatmulOp gemm) { return lowerScaledMatmul(gemm); })
      .Case([&](AttentionOp attention) { return lowerAttention(attention); })
      .Case([&](AttentionGradOp grad) { return lowerAttentionGrad(grad); })
      // A contraction's init (the kernel writes every element).
      .Case([&](ub::PoisonOp) { return success(); })
      .Case([&](linalg::LinalgOp contraction) {
        return lowerContraction(contraction);
      })
      .Case([&](ComputeBlockScalesOp scales) {
        return lowerBlockScales(scales);
      })
      .Case([&](QuantizeOp quantize) {
        if (quantize.getBlockShape())
          return lowerBlockQuantize(quantize);
        Value x = buffers.lookup(quantize.getInput());
        Value scale = buffers.lookup(quantize.getScale());
        Value q = allocate(quantize.getResult(),
                           sizesLike(x, quantize.getResult().getType(), false));
        Type out = getElementType(quantize.getResult());
        Value n = numElements(x);
        SmallVector<Value> args{flat(x), flat(q), scale};
        bool withAmax = static_cast<bool>(quantize.getAmax());
        if (withAmax) {
          Value amax = allocate(quantize.getAmax(), {});
          zeroAmax(amax);
          args.push_back(amax);
          buffers.map(quantize.getAmax(), amax);
        }
        launch(getOrCreateQuantize(kernels, getElementType(x), out,
                                   withAmax),
               elementwiseGrid(n), abi::kBlockSize, args);
        buffers.map(quantize.getResult(), q);
        return success();
      })
      .Case([&](DequantizeOp dequantize) {
        if (dequantize.getBlockShape())
          return lowerBlockDequantize(dequantize);
        Value q = buffers.lookup(dequantize.getInput());
        Value scaleInv = buffers.lookup(dequantize.getScaleInv());
        Value y =
            allocate(dequantize.getResult(),
                     sizesLike(q, dequantize.getResult().getType(), false));
        Value n = numElements(q);
        launch(getOrCreateDequantize(kernels, getElementType(q),
                                     getElementType(dequantize.getResult())),
               elementwiseGrid(n), abi::kBlockSize,
               {flat(q), flat(y), scaleInv});
        buffers.map(dequantize.getResult(), y);
        return success();
      })
      .Case([&](CastTransposeOp castTranspose) {
        Value x = buffers.lookup(castTranspose.getInput());
        Value scale = buffers.lookup(castTranspose.getScale());
        Value q = allocate(
            castTranspose.getResult(),
            sizesLike(x, castTranspose.getResult().getType(), false));
        Value qt = allocate(
            castTranspose.getTransposed(),
            sizesLike(x, castTranspose.getTransposed().getType(), true));
        SmallVector<Value> args{flat(x), flat(q), flat(qt), scale};
        bool withAmax = static_cast<bool>(castTranspose.getAmax());
        if (withAmax) {
          Value amax = allocate(castTranspose.getAmax(), {});
          zeroAmax(amax);
          args.push_back(amax);
          buffers.map(castTranspose.getAmax(), amax);
        }
        Value rows = dims(x, 0), cols = dims(x, 1);
        args.append({rows, cols});
        Value tileSize = constIndex(abi::kTile);
        Value tiles = arith::MulIOp::create(
            *b, arith::CeilDivUIOp::create(*b, rows, tileSize),
            arith::CeilDivUIOp::create(*b, cols, tileSize));
        Value grid = arith::MinUIOp::create(
            *b, arith::MaxUIOp::create(*b, tiles, constIndex(1)),
            constIndex(abi::kMaxGridSize));
        launch(getOrCreateCastTranspose(kernels,
                                        getElementType(x), getElementType(q),
                                        withAmax),
               grid, abi::kBlockSize, args);
        buffers.map(castTranspose.getResult(), q);
        buffers.map(castTranspose.getTransposed(), qt);
        return success();
      })
      .Case([&](ComputeScaleOp computeScale) {
        Value amax = buffers.lookup(computeScale.getAmax());
        Value scale = allocate(computeScale.getScale(), {});
        bool history = isa<RankedTensorType>(computeScale.getAmax().getType());
        // Current scaling never reads `previous`: any scalar will do.
        Value previous = computeScale.isDelayed()
                             ? buffers.lookup(computeScale.getPrevious())
                             : scale;
        auto format = isa<Float8E4M3FNType>(computeScale.getFp8Type())
                          ? num::Format::E4M3FN
                          : num::Format::E5M2;
        float scaledMax = num::scaledMax(num::getFormatInfo(format).maxFinite,
                                         static_cast<int32_t>(
                                             computeScale.getMargin()));
        int32_t flags = 0;
        if (computeScale.isDelayed())
          flags |= abi::kScaleDelayed;
        if (computeScale.getPowerOfTwo())
          flags |= abi::kScalePowerOfTwo;
        if (!history || computeScale.getAlgo() == AmaxAlgo::most_recent)
          flags |= abi::kScaleMostRecent;
        launch(getOrCreateComputeScale(kernels), constIndex(1),
               abi::kWarpSize,
               {asVector(amax), previous, scale, f32Const(scaledMax),
                f32Const(computeScale.getEpsilon().convertToFloat()),
                arith::ConstantOp::create(*b, b->getI32IntegerAttr(flags))});
        buffers.map(computeScale.getScale(), scale);
        return success();
      })
      .Case([&](RecordAmaxOp record) {
        Value history = buffers.lookup(record.getHistory());
        Value amax = buffers.lookup(record.getAmax());
        Value result = allocate(record.getResult(), {});
        launch(getOrCreateRecordAmax(kernels), constIndex(1),
               abi::kBlockSize,
               {asVector(history), amax, asVector(result)});
        buffers.map(record.getResult(), result);
        return success();
      })
      .Case([&](RollHistoryOp roll) {
        Value history = buffers.lookup(roll.getHistory());
        Value result = allocate(roll.getResult(), {});
        launch(getOrCreateRollHistory(kernels), constIndex(1),
               abi::kBlockSize, {asVector(history), asVector(result)});
        buffers.map(roll.getResult(), result);
        return success();
      })
      .Default([&](Operation *op) {
        return op->emitOpError() << "has no GPU lowering";
      });
}

LogicalResult HostLowering::run() {
  if (failed(checkSupported()))
    return failure();
  MLIRContext *ctx = func.getContext();
  b.emplace(func.getLoc(), ctx);

  // Arguments, then one out-parameter per result (not for launchers: they
  // return their results).
  SmallVector<Type> argTypes;
  for (Type type : func.getArgumentTypes())
    argTypes.push_back(getDeviceType(type));
  if (!launcher)
    for (Type type : func.getResultTypes())
      argTypes.push_back(getDeviceType(type));
  Block *oldBody = &func.getBody().front();
  auto returnOp = cast<func::ReturnOp>(oldBody->getTerminator());

  auto *newBody = new Block();
  SmallVector<Location> locs(argTypes.size(), func.getLoc());
  newBody->addArguments(argTypes, locs);
  for (auto [oldArg, newArg] :
       llvm::zip(oldBody->getArguments(), newBody->getArguments()))
    buffers.map(oldArg, newArg);
  unsigned numInputs = func.getNumArguments();
  if (!launcher)
    for (auto [i, value] : llvm::enumerate(returnOp.getOperands()))
      if (!outParams.count(value))
        outParams[value] = newBody->getArgument(numInputs + i);

  b->setInsertionPointToStart(newBody);
  for (Operation &op : oldBody->without_terminator()) {
    if (done.contains(&op))
      continue;
    b->setLoc(op.getLoc());
    if (failed(lower(&op))) {
      delete newBody;
      return failure();
    }
  }
  b->setLoc(returnOp.getLoc());
  if (launcher) {
    SmallVector<Value> results;
    for (Value value : returnOp.getOperands())
      results.push_back(buffers.lookup(value));
    func::ReturnOp::create(*b, results);
    oldBody->dropAllDefinedValueUses();
    oldBody->erase();
    func.getBody().push_back(newBody);
    func.setFunctionType(
        FunctionType::get(ctx, newBody->getArgumentTypes(),
                          ValueRange(results).getTypes()));
    return success();
  }
  // Results the kernels did not write in place (arguments returned as they
  // are, a value returned twice) are copied.
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
    Value out = newBody->getArgument(numInputs + i);
    Value buffer = buffers.lookup(value);
    if (buffer != out)
      gpu::MemcpyOp::create(*b, Type(), ValueRange{}, out, buffer);
  }
  for (Value temporary : temporaries)
    gpu::DeallocOp::create(*b, Type(), ValueRange{}, temporary);
  func::ReturnOp::create(*b);

  oldBody->dropAllDefinedValueUses();
  oldBody->erase();
  func.getBody().push_back(newBody);
  func.setFunctionType(FunctionType::get(ctx, argTypes, {}));
  func.removeArgAttrsAttr();
  func.removeResAttrsAttr();
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct ConvertFP8ToNVVMPass
    : public fp8::impl::ConvertFP8ToNVVMBase<ConvertFP8ToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (std::optional<std::string> error =
            checkNVVMTarget(chip, features, /*needsWgmma=*/false)) {
      module.emitError() << *error;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool usesFP8 = false;
      func.walk([&](Operation *op) {
        if (isa_and_present<FP8Dialect>(op->getDialect()))
          usesFP8 = true;
      });
      if (usesFP8)
        funcs.push_back(func);
    }
    if (funcs.empty())
      return;

    MLIRContext *ctx = &getContext();
    if (module.lookupSymbol(abi::kKernelModuleName)) {
      module.emitError() << "already contains a symbol named '"
                         << abi::kKernelModuleName << "'";
      return signalPassFailure();
    }
    OpBuilder builder(ctx);
    builder.setInsertionPointToStart(module.getBody());
    auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                            "nvptx64-nvidia-cuda", chip,
                                            features);
    auto gpuModule = gpu::GPUModuleOp::create(
        builder, module.getLoc(), abi::kKernelModuleName,
        builder.getArrayAttr({target}));
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    builder.getUnitAttr());

    for (func::FuncOp func : funcs)
      if (failed(HostLowering(func, gpuModule).run()))
        return signalPassFailure();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// convert-fp8-to-gpu-launches
//===----------------------------------------------------------------------===//

namespace {
struct ConvertFP8ToGPULaunchesPass
    : public fp8::impl::ConvertFP8ToGPULaunchesBase<
          ConvertFP8ToGPULaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (std::optional<std::string> error =
            checkNVVMTarget(chip, features, /*needsWgmma=*/false)) {
      module.emitError() << *error;
      return signalPassFailure();
    }
    SmallVector<SmallVector<Operation *>> groups = collectGroups(module);
    if (groups.empty())
      return;

    FailureOr<gpu::GPUModuleOp> kernelModule = getOrCreateKernelModule(
        module, abi::kKernelModuleName, chip, features);
    if (failed(kernelModule))
      return signalPassFailure();
    SymbolTable symbols(module);
    for (ArrayRef<Operation *> group : groups) {
      func::FuncOp launcher = outline(group, *kernelModule, symbols);
      if (launcher)
        replaceWithCall(group, launcher);
    }
    eraseUnlaunchedKernels(module);
  }

  /// A launcher that could not be built (its op stays as linalg) may
  /// leave the kernels it made, or the wgmma kernel planned for it: they
  /// would be compiled and loaded for nothing.
  static void eraseUnlaunchedKernels(ModuleOp module) {
    llvm::DenseSet<SymbolRefAttr> launched;
    module.walk(
        [&](gpu::LaunchFuncOp launch) { launched.insert(launch.getKernel()); });
    StringRef kernelAttr = gpu::GPUDialect::getKernelFuncAttrName();
    for (auto gpuModule :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>())) {
      // The project's kernel modules only, never one the input brought.
      if (gpuModule.getName() != abi::kKernelModuleName &&
          gpuModule.getName() != gemm_abi::kGemmModuleName)
        continue;
      // LLVM-dialect kernels and gpu.func ones alike.
      auto isKernel = [&](Operation &op) {
        return isa<LLVM::LLVMFuncOp, gpu::GPUFuncOp>(op) &&
               op.hasAttr(kernelAttr);
      };
      for (Operation &kernel :
           llvm::make_early_inc_range(gpuModule.getBody()->getOperations()))
        if (isKernel(kernel) &&
            !launched.contains(SymbolRefAttr::get(
                gpuModule.getNameAttr(),
                {FlatSymbolRefAttr::get(SymbolTable::getSymbolName(&kernel))})))
          kernel.erase();
      if (llvm::none_of(gpuModule.getBody()->getOperations(), isKernel))
        gpuModule.erase();
    }
  }

  /// The fp8 ops to launch, in groups that become one launcher each: a
  /// fused block cast (block_amax, compute_block_scales, quantize), any
  /// other op alone. GEMMs that no wgmma kernel takes stay (they lower
  /// with the rest of the graph).
  static SmallVector<SmallVector<Operation *>> collectGroups(ModuleOp module) {
    SmallVector<SmallVector<Operation *>> groups;
    llvm::SmallPtrSet<Operation *, 16> grouped;
    DominanceInfo dominance(module);
    module.walk([&](Operation *op) {
      // The fp8 ops, and the high-precision contractions that
      // convert-fp8-scaled-matmul-to-wgmma planned for the 16-bit kernel.
      bool contraction =
          isa<linalg::LinalgOp>(op) && op->hasAttr(kWgmmaKernelAttr);
      if ((!isa_and_present<FP8Dialect>(op->getDialect()) && !contraction) ||
          grouped.contains(op) || op->getParentOfType<gpu::GPUModuleOp>())
        return;
      if (isa<ScaledMatmulOp>(op) && !op->hasAttr(kWgmmaKernelAttr))
        return;
      SmallVector<Operation *> group{op};
      if (auto amax = dyn_cast<BlockAmaxOp>(op))
        if (auto fused = getFusedBlockCast(amax)) {
          Operation *scales = fused->first, *quantize = fused->second;
          // Launched where block_amax is: everything else they read must
          // be available there.
          bool available = llvm::all_of(
              std::initializer_list<Operation *>{scales, quantize},
              [&](Operation *member) {
                return member->getBlock() == op->getBlock() &&
                       llvm::all_of(member->getOperands(), [&](Value v) {
                         Operation *def = v.getDefiningOp();
                         return def == op || def == scales ||
                                dominance.properlyDominates(v, op);
                       });
              });
          if (available) {
            group.append({scales, quantize});
            // x^T read through by one transposing kernel.
            if (linalg::TransposeOp transpose = getTransposingBlockCast(amax))
              if (transpose->getBlock() == op->getBlock())
                group.insert(group.begin(), transpose);
          }
        }
      grouped.insert(group.begin(), group.end());
      groups.push_back(std::move(group));
    });
    return groups;
  }

  /// What the group reads from outside, in order of first use: not a
  /// contraction's init, which the kernel overwrites (a zero fill).
  static llvm::SetVector<Value> getInputs(ArrayRef<Operation *> group) {
    llvm::SmallPtrSet<Operation *, 4> members(group.begin(), group.end());
    llvm::SetVector<Value> inputs;
    for (Operation *op : group)
      for (OpOperand &operand : op->getOpOperands())
        if (!members.contains(operand.get().getDefiningOp()) &&
            !isContractionInit(operand))
          inputs.insert(operand.get());
    return inputs;
  }

  static bool isContractionInit(OpOperand &operand) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(operand.getOwner());
    return linalgOp && linalgOp.isDpsInit(&operand);
  }

  /// The group's results used outside it (what stays inside, such as the
  /// scales of a fused block cast, is never materialized).
  static SmallVector<Value> getOutputs(ArrayRef<Operation *> group) {
    llvm::SmallPtrSet<Operation *, 4> members(group.begin(), group.end());
    SmallVector<Value> outputs;
    for (Operation *op : group)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !members.contains(user);
            }))
          outputs.push_back(result);
    return outputs;
  }

  static StringRef getLauncherName(Operation *first) {
    if (isa<linalg::TransposeOp>(first))
      return "block_cast_transpose";
    if (isa<linalg::LinalgOp>(first))
      return "gemm";
    return first->getName().stripDialect();
  }

  /// A private launcher for `group` (HostLowering), or null when no kernel
  /// takes it (unsupported types or blocks): then the ops stay.
  func::FuncOp outline(ArrayRef<Operation *> group, gpu::GPUModuleOp kernels,
                       SymbolTable &symbols) {
    llvm::SetVector<Value> inputs = getInputs(group);
    SmallVector<Value> results = getOutputs(group);
    Operation *first = group.front();
    OpBuilder builder(first->getContext());
    auto func = func::FuncOp::create(
        builder, first->getLoc(),
        (Twine("__fp8_gpu_") + getLauncherName(first)).str(),
        builder.getFunctionType(ValueRange(inputs.getArrayRef()).getTypes(),
                                ValueRange(results).getTypes()));
    func.setPrivate();
    func->setAttr(kGpuLauncherAttr, builder.getUnitAttr());
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToStart(body);
    IRMapping mapping;
    mapping.map(inputs.getArrayRef(), body->getArguments());
    for (Operation *op : group) {
      for (OpOperand &operand : op->getOpOperands())
        if (isContractionInit(operand))
          mapping.map(operand.get(),
                      ub::PoisonOp::create(builder, op->getLoc(),
                                           operand.get().getType()));
      builder.clone(*op, mapping);
    }
    func::ReturnOp::create(
        builder, first->getLoc(),
        llvm::map_to_vector(results,
                            [&](Value v) { return mapping.lookup(v); }));
    symbols.insert(func, symbols.getOp()->getRegion(0).front().begin());

    // What no kernel takes is not an error here: it runs as linalg.
    LogicalResult lowered = failure();
    {
      ScopedDiagnosticHandler quiet(func.getContext(),
                                    [](Diagnostic &) { return success(); });
      lowered = HostLowering(func, kernels, /*launcher=*/true).run();
    }
    if (succeeded(lowered))
      return func;
    symbols.erase(func);
    return {};
  }

  /// The group's ops become a call of `launcher` on buffers of their
  /// operands, and tensors of the buffers it returns.
  void replaceWithCall(ArrayRef<Operation *> group, func::FuncOp launcher) {
    Operation *first = group.front();
    OpBuilder b(first);
    Location loc = first->getLoc();
    SmallVector<Value> args;
    for (auto [operand, type] :
         llvm::zip(getInputs(group), launcher.getArgumentTypes())) {
      auto memref = cast<MemRefType>(type);
      if (isa<TensorType>(operand.getType()))
        args.push_back(bufferization::ToBufferOp::create(
            b, loc, memref, operand, /*read_only=*/true));
      else
        args.push_back(getScalarBuffer(operand, memref));
    }
    auto call = func::CallOp::create(b, loc, launcher, args);
    for (auto [result, buffer] :
         llvm::zip(getOutputs(group), call.getResults())) {
      Value replacement;
      if (auto tensor = dyn_cast<RankedTensorType>(result.getType())) {
        replacement = bufferization::ToTensorOp::create(
            b, loc, tensor, buffer, /*restrict=*/true, /*writable=*/true);
      } else {
        replacement = memref::LoadOp::create(b, loc, buffer);
        scalarBuffers[replacement] = buffer;
        keepOnDevice(result, buffer);
      }
      result.replaceAllUsesWith(replacement);
    }
    for (Operation *op : llvm::reverse(group))
      op->erase();
  }

  /// A scalar result that only becomes a one-element tensor (the next
  /// delayed-scaling state, stored to its global) becomes the tensor of
  /// the buffer the kernel wrote it to: the host never reads it.
  static void keepOnDevice(Value scalar, Value buffer) {
    for (Operation *user : llvm::make_early_inc_range(scalar.getUsers())) {
      auto fromElements = dyn_cast<tensor::FromElementsOp>(user);
      if (!fromElements || fromElements.getType().getRank() != 0)
        continue;
      OpBuilder b(fromElements);
      fromElements.replaceAllUsesWith(
          bufferization::ToTensorOp::create(b, fromElements.getLoc(),
                                            fromElements.getType(), buffer,
                                            /*restrict=*/true,
                                            /*writable=*/false)
              .getResult());
      fromElements.erase();
    }
  }

  /// An f32 scalar in a one-element buffer: the one a launcher returned it
  /// in, else one made where the scalar is defined (once per scalar).
  Value getScalarBuffer(Value scalar, MemRefType type) {
    Value &buffer = scalarBuffers[scalar];
    if (buffer)
      return buffer;
    OpBuilder b(scalar.getContext());
    // The element of a one-element tensor (a scale loaded from its
    // global): that tensor's buffer, where the kernels can read it.
    if (Value tensor = getElementOf(scalar)) {
      b.setInsertionPoint(scalar.getDefiningOp());
      buffer = bufferization::ToBufferOp::create(b, scalar.getLoc(), type,
                                                 tensor, /*read_only=*/true);
      return buffer;
    }
    // Arithmetic on such elements (the reciprocal of a scale for a GEMM):
    // a one-element linalg.generic, which becomes a one-thread kernel, so
    // the host reads nothing the kernels wrote.
    if (Value tensor = computeOnDevice(scalar)) {
      b.setInsertionPointAfterValue(tensor);
      buffer = bufferization::ToBufferOp::create(b, scalar.getLoc(), type,
                                                 tensor, /*read_only=*/true);
      return buffer;
    }
    if (Operation *def = scalar.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(scalar).getOwner());
    buffer = memref::AllocOp::create(b, scalar.getLoc(), type);
    memref::StoreOp::create(b, scalar.getLoc(), scalar, buffer);
    return buffer;
  }

  /// The 0-d tensor `scalar` is the element of, when the kernels that take
  /// `scalar` can read that tensor's buffer instead; else null.
  /// Bufferization gives ml_program.global_load the global's own buffer
  /// and does not order it against global_store: a global's element can
  /// only be read there by kernels launched before the global is stored.
  static Value getElementOf(Value scalar) {
    auto extract = scalar.getDefiningOp<tensor::ExtractOp>();
    if (!extract || extract.getTensor().getType().getRank() != 0)
      return {};
    Value tensor = extract.getTensor();
    auto load = tensor.getDefiningOp<ml_program::GlobalLoadOp>();
    if (!load)
      return tensor;
    // The first store to the global after the extract; a store in another
    // block of the function is not worth the analysis.
    Block *block = extract->getBlock();
    Operation *firstStore = nullptr;
    WalkResult stores = extract->getParentOfType<FunctionOpInterface>()->walk(
        [&](ml_program::GlobalStoreOp store) {
          if (store.getGlobal() != load.getGlobal())
            return WalkResult::advance();
          if (store->getBlock() != block)
            return WalkResult::interrupt();
          if (extract->isBeforeInBlock(store) &&
              (!firstStore || store->isBeforeInBlock(firstStore)))
            firstStore = store;
          return WalkResult::advance();
        });
    if (stores.wasInterrupted())
      return {};
    for (Operation *user : scalar.getUsers()) {
      // The arithmetic computeOnDevice moves to the extract reads it there.
      if (isa_and_present<arith::ArithDialect>(user->getDialect()))
        continue;
      if (user->getBlock() != block ||
          (firstStore && !user->isBeforeInBlock(firstStore)))
        return {};
    }
    return tensor;
  }

  /// When `scalar` is one pure arith op on elements of 0-d tensors and
  /// constants (at least one element): the 0-d tensor of its value,
  /// computed by a one-element linalg.generic on the expanded tensors;
  /// else null.
  static Value computeOnDevice(Value scalar) {
    Operation *def = scalar.getDefiningOp();
    if (!def || !isa_and_present<arith::ArithDialect>(def->getDialect()) ||
        !isPure(def) || def->getNumResults() != 1 ||
        def->getNumRegions() != 0)
      return {};
    // Computed where its last element is read (a later store to a
    // global must not be seen), so all of them in the op's block.
    SmallVector<Value> elements;
    llvm::SmallDenseMap<Value, unsigned> elementIndex;
    Operation *lastRead = nullptr;
    for (Value operand : def->getOperands()) {
      if (Value tensor = getElementOf(operand)) {
        elementIndex.try_emplace(operand, elements.size());
        Operation *extract = operand.getDefiningOp();
        if (extract->getBlock() != def->getBlock())
          return {};
        if (!lastRead || lastRead->isBeforeInBlock(extract))
          lastRead = extract;
        elements.push_back(tensor);
      } else if (!matchPattern(operand, m_Constant())) {
        return {};
      }
    }
    if (elements.empty())
      return {};
    OpBuilder b(def);
    b.setInsertionPointAfter(lastRead);
    Location loc = def->getLoc();
    Type element = scalar.getType();
    auto one = RankedTensorType::get({1}, element);
    SmallVector<Value> inputs;
    for (Value tensor : elements)
      inputs.push_back(tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({1}, getElementTypeOrSelf(tensor)),
          tensor, ArrayRef<ReassociationIndices>{}));
    Value init = tensor::EmptyOp::create(b, loc, one.getShape(), element);
    MLIRContext *context = b.getContext();
    SmallVector<AffineMap> maps(inputs.size() + 1,
                                AffineMap::getMultiDimIdentityMap(1, context));
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{one}, inputs, ValueRange{init}, maps,
        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &body, Location bodyLoc, ValueRange args) {
          IRMapping mapping;
          for (Value operand : def->getOperands()) {
            if (mapping.contains(operand))
              continue;
            auto it = elementIndex.find(operand);
            mapping.map(operand,
                        it != elementIndex.end()
                            ? args[it->second]
                            : body.clone(*operand.getDefiningOp())
                                  ->getResult(0));
          }
          Value result = body.clone(*def, mapping)->getResult(0);
          linalg::YieldOp::create(body, bodyLoc, result);
        });
    return tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({}, element), generic.getResult(0),
        ArrayRef<ReassociationIndices>{});
  }

  llvm::DenseMap<Value, Value> scalarBuffers;
};
} // namespace

namespace {
/// gpu.launch_func reads and writes memory through its kernel and neither
/// allocates nor frees: said so that buffer deallocation, which refuses
/// ops with unknown effects, accepts the launchers of
/// convert-fp8-to-gpu-launches (upstream declares no effects for it).
struct LaunchFuncMemoryEffects
    : MemoryEffectOpInterface::ExternalModel<LaunchFuncMemoryEffects,
                                             gpu::LaunchFuncOp> {
  void getEffects(Operation *,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};
} // namespace

void mlir::fp8::registerFP8ToNVVMDialectExtensions(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncMemoryEffects>(*context);
  });
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}
