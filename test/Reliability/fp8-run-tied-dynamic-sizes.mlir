// N9: fp8-run took each .npy input whose shape fits its argument's type and
// drew the other dynamic arguments at --dynamic-size, never checking them
// against each other: a 2x3 A for a ?x? matmul against a drawn 16x16 B ran
// with K = 3 and reported an SQNR; a 16x200000 A read 200000 rows of the
// 16-row B (SIGSEGV), and the memory budget assumed 16 for every `?`.
// Dimensions that the graph ties together (linalg indexing maps, tensor.dim,
// elementwise ops) now take a file's size, files that disagree are refused,
// and the budget counts the sizes used.
//
// RUN: %python %S/../Integration/Inputs/npy.py %t.a2x3.npy --shape 2x3 --normal 1 1.0
// RUN: %python %S/../Integration/Inputs/npy.py %t.b7x5.npy --shape 7x5 --normal 2 1.0
// RUN: %python %S/../Integration/Inputs/npy.py %t.a16x4096.npy --shape 16x4096 --normal 3 1.0
// DEFINE: %{check} = %python %S/../Integration/Inputs/check_json.py
//
// B is drawn 3x16: its K from A's file, its N at --dynamic-size.
// RUN: fp8-run -O0 %s --function=mm --arg=0:%t.a2x3.npy --json > %t.drawn.json
// RUN: %{check} %t.drawn.json 'inputs.0.shape == [2, 3]' 'inputs.1.shape == [3, 16]' \
// RUN:   'steps.0.outputs.0.sqnr_db > 20'
//
// Two files that disagree on K.
// RUN: not fp8-run -O0 %s --function=mm --arg=0:%t.a2x3.npy --arg=1:%t.b7x5.npy 2>&1 \
// RUN: | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: fp8-run: error: argument #1 ('{{.*}}b7x5.npy') has 7 in dimension 0, but @mm requires it to equal dimension 1 of argument #0 ('{{.*}}a2x3.npy'), which is 3
//
// A long K: B is drawn 4096x16, and the budget counts it (A and its file,
// 256 KiB each, B 256 KiB, the 16x16 result twice).
// RUN: not fp8-run -O0 %s --function=mm --arg=0:%t.a16x4096.npy --memory-budget=600K 2>&1 \
// RUN: | FileCheck %s --check-prefix=BUDGET
// BUDGET: fp8-run: error: running @mm as written needs 770.0 KiB for its arguments, results and globals (dynamic sizes 16 where not tied to a .npy input's), more than the memory budget of 600.0 KiB (--memory-budget)
// RUN: fp8-run -O0 %s --function=mm --arg=0:%t.a16x4096.npy --json > %t.long.json
// RUN: %{check} %t.long.json 'inputs.1.shape == [4096, 16]' 'steps.0.outputs.0.sqnr_db > 20'
//
// A static size ties too: K is 32 through B's type.
// RUN: fp8-run -O0 %s --function=static_k --json > %t.static.json
// RUN: %{check} %t.static.json 'inputs.0.shape == [16, 32]'
// RUN: not fp8-run -O0 %s --function=static_k --arg=0:%t.a2x3.npy 2>&1 \
// RUN: | FileCheck %s --check-prefix=STATIC
// STATIC: fp8-run: error: argument #0 ('{{.*}}a2x3.npy') has 3 in dimension 1, but @static_k requires it to be 32
//
// Elementwise operands, and sizes tied through tensor.dim and tensor.empty.
// RUN: fp8-run -O0 %s --function=add --arg=1:%t.a2x3.npy --json > %t.add.json
// RUN: %{check} %t.add.json 'inputs.0.shape == [2, 3]' 'inputs.2.shape == [3]'

func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

func.func @static_k(%a: tensor<?x?xf32>, %b: tensor<32x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %y = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<32x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// %bias is added along the last dimension (a broadcast in linalg.generic).
func.func @add(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %s = arith.addf %x, %y : tensor<?x?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %s, %c0 : tensor<?x?xf32>
  %n = tensor.dim %s, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
