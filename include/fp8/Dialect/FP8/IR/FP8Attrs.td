//===- FP8Attrs.td - fp8 dialect attributes ----------------*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8ATTRS_TD
#define FP8_DIALECT_FP8_IR_FP8ATTRS_TD

include "fp8/Dialect/FP8/IR/FP8Base.td"
include "mlir/IR/EnumAttr.td"

def FP8_Format : I32EnumAttr<"Format", "FP8 format of a recipe", [
    I32EnumAttrCase<"hybrid", 0>,
    I32EnumAttrCase<"e4m3", 1>]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
}
def FP8_FormatAttr : EnumAttr<FP8_Dialect, FP8_Format, "format"> {
  let assemblyFormat = "`<` $value `>`";
}

def FP8_Scaling : I32EnumAttr<"Scaling", "per-tensor scaling recipe", [
    I32EnumAttrCase<"delayed", 0>,
    I32EnumAttrCase<"current", 1>]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
}
def FP8_ScalingAttr : EnumAttr<FP8_Dialect, FP8_Scaling, "scaling"> {
  let assemblyFormat = "`<` $value `>`";
}

def FP8_Granularity : I32EnumAttr<"Granularity",
    "what one scale covers", [
    I32EnumAttrCase<"tensor", 0>,
    I32EnumAttrCase<"row", 1>,
    I32EnumAttrCase<"block", 2>,
    I32EnumAttrCase<"mx", 3>]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
}
def FP8_GranularityAttr : EnumAttr<FP8_Dialect, FP8_Granularity,
                                   "granularity"> {
  let assemblyFormat = "`<` $value `>`";
}

def FP8_AmaxAlgo : I32EnumAttr<"AmaxAlgo", "reduction of an amax history", [
    I32EnumAttrCase<"max", 0>,
    I32EnumAttrCase<"most_recent", 1>]> {
  let cppNamespace = "::mlir::fp8";
  let genSpecializedAttr = 0;
}
def FP8_AmaxAlgoAttr : EnumAttr<FP8_Dialect, FP8_AmaxAlgo, "amax_algo"> {
  let assemblyFormat = "`<` $value `>`";
}

def FP8_RecipeAttr : FP8_Attr<"Recipe", "recipe"> {
  let summary = "An FP8 scaling recipe";
  let description = [{
    The fields of Transformer Engine's `DelayedScaling` /
    `Float8CurrentScaling` recipes:

    - `format`: `hybrid` (E4M3 forward, E5M2 for gradients) or `e4m3`;
    - `scaling`: `delayed` (scale predicted from an amax history, one pass)
      or `current` (amax of the tensor itself, then the cast);
    - `history`: amax history length (delayed scaling only, >= 1);
    - `algo`: `max` over the history or `most_recent`;
    - `margin`: headroom in powers of two, `scale = fp8_max * 2^-margin / amax`;
    - `power_of_two`: round scales down to a power of two (exact scaling);
    - `granularity`: what one scale covers: the whole `tensor`, one `row`
      along K (torchao rowwise), 1x128 / 128x128 `block`s (DeepSeek-V3, TE
      `Float8BlockScaling`) or 32-element `mx` blocks with E8M0 scales (OCP
      MXFP8). Every granularity but `tensor` uses current scaling;
    - `wgrad_high`: weight-gradient GEMMs stay in high precision (torchao
      `rowwise_with_gw_hp`).

    Omitted fields take Transformer Engine's defaults.

    ```mlir
    module attributes {fp8.recipe = #fp8.recipe<scaling = delayed, history = 16>}
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"Format", "Format::hybrid">:$format,
    DefaultValuedParameter<"Scaling", "Scaling::delayed">:$scaling,
    DefaultValuedParameter<"uint32_t", "1024">:$history,
    DefaultValuedParameter<"AmaxAlgo", "AmaxAlgo::max">:$algo,
    DefaultValuedParameter<"int32_t", "0">:$margin,
    DefaultValuedParameter<"bool", "false">:$power_of_two,
    DefaultValuedParameter<"Granularity", "Granularity::tensor">:$granularity,
    DefaultValuedParameter<"bool", "false">:$wgrad_high);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    // Transformer Engine's defaults.
    AttrBuilder<(ins), [{
      return $_get($_ctxt, Format::hybrid, Scaling::delayed, 1024,
                   AmaxAlgo::max, 0, false, Granularity::tensor, false);
    }]>,
  ];
  let extraClassDeclaration = [{
    /// The FP8 element type this recipe gives a tensor of the given role.
    ::mlir::FloatType getElementType(::mlir::MLIRContext *context,
                                     bool isGradient) const;
  }];
}

#endif // FP8_DIALECT_FP8_IR_FP8ATTRS_TD
