//===- ExpandFloat8.cpp - FP8 casts as integer operations -----------------===//
//
// fp8-expand-float8: removes the FP8 types from a module so that a target
// without FP8 support runs it. FP8 values become i8 holding their encoding,
// and `arith.truncf` / `arith.extf` to and from FP8 become the integer
// sequences of the numerics library (lib/Numerics/Float8.cpp explains them),
// emitted op by op so that CPU results are bit-identical to the folders'.
// MLIR's own LLVM lowering cannot be used: convert-arith-to-llvm leaves FP8
// casts in place and LLVM has no FP8 type.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/ExpandFloat8.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8EXPANDFLOAT8
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
namespace num = mlir::fp8::numerics;

/// The FP8 formats whose casts this pass expands.
static bool isFloat8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

/// The 8-bit float types that become i8: the FP8 formats and E8M0, the MX
/// block scales (only ever bitcast, never computed with).
static bool isFloat8Storage(Type type) {
  return isFloat8(type) || isa<Float8E8M0FNUType>(type);
}

static bool containsFloat8(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return isFloat8Storage(shaped.getElementType());
  if (auto function = dyn_cast<FunctionType>(type))
    return llvm::any_of(function.getInputs(),
                        [](Type t) { return containsFloat8(t); }) ||
           llvm::any_of(function.getResults(),
                        [](Type t) { return containsFloat8(t); });
  return isFloat8Storage(type);
}

static bool containsFloat8(Attribute attr) {
  if (auto typeAttr = dyn_cast<TypeAttr>(attr))
    return containsFloat8(typeAttr.getValue());
  if (auto typed = dyn_cast<TypedAttr>(attr))
    return containsFloat8(typed.getType());
  return false;
}

bool mlir::fp8::hasFloat8Types(Operation *op) {
  auto isFloat8Value = [](Value v) { return containsFloat8(v.getType()); };
  if (llvm::any_of(op->getOperands(), isFloat8Value) ||
      llvm::any_of(op->getResults(), isFloat8Value))
    return true;
  if (llvm::any_of(op->getAttrs(), [](NamedAttribute attr) {
        return containsFloat8(attr.getValue());
      }))
    return true;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (llvm::any_of(block.getArguments(), isFloat8Value))
        return true;
  return false;
}

void mlir::fp8::populateFloat8ToI8TypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](FloatType type) -> Type {
    if (isFloat8Storage(type))
      return IntegerType::get(type.getContext(), 8);
    return type;
  });
  converter.addConversion([](ShapedType type) -> Type {
    if (isFloat8Storage(type.getElementType()))
      return type.clone(IntegerType::get(type.getContext(), 8));
    return type;
  });
}

//===----------------------------------------------------------------------===//
// Integer sequences
//===----------------------------------------------------------------------===//

namespace {
/// Emits integer and float `arith` ops element-wise over one shape: scalars,
/// or vectors / static tensors of the shape of `like`. Constant operands
/// fold, so the emitted sequence holds only the work that depends on the
/// input.
class ElementwiseBuilder {
public:
  ElementwiseBuilder(OpBuilder &builder, Location loc, Type like)
      : b(builder), loc(loc), like(like) {}

  Type typeOf(Type element) const {
    if (auto shaped = dyn_cast<ShapedType>(like))
      return shaped.clone(element);
    return element;
  }
  Type i32Type() const { return typeOf(b.getI32Type()); }

  Value constant(Type element, TypedAttr value) {
    if (auto shaped = dyn_cast<ShapedType>(like))
      return arith::ConstantOp::create(
          b, loc, SplatElementsAttr::get(shaped.clone(element), value));
    return arith::ConstantOp::create(b, loc, value);
  }
  Value i32(uint32_t value) {
    return constant(b.getI32Type(), b.getI32IntegerAttr(int32_t(value)));
  }
  Value f32(float value) {
    return constant(b.getF32Type(), b.getF32FloatAttr(value));
  }

