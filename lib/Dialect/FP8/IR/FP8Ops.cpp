//===- FP8Ops.cpp - fp8 dialect operations --------------------------------===//
//
// Verifiers and exact folders. Folders compute with the numerics library, the
// same code that defines the CPU and GPU lowerings' results, so a folded
// constant is bit-identical to what running the op would produce.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Numerics/Scaling.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp8;
namespace num = mlir::fp8::numerics;

std::optional<num::Format> mlir::fp8::getNumericsFormat(Type type) {
  if (isa<Float8E4M3FNType>(type))
    return num::Format::E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return num::Format::E5M2;
  return std::nullopt;
}

SmallVector<int64_t> mlir::fp8::getBlockScaleShape(ArrayRef<int64_t> shape,
                                                   ArrayRef<int64_t> block) {
  SmallVector<int64_t> scales;
  for (auto [size, extent] : llvm::zip_equal(shape, block))
    scales.push_back(ShapedType::isDynamic(size) ? ShapedType::kDynamic
                                                 : llvm::divideCeil(size, extent));
  return scales;
}

static float getMaxFinite(Type fp8Type) {
  return num::getFormatInfo(*getNumericsFormat(fp8Type)).maxFinite;
}

static bool isStaticallyCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static LogicalResult verifySameShape(Operation *op, RankedTensorType a,
                                     RankedTensorType b, StringRef what) {
  if (failed(verifyCompatibleShape(a, b)))
    return op->emitOpError() << what << " shape " << a << " does not match "
                             << b;
  return success();
}

static LogicalResult verifyStaticHistory(Operation *op, Type type) {
  auto history = dyn_cast<RankedTensorType>(type);
  if (!history)
    return success();
  if (history.isDynamicDim(0) || history.getDimSize(0) < 1)
    return op->emitOpError()
           << "expects an amax history of static length >= 1, got " << type;
  return success();
}

/// Checks a block shape against the tensor it divides and the per-block
/// `scales` (what: "scale", "amax", ...) against the block layout.
static LogicalResult verifyBlockScales(Operation *op, RankedTensorType tensor,
                                       ArrayRef<int64_t> block, Type scales,
                                       StringRef what) {
  if (block.size() != size_t(tensor.getRank()))
    return op->emitOpError("block has ")
           << block.size() << " dimensions, the tensor " << tensor.getRank();
  if (llvm::any_of(block, [](int64_t extent) { return extent < 1; }))
    return op->emitOpError("block extents must be >= 1");
  auto scaleType = dyn_cast<RankedTensorType>(scales);
  if (!scaleType)
    return op->emitOpError("per-block ")
           << what << " must be a tensor (one value per block), got "
           << scales;
  SmallVector<int64_t> expected =
      getBlockScaleShape(tensor.getShape(), block);
  if (scaleType.getRank() != tensor.getRank() ||
      llvm::any_of(llvm::zip_equal(expected, scaleType.getShape()),
                   [](auto pair) {
                     return !isStaticallyCompatible(std::get<0>(pair),
                                                    std::get<1>(pair));
                   }))
    return op->emitOpError()
           << what << " shape " << scaleType
           << " does not match the blocks of " << tensor << ": expected "
           << RankedTensorType::get(expected, scaleType.getElementType());
  return success();
}

