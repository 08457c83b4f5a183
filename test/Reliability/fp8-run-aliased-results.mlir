// F4: `return %y, %y` gave fp8-run two results with one buffer, which it
// freed twice (abort, or a deadlocked crash handler). Each allocation is
// now freed once, and a returned argument (the caller's own storage) never.
// The function is elementwise, so both versions agree exactly.
//
// RUN: fp8-run -O0 %s --function=twice --json > %t.twice.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.twice.json \
// RUN:   'steps.0.outputs.0.sqnr_db == inf' 'steps.0.outputs.1.sqnr_db == inf'
// RUN: fp8-run -O0 %s --function=twice_16x32 --steps=3 --json > %t.big.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.big.json \
// RUN:   'steps.2.outputs.0.sqnr_db == inf' 'steps.2.outputs.1.sqnr_db == inf'
// RUN: fp8-run -O0 %s --function=passthrough --json > %t.pass.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.pass.json \
// RUN:   'steps.0.outputs.0.sqnr_db == inf' 'steps.0.outputs.1.sqnr_db == inf' \
// RUN:   'steps.0.outputs.2.sqnr_db == inf'

func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y, %y : tensor<4xf32>, tensor<4xf32>
}

func.func @twice_16x32(%x: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %y = arith.mulf %x, %x : tensor<16x32xf32>
  return %y, %y : tensor<16x32xf32>, tensor<16x32xf32>
}

// The argument itself, a view of a new buffer, and that buffer.
func.func @passthrough(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<16xf32>, tensor<4x4xf32>) {
  %y = arith.addf %x, %x : tensor<4x4xf32>
  %v = tensor.collapse_shape %y [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  return %x, %v, %y : tensor<4x4xf32>, tensor<16xf32>, tensor<4x4xf32>
}
