// Finer scaling (granularity=row|block|mx) on one linear layer's GEMM,
// y = x w^T with x [256, 1024] and w [512, 1024], against f32.
//
// N(0, 1) activations: with power-of-two scales every granularity keeps
// the same mantissa bits (a power of two only shifts the exponent), so all
// land at the ~28.5 dB an E4M3 cast pair allows (FP8-FACTS.md section 2).
// RUN: %python %S/Inputs/npy.py %t.x.npy --shape 256x1024 --normal 1 1.0
// RUN: fp8-run -O0 %s --fp8-pipeline="scaling=current" --arg=0:%t.x.npy --json > %t.tensor.json
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=row" --arg=0:%t.x.npy --json > %t.row.json
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=block" --arg=0:%t.x.npy --json > %t.block.json
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=mx" --arg=0:%t.x.npy --json > %t.mx.json
// RUN: %python %S/Inputs/check_json.py %t.tensor.json 'steps.0.outputs.0.sqnr_db >= 28'
// RUN: %python %S/Inputs/check_json.py %t.row.json 'steps.0.outputs.0.sqnr_db >= 28' 'steps.0.outputs.0.worst_row_sqnr_db >= 27'
// RUN: %python %S/Inputs/check_json.py %t.block.json 'steps.0.outputs.0.sqnr_db >= 28' 'steps.0.outputs.0.worst_row_sqnr_db >= 27'
// RUN: %python %S/Inputs/check_json.py %t.mx.json 'steps.0.outputs.0.sqnr_db >= 28' 'steps.0.outputs.0.worst_row_sqnr_db >= 27'
//
// One outlier channel x100 (0.1% of K, as LLM activations carry): the
// per-tensor scale is set by the outlier; rows and blocks with f32 scales
// map every row's own amax onto 448 and gain >= 3 dB, and the worst row
// gains more.
// RUN: %python %S/Inputs/npy.py %t.xo.npy --shape 256x1024 --normal 1 1.0 --outlier-channels 1 100
// RUN: fp8-run -O0 %s --fp8-pipeline="scaling=current" --arg=0:%t.xo.npy --json > %t.otensor.json
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=row exact-scales" --arg=0:%t.xo.npy --json > %t.orow.json
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=block exact-scales" --arg=0:%t.xo.npy --json > %t.oblock.json
// RUN: %python %S/Inputs/check_json.py %t.orow.json \
// RUN:   'steps.0.outputs.0.sqnr_db >= report("%t.otensor.json", "steps.0.outputs.0.sqnr_db") + 3' \
// RUN:   'steps.0.outputs.0.worst_row_sqnr_db >= report("%t.otensor.json", "steps.0.outputs.0.worst_row_sqnr_db") + 3'
// RUN: %python %S/Inputs/check_json.py %t.oblock.json \
// RUN:   'steps.0.outputs.0.sqnr_db >= report("%t.otensor.json", "steps.0.outputs.0.sqnr_db") + 3' \
// RUN:   'steps.0.outputs.0.worst_row_sqnr_db >= report("%t.otensor.json", "steps.0.outputs.0.worst_row_sqnr_db") + 3'
//
// All-zero rows of x and all-zero 128x128 blocks of w get a finite scale:
// no NaN anywhere, the zero rows give zeros (DeepSeek's reference quantizer
// divides 0/0 there: torchao#3356, #4713).
// RUN: %python %S/Inputs/npy.py %t.xz.npy --shape 256x1024 --normal 1 1.0 --set-row 3=0 --set-row 100-130=0
// RUN: %python %S/Inputs/npy.py %t.wz.npy --shape 512x1024 --normal 2 0.03125 --set-row 0-127=0
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=block" --arg=0:%t.xz.npy --arg=1:%t.wz.npy --json > %t.zblock.json
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=mx" --arg=0:%t.xz.npy --arg=1:%t.wz.npy --json > %t.zmx.json
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=row exact-scales" --arg=0:%t.xz.npy --arg=1:%t.wz.npy --json > %t.zrow.json
// RUN: %python %S/Inputs/check_json.py %t.zblock.json 'steps.0.outputs.0.non_finite == 0' 'steps.0.outputs.0.sqnr_db >= 28'
// RUN: %python %S/Inputs/check_json.py %t.zmx.json 'steps.0.outputs.0.non_finite == 0' 'steps.0.outputs.0.sqnr_db >= 28'
// RUN: %python %S/Inputs/check_json.py %t.zrow.json 'steps.0.outputs.0.non_finite == 0' 'steps.0.outputs.0.sqnr_db >= 28'
//
// A NaN row stays the NaN row: nothing else becomes non-finite (the block
// amax ignores NaN, as TE's does).
// RUN: %python %S/Inputs/npy.py %t.xn.npy --shape 256x1024 --normal 1 1.0 --set-row 5=nan
// RUN: fp8-run -O0 %s --fp8-pipeline="granularity=block" --arg=0:%t.xn.npy --json > %t.nblock.json
// RUN: %python %S/Inputs/check_json.py %t.nblock.json 'steps.0.outputs.0.non_finite == 0' 'steps.0.outputs.0.reference_non_finite == 512'

func.func @gemm(%x: tensor<256x1024xf32>, %w: tensor<512x1024xf32>) -> tensor<256x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<256x1024xf32>, tensor<512x1024xf32>)
      outs(%c : tensor<256x512xf32>) -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}