/// A per-tensor op takes an f32 scalar, a per-block one a tensor and a block.
static LogicalResult verifyScaleKind(Operation *op, RankedTensorType tensor,
                                     std::optional<ArrayRef<int64_t>> block,
                                     Type scale, StringRef what) {
  if (!block) {
    if (!scale.isF32())
      return op->emitOpError("a per-block ")
             << what << " needs a 'block' shape";
    return success();
  }
  return verifyBlockScales(op, tensor, *block, scale, what);
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// ` scales T` after the operand types when a scale is a tensor; nothing for
/// the per-tensor f32 scalar.
static ParseResult parseScaleType(OpAsmParser &parser, Type &type) {
  if (succeeded(parser.parseOptionalKeyword("scales")))
    return parser.parseType(type);
  type = parser.getBuilder().getF32Type();
  return success();
}

static void printScaleType(OpAsmPrinter &printer, Operation *, Type type) {
  if (!type.isF32())
    printer << "scales " << type;
}

static ParseResult parseScaleTypes(OpAsmParser &parser, Type &lhs, Type &rhs) {
  if (succeeded(parser.parseOptionalKeyword("scales")))
    return failure(parser.parseType(lhs) || parser.parseComma() ||
                   parser.parseType(rhs));
  lhs = rhs = parser.getBuilder().getF32Type();
  return success();
}

static void printScaleTypes(OpAsmPrinter &printer, Operation *, Type lhs,
                            Type rhs) {
  if (!lhs.isF32() || !rhs.isF32())
    printer << "scales " << lhs << ", " << rhs;
}

//===----------------------------------------------------------------------===//
// Constant access
//===----------------------------------------------------------------------===//

/// Folders never materialize a constant with more elements than this (16M:
/// 64 MiB of f32): the op then runs instead. A splat costs one element
/// whatever its shape, so splats fold at any size.
static constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

/// A folded result of `type` holding `elements` distinct values is small
/// enough to materialize.
static bool isFoldable(ShapedType type, bool splat) {
  return type.hasStaticShape() &&
         (splat || type.getNumElements() <= kMaxFoldedElements);
}

namespace {
/// The elements of a constant float tensor as f32 bit patterns, widened
/// exactly. A splat holds one element.
struct F32Elements {
  SmallVector<uint32_t> bits;
  bool splat = false;

  uint32_t operator[](size_t i) const { return bits[splat ? 0 : i]; }
  float value(size_t i) const {
    float f;
    uint32_t b = (*this)[i];
    std::memcpy(&f, &b, sizeof(f));
    return f;
  }
};
} // namespace

static uint32_t toF32Bits(const APFloat &value) {
  const llvm::fltSemantics &sem = value.getSemantics();
  uint64_t raw = value.bitcastToAPInt().getZExtValue();
  if (&sem == &APFloat::IEEEsingle())
    return static_cast<uint32_t>(raw);
  if (&sem == &APFloat::BFloat())
    return num::bf16BitsToF32Bits(static_cast<uint16_t>(raw));
  if (&sem == &APFloat::IEEEhalf())
    return num::f16BitsToF32Bits(static_cast<uint16_t>(raw));
  if (&sem == &APFloat::Float8E4M3FN())
    return num::toF32Bits(static_cast<uint8_t>(raw), num::Format::E4M3FN);
  if (&sem == &APFloat::Float8E8M0FNU()) {
    float value = num::e8m0ToF32(static_cast<uint8_t>(raw));
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
  assert(&sem == &APFloat::Float8E5M2() && "unexpected float semantics");
  return num::toF32Bits(static_cast<uint8_t>(raw), num::Format::E5M2);
}

static std::optional<F32Elements> getF32Elements(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseFPElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  F32Elements elements;
  elements.splat = dense.isSplat();
  if (elements.splat) {
    elements.bits.push_back(toF32Bits(dense.getSplatValue<APFloat>()));
    return elements;
  }
  elements.bits.reserve(dense.getNumElements());
  for (APFloat value : dense.getValues<APFloat>())
    elements.bits.push_back(toF32Bits(value));
  return elements;
}

static std::optional<float> getF32Scalar(Attribute attr) {
  auto floatAttr = dyn_cast_if_present<FloatAttr>(attr);
  if (!floatAttr || !floatAttr.getType().isF32())
    return std::nullopt;
  return floatAttr.getValue().convertToFloat();
}

static FloatAttr getF32Attr(MLIRContext *context, float value) {
  return FloatAttr::get(Float32Type::get(context), value);
}

/// A dense FP8 tensor attribute from raw codes (one byte per element, or one
/// byte for a splat).
static DenseElementsAttr getFloat8Tensor(ShapedType type,
                                         ArrayRef<uint8_t> codes) {
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(codes.data()),
                           codes.size()));
}

/// Rounds an f32 to a wide element type, nearest even.
static APFloat roundF32To(float value, Type elementType) {
  APFloat converted(value);
  bool losesInfo;
  converted.convert(cast<FloatType>(elementType).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
  return converted;
}

/// Quantizes constant elements with a constant scale, as fp8.quantize runs.
static SmallVector<uint8_t> quantizeElements(const F32Elements &input,
                                             size_t count, float scale,
                                             num::Format format) {
  SmallVector<uint8_t> codes(input.splat ? 1 : count);
  for (size_t i = 0, e = codes.size(); i < e; ++i)
    codes[i] = num::fromF32(input.value(i) * scale, format,
                            num::Overflow::SatFinite);
  return codes;
}

static float amaxOf(const F32Elements &input, int64_t count) {
  if (count == 0)
    return 0.0f;
  SmallVector<float> values(input.splat ? 1 : count);
  for (size_t i = 0, e = values.size(); i < e; ++i)
    values[i] = input.value(i);
  return num::computeAmax(values.data(), values.size());
}

namespace {
/// Maps each element of a static tensor, in row-major order, to the
/// row-major index of its block.
class BlockIndexer {
public:
  BlockIndexer(ArrayRef<int64_t> shape, ArrayRef<int64_t> block)
      : shape(shape), block(block), index(shape.size(), 0),
        scaleShape(getBlockScaleShape(shape, block)) {}

  /// Calls `fn(elementIndex, blockIndex)` for every element.
  void forEach(function_ref<void(int64_t, int64_t)> fn) {
    int64_t count = ShapedType::getNumElements(shape);
    std::fill(index.begin(), index.end(), 0);
    for (int64_t element = 0; element < count; ++element) {
      int64_t blockIndex = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        blockIndex = blockIndex * scaleShape[d] + index[d] / block[d];
      fn(element, blockIndex);
      for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
        if (++index[d] < shape[d])
          break;
        index[d] = 0;
      }
    }
  }

  int64_t getNumBlocks() const {
    return ShapedType::getNumElements(scaleShape);
  }

private:
  ArrayRef<int64_t> shape, block;
  SmallVector<int64_t> index, scaleShape;
};
} // namespace

//===----------------------------------------------------------------------===//
// AmaxOp
//===----------------------------------------------------------------------===//

OpFoldResult AmaxOp::fold(FoldAdaptor adaptor) {
  std::optional<F32Elements> input = getF32Elements(adaptor.getInput());
  if (!input)
    return {};
  return getF32Attr(getContext(),
                    amaxOf(*input, getInput().getType().getNumElements()));
}

//===----------------------------------------------------------------------===//
// BlockAmaxOp / ComputeBlockScalesOp
//===----------------------------------------------------------------------===//

