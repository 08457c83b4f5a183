//===- GemmAnalysis.h - Find GEMMs and decide their precision ---*- C++ -*-===//
//
// Finds every GEMM of a function by structure (any linalg op that is a
// contraction with one M, one N and one K dimension, plus batch dimensions:
// linalg.matmul with or without indexing_maps, batch_matmul,
// batch_reduce_matmul, contract, generic contractions), works out the roles of
// its operands (weight, activation, gradient) by tracing them through views,
// and decides, with a reason code, whether it runs in FP8.
//
// fp8-classify reports these decisions; fp8-quantize acts on them. Both call
// the same analysis, so what is reported is what is done.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_ANALYSIS_GEMMANALYSIS_H
#define FP8_DIALECT_FP8_ANALYSIS_GEMMANALYSIS_H

#include "fp8/Dialect/FP8/IR/FP8Attrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::fp8 {

enum class OperandRole { Weight, Activation, Gradient };
StringRef stringifyOperandRole(OperandRole role);

/// Why a GEMM got its decision. Stable strings: reports and tests use them.
enum class GemmReason {
  // Converted to FP8.
  WeightGemm,          // one operand is a weight: a projection
  ForcedFP8,           // `fp8.precision = "fp8"` on the op
  ActivationGemmOptIn, // activation x activation, enabled by option
  // Kept in high precision.
  ForcedHighPrecision, // `fp8.precision = "high"` on the op
  Excluded,            // matched an exclude pattern (function or location)
  ActivationGemm,      // attention's activation x activation GEMMs
  FirstOrLastGemm,     // keep-first-last option
  BelowSizeThreshold,  // 2*M*N*K below min-flops
  UnalignedKOrN,       // K or N not a multiple of 16 (Hopper FP8 tiles)
  WeightGradientKept,  // wgrad-high: weight gradients stay high precision
  DynamicBlockShape,   // per-block scales need static shapes
  UnsupportedElementType, // not f32 / bf16 / f16 (integer GEMMs, f64, ...)
  UnsupportedLayout,   // several M/N/K dims or an operand layout we can't map
  BufferSemantics,     // linalg on memrefs
  ZeroSized,           // an empty dimension: nothing to compute
  Convolution,         // reported, never converted
  OutsideFunction,     // not in a function: no place for its scaling state
};
StringRef stringifyGemmReason(GemmReason reason);
bool isFP8Reason(GemmReason reason);

/// One GEMM operand as fp8.scaled_matmul will consume it.
struct GemmOperand {
  /// The tensor to quantize: the linalg operand, or a cheaper source it is a
  /// view of (the 2-D weight behind a batch broadcast, the input of a
  /// transpose, which then flips `transposed`).
  Value value;
  /// [.., K, M] for the lhs, [.., N, K] for the rhs.
  bool transposed = false;
  OperandRole role = OperandRole::Activation;
  /// What the role was derived from, for the report ("arg2", "constant",
  /// "global @w", "computed").
  std::string origin;
  /// The trailing dimensions of `value` that are the matrix (M and K, or K
  /// and N, possibly several each); any before are batch dimensions.
  int64_t matrixRank = 2;
};

struct GemmInfo {
  Operation *op = nullptr;
  GemmOperand lhs, rhs;
  /// Static sizes, ShapedType::kDynamic when unknown.
  int64_t m = 0, n = 0, k = 0;
  SmallVector<int64_t> batch;
  /// Index among the function's GEMMs, in walk order: part of state names.
  unsigned index = 0;
  /// C += A B: the accumulator is a live tensor, not a zero fill.
  bool accumulates = false;
  /// batch_reduce_matmul: A [B, M, K] and B [B, K, N] reduced over B and K,
  /// a GEMM with K' = B * K once the operands are reshaped (`k` is K').
  bool batchReduce = false;
  GemmReason reason = GemmReason::UnsupportedLayout;
  /// The GEMM's own recipe (`fp8.recipe` on the op, as fp8-tune writes it),
  /// or null: the module's recipe applies.
  RecipeAttr ownRecipe;
  /// Several M, N or K dimensions (a Linear on [b, s, k] activations, heads
  /// split as [h, d]): the sizes of each group's dimensions, in order, and
  /// the reassociations that fold the lhs, rhs and result into one GEMM
  /// ([batch..., M, K] / [batch..., K, N] / [batch..., M, N]); a
  /// reassociation is empty where that tensor needs no reshape. m, n and k
  /// are then the groups' products.
  SmallVector<int64_t, 0> mDims, nDims, kDims;
  SmallVector<ReassociationIndices, 0> lhsCollapse, rhsCollapse, resultCollapse;

