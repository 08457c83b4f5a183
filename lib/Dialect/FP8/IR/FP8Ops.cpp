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
  return verifySameShape(*this, getResult().getType(), getInput().getType(),
                         "result");
}

LogicalResult QuantizeOp::fold(FoldAdaptor adaptor,
                               SmallVectorImpl<OpFoldResult> &results) {
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
  return verifySameShape(*this, getResult().getType(), getInput().getType(),
                         "result");
}

OpFoldResult DequantizeOp::fold(FoldAdaptor adaptor) {
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

#define GET_OP_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Ops.cpp.inc"
