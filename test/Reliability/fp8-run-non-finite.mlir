// W4: with NaN or Inf in the outputs fp8-run printed "SQNR inf, error 0,
// non-finite 0": non-finite reference elements were skipped silently. Now
// they are counted (reference_non_finite) and the SQNR is "not comparable"
// ("n/c"; null with "sqnr": "not_comparable" in --json): a broken reference says
// nothing about FP8. Non-finite elements of the FP8 output where the
// reference is finite are counted in non_finite.
// S1: a zero-element .npy made fp8-run memcpy from a null pointer (UBSan);
// it now runs, with nothing to compare (an exact empty output).
//
// RUN: %python -c "import sys; sys.path.insert(0, r'%S/../Integration/Inputs'); import npy; npy.write(r'%t.nan.npy', [16, 32], [float('nan')] * 512)"
// RUN: fp8-run -O0 %s --function=gemm --arg=0:%t.nan.npy --json > %t.nan.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.nan.json \
// RUN:   'steps.0.outputs.0.reference_non_finite == 256'
// RUN: FileCheck %s --check-prefix=NANJSON < %t.nan.json
// NANJSON: "reference_non_finite": 256
// NANJSON: "sqnr": "not_comparable"
// NANJSON: "sqnr_db": null
// RUN: fp8-run -O0 %s --function=gemm --arg=0:%t.nan.npy | FileCheck %s --check-prefix=NANTABLE
// NANTABLE: output SQNR dB as written worst row median row max abs err max rel err non-finite ref non-f.
// NANTABLE-NEXT: 0 n/c inf n/c n/c 0.000e+00 0.000e+00 0 256
//
// Values near the f32 maximum: the reference GEMM overflows to Inf.
// RUN: %python -c "import sys; sys.path.insert(0, r'%S/../Integration/Inputs'); import npy; npy.write(r'%t.huge.npy', [16, 32], [3.0e38] * 512)"
// RUN: fp8-run -O0 %s --function=gemm --arg=0:%t.huge.npy --arg=1:uniform:1 --steps=2 --json > %t.huge.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.huge.json \
// RUN:   'steps.1.outputs.0.reference_non_finite > 0'
// RUN: FileCheck %s --check-prefix=NANJSON2 < %t.huge.json
// NANJSON2: "sqnr": "not_comparable"
//
// RUN: %python -c "import sys; sys.path.insert(0, r'%S/../Integration/Inputs'); import npy; npy.write(r'%t.empty.npy', [0, 4], [])"
// RUN: fp8-run -O0 %s --function=dynamic --arg=0:%t.empty.npy --json > %t.empty.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.empty.json \
// RUN:   'steps.0.outputs.0.sqnr_db == inf' 'steps.0.outputs.0.non_finite == 0'

func.func @gemm(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = arith.addf %x, %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