  bool isFP8() const { return isFP8Reason(reason); }
  /// The recipe this GEMM is quantized under: its own, or `moduleRecipe`.
  RecipeAttr getRecipe(RecipeAttr moduleRecipe) const {
    return ownRecipe ? ownRecipe : moduleRecipe;
  }
  bool isCollapsed() const { return !mDims.empty(); }
  /// batch..., M, N, K.
  SmallVector<int64_t> getSizes() const;
  /// 2 * batch * M * N * K (saturating at INT64_MAX), or nullopt when a size
  /// is dynamic.
  std::optional<int64_t> getFlops() const;
};

/// User policy: the pipeline's options. A GEMM with its own `fp8.recipe`
/// takes `wgradHigh` and `requireStaticShapes` from that recipe instead.
struct GemmPolicy {
  bool fp8Attention = false;
  bool keepFirstLast = false;
  int64_t minFlops = 0;
  /// Keep weight-gradient GEMMs (activation^T x gradient) in high precision.
  bool wgradHigh = false;
  /// Per-block scaling: GEMMs with dynamic sizes stay high precision.
  bool requireStaticShapes = false;
  /// Regular expressions matched against the function name and the printed
  /// location of the op.
  SmallVector<std::string> exclude;
};

/// The block one scale covers for a GEMM operand under `recipe`:
/// {extent along K, extent along the operand's other matrix dimension (M for
/// the lhs, N for the rhs)}; nullopt per tensor. Rows span K; 1x128 tiles
/// along K, 128x128 for weights (block); 32 along K (mx); under wgrad-high
/// the input-gradient GEMM's weight spans its whole matrix. `kSize` and
/// `otherSize` are the operand's sizes along those dimensions. fp8-quantize
/// and the report share this rule.
std::optional<std::pair<int64_t, int64_t>>
getOperandBlock(RecipeAttr recipe, OperandRole role, OperandRole otherRole,
                int64_t kSize, int64_t otherSize);

/// Matches a contraction's indexing maps to fp8.scaled_matmul's layouts
/// (M, N and K loops, each a contiguous group of one or more dimensions in
/// every tensor, batch loops, transposed or shared operands). On success
/// fills `info`'s sizes, operands (unpeeled), layout flags and, for grouped
/// dimensions, the reassociations that make it one GEMM.
LogicalResult matchGemmLayout(linalg::LinalgOp op, GemmInfo &info);

/// `init` is a zero fill (or a zero constant): the GEMM does not accumulate
/// into live data.
bool isZeroFill(Value init);

/// Classifies every GEMM (and convolution) in `module`, in walk order.
/// Emits an error and fails on an invalid exclude pattern.
FailureOr<SmallVector<GemmInfo, 0>> analyzeGemms(ModuleOp module,
                                              const GemmPolicy &policy);

/// The FP8 element type of a quantized operand under `recipe`.
FloatType getOperandFloat8Type(MLIRContext *context, RecipeAttr recipe,
                               OperandRole role);

/// The --fp8-report JSON document: one record per GEMM plus totals. GEMMs
/// with their own recipe list it; the others follow `recipe`.
llvm::json::Value buildGemmReport(ArrayRef<GemmInfo> gemms, RecipeAttr recipe);

/// The JSON form of a recipe in reports: granularity, scaling, format and
/// the kind of scales.
llvm::json::Object buildRecipeReport(RecipeAttr recipe);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_ANALYSIS_GEMMANALYSIS_H
