// RUN: fp8-opt %s -verify-diagnostics --pass-pipeline="builtin.module(func.func(fp8-tile-and-vectorize-for-cpu{register-tile=0,32}))" -o /dev/null
// RUN: fp8-opt %s -verify-diagnostics --pass-pipeline="builtin.module(func.func(fp8-tile-and-vectorize-for-cpu{cache-tile=64,256}))" -o /dev/null

// expected-error @below {{fp8-tile-and-vectorize-for-cpu: cache-tile takes three positive sizes (M,N,K) and register-tile two (M,N)}}
func.func @bad_option(%x: memref<4xf32>) {
  return
}
