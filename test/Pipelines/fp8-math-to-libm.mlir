// RUN: fp8-opt %s --fp8-math-to-libm | FileCheck %s

// The math ops LLVM has no intrinsic for call libm; the others stay for
// convert-math-to-llvm, and so does what libm has no function for (f128).

// CHECK-DAG: func.func private @erff(f32) -> f32
// CHECK-DAG: func.func private @atanh(f64) -> f64
// CHECK-DAG: func.func private @cbrtf(f32) -> f32
// CHECK-DAG: func.func private @asinhf(f32) -> f32
// CHECK-DAG: func.func private @erfcf(f32) -> f32
// CHECK-DAG: func.func private @acosh(f64) -> f64

// CHECK-LABEL: func.func @scalars
// CHECK-SAME: (%[[X:.*]]: f32, %[[D:.*]]: f64, %[[Q:.*]]: f128)
// CHECK-DAG: %[[ERF:.*]] = call @erff(%[[X]]) : (f32) -> f32
// CHECK-DAG: %[[ERFC:.*]] = call @erfcf(%[[X]]) : (f32) -> f32
// CHECK-DAG: %[[ATANH:.*]] = call @atanh(%[[D]]) : (f64) -> f64
// CHECK-DAG: %[[ACOSH:.*]] = call @acosh(%[[D]]) : (f64) -> f64
// CHECK-DAG: %[[FLOOR:.*]] = math.floor %[[X]] : f32
// CHECK-DAG: %[[TANH:.*]] = math.tanh %[[X]] : f32
// CHECK-DAG: %[[WIDE:.*]] = math.erf %[[Q]] : f128
// CHECK: return %[[ERF]], %[[ERFC]], %[[ATANH]], %[[ACOSH]], %[[FLOOR]], %[[TANH]], %[[WIDE]]
func.func @scalars(%x: f32, %d: f64, %q: f128)
    -> (f32, f32, f64, f64, f32, f32, f128) {
  %erf = math.erf %x : f32
  %erfc = math.erfc %x : f32
  %atanh = math.atanh %d : f64
  %acosh = math.acosh %d : f64
  %floor = math.floor %x : f32
  %tanh = math.tanh %x : f32
  %wide = math.erf %q : f128
  return %erf, %erfc, %atanh, %acosh, %floor, %tanh, %wide
      : f32, f32, f64, f64, f32, f32, f128
}

// bf16 and f16 through f32, rounded back once.
// CHECK-LABEL: func.func @narrow
// CHECK-SAME: (%[[H:.*]]: bf16, %[[F:.*]]: f16)
// CHECK: %[[HW:.*]] = arith.extf %[[H]] : bf16 to f32
// CHECK: %[[HC:.*]] = call @cbrtf(%[[HW]]) : (f32) -> f32
// CHECK: %[[HR:.*]] = arith.truncf %[[HC]] : f32 to bf16
// CHECK: %[[FW:.*]] = arith.extf %[[F]] : f16 to f32
// CHECK: %[[FC:.*]] = call @erff(%[[FW]]) : (f32) -> f32
// CHECK: %[[FR:.*]] = arith.truncf %[[FC]] : f32 to f16
// CHECK: return %[[HR]], %[[FR]]
func.func @narrow(%h: bf16, %f: f16) -> (bf16, f16) {
  %c = math.cbrt %h : bf16
  %e = math.erf %f : f16
  return %c, %e : bf16, f16
}

// Vectors (the CPU tiles' vector<1x16xf32>) element by element.
// CHECK-LABEL: func.func @vector
// CHECK-SAME: (%[[V:.*]]: vector<2x2xf32>)
// CHECK-COUNT-4: call @asinhf
// CHECK-NOT: math.asinh
// CHECK: return
func.func @vector(%v: vector<2x2xf32>) -> vector<2x2xf32> {
  %a = math.asinh %v : vector<2x2xf32>
  return %a : vector<2x2xf32>
}