LogicalResult BlockAmaxOp::verify() {
  return verifyBlockScales(*this, getInput().getType(), getBlockShape(),
                           getAmax().getType(), "amax");
}

OpFoldResult BlockAmaxOp::fold(FoldAdaptor adaptor) {
  std::optional<F32Elements> input = getF32Elements(adaptor.getInput());
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getAmax().getType();
  if (!input || !inputType.hasStaticShape() || !isFoldable(resultType, false) ||
      !isFoldable(inputType, false))
    return {};
  // The NaN-ignoring max of |x| per block, from 0, as numerics::computeAmax.
  BlockIndexer indexer(inputType.getShape(), getBlockShape());
  SmallVector<float> amax(indexer.getNumBlocks(), 0.0f);
  indexer.forEach([&](int64_t element, int64_t block) {
    float both[2] = {amax[block], input->value(element)};
    amax[block] = num::computeAmax(both, 2);
  });
  return DenseElementsAttr::get(resultType, ArrayRef<float>(amax));
}

LogicalResult ComputeBlockScalesOp::verify() {
  if (getEpsilon().isNegative() || getEpsilon().isNaN())
    return emitOpError("'epsilon' must be a non-negative number");
  if (isMX() && (getPowerOfTwo() || !getEpsilon().isZero()))
    return emitOpError("E8M0 (MX) scales are powers of two from the amax "
                       "alone: 'power_of_two' and 'epsilon' do not apply");
  return success();
}

LogicalResult
ComputeBlockScalesOp::fold(FoldAdaptor adaptor,
                           SmallVectorImpl<OpFoldResult> &results) {
  std::optional<F32Elements> amax = getF32Elements(adaptor.getAmax());
  RankedTensorType type = getAmax().getType();
  if (!amax || !isFoldable(type, amax->splat))
    return failure();
  size_t count = amax->splat ? 1 : type.getNumElements();
  float fp8Max = getMaxFinite(getFp8Type());
  SmallVector<float> scales(count);
  SmallVector<float> inverses;
  SmallVector<uint8_t> codes;
  for (size_t i = 0; i < count; ++i) {
    if (isMX()) {
      uint8_t code = num::computeMXScaleInvCode(amax->value(i), fp8Max);
      codes.push_back(code);
      scales[i] = num::mxScaleFromCode(code);
      continue;
    }
    scales[i] = num::computeBlockScale(amax->value(i), fp8Max, getPowerOfTwo(),
                                       getEpsilon().convertToFloat());
    inverses.push_back(1.0f / scales[i]);
  }
  // A splat amax folds to splats (one element each).
  RankedTensorType scaleType = getScale().getType();
  RankedTensorType inverseType = getScaleInv().getType();
  results.push_back(amax->splat
                        ? DenseElementsAttr::get(scaleType, scales[0])
                        : DenseElementsAttr::get(scaleType,
                                                 ArrayRef<float>(scales)));
  if (isMX())
    results.push_back(getFloat8Tensor(inverseType, codes));
  else
    results.push_back(
        amax->splat ? DenseElementsAttr::get(inverseType, inverses[0])
                    : DenseElementsAttr::get(inverseType,
                                             ArrayRef<float>(inverses)));
  return success();
}

//===----------------------------------------------------------------------===//
// ComputeScaleOp
//===----------------------------------------------------------------------===//

LogicalResult ComputeScaleOp::verify() {
  bool isHistory = isa<RankedTensorType>(getAmax().getType());
  if (failed(verifyStaticHistory(*this, getAmax().getType())))
    return failure();
  if (!isHistory && getAlgo() != AmaxAlgo::max)
    return emitOpError("'algo' applies only to an amax history");
  if (isDelayed() && getEpsilon().convertToFloat() != 0.0f)
    return emitOpError("'epsilon' applies only to current scaling (no "
                       "previous scale)");
  if (getEpsilon().isNegative() || getEpsilon().isNaN())
    return emitOpError("'epsilon' must be a non-negative number");
  // I32Attr reads back unsigned: take the signed value so that a negative
  // margin is reported as such.
  int64_t margin = getMarginAttr().getInt();
  if (margin < 0 || margin > 127)
    return emitOpError("'margin' must be in [0, 127], got ") << margin;
  return success();
}

OpFoldResult ComputeScaleOp::fold(FoldAdaptor adaptor) {
  std::optional<float> amax;
  if (isa<FloatType>(getAmax().getType())) {
    amax = getF32Scalar(adaptor.getAmax());
  } else if (std::optional<F32Elements> history =
                 getF32Elements(adaptor.getAmax())) {
    // A splat history reduces like its single row.
    int64_t length =
        history->splat
            ? 1
            : cast<RankedTensorType>(getAmax().getType()).getDimSize(0);
    SmallVector<float> rows(length);
    for (int64_t i = 0; i < length; ++i)
      rows[i] = history->value(i);
    amax = num::reduceAmaxHistory(rows.data(), rows.size(),
                                  getAlgo() == AmaxAlgo::max
                                      ? num::AmaxAlgo::Max
                                      : num::AmaxAlgo::MostRecent);
  }
  if (!amax)
    return {};

  float fp8Max = getMaxFinite(getFp8Type());
  if (!isDelayed())
    return getF32Attr(getContext(),
                      num::computeCurrentScale(*amax, fp8Max, getMargin(),
                                               getPowerOfTwo(),
                                               getEpsilon().convertToFloat()));
  std::optional<float> previous = getF32Scalar(adaptor.getPrevious());
  if (!previous)
    return {};
  return getF32Attr(getContext(),
                    num::computeDelayedScale(*amax, *previous, fp8Max,
                                             getMargin(), getPowerOfTwo()));
}

