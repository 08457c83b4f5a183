// N19: fp8-run's report held every entry of every amax history of every
// step as JSON values (about 50 bytes each): with history=1e8 it ran out of
// memory after the memory budget had let the run start. A history of more
// than 1024 entries is now summarized: its length, the most recent 1024
// entries and the largest; the budget counts the copy the report reads.
//
// RUN: %python %S/../Integration/Inputs/npy.py %t.x.npy --shape 16x32 --normal 1 1.0
// RUN: %python %S/../Integration/Inputs/npy.py %t.w.npy --shape 32x16 --normal 2 0.05
// DEFINE: %{run} = fp8-run -O0 %s --arg=0:%t.x.npy --arg=1:%t.w.npy --same-inputs --json
// DEFINE: %{check} = %python %S/../Integration/Inputs/check_json.py
//
// RUN: %{run} --fp8-pipeline=history=1000000 --steps=2 > %t.long.json
// RUN: %{check} %t.long.json \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg0].amax_history_length == 1000000' \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg0].amax_history_recent.1023 ~= amax("%t.x.npy")' \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg0].amax_history_recent.1022 ~= amax("%t.x.npy")' \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg0].amax_history_recent.1021 == 0' \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg0].amax_history_max ~= amax("%t.x.npy")' \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg1].amax_history_max ~= amax("%t.w.npy")'
// RUN: %python -c "import json, os, sys; r = json.load(open(sys.argv[1])); \
// RUN:   q = [t for s in r['steps'] for t in s['quantized']]; \
// RUN:   assert len(q) == 4 and all('amax_history' not in t and len(t['amax_history_recent']) == 1024 for t in q); \
// RUN:   assert os.path.getsize(sys.argv[1]) < 200000, os.path.getsize(sys.argv[1])" %t.long.json
//
// Up to 1024 entries, the whole history, as before.
// RUN: %{run} --fp8-pipeline=history=1024 --steps=2 > %t.short.json
// RUN: %{check} %t.short.json \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg0].amax_history_length == 1024' \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg0].amax_history.1023 ~= amax("%t.x.npy")' \
// RUN:   'steps.1.quantized[tensor=fp8.f.arg0].amax_history.1021 == 0'
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); \
// RUN:   assert all(len(t['amax_history']) == 1024 and 'amax_history_recent' not in t \
// RUN:              for s in r['steps'] for t in s['quantized'])" %t.short.json

func.func @f(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
