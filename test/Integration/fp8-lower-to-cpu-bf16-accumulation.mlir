// bf16 and f16 GEMMs on the CPU under both accumulation semantics
// (DESIGN.md decision 15, docs/numerics.md): by default in f32, rounded
// once to the result type, as the GPU's wgmma kernels and cuBLAS compute
// them; with accumulation=as-written every multiply-add rounded to the
// result type, as linalg defines the op. Vectorized and threaded, and as
// scalar loops.
//
// The inputs make the two differ by hand-derivable amounts. Expected
// values: the exact sum (an f64 computation; every sum here is exact in
// f64 and in f32) rounded once to bf16 / f16 for f32 accumulation, and the
// same sum taken one term at a time, each partial sum rounded to nearest
// even in bf16 / f16, for as-written:
//  - 1 + 2^-8 + 2^-8 = 1 + 2^-7 (bf16: 1.0078125). In bf16 steps 1 + 2^-8
//    is a tie between 1 and 1 + 2^-7 and rounds to even, 1, twice: 1.
//  - 256 (the init) + 1 + 1 + 1 = 259, a tie between bf16's 258 and 260
//    (spacing 2 above 256): 260. In bf16 steps 256 + 1 ties to 256: 256.
//  - 300 ones (K = 300: two K blocks, and a remainder register tile):
//    300, exact in bf16. In bf16 steps the sum is exact up to 256, then
//    256 + 1 ties to 256: 256. The same for the transposed, batched and
//    generic forms.
//  - f16: 1 + 2^-11 + 2^-11 = 1 + 2^-10 (1.0009765625); in f16 steps 1 (the
//    tie 1 + 2^-11 rounds to 1). 2100 ones: 2100 (f16 spacing 2 above 2048);
//    in f16 steps the sum stops at 2048.
//
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s --check-prefix=F32
// RUN: fp8-opt %s --fp8-lower-to-cpu="vectorize=false threads=false" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils \
// RUN: | FileCheck %s --check-prefix=F32
// RUN: fp8-opt %s --fp8-lower-to-cpu="accumulation=as-written" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s --check-prefix=STRICT
// RUN: fp8-opt %s --fp8-lower-to-cpu="vectorize=false threads=false accumulation=as-written" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils \
// RUN: | FileCheck %s --check-prefix=STRICT

// Public, so that no pass sees the constants: the GEMMs run on the CPU.
func.func @small(%a: tensor<2x3xbf16>, %b: tensor<3x1xbf16>, %c: tensor<2x1xbf16>)
    -> tensor<2x1xbf16> {
  %r = linalg.matmul ins(%a, %b : tensor<2x3xbf16>, tensor<3x1xbf16>)
                     outs(%c : tensor<2x1xbf16>) -> tensor<2x1xbf16>
  return %r : tensor<2x1xbf16>
}

func.func @ones(%a: tensor<8x300xbf16>, %b: tensor<300x32xbf16>, %bt: tensor<32x300xbf16>,
                %ba: tensor<2x8x300xbf16>, %bb: tensor<2x300x32xbf16>)
    -> (tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<2x8x32xbf16>, tensor<8x32xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8x32xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%e : tensor<8x32xbf16>) -> tensor<8x32xbf16>
  %mm = linalg.matmul ins(%a, %b : tensor<8x300xbf16>, tensor<300x32xbf16>)
                      outs(%c : tensor<8x32xbf16>) -> tensor<8x32xbf16>
  %tb = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                       affine_map<(d0, d1, d2) -> (d1, d2)>,
                                       affine_map<(d0, d1, d2) -> (d0, d1)>]
                      ins(%a, %bt : tensor<8x300xbf16>, tensor<32x300xbf16>)
                      outs(%c : tensor<8x32xbf16>) -> tensor<8x32xbf16>
  %e3 = tensor.empty() : tensor<2x8x32xbf16>
  %c3 = linalg.fill ins(%zero : bf16) outs(%e3 : tensor<2x8x32xbf16>) -> tensor<2x8x32xbf16>
  %bm = linalg.batch_matmul ins(%ba, %bb : tensor<2x8x300xbf16>, tensor<2x300x32xbf16>)
                            outs(%c3 : tensor<2x8x32xbf16>) -> tensor<2x8x32xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                        affine_map<(d0, d1, d2) -> (d2, d1)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x300xbf16>, tensor<300x32xbf16>) outs(%c : tensor<8x32xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<8x32xbf16>
  return %mm, %tb, %bm, %g
      : tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<2x8x32xbf16>, tensor<8x32xbf16>
}