//===----------------------------------------------------------------------===//
// RecordAmaxOp / RollHistoryOp
//===----------------------------------------------------------------------===//

/// The rows of a constant history, when folding the op that updates it may
/// materialize a new history (never a splat: row 0 changes).
static std::optional<SmallVector<float>> readHistoryRows(Attribute attr,
                                                         RankedTensorType type) {
  if (!isFoldable(type, /*splat=*/false))
    return std::nullopt;
  std::optional<F32Elements> elements = getF32Elements(attr);
  if (!elements)
    return std::nullopt;
  SmallVector<float> rows(type.getDimSize(0));
  for (size_t i = 0, e = rows.size(); i < e; ++i)
    rows[i] = elements->value(i);
  return rows;
}

LogicalResult RecordAmaxOp::verify() {
  return verifyStaticHistory(*this, getHistory().getType());
}

OpFoldResult RecordAmaxOp::fold(FoldAdaptor adaptor) {
  std::optional<float> amax = getF32Scalar(adaptor.getAmax());
  std::optional<SmallVector<float>> rows =
      readHistoryRows(adaptor.getHistory(), getHistory().getType());
  if (!amax || !rows)
    return {};
  float slot[2] = {(*rows)[0], *amax};
  (*rows)[0] = num::computeAmax(slot, 2);
  return DenseElementsAttr::get(getType(), ArrayRef<float>(*rows));
}

LogicalResult RollHistoryOp::verify() {
  return verifyStaticHistory(*this, getHistory().getType());
}

OpFoldResult RollHistoryOp::fold(FoldAdaptor adaptor) {
  std::optional<SmallVector<float>> rows =
      readHistoryRows(adaptor.getHistory(), getHistory().getType());
  if (!rows)
    return {};
  num::rollAmaxHistory(rows->data(), rows->size());
  return DenseElementsAttr::get(getType(), ArrayRef<float>(*rows));
}

//===----------------------------------------------------------------------===//
// QuantizeOp / DequantizeOp / CastTransposeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  if (failed(verifySameShape(*this, getResult().getType(),
                             getInput().getType(), "result")) ||
      failed(verifyScaleKind(*this, getInput().getType(), getBlockShape(),
                             getScale().getType(), "scale")))
    return failure();
  if (getBlockShape() && getAmax())
    return emitOpError("has no amax result with per-block scales (measure "
                       "the blocks with fp8.block_amax)");
  return success();
}

/// The per-element multipliers of a block-scaled op with constant operands:
/// `fn(element, scale)` for every element, or false when it cannot fold.
static bool forEachBlockScale(RankedTensorType tensor, ArrayRef<int64_t> block,
                              Attribute scalesAttr,
                              function_ref<void(int64_t, float)> fn) {
  std::optional<F32Elements> scales = getF32Elements(scalesAttr);
  if (!scales || !tensor.hasStaticShape() || !isFoldable(tensor, false))
    return false;
  BlockIndexer(tensor.getShape(), block)
      .forEach([&](int64_t element, int64_t blockIndex) {
        fn(element, scales->value(blockIndex));
      });
  return true;
}

LogicalResult QuantizeOp::fold(FoldAdaptor adaptor,
                               SmallVectorImpl<OpFoldResult> &results) {
  if (std::optional<ArrayRef<int64_t>> block = getBlockShape()) {
    std::optional<F32Elements> input = getF32Elements(adaptor.getInput());
    RankedTensorType resultType = getResult().getType();
    // Checked before anything is allocated: the result may be typed with
    // dynamic sizes, or be too large to materialize.
    if (!input || !adaptor.getScale() || !isFoldable(resultType, false))
      return failure();
    num::Format format = *getNumericsFormat(resultType.getElementType());
    SmallVector<uint8_t> codes(resultType.getNumElements());
    if (!forEachBlockScale(resultType, *block, adaptor.getScale(),
                           [&](int64_t i, float scale) {
                             codes[i] = num::fromF32(input->value(i) * scale,
                                                     format,
                                                     num::Overflow::SatFinite);
                           }))
      return failure();
    results.push_back(getFloat8Tensor(resultType, codes));
    return success();
  }
  std::optional<float> scale = getF32Scalar(adaptor.getScale());
  std::optional<F32Elements> input = getF32Elements(adaptor.getInput());
  RankedTensorType resultType = getResult().getType();
  if (!scale || !input || !isFoldable(resultType, input->splat))
    return failure();
  int64_t count = resultType.getNumElements();
  num::Format format = *getNumericsFormat(resultType.getElementType());
  results.push_back(getFloat8Tensor(
      resultType, quantizeElements(*input, count, *scale, format)));
  if (getAmax())
    results.push_back(getF32Attr(getContext(), amaxOf(*input, count)));
  return success();
}

LogicalResult DequantizeOp::verify() {
  if (failed(verifySameShape(*this, getResult().getType(),
                             getInput().getType(), "result")))
    return failure();
  return verifyScaleKind(*this, getInput().getType(), getBlockShape(),
                         getScaleInv().getType(), "scale_inv");
}

