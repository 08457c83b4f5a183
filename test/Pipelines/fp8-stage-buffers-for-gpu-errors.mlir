// RUN: fp8-opt %s -split-input-file --fp8-stage-buffers-for-gpu -verify-diagnostics

// A kernel reading an unranked argument: no copy can be made of it.
func.func @unranked(%in: memref<*xf32>) {
  %c1 = arith.constant 1 : index
  %ranked = memref.cast %in : memref<*xf32> to memref<4xf32>
  // expected-error @+1 {{reads argument #0 of unranked type 'memref<*xf32>', which fp8-lower-to-gpu cannot copy to managed memory}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %ranked[%tx] : memref<4xf32>
    memref.store %x, %ranked[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// A strided global: its managed copy would be dense.
memref.global "private" @strided : memref<2xf32, strided<[2]>> = dense<[1.0, 2.0]>

func.func @strided_global() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{uses @strided of type 'memref<2xf32, strided<[2]>>', which fp8-lower-to-gpu cannot place in managed memory (only identity layouts in the default memory space)}}
  %g = memref.get_global @strided : memref<2xf32, strided<[2]>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %g[%tx] : memref<2xf32, strided<[2]>>
    gpu.terminator
  }
  return
}

// -----

// The slot's name is taken.
// expected-error @+1 {{cannot get a device copy: the module already defines @__fp8_device_state}}
memref.global "private" @state : memref<f32> = dense<0.0>
memref.global "private" @__fp8_device_state : memref<f32> = dense<0.0>

func.func @taken() {
  %c1 = arith.constant 1 : index
  %g = memref.get_global @state : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %g[] : memref<f32>
    gpu.terminator
  }
  return
}