func.func @half(%a: tensor<1x3xf16>, %b: tensor<3x1xf16>, %ones_a: tensor<4x2100xf16>,
                %ones_b: tensor<2100x16xf16>) -> (tensor<1x1xf16>, tensor<4x16xf16>) {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x1xf16>
  %c = linalg.fill ins(%zero : f16) outs(%e : tensor<1x1xf16>) -> tensor<1x1xf16>
  %r = linalg.matmul ins(%a, %b : tensor<1x3xf16>, tensor<3x1xf16>)
                     outs(%c : tensor<1x1xf16>) -> tensor<1x1xf16>
  %e2 = tensor.empty() : tensor<4x16xf16>
  %c2 = linalg.fill ins(%zero : f16) outs(%e2 : tensor<4x16xf16>) -> tensor<4x16xf16>
  %s = linalg.matmul ins(%ones_a, %ones_b : tensor<4x2100xf16>, tensor<2100x16xf16>)
                     outs(%c2 : tensor<4x16xf16>) -> tensor<4x16xf16>
  return %r, %s : tensor<1x1xf16>, tensor<4x16xf16>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c17 = arith.constant 17 : index
  %c31 = arith.constant 31 : index
  %c15 = arith.constant 15 : index

  %a = arith.constant dense<[[1.0, 0.00390625, 0.00390625], [1.0, 1.0, 1.0]]> : tensor<2x3xbf16>
  %b = arith.constant dense<1.0> : tensor<3x1xbf16>
  %c = arith.constant dense<[[0.0], [256.0]]> : tensor<2x1xbf16>
  %small = call @small(%a, %b, %c)
      : (tensor<2x3xbf16>, tensor<3x1xbf16>, tensor<2x1xbf16>) -> tensor<2x1xbf16>
  // F32: 1.00781
  // F32-NEXT: 260
  // STRICT: 1
  // STRICT-NEXT: 256
  %s0 = tensor.extract %small[%c0, %c0] : tensor<2x1xbf16>
  %s0w = arith.extf %s0 : bf16 to f32
  vector.print %s0w : f32
  %s1 = tensor.extract %small[%c1, %c0] : tensor<2x1xbf16>
  %s1w = arith.extf %s1 : bf16 to f32
  vector.print %s1w : f32

  %oa = arith.constant dense<1.0> : tensor<8x300xbf16>
  %ob = arith.constant dense<1.0> : tensor<300x32xbf16>
  %obt = arith.constant dense<1.0> : tensor<32x300xbf16>
  %oba = arith.constant dense<1.0> : tensor<2x8x300xbf16>
  %obb = arith.constant dense<1.0> : tensor<2x300x32xbf16>
  %mm, %tb, %bm, %g = call @ones(%oa, %ob, %obt, %oba, %obb)
      : (tensor<8x300xbf16>, tensor<300x32xbf16>, tensor<32x300xbf16>,
         tensor<2x8x300xbf16>, tensor<2x300x32xbf16>)
     -> (tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<2x8x32xbf16>, tensor<8x32xbf16>)
  // F32-NEXT: 300
  // F32-NEXT: 300
  // F32-NEXT: 300
  // F32-NEXT: 300
  // F32-NEXT: 300
  // F32-NEXT: 300
  // STRICT-NEXT: 256
  // STRICT-NEXT: 256
  // STRICT-NEXT: 256
  // STRICT-NEXT: 256
  // STRICT-NEXT: 256
  // STRICT-NEXT: 256
  %m0 = tensor.extract %mm[%c0, %c0] : tensor<8x32xbf16>
  %m0w = arith.extf %m0 : bf16 to f32
  vector.print %m0w : f32
  %m1 = tensor.extract %mm[%c7, %c31] : tensor<8x32xbf16>
  %m1w = arith.extf %m1 : bf16 to f32
  vector.print %m1w : f32
  %t0 = tensor.extract %tb[%c3, %c17] : tensor<8x32xbf16>
  %t0w = arith.extf %t0 : bf16 to f32
  vector.print %t0w : f32
  %b0 = tensor.extract %bm[%c1, %c7, %c31] : tensor<2x8x32xbf16>
  %b0w = arith.extf %b0 : bf16 to f32
  vector.print %b0w : f32
  %b1 = tensor.extract %bm[%c0, %c3, %c17] : tensor<2x8x32xbf16>
  %b1w = arith.extf %b1 : bf16 to f32
  vector.print %b1w : f32
  %g0 = tensor.extract %g[%c7, %c0] : tensor<8x32xbf16>
  %g0w = arith.extf %g0 : bf16 to f32
  vector.print %g0w : f32

  %ha = arith.constant dense<[[1.0, 0.00048828125, 0.00048828125]]> : tensor<1x3xf16>
  %hb = arith.constant dense<1.0> : tensor<3x1xf16>
  %hoa = arith.constant dense<1.0> : tensor<4x2100xf16>
  %hob = arith.constant dense<1.0> : tensor<2100x16xf16>
  %hr, %hs = call @half(%ha, %hb, %hoa, %hob)
      : (tensor<1x3xf16>, tensor<3x1xf16>, tensor<4x2100xf16>, tensor<2100x16xf16>)
     -> (tensor<1x1xf16>, tensor<4x16xf16>)
  // F32-NEXT: 1.00098
  // F32-NEXT: 2100
  // STRICT-NEXT: 1
  // STRICT-NEXT: 2048
  %h0 = tensor.extract %hr[%c0, %c0] : tensor<1x1xf16>
  %h0w = arith.extf %h0 : f16 to f32
  vector.print %h0w : f32
  %h1 = tensor.extract %hs[%c3, %c15] : tensor<4x16xf16>
  %h1w = arith.extf %h1 : f16 to f32
  vector.print %h1w : f32
  return
}