  Value add(Value x, Value y) { return b.createOrFold<arith::AddIOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.createOrFold<arith::SubIOp>(loc, x, y); }
  Value shl(Value x, Value y) { return b.createOrFold<arith::ShLIOp>(loc, x, y); }
  Value shr(Value x, Value y) {
    return b.createOrFold<arith::ShRUIOp>(loc, x, y);
  }
  Value bitAnd(Value x, Value y) {
    return b.createOrFold<arith::AndIOp>(loc, x, y);
  }
  Value bitOr(Value x, Value y) { return b.createOrFold<arith::OrIOp>(loc, x, y); }
  Value minS(Value x, Value y) {
    return b.createOrFold<arith::MinSIOp>(loc, x, y);
  }
  Value maxS(Value x, Value y) {
    return b.createOrFold<arith::MaxSIOp>(loc, x, y);
  }
  Value cmp(arith::CmpIPredicate predicate, Value x, Value y) {
    return b.createOrFold<arith::CmpIOp>(loc, predicate, x, y);
  }
  Value select(Value condition, Value x, Value y) {
    return b.createOrFold<arith::SelectOp>(loc, condition, x, y);
  }
  Value bitcast(Type element, Value x) {
    return b.createOrFold<arith::BitcastOp>(loc, typeOf(element), x);
  }

  /// `value >> shift`, rounded to nearest even (1 <= shift <= 31).
  Value shiftRightRoundingToNearestEven(Value value, Value shift) {
    Value one = i32(1);
    Value halfMinusOne = sub(shl(one, sub(shift, one)), one);
    Value lsb = bitAnd(shr(value, shift), one);
    return shr(add(add(value, halfMinusOne), lsb), shift);
  }

  OpBuilder &b;
  Location loc;

private:
  Type like;
};
} // namespace

static const num::FormatInfo &getFormatInfo(FloatType float8Type) {
  return num::getFormatInfo(*getNumericsFormat(float8Type));
}

static Value widenToF32(OpBuilder &builder, Location loc, Value value) {
  Type element = getElementTypeOrSelf(value.getType());
  if (element.isF32())
    return value;
  ElementwiseBuilder eb(builder, loc, value.getType());
  return arith::ExtFOp::create(builder, loc, eb.typeOf(builder.getF32Type()),
                               value);
}

Value mlir::fp8::createTruncToFloat8(OpBuilder &builder, Location loc,
                                     Value value, FloatType float8Type) {
  using arith::CmpIPredicate;
  const num::FormatInfo &info = getFormatInfo(float8Type);
  uint32_t mantissaBits = info.mantissaBits, bias = info.bias;
  ElementwiseBuilder eb(builder, loc, value.getType());

  Value bits = eb.bitcast(builder.getI32Type(), widenToF32(builder, loc, value));
  Value sign = eb.bitAnd(eb.shr(bits, eb.i32(24)), eb.i32(0x80));
  Value abs = eb.bitAnd(bits, eb.i32(0x7FFFFFFF));

  // Normal results: rebias the exponent, round the mantissa in place.
  Value normal = eb.shiftRightRoundingToNearestEven(
      eb.sub(abs, eb.i32((127 - bias) << 23)), eb.i32(23 - mantissaBits));

  // Subnormal results: the significand in units of the minimum subnormal.
  Value exponent = eb.shr(abs, eb.i32(23));
  Value significand =
      eb.bitOr(eb.bitAnd(abs, eb.i32(0x007FFFFF)), eb.i32(0x00800000));
  Value shift = eb.minS(
      eb.maxS(eb.sub(eb.i32(151 - bias - mantissaBits), exponent), eb.i32(1)),
      eb.i32(31));
  Value subnormal = eb.shiftRightRoundingToNearestEven(significand, shift);

  Value isSubnormal =
      eb.cmp(CmpIPredicate::ult, abs, eb.i32((128 - bias) << 23));
  Value code = eb.select(isSubnormal, subnormal, normal);
  Value overflow =
      eb.cmp(CmpIPredicate::ugt, code, eb.i32(info.maxFiniteBits));
  Value isNaN = eb.cmp(CmpIPredicate::ugt, abs, eb.i32(0x7F800000));

  Value magnitude;
  if (!info.hasInfinity) {
    // E4M3FN has no infinity: overflow, Inf and NaN are all NaN.
    Value toNaN = builder.createOrFold<arith::OrIOp>(loc, overflow, isNaN);
    magnitude = eb.select(toNaN, eb.i32(0x7F), code);
  } else {
    // APFloat keeps the top two payload bits of a NaN and quiets it.
    Value nan =
        eb.bitOr(eb.bitAnd(eb.shr(abs, eb.i32(21)), eb.i32(1)), eb.i32(0x7E));
    magnitude = eb.select(isNaN, nan, eb.select(overflow, eb.i32(0x7C), code));
  }
  return builder.createOrFold<arith::TruncIOp>(loc, eb.typeOf(builder.getI8Type()),
                                               eb.bitOr(sign, magnitude));
}

