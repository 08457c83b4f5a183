// Math ops that LLVM has no intrinsic for (erf: exact GELU in BERT, CLIP
// and torch exports; erfc, cbrt, acosh, asinh, atanh; math.ipowi) run on the
// CPU: vectorized and threaded, and as scalar loops. Expected values are
// f64 math (Python's math module) rounded to the result type, printed to 6
// significant digits; bf16 rounds erf(x) to 8 significant bits.
//
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// RUN: fp8-opt %s --fp8-lower-to-cpu="vectorize=false threads=false" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefF64(memref<*xf64>)
func.func private @printMemrefI32(memref<*xi32>)

func.func @print_f32(%x: tensor<16xf32>) {
  %u = tensor.cast %x : tensor<16xf32> to tensor<*xf32>
  %m = bufferization.to_buffer %u : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

// Public, so that no pass sees the constants: the math runs on the CPU.
func.func @math(%x: tensor<16xf32>, %y: tensor<16xf32>, %z: tensor<16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
        tensor<16xf32>, tensor<16xf32>, tensor<16xbf16>) {
  %erf = math.erf %x : tensor<16xf32>
  %erfc = math.erfc %x : tensor<16xf32>
  %cbrt = math.cbrt %x : tensor<16xf32>
  %asinh = math.asinh %x : tensor<16xf32>
  %acosh = math.acosh %y : tensor<16xf32>
  %atanh = math.atanh %z : tensor<16xf32>
  %narrow = arith.truncf %x : tensor<16xf32> to tensor<16xbf16>
  %erf_bf16 = math.erf %narrow : tensor<16xbf16>
  return %erf, %erfc, %cbrt, %asinh, %acosh, %atanh, %erf_bf16
      : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
        tensor<16xf32>, tensor<16xf32>, tensor<16xbf16>
}

func.func @scalars(%d: f64, %b: i32, %e: i32) -> (f64, i32) {
  %erf = math.erf %d : f64
  %pow = math.ipowi %b, %e : i32
  return %erf, %pow : f64, i32
}

func.func @main() {
  %x = arith.constant dense<[0.5, 1.0, -2.0, 3.0, 0.5, 1.0, -2.0, 3.0,
                             0.5, 1.0, -2.0, 3.0, 0.5, 1.0, -2.0, 3.0]> : tensor<16xf32>
  %y = arith.constant dense<[1.5, 2.0, 10.0, 1.0, 1.5, 2.0, 10.0, 1.0,
                             1.5, 2.0, 10.0, 1.0, 1.5, 2.0, 10.0, 1.0]> : tensor<16xf32>
  %z = arith.constant dense<[0.5, -0.25, 0.0, 0.5, 0.5, -0.25, 0.0, 0.5,
                             0.5, -0.25, 0.0, 0.5, 0.5, -0.25, 0.0, 0.5]> : tensor<16xf32>
  %erf, %erfc, %cbrt, %asinh, %acosh, %atanh, %erf_bf16 = call @math(%x, %y, %z)
      : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
     -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<16xf32>, tensor<16xf32>, tensor<16xbf16>)
  // CHECK: [0.5205,  0.842701,  -0.995322,  0.999978,  0.5205,
  call @print_f32(%erf) : (tensor<16xf32>) -> ()
  // CHECK: [0.4795,  0.157299,  1.99532,  2.20905e-05,  0.4795,
  call @print_f32(%erfc) : (tensor<16xf32>) -> ()
  // CHECK: [0.793701,  1,  -1.25992,  1.44225,  0.793701,
  call @print_f32(%cbrt) : (tensor<16xf32>) -> ()
  // CHECK: [0.481212,  0.881374,  -1.44364,  1.81845,  0.481212,
  call @print_f32(%asinh) : (tensor<16xf32>) -> ()
  // CHECK: [0.962424,  1.31696,  2.99322,  0,  0.962424,
  call @print_f32(%acosh) : (tensor<16xf32>) -> ()
  // CHECK: [0.549306,  -0.255413,  0,  0.549306,  0.549306,
  call @print_f32(%atanh) : (tensor<16xf32>) -> ()
  // CHECK: [0.519531,  0.84375,  -0.996094,  1,  0.519531,
  %wide = arith.extf %erf_bf16 : tensor<16xbf16> to tensor<16xf32>
  call @print_f32(%wide) : (tensor<16xf32>) -> ()

  // erf(0.5) in f64; 3^4 and (-2)^3.
  %d = arith.constant 0.5 : f64
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %erf64, %pow = call @scalars(%d, %c3, %c4) : (f64, i32, i32) -> (f64, i32)
  %m64 = memref.alloca() : memref<1xf64>
  %mi = memref.alloca() : memref<1xi32>
  %c0 = arith.constant 0 : index
  memref.store %erf64, %m64[%c0] : memref<1xf64>
  memref.store %pow, %mi[%c0] : memref<1xi32>
  %u64 = memref.cast %m64 : memref<1xf64> to memref<*xf64>
  %ui = memref.cast %mi : memref<1xi32> to memref<*xi32>
  // CHECK: [0.5205]
  call @printMemrefF64(%u64) : (memref<*xf64>) -> ()
  // CHECK: [81]
  call @printMemrefI32(%ui) : (memref<*xi32>) -> ()
  %cm2 = arith.constant -2 : i32
  %erf64b, %cube = call @scalars(%d, %cm2, %c3) : (f64, i32, i32) -> (f64, i32)
  memref.store %cube, %mi[%c0] : memref<1xi32>
  // CHECK: [-8]
  call @printMemrefI32(%ui) : (memref<*xi32>) -> ()
  return
}