OpFoldResult DequantizeOp::fold(FoldAdaptor adaptor) {
  if (std::optional<ArrayRef<int64_t>> block = getBlockShape()) {
    std::optional<F32Elements> input = getF32Elements(adaptor.getInput());
    RankedTensorType resultType = getResult().getType();
    if (!input || !adaptor.getScaleInv() || !isFoldable(resultType, false))
      return {};
    SmallVector<APFloat> values(resultType.getNumElements(), APFloat(0.0f));
    Type elementType = resultType.getElementType();
    if (!forEachBlockScale(resultType, *block, adaptor.getScaleInv(),
                           [&](int64_t i, float scaleInv) {
                             values[i] = roundF32To(input->value(i) * scaleInv,
                                                    elementType);
                           }))
      return {};
    return DenseElementsAttr::get(resultType, values);
  }
  std::optional<float> scaleInv = getF32Scalar(adaptor.getScaleInv());
  std::optional<F32Elements> input = getF32Elements(adaptor.getInput());
  RankedTensorType resultType = getResult().getType();
  if (!scaleInv || !input || !isFoldable(resultType, input->splat))
    return {};
  Type elementType = resultType.getElementType();
  size_t count = input->splat ? 1 : resultType.getNumElements();
  SmallVector<APFloat> values;
  values.reserve(count);
  for (size_t i = 0; i < count; ++i)
    values.push_back(roundF32To(input->value(i) * *scaleInv, elementType));
  return DenseElementsAttr::get(resultType, values);
}

LogicalResult CastTransposeOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getResult().getType();
  RankedTensorType transposed = getTransposed().getType();
  if (input.getRank() != 2)
    return emitOpError("expects a rank-2 input, got ") << input;
  if (failed(verifySameShape(*this, result, input, "result")))
    return failure();
  if (result.getElementType() != transposed.getElementType())
    return emitOpError("result and transposed result must have the same "
                       "element type");
  if (transposed.getRank() != 2 ||
      !isStaticallyCompatible(transposed.getDimSize(0), input.getDimSize(1)) ||
      !isStaticallyCompatible(transposed.getDimSize(1), input.getDimSize(0)))
    return emitOpError("transposed result ")
           << transposed << " is not the transpose of " << input;
  return success();
}