Value mlir::fp8::createExtFromFloat8(OpBuilder &builder, Location loc,
                                     Value code, FloatType float8Type,
                                     Type resultType) {
  using arith::CmpIPredicate;
  const num::FormatInfo &info = getFormatInfo(float8Type);
  uint32_t mantissaBits = info.mantissaBits, bias = info.bias;
  ElementwiseBuilder eb(builder, loc, code.getType());

  Value x = builder.createOrFold<arith::ExtUIOp>(loc, eb.i32Type(), code);
  Value sign = eb.shl(eb.bitAnd(x, eb.i32(0x80)), eb.i32(24));
  Value magnitude = eb.bitAnd(x, eb.i32(0x7F));
  Value mantissa = eb.bitAnd(magnitude, eb.i32((1u << mantissaBits) - 1));

  // Normal: exponent and mantissa move up together, then rebias.
  Value normal = eb.add(eb.shl(magnitude, eb.i32(23 - mantissaBits)),
                        eb.i32((127 - bias) << 23));
  // Subnormal (and zero): mantissa * 2^(1 - bias - M), exact in f32.
  Value scaled = builder.createOrFold<arith::MulFOp>(
      loc,
      builder.createOrFold<arith::UIToFPOp>(loc, eb.typeOf(builder.getF32Type()),
                                            mantissa),
      eb.f32(std::ldexp(1.0f, 1 - int(bias) - int(mantissaBits))));
  Value subnormal = eb.bitcast(builder.getI32Type(), scaled);
  Value isSubnormal =
      eb.cmp(CmpIPredicate::ult, magnitude, eb.i32(1u << mantissaBits));
  Value finite = eb.select(isSubnormal, subnormal, normal);

  // APFloat widens a NaN's payload by shifting, and quiets it.
  Value nan = eb.bitOr(eb.shl(mantissa, eb.i32(23 - mantissaBits)),
                       eb.i32(0x7FC00000));
  Value isNaN = info.hasInfinity
                    ? eb.cmp(CmpIPredicate::ugt, magnitude, eb.i32(0x7C))
                    : eb.cmp(CmpIPredicate::eq, magnitude, eb.i32(0x7F));
  Value magnitudeBits = eb.select(isNaN, nan, finite);
  if (info.hasInfinity)
    magnitudeBits =
        eb.select(eb.cmp(CmpIPredicate::eq, magnitude, eb.i32(0x7C)),
                  eb.i32(0x7F800000), magnitudeBits);
  Value f32 = eb.bitcast(builder.getF32Type(), eb.bitOr(sign, magnitudeBits));

  Type resultElement = getElementTypeOrSelf(resultType);
  if (resultElement.isF32())
    return f32;
  if (resultElement.isBF16()) {
    // Every FP8 value (and NaN payload) lives in the top half of its f32
    // encoding, so bf16 is that half.
    Value high = builder.createOrFold<arith::TruncIOp>(
        loc, eb.typeOf(builder.getI16Type()),
        eb.shr(eb.bitcast(builder.getI32Type(), f32), eb.i32(16)));
    return eb.bitcast(resultElement, high);
  }
  // Every FP8 value is exact in f16 and f64, so rounding the f32 is exact.
  if (resultElement.getIntOrFloatBitWidth() < 32)
    return arith::TruncFOp::create(builder, loc, resultType, f32);
  return arith::ExtFOp::create(builder, loc, resultType, f32);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Scalars, vectors and static tensors: the shapes the integer sequences can
/// be emitted for (their constants are splats).
static bool isExpandable(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return !shaped || (isa<VectorType, RankedTensorType>(shaped) &&
                     shaped.hasStaticShape());
}

namespace {
struct TruncFToFloat8 : OpConversionPattern<arith::TruncFOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto float8Type = dyn_cast<FloatType>(getElementTypeOrSelf(op.getType()));
    if (!float8Type || !isFloat8(float8Type))
      return failure();
    if (std::optional<arith::RoundingMode> mode = op.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "only nearest-even rounding");
    // Narrowing f64 to f32 first would round twice.
    if (getElementTypeOrSelf(op.getIn().getType()).getIntOrFloatBitWidth() > 32)
      return rewriter.notifyMatchFailure(op, "source wider than f32");
    if (!isExpandable(op.getType()))
      return rewriter.notifyMatchFailure(op, "dynamically shaped operand");
    rewriter.replaceOp(op, createTruncToFloat8(rewriter, op.getLoc(),
                                               adaptor.getIn(), float8Type));
    return success();
  }
};

