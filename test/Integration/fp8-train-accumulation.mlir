// How fp8-train's bf16 recipe accumulates its GEMMs: a step whose loss is
// one bf16 GEMM, a row of 300 ones times a column of 300 ones (the
// parameter, f32 master weights initialized to ones and rounded to bf16).
// Accumulated in f32 and rounded once, as GPUs and autocast compute it
// (the default), the sum is 300, which bf16 holds exactly. Rounding every
// multiply-add to bf16, as linalg defines the op (--accumulation=as-written),
// the sum stops at 256: 256 + 1 is a tie between 256 and 258 (bf16 has 8
// significant bits) that rounds to the even 256. The fp32 recipe widens the
// GEMM to f32 under either option: 300.
//
// RUN: fp8-train -O0 %s --steps=1 --recipes=fp32,bf16 --json --quiet > %t.f32.json
// RUN: %python %S/Inputs/check_json.py %t.f32.json \
// RUN:   'runs[recipe=bf16].final_loss == 300' 'runs[recipe=fp32].final_loss == 300' \
// RUN:   'accumulation == "f32"'
// RUN: FileCheck %s --check-prefix=F32 < %t.f32.json
// RUN: fp8-train -O0 %s --steps=1 --recipes=fp32,bf16 --accumulation=as-written --csv=%t.csv --json --quiet > %t.strict.json
// RUN: %python %S/Inputs/check_json.py %t.strict.json \
// RUN:   'runs[recipe=bf16].final_loss == 256' 'runs[recipe=fp32].final_loss == 300' \
// RUN:   'accumulation == "as-written"'
// RUN: FileCheck %s --check-prefix=STRICT < %t.strict.json
// RUN: FileCheck %s --check-prefix=CSV < %t.csv
//
// F32: bf16: bf16 operands, GEMMs accumulating in f32 and rounded once
// STRICT: bf16: every GEMM multiply-add rounded to bf16
// CSV: recipe,step,train_loss,val_loss,grad_norm,seconds,accumulation
// CSV: bf16,1,256,{{.*}},as-written

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @train_step(%tok: tensor<1x300xi64> {fp8.train = "tokens"},
                      %tgt: tensor<1x300xi64> {fp8.train = "targets"},
                      %ls: tensor<f32> {fp8.train = "loss_scale"},
                      %step: f32 {fp8.train = "step"},
                      %w: tensor<300x1xf32> {fp8.init = "ones", fp8.train = "parameter"},
                      %m: tensor<300x1xf32> {fp8.train = "moment1"},
                      %v: tensor<300x1xf32> {fp8.train = "moment2"})
    -> (tensor<f32> {fp8.train = "loss"}, tensor<300x1xf32> {fp8.train = "parameter"},
        tensor<300x1xf32> {fp8.train = "moment1"}, tensor<300x1xf32> {fp8.train = "moment2"},
        tensor<f32> {fp8.train = "grad_norm"})
    attributes {fp8.train_step} {
  %one = arith.constant 1.0 : bf16
  %e = tensor.empty() : tensor<1x300xbf16>
  %x = linalg.fill ins(%one : bf16) outs(%e : tensor<1x300xbf16>) -> tensor<1x300xbf16>
  %ew = tensor.empty() : tensor<300x1xbf16>
  %wb = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<300x1xf32>) outs(%ew : tensor<300x1xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<300x1xbf16>
  %zero = arith.constant 0.0 : bf16
  %ey = tensor.empty() : tensor<1x1xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%ey : tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %y = linalg.matmul ins(%x, %wb : tensor<1x300xbf16>, tensor<300x1xbf16>) outs(%c : tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %zf = arith.constant 0.0 : f32
  %el = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%zf : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<1x1xbf16>) outs(%l0 : tensor<f32>) {
  ^bb0(%a: bf16, %o: f32):
    %f = arith.extf %a : bf16 to f32
    %r = arith.addf %o, %f : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l, %w, %m, %v, %l : tensor<f32>, tensor<300x1xf32>, tensor<300x1xf32>, tensor<300x1xf32>, tensor<f32>
}