LogicalResult CastTransposeOp::fold(FoldAdaptor adaptor,
                                    SmallVectorImpl<OpFoldResult> &results) {
  std::optional<float> scale = getF32Scalar(adaptor.getScale());
  std::optional<F32Elements> input = getF32Elements(adaptor.getInput());
  RankedTensorType resultType = getResult().getType();
  // Both results become constants of their own types: the transposed one
  // may be typed with dynamic sizes (a dense constant cannot be).
  if (!scale || !input || !isFoldable(resultType, input->splat) ||
      !isFoldable(getTransposed().getType(), input->splat))
    return failure();
  int64_t rows = resultType.getDimSize(0), cols = resultType.getDimSize(1);
  num::Format format = *getNumericsFormat(resultType.getElementType());
  SmallVector<uint8_t> codes =
      quantizeElements(*input, rows * cols, *scale, format);
  SmallVector<uint8_t> transposedCodes(codes);
  if (!input->splat)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        transposedCodes[c * rows + r] = codes[r * cols + c];
  results.push_back(getFloat8Tensor(resultType, codes));
  results.push_back(
      getFloat8Tensor(getTransposed().getType(), transposedCodes));
  if (getAmax())
    results.push_back(getF32Attr(getContext(), amaxOf(*input, rows * cols)));
  return success();
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp
//===----------------------------------------------------------------------===//

LogicalResult ScaledMatmulOp::verify() {
  if (std::optional<Type> accumulator = getAccumulatorType();
      accumulator && !accumulator->isF32())
    return emitOpError("requires f32 accumulation, got ") << *accumulator;

  RankedTensorType lhs = getLhs().getType();
  RankedTensorType rhs = getRhs().getType();
  RankedTensorType result = getResult().getType();
  int64_t rank = result.getRank();
  if (rank < 2)
    return emitOpError("expects a result of rank >= 2, got ") << result;
  if (lhs.getRank() != rank)
    return emitOpError("expects lhs of rank ")
           << rank << " (the result's), got " << lhs;
  if (rhs.getRank() != rank && rhs.getRank() != 2)
    return emitOpError("expects rhs of rank ")
           << rank << " or 2 (shared across the batch), got " << rhs;

  int64_t lhsRank = lhs.getRank(), rhsRank = rhs.getRank();
  for (int64_t i = 0; i < rank - 2; ++i) {
    if (!isStaticallyCompatible(lhs.getDimSize(i), result.getDimSize(i)))
      return emitOpError("lhs batch dimension ") << i << " does not match "
                                                 << "the result's";
    if (rhsRank == rank &&
        !isStaticallyCompatible(rhs.getDimSize(i), result.getDimSize(i)))
      return emitOpError("rhs batch dimension ") << i << " does not match "
                                                 << "the result's";
  }

  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  int64_t m = lhs.getDimSize(lhsRank - (tl ? 1 : 2));
  int64_t lhsK = lhs.getDimSize(lhsRank - (tl ? 2 : 1));
  int64_t rhsK = rhs.getDimSize(rhsRank - (tr ? 1 : 2));
  int64_t n = rhs.getDimSize(rhsRank - (tr ? 2 : 1));
  if (!isStaticallyCompatible(lhsK, rhsK))
    return emitOpError("contraction dimension mismatch: lhs has K = ")
           << lhsK << ", rhs has K = " << rhsK;
  if (!isStaticallyCompatible(m, result.getDimSize(rank - 2)) ||
      !isStaticallyCompatible(n, result.getDimSize(rank - 1)))
    return emitOpError("result ")
           << result << " does not match M = " << m << ", N = " << n;

  if (failed(verifyBlocks()))
    return failure();

  if (Value bias = getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    Type biasElement = biasType.getElementType();
    if (!biasElement.isF32() && biasElement != result.getElementType())
      return emitOpError("bias element type must be f32 or the result's, got ")
             << biasElement;
    if (!isStaticallyCompatible(biasType.getDimSize(0), n))
      return emitOpError("bias has ")
             << biasType.getDimSize(0) << " elements, expected N = " << n;
  }
  return success();
}

LogicalResult ScaledMatmulOp::verifyBlocks() {
  Type lhsScale = getLhsScaleInv().getType(), rhsScale = getRhsScaleInv().getType();
  std::optional<ArrayRef<int64_t>> lhsBlock = getLhsBlock(),
                                   rhsBlock = getRhsBlock();
  if (bool(lhsBlock) != bool(rhsBlock))
    return emitOpError("expects blocks for both operands or for neither");
  if (!lhsBlock) {
    if (!lhsScale.isF32() || !rhsScale.isF32())
      return emitOpError("per-block scales need 'blocks' shapes");
    return success();
  }
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType();
  if (failed(verifyBlockScales(*this, lhs, *lhsBlock, lhsScale,
                               "lhs scale_inv")) ||
      failed(verifyBlockScales(*this, rhs, *rhsBlock, rhsScale,
                               "rhs scale_inv")))
    return failure();
  // Batch dimensions are never shared by a block: each batch is its own GEMM.
  for (int64_t i = 0, e = lhs.getRank() - 2; i < e; ++i)
    if ((*lhsBlock)[i] != 1)
      return emitOpError("lhs blocks must span one element of each batch "
                         "dimension");
  for (int64_t i = 0, e = rhs.getRank() - 2; i < e; ++i)
    if ((*rhsBlock)[i] != 1)
      return emitOpError("rhs blocks must span one element of each batch "
                         "dimension");
  int64_t lhsK = (*lhsBlock)[lhs.getRank() - (getTransposeLhs() ? 2 : 1)];
  int64_t rhsK = (*rhsBlock)[rhs.getRank() - (getTransposeRhs() ? 1 : 2)];
  if (lhsK != rhsK)
    return emitOpError("lhs and rhs blocks must span the same K extent, got ")
           << lhsK << " and " << rhsK;
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// The shape rules fp8.attention and fp8.attention_grad share: the
/// forward's operands, its output (and lse when there is one), the mask and
/// the attributes.
template <typename OpTy>
static LogicalResult verifyAttention(OpTy op, RankedTensorType output,
                                     Value lse) {
  auto emitOpError = [&](const Twine &message) {
    return op.emitOpError(message);
  };
  RankedTensorType query = op.getQuery().getType(),
                   key = op.getKey().getType(),
                   value = op.getValue().getType();
  for (auto [what, type] :
       {std::pair<StringRef, RankedTensorType>{"query", query},
        {"key", key},
        {"value", value},
        {"output", output}})
    if (type.getRank() != 4)
      return emitOpError("expects a rank-4 ")
             << what << " ([batch, heads, sequence, head_dim]), got " << type;
  // The value's element type is the attention's (the query and key may be
  // FP8 instead: fp8.attention's scores); an FP8 value makes it the
  // output's.
  Type element = value.getElementType();
  if (isa<Float8E4M3FNType, Float8E5M2Type>(element))
    element = output.getElementType();
  bool fp8Scores = isa<Float8E4M3FNType, Float8E5M2Type>(query.getElementType());
  if (key.getElementType() != query.getElementType() ||
      (!fp8Scores && query.getElementType() != element) ||
      (output.getElementType() != element && !output.getElementType().isF32()))
    return emitOpError("expects query, key and value of one element type (or "
                       "an FP8 query and key with scales) and the output in "
                       "the value's or in f32, got ")
           << query << ", " << key << ", " << value << " and " << output;

  auto dim = [](RankedTensorType type, int64_t i) { return type.getDimSize(i); };
  int64_t b = dim(query, 0), hq = dim(query, 1), sq = dim(query, 2),
          d = dim(query, 3), hkv = dim(key, 1), sk = dim(key, 2),
          dv = dim(value, 3);
  if (!isStaticallyCompatible(dim(key, 0), b) ||
      !isStaticallyCompatible(dim(value, 0), b))
    return emitOpError("expects one batch size for query, key and value, got ")
           << query << ", " << key << " and " << value;
  if (!isStaticallyCompatible(dim(key, 3), d))
    return emitOpError("expects the key head dimension to equal the query's, "
                       "got ")
           << key << " for " << query;
  if (!isStaticallyCompatible(dim(value, 1), hkv) ||
      !isStaticallyCompatible(dim(value, 2), sk))
    return emitOpError("expects value heads and length to equal the key's, "
                       "got ")
           << value << " for " << key;
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      (hkv == 0 || hq % hkv != 0))
    return emitOpError("expects the query heads (")
           << hq << ") to be a multiple of the key/value heads (" << hkv
           << ")";
  SmallVector<int64_t> expected = {b, hq, sq, dv};
  for (auto [i, size] : llvm::enumerate(expected))
    if (!isStaticallyCompatible(output.getDimSize(i), size))
      return emitOpError("expects output shape ")
             << RankedTensorType::get(expected, output.getElementType())
             << ", got " << output;

  if (lse) {
    auto lseType = cast<RankedTensorType>(lse.getType());
    SmallVector<int64_t> lseShape = {b, hq, sq};
    if (lseType.getRank() != 3 ||
        llvm::any_of(llvm::enumerate(lseShape), [&](auto pair) {
          return !isStaticallyCompatible(lseType.getDimSize(pair.index()),
                                         pair.value());
        }))
      return emitOpError("expects lse shape ")
             << RankedTensorType::get(lseShape,
                                      Float32Type::get(op.getContext()))
             << ", got " << lseType;
  }

  if (Value mask = op.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    Type maskElement = maskType.getElementType();
    if (!maskElement.isF32() && !maskElement.isInteger(1) &&
        maskElement != element)
      return emitOpError("expects a mask of f32, i1 or the element type ")
             << element << ", got " << maskType;
    SmallVector<int64_t> scores = {b, hq, sq, sk};
    if (maskType.getRank() != 4 ||
        llvm::any_of(llvm::enumerate(scores), [&](auto pair) {
          int64_t size = maskType.getDimSize(pair.index());
          return size != 1 && !isStaticallyCompatible(size, pair.value());
        }))
      return emitOpError("expects a mask broadcastable to the scores ")
             << RankedTensorType::get(scores, maskElement)
             << " (each dimension 1 or equal), got " << maskType;
  }

  if (!op.getCausal() && op.getCausalOffset() != 0)
    return emitOpError("has a causal_offset but is not causal");
  if (!op.getScale().isFinite())
    return emitOpError("expects a finite scale, got ") << op.getScaleAttr();
  return success();
}

/// FP8 values: a value scale per key/value head, P's scale and key tile.
LogicalResult AttentionOp::verifyFP8Values() {
  RankedTensorType value = getValue().getType();
  bool fp8Values = isa<Float8E4M3FNType, Float8E5M2Type>(value.getElementType());
  if (fp8Values != hasFP8Values())
    return emitOpError(fp8Values ? "expects a value_scale for an FP8 value"
                                 : "has a value_scale but a value of ")
           << (fp8Values ? "" : "high precision ") << value.getElementType();
  bool tiled = getProbabilityScale().has_value() && getBlockK().has_value();
  bool partlyTiled =
      getProbabilityScale().has_value() || getBlockK().has_value();
  if (fp8Values ? !tiled : partlyTiled)
    return emitOpError(fp8Values
                           ? "expects probability_scale and block_k with an "
                             "FP8 value (P in E4M3 per key tile)"
                           : "has probability_scale or block_k without an "
                             "FP8 value");
  if (!fp8Values)
    return success();
  auto scaleType = cast<RankedTensorType>(getValueScaleInv().getType());
  SmallVector<int64_t> shape = {value.getDimSize(0), value.getDimSize(1)};
  if (scaleType.getRank() != 2 ||
      !isStaticallyCompatible(scaleType.getDimSize(0), shape[0]) ||
      !isStaticallyCompatible(scaleType.getDimSize(1), shape[1]))
    return emitOpError("expects one value scale per key/value head, ")
           << RankedTensorType::get(shape, scaleType.getElementType())
           << ", got " << scaleType;
  // P <= 1, so P * ps <= ps: at most E4M3's largest finite value, 448.
  float probabilityScale = getProbabilityScale()->convertToFloat();
  if (!(probabilityScale > 0 && probabilityScale <= 448))
    return emitOpError("expects a probability_scale in (0, 448] (P * scale "
                       "in E4M3 without saturation), got ")
           << probabilityScale;
  if (*getBlockK() <= 0)
    return emitOpError("expects a positive block_k, got ") << *getBlockK();
  return success();
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyAttention(*this, getOutput().getType(), getLse())))
    return failure();
  RankedTensorType query = getQuery().getType(), key = getKey().getType();
  bool fp8Scores =
      isa<Float8E4M3FNType, Float8E5M2Type>(query.getElementType());
  Value queryScaleInv = getQueryScaleInv(), keyScaleInv = getKeyScaleInv();
  if (fp8Scores != (queryScaleInv != nullptr))
    return emitOpError(fp8Scores ? "expects scales for an FP8 query and key"
                                 : "has scales but a query and key of ")
           << (fp8Scores ? "" : "high precision ") << query.getElementType();
  if (failed(verifyFP8Values()))
    return failure();
  if (!fp8Scores)
    return success();
  // One scale per token: [b, hq, sq] and [b, hkv, sk].
  for (auto [what, scales, tokens] :
       {std::tuple<StringRef, Value, RankedTensorType>{"query", queryScaleInv,
                                                       query},
        {"key", keyScaleInv, key}}) {
    auto type = cast<RankedTensorType>(scales.getType());
    SmallVector<int64_t> shape(tokens.getShape().drop_back());
    if (type.getRank() != 3 ||
        llvm::any_of(llvm::enumerate(shape), [&](auto pair) {
          return !isStaticallyCompatible(type.getDimSize(pair.index()),
                                         pair.value());
        }))
      return emitOpError("expects one ")
             << what << " scale per token, "
             << RankedTensorType::get(shape, type.getElementType())
             << ", got " << type;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

/// The output's type; grad_output's is the output's shape in the query's
/// element type (the verifier's rule), so it is not spelled.
static ParseResult parseGradOutputType(OpAsmParser &parser, Type queryType,
                                       Type &outputType, Type &gradOutputType) {
  if (parser.parseType(outputType))
    return failure();
  auto output = dyn_cast<RankedTensorType>(outputType);
  auto query = dyn_cast<RankedTensorType>(queryType);
  if (!output || !query)
    return parser.emitError(parser.getCurrentLocation(),
                            "expects ranked tensor types for the query and "
                            "the output");
  gradOutputType = output.clone(query.getElementType());
  return success();
}

static void printGradOutputType(OpAsmPrinter &printer, Operation *,
                                Type queryType, Type outputType,
                                Type gradOutputType) {
  printer << outputType;
}

LogicalResult AttentionGradOp::verify() {
  // The output's element type and shape, and lse's, are the forward's rules;
  // the gradients match their operands' types by the op's traits.
  if (failed(verifyAttention(*this, getOutput().getType(), getLse())))
    return failure();
  RankedTensorType output = getOutput().getType(),
                   gradOutput = getGradOutput().getType();
  if (gradOutput.getElementType() != getQuery().getType().getElementType() ||
      gradOutput.getShape() != output.getShape())
    return emitOpError("expects grad_output shaped as the output, in the "
                       "element type of query, got ")
           << gradOutput << " for " << output;
  // A negative offset leaves the first rows without any key: the lowerings
  // skip causally masked tiles, which would drop those rows' NaN.
  if (static_cast<int64_t>(getCausalOffset()) < 0)
    return emitOpError("expects a non-negative causal_offset, got ")
           << static_cast<int64_t>(getCausalOffset());
  return success();
}

#define GET_OP_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Ops.cpp.inc"

//===----------------------------------------------------------------------===//
// Attention canonicalization
//===----------------------------------------------------------------------===//

bool mlir::fp8::isNeutralAttentionMask(Value mask) {
  DenseElementsAttr constant;
  if (!mask || !matchPattern(mask, m_Constant(&constant)) ||
      !constant.isSplat())
    return false;
  Type element = constant.getElementType();
  if (element.isInteger(1))
    return constant.getSplatValue<bool>();
  return isa<FloatType>(element) && constant.getSplatValue<APFloat>().isZero();
}

namespace {
/// `causal` where every key is visible (a static sk and causal_offset >=
/// sk - 1): the causal mask masks nothing.
template <typename OpT>
struct DropTrivialCausal : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    if (!op.getCausal())
      return failure();
    int64_t keys = cast<RankedTensorType>(op.getKey().getType()).getDimSize(2);
    if (ShapedType::isDynamic(keys) ||
        static_cast<int64_t>(op.getCausalOffset()) < keys - 1)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.setCausal(false);
      op.setCausalOffsetAttr(rewriter.getI64IntegerAttr(0));
    });
    return success();
  }
};

