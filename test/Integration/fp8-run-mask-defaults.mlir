// fp8-run draws a boolean argument as a causal mask (query i sees keys
// j <= i) when it selects what a softmax reads, and all true otherwise: a
// random mask would leave rows with every key masked, whose softmax is NaN
// in every version, and say nothing about FP8.
//
// RUN: fp8-run -O0 %s --function=attention --json > %t.json
// RUN: FileCheck %s < %t.json
// CHECK: "argument": 3,
// CHECK-NEXT: "drawn_from": "causal mask: selects what a softmax reads"
// With the causal mask no row is all masked: everything is finite.
// RUN: %python %S/Inputs/check_json.py %t.json 'steps.0.outputs.0.non_finite == 0' \
// RUN:   'steps.0.outputs.0.reference_non_finite == 0' 'steps.0.outputs.0.sqnr_db >= 20'
//
// RUN: fp8-run -O0 %s --function=gate --json | FileCheck %s --check-prefix=GATE
// GATE: "argument": 1,
// GATE-NEXT: "drawn_from": "all-true mask: selects, but not before a softmax"
//
// --arg still decides.
// RUN: fp8-run -O0 %s --function=attention --arg=3:uniform --json | FileCheck %s --check-prefix=OVERRIDE
// OVERRIDE: "argument": 3,
// OVERRIDE-NEXT: "drawn_from": "--arg"

#scores = affine_map<(i, j, d) -> (i, d)>
#keys = affine_map<(i, j, d) -> (j, d)>
#out = affine_map<(i, j, d) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// softmax(select(mask, q k^T, -inf)) v over 8 positions.
func.func @attention(%q: tensor<8x64xf32>, %k: tensor<8x64xf32>, %v: tensor<8x64xf32>,
                     %mask: tensor<8x8xi1>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = linalg.matmul indexing_maps = [#scores, #keys, #out]
      ins(%q, %k : tensor<8x64xf32>, tensor<8x64xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %masked = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<8x8xf32>, tensor<8x8xi1>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%x: f32, %m: i1, %o: f32):
    %y = arith.select %m, %x, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<8x8xf32>
  %re = tensor.empty() : tensor<8xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<8x8xf32>) outs(%minit : tensor<8xf32>) {
  ^bb0(%x: f32, %m: f32):
    %y = arith.maximumf %x, %m : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%masked, %max : tensor<8x8xf32>, tensor<8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<8x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<8x8xf32>) outs(%sinit : tensor<8xf32>) {
  ^bb0(%x: f32, %a: f32):
    %y = arith.addf %x, %a : f32
    linalg.yield %y : f32
  } -> tensor<8xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<8x8xf32>, tensor<8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.divf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<8x8xf32>
  %oe = tensor.empty() : tensor<8x64xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<8x64xf32>) -> tensor<8x64xf32>
  %o = linalg.matmul ins(%p, %v : tensor<8x8xf32>, tensor<8x64xf32>) outs(%oacc : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %o : tensor<8x64xf32>
}

// A gate that selects between two values: no softmax behind it.
func.func @gate(%x: tensor<16x64xf32>, %mask: tensor<16x64xi1>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mask : tensor<16x64xf32>, tensor<16x64xi1>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %m: i1, %o: f32):
    %y = arith.select %m, %a, %zero : f32
    linalg.yield %y : f32
  } -> tensor<16x64xf32>
  %oe = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%oe : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul ins(%g, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
