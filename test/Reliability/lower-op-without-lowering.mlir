// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-lower-to-cpu
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-lower-to-cpu="vectorize=false threads=false"
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-lower-to-gpu

// An op nothing lowers is a located error naming it (the pipelines used
// to exit 0 with it left in an LLVM dialect module, wrapped in unrealized
// casts, and translation failed later on a cast). math.erf calls libm in
// f32 and f64; libm has no f128 function the lowering calls.

func.func @wide(%x: f128) -> f128 {
  // expected-error @below {{'math.erf' op is left after the lowering to the LLVM dialect: nothing lowers it}}
  %y = math.erf %x : f128
  return %y : f128
}