/// A constant mask that changes no score: a boolean splat of true, or an
/// additive splat of zeros (s + 0 = s and s + -0 = s, exactly).
template <typename OpT>
struct DropNeutralMask : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMask() || !isNeutralAttentionMask(op.getMask()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getMaskMutable().clear(); });
    return success();
  }
};
/// A constant boolean mask that keeps exactly the keys j <= i + p of every
/// query row i (p >= 0), the same for every batch and head: the causal
/// flag with offset p (the smaller offset if the op is causal already).
/// Both make the other keys -inf whatever their scores, so this is exact;
/// the lowerings then skip the tiles past the diagonal.
template <typename OpT>
struct ConstantCausalMask : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr constant;
    if (!op.getMask() || !matchPattern(op.getMask(), m_Constant(&constant)) ||
        constant.isSplat() || !constant.getElementType().isInteger(1))
      return failure();
    ArrayRef<int64_t> shape = constant.getType().getShape();
    int64_t queries =
        cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2);
    int64_t keys = cast<RankedTensorType>(op.getKey().getType()).getDimSize(2);
    if (ShapedType::isDynamic(queries) || ShapedType::isDynamic(keys) ||
        shape[2] != queries || shape[3] != keys)
      return failure();
    auto values = constant.getValues<bool>();
    // The offset from row 0's kept prefix, then every element checked.
    int64_t offset = -1;
    while (offset + 1 < keys && values[offset + 1])
      ++offset;
    if (offset < 0)
      return failure();
    int64_t index = 0;
    for (bool keep : values) {
      int64_t key = index % keys, row = index / keys % queries;
      if (keep != (key <= row + offset))
        return failure();
      ++index;
    }
    if (op.getCausal())
      offset = std::min(offset, static_cast<int64_t>(op.getCausalOffset()));
    rewriter.modifyOpInPlace(op, [&] {
      op.getMaskMutable().clear();
      op.setCausal(true);
      op.setCausalOffsetAttr(rewriter.getI64IntegerAttr(offset));
    });
    return success();
  }
};
} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<DropTrivialCausal<AttentionOp>, DropNeutralMask<AttentionOp>,
              ConstantCausalMask<AttentionOp>>(context);
}

void AttentionGradOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<DropTrivialCausal<AttentionGradOp>,
              DropNeutralMask<AttentionGradOp>,
              ConstantCausalMask<AttentionGradOp>>(context);
}