struct ExtFFromFloat8 : OpConversionPattern<arith::ExtFOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::ExtFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto float8Type =
        dyn_cast<FloatType>(getElementTypeOrSelf(op.getIn().getType()));
    if (!float8Type || !isFloat8(float8Type))
      return failure();
    if (!isExpandable(op.getType()))
      return rewriter.notifyMatchFailure(op, "dynamically shaped operand");
    rewriter.replaceOp(op,
                       createExtFromFloat8(rewriter, op.getLoc(),
                                           adaptor.getIn(), float8Type,
                                           op.getType()));
    return success();
  }
};

/// FP8 constants keep their encodings as i8.
static Attribute bitcastToI8(Attribute value) {
  Type i8 = IntegerType::get(value.getContext(), 8);
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.bitcast(i8);
  if (auto scalar = dyn_cast<FloatAttr>(value))
    return IntegerAttr::get(i8, scalar.getValue().bitcastToAPInt());
  return {};
}

struct ConstantToI8 : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!containsFloat8(op.getType()))
      return failure();
    auto value = dyn_cast_if_present<TypedAttr>(bitcastToI8(op.getValue()));
    if (!value)
      return rewriter.notifyMatchFailure(op, "not a dense or float constant");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

/// After the conversion both sides of a bitcast to or from FP8 are i8.
struct BitcastToI8 : OpConversionPattern<arith::BitcastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::BitcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!resultType)
      return failure();
    if (resultType == adaptor.getIn().getType()) {
      rewriter.replaceOp(op, adaptor.getIn());
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, resultType,
                                                  adaptor.getIn());
    return success();
  }
};

template <typename GlobalOpTy>
struct GlobalToI8 : OpConversionPattern<GlobalOpTy> {
  using OpConversionPattern<GlobalOpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GlobalOpTy op, typename GlobalOpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type || type == op.getType())
      return failure();
    Attribute value = getInitialValue(op);
    Attribute newValue = value;
    if (value && containsFloat8(value)) {
      newValue = bitcastToI8(value);
      if (!newValue)
        return rewriter.notifyMatchFailure(op, "unsupported initial value");
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.setType(cast<decltype(op.getType())>(type));
      if (newValue != value)
        setInitialValue(op, newValue);
    });
    return success();
  }

private:
  static Attribute getInitialValue(ml_program::GlobalOp op) {
    return op.getValueAttr();
  }
  static void setInitialValue(ml_program::GlobalOp op, Attribute value) {
    op.setValueAttr(value);
  }
  static Attribute getInitialValue(memref::GlobalOp op) {
    return op.getInitialValueAttr();
  }
  static void setInitialValue(memref::GlobalOp op, Attribute value) {
    op.setInitialValueAttr(value);
  }
};

