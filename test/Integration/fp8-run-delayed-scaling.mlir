// Delayed scaling over several steps (Transformer Engine's DelayedScaling),
// observed through fp8-run's per-step state: next_scale is the scale the
// next step casts with, amax_history the history after the roll. Every
// expectation is computed by the checker from the .npy inputs and TE's
// formulas: scale = 448 * 2^-margin / amax (FP8-FACTS.md section 2).
//
// RUN: %python %S/Inputs/npy.py %t.x.npy --shape 16x32 --normal 1 1.0
// RUN: %python %S/Inputs/npy.py %t.w.npy --shape 32x16 --normal 2 0.05
// RUN: %python %S/Inputs/npy.py %t.nan.npy --shape 16x32 --normal 1 1.0 --set 37=nan
// RUN: %python %S/Inputs/npy.py %t.inf.npy --shape 16x32 --normal 1 1.0 --set 37=inf
// DEFINE: %{run} = fp8-run %s --arg=0:%t.x.npy --arg=1:%t.w.npy --json
// DEFINE: %{check} = %python %S/Inputs/check_json.py
//
// History roll order, history=3, amax_compute_algo=max. The inputs are the
// same every step except step 1, scaled by 4: amaxes A, 4A, A, A, A. Row 0
// takes the step's amax, the scale comes from the max over all rows, then
// the roll moves row 0 to the last row and clears row 0. So the history
// after step s is [0, a(s-1), a(s)], and 4A decides the scale for exactly 3
// updates (steps 1, 2, 3).
// RUN: %{run} --fp8-pipeline="history=3" --steps=5 --spike-step=1 --spike-factor=4 > %t.max.json
// RUN: %{check} %t.max.json \
// RUN:   'steps.0.quantized[tensor=fp8.gemm.arg0].amax_history ~= [0, 0, amax("%t.x.npy")]' \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].amax_history ~= [0, amax("%t.x.npy"), 4 * amax("%t.x.npy")]' \
// RUN:   'steps.2.quantized[tensor=fp8.gemm.arg0].amax_history ~= [0, 4 * amax("%t.x.npy"), amax("%t.x.npy")]' \
// RUN:   'steps.3.quantized[tensor=fp8.gemm.arg0].amax_history ~= [0, amax("%t.x.npy"), amax("%t.x.npy")]' \
// RUN:   'steps.0.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.x.npy"))' \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / (4 * amax("%t.x.npy")))' \
// RUN:   'steps.2.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / (4 * amax("%t.x.npy")))' \
// RUN:   'steps.3.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / (4 * amax("%t.x.npy")))' \
// RUN:   'steps.4.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.x.npy"))' \
// RUN:   'steps.4.quantized[tensor=fp8.gemm.arg1].next_scale ~= f32(448 / amax("%t.w.npy"))'
//
// most_recent: only row 0 counts, the scale follows the amax at once.
// RUN: %{run} --fp8-pipeline="history=3 algo=most_recent" --steps=3 --spike-step=1 --spike-factor=4 > %t.recent.json
// RUN: %{check} %t.recent.json \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / (4 * amax("%t.x.npy")))' \
// RUN:   'steps.2.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.x.npy"))'
//
// margin=2: every scale divided by 2^2.
// RUN: %{run} --fp8-pipeline="history=3 margin=2" --steps=2 > %t.margin.json
// RUN: %{check} %t.margin.json \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(112 / amax("%t.x.npy"))' \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg1].next_scale ~= f32(112 / amax("%t.w.npy"))'
//
// An amax spike (x1000 at step 2). Step 2 casts with the scale of step 1,
// 448 / A: every element above (464 / 448) A / 1000 in magnitude is clipped
// to +-448 (the cast is saturating: no Inf, no NaN reaches the GEMM), so the
// outputs are wrong but finite. Its update makes the scale 448 / 1000A. Step 3 has
// the normal inputs again and casts with that scale (small values flush to
// zero); its update recovers 448 / A with most_recent. With max over a
// history of N the spike stays in the window for N updates: with N = 2 the
// scale recovers one step later, at step 4's update.
// RUN: %{run} --fp8-pipeline="history=2 algo=most_recent" --steps=5 --spike-step=2 --spike-factor=1000 > %t.spike.json
// RUN: %{check} %t.spike.json \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].saturated == 0' \
// RUN:   'steps.2.quantized[tensor=fp8.gemm.arg0].saturated > 0' \
// RUN:   'steps.2.quantized[tensor=fp8.gemm.arg0].saturated ~= saturated("%t.x.npy", f32(448 / amax("%t.x.npy")), 1000)' \
// RUN:   'steps.2.quantized[tensor=fp8.gemm.arg1].saturated ~= saturated("%t.w.npy", f32(448 / amax("%t.w.npy")), 1000)' \
// RUN:   'steps.2.outputs.0.non_finite == 0' \
// RUN:   'steps.2.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / f32(1000 * amax("%t.x.npy")))' \
// RUN:   'steps.3.quantized[tensor=fp8.gemm.arg0].saturated == 0' \
// RUN:   'steps.3.quantized[tensor=fp8.gemm.arg0].flushed_to_zero > 0' \
// RUN:   'steps.3.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.x.npy"))' \
// RUN:   'steps.4.quantized[tensor=fp8.gemm.arg0].flushed_to_zero == 0' \
// RUN:   'steps.4.outputs.0.sqnr_db >= 25'
// RUN: %{run} --fp8-pipeline="history=2 algo=max" --steps=5 --spike-step=2 --spike-factor=1000 > %t.spike-max.json
// RUN: %{check} %t.spike-max.json \
// RUN:   'steps.2.outputs.0.non_finite == 0' \
// RUN:   'steps.3.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / f32(1000 * amax("%t.x.npy")))' \
// RUN:   'steps.4.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.x.npy"))'
//
// An all-zero tensor (step 1 multiplied by 0) has amax 0: the scale is kept,
// not set to 448 / 0.
// RUN: %{run} --fp8-pipeline="history=1" --steps=3 --spike-step=1 --spike-factor=0 > %t.zero.json
// RUN: %{check} %t.zero.json \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.x.npy"))' \
// RUN:   'steps.1.outputs.0.non_finite == 0' \
// RUN:   'steps.2.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.x.npy"))'
// Zeros from the start keep the initial scale, 1.
// RUN: fp8-run -O0 %s --dist=zeros --steps=2 --json > %t.zeros.json
// RUN: %{check} %t.zeros.json \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].next_scale == 1' \
// RUN:   'steps.1.outputs.0.sqnr_db == inf'
//
// A NaN in the input: the amax ignores it (TE's amax is a max over |x| that
// skips NaN), so the scale comes from the other elements and stays finite;
// only the NaN's own output row is NaN, in the reference too.
// RUN: fp8-run -O0 %s --arg=0:%t.nan.npy --arg=1:%t.w.npy --fp8-pipeline="history=4" --steps=2 --json > %t.nan.json
// RUN: %{check} %t.nan.json \
// RUN:   'steps.0.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.nan.npy"))' \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].next_scale ~= f32(448 / amax("%t.nan.npy"))' \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].amax_history ~= [0, 0, amax("%t.nan.npy"), amax("%t.nan.npy")]' \
// RUN:   'steps.1.outputs.0.non_finite == 0'
//
// An inf in the input: the amax is inf (null in the report: JSON has no
// inf, and check_json.py refuses a report that writes one), and TE keeps
// the scale while a non-finite amax is in the history: 1, from the start.
// The reference's row 1 (element 37) is all inf or NaN; the FP8 cast
// saturates the inf to 448.
// RUN: fp8-run -O0 %s --arg=0:%t.inf.npy --arg=1:%t.w.npy --fp8-pipeline="history=4" --steps=2 --json > %t.inf.json
// RUN: %{check} %t.inf.json \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].amax_history == [0, 0, None, None]' \
// RUN:   'steps.1.quantized[tensor=fp8.gemm.arg0].next_scale == 1' \
// RUN:   'steps.1.outputs.0.reference_non_finite == 16' 'steps.1.outputs.0.non_finite == 0'

func.func @gemm(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>)
                     outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
