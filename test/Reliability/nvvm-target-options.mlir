// F7 and W8: options of the NVVM pipelines reached LLVM unchecked.
// F7: chip=sm_80 (no FP8 conversions), chip=bogus or chip= and
// features=+ptx60 ended in an LLVM ISel fatal error or a segfault. W8:
// format=bogus printed an error but exited 0 with unparsable output. They
// are now refused before any upstream pass runs, and the conversion passes
// check the same when used alone.
//
// RUN: not fp8-opt %s --fp8-lower-to-nvvm=chip=sm_80 2>&1 | FileCheck %s --check-prefix=SM80
// SM80: error: chip 'sm_80' cannot run the FP8 kernels: FP8 conversions need sm_89 or later
// RUN: not fp8-opt %s --fp8-lower-to-nvvm=chip=bogus 2>&1 | FileCheck %s --check-prefix=BOGUS
// BOGUS: error: chip 'bogus' cannot run the FP8 kernels
// RUN: not fp8-opt %s --fp8-lower-to-nvvm=chip= 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: chip '' cannot run the FP8 kernels
// RUN: not fp8-opt %s "--fp8-lower-to-nvvm=features=+ptx60" 2>&1 | FileCheck %s --check-prefix=PTX60
// PTX60: error: PTX ISA 6.0 is too old for sm_90a: it needs +ptx80 or later
// RUN: not fp8-opt %s "--fp8-lower-to-nvvm=chip=sm_89 features=+ptx77" 2>&1 | FileCheck %s --check-prefix=PTX77
// PTX77: error: PTX ISA 7.7 is too old for sm_89: it needs +ptx78 or later
// RUN: not fp8-opt %s "--fp8-lower-to-nvvm=features=+sm90" 2>&1 | FileCheck %s --check-prefix=FEATURE
// FEATURE: error: unsupported NVVM feature '+sm90' (expected +ptxNN, e.g. +ptx80)
// RUN: not fp8-opt %s --fp8-lower-to-nvvm=format=bogus 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: unknown format 'bogus' (expected isa, bin, fatbin or llvm)
// RUN: not fp8-opt %s --fp8-lower-gemm-to-nvvm=chip=sm_80 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not fp8-opt %s --fp8-lower-gemm-to-nvvm=format=cubin 2>&1 | FileCheck %s --check-prefix=CUBIN
// CUBIN: error: unknown format 'cubin'
//
// The conversion pass alone: an error on the module, in its file.
// RUN: not fp8-opt %s --convert-fp8-to-nvvm=chip=sm_80 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: nvvm-target-options.mlir:0:0: error: chip 'sm_80' cannot run the FP8 kernels
//
// Valid targets still lower (sm_89 with its minimum PTX, sm_90a by default).
// RUN: fp8-opt %s "--fp8-lower-to-nvvm=chip=sm_89 features=+ptx78 format=llvm" | FileCheck %s --check-prefix=OK
// OK: #nvvm.target<O = 3, chip = "sm_89", features = "+ptx78">
func.func @f(%x: tensor<256x128xbf16>, %s: f32) -> (tensor<256x128xf8E4M3FN>, f32) {
  %q, %a = fp8.quantize %x, %s : tensor<256x128xbf16> -> tensor<256x128xf8E4M3FN>, f32
  return %q, %a : tensor<256x128xf8E4M3FN>, f32
}