/// Any other op that only moves FP8 values (tensor and memref ops, calls and
/// returns, structured ops whose bodies are converted op by op) is rebuilt
/// with i8 in place of FP8. Ops that compute on FP8 values are not: they
/// stay illegal and the pass reports them.
struct RebuildWithI8 : ConversionPattern {
  RebuildWithI8(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/0,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!hasFloat8Types(op) || isa<FunctionOpInterface>(op) ||
        op->getNumSuccessors() != 0)
      return failure();
    if (isa_and_present<arith::ArithDialect, math::MathDialect, FP8Dialect>(
            op->getDialect()) &&
        !isa<arith::SelectOp>(op))
      return rewriter.notifyMatchFailure(op, "computes on FP8 values");
    if (llvm::any_of(op->getAttrs(), [](NamedAttribute attr) {
          return containsFloat8(attr.getValue());
        }))
      return rewriter.notifyMatchFailure(op, "FP8 attribute");

    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return failure();
    // A cast from FP8 to its i8 storage (what hands an FP8 buffer to a
    // kernel that takes bytes) is nothing once FP8 is i8.
    if (isa<UnrealizedConversionCastOp>(op) &&
        TypeRange(ValueRange(operands)) == TypeRange(resultTypes)) {
      rewriter.replaceOp(op, operands);
      return success();
    }
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs());
    for (unsigned i = 0, e = op->getNumRegions(); i < e; ++i)
      state.addRegion();
    Operation *newOp = rewriter.create(state);
    for (auto [from, to] : llvm::zip(op->getRegions(), newOp->getRegions())) {
      rewriter.inlineRegionBefore(from, to, to.end());
      if (failed(rewriter.convertRegionTypes(&to, *getTypeConverter())))
        return failure();
    }
    rewriter.replaceOp(op, newOp->getResults());
    return success();
  }
};
} // namespace

void mlir::fp8::populateFP8ExpandFloat8Patterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<TruncFToFloat8, ExtFFromFloat8, ConstantToI8, BitcastToI8,
               GlobalToI8<ml_program::GlobalOp>, GlobalToI8<memref::GlobalOp>,
               RebuildWithI8>(converter, context);
  populateAnyFunctionOpInterfaceTypeConversionPattern(patterns, converter);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// Code in a symbol table other than a builtin module (the kernels of a
/// gpu.module) targets hardware with FP8 conversions of its own (its ops
/// name FP8 types in attributes): left as it is.
static bool isTargetCode(Operation *op) {
  Operation *table = op->getParentWithTrait<OpTrait::SymbolTable>();
  return table && !isa<ModuleOp>(table);
}

namespace {
struct FP8ExpandFloat8Pass
    : fp8::impl::FP8ExpandFloat8Base<FP8ExpandFloat8Pass> {
  void runOnOperation() override;
};
} // namespace

void FP8ExpandFloat8Pass::runOnOperation() {
  ModuleOp module = getOperation();

  // The bodies of named structured ops are implicit (rebuilt from the
  // operand types), so the casts in them can only be rewritten once spelled
  // out as linalg.generic.
  SmallVector<linalg::LinalgOp> named;
  module.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op) && hasFloat8Types(op) && !isTargetCode(op))
      named.push_back(op);
  });
  IRRewriter rewriter(&getContext());
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, op))) {
      op.emitOpError("has FP8 operands and cannot be generalized");
      return signalPassFailure();
    }
  }

  TypeConverter converter;
  populateFloat8ToI8TypeConversions(converter);
  RewritePatternSet patterns(&getContext());
  populateFP8ExpandFloat8Patterns(converter, patterns);
  ConversionTarget target(getContext());
  target.markUnknownOpDynamicallyLegal([](Operation *op) {
    return !hasFloat8Types(op) || isTargetCode(op);
  });
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    signalPassFailure();
}
