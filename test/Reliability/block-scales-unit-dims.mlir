// B1: the shared Llama-3-8B FFN's shape in small, [1, 128, K] x W^T under
// granularity=row: the lhs scales are [1, 128, 1] (a batch of 1, one block
// along K), so a rank-reducing slice of them was ambiguous and came back
// from canonicalization with its sizes permuted, failing to verify. Both
// CPU lowerings must accept it and the result must be an FP8 GEMM's.
// RUN: fp8-opt %s --fp8-pipeline="granularity=row" --fp8-lower-to-cpu -o /dev/null
// RUN: fp8-opt %s --fp8-pipeline="granularity=row" --fp8-lower-to-cpu="vectorize=false threads=false" -o /dev/null
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=row" --json > %t.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.json 'steps.0.outputs.0.sqnr_db >= 25'

func.func @ffn_up(%x: tensor<1x128x256xbf16>, %w: tensor<512x256xbf16>) -> tensor<1x128x512xbf16> {
  %cst = arith.constant 0.0 : bf16
  %t = tensor.empty() : tensor<256x512xbf16>
  %wt = linalg.transpose ins(%w : tensor<512x256xbf16>) outs(%t : tensor<256x512xbf16>) permutation = [1, 0]
  %b = tensor.empty() : tensor<1x256x512xbf16>
  %wb = linalg.broadcast ins(%wt : tensor<256x512xbf16>) outs(%b : tensor<1x256x512xbf16>) dimensions = [0]
  %o = tensor.empty() : tensor<1x128x512xbf16>
  %f = linalg.fill ins(%cst : bf16) outs(%o : tensor<1x128x512xbf16>) -> tensor<1x128x512xbf16>
  %y = linalg.batch_matmul ins(%x, %wb : tensor<1x128x256xbf16>, tensor<1x256x512xbf16>)
      outs(%f : tensor<1x128x512xbf16>) -> tensor<1x128x512xbf16>
  return %y : tensor<1x128x512xbf16>
}
