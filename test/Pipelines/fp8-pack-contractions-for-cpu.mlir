// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(convert-fp8-to-linalg,fp8-expand-float8,func.func(fp8-pack-contractions-for-cpu))" | FileCheck %s

// Weights [N, K] (nn.Linear): B is copied once into [K, N] and the
// contraction reads the copy along N.
// CHECK-DAG: #[[SWAP:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[KN:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @weights_nk
// CHECK-SAME: %[[X:.+]]: tensor<16x64xf32>, %[[W:.+]]: tensor<32x64xf32>
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[SWAP]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[W]] : tensor<32x64xf32>) outs(%{{.+}} : tensor<64x32xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[KN]], #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[P]] : tensor<16x64xf32>, tensor<64x32xf32>)
func.func @weights_nk(%x: tensor<16x64xf32>, %w: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// fp8.scaled_matmul {transpose_rhs}: the FP8 decode of the weight is fused
// into the copy, which reads the i8 codes and writes f32 [K, N] once.
// CHECK-LABEL: func.func @fp8_transpose_rhs
// CHECK-SAME: %{{.+}}: tensor<16x64xi8>, %[[W:.+]]: tensor<32x64xi8>
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%[[W]] : tensor<32x64xi8>) outs(%{{.+}} : tensor<64x32xf32>)
// CHECK-NEXT: ^bb0(%{{.+}}: i8, %{{.+}}: f32):
// CHECK: arith.bitcast {{.+}} : i32 to f32
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[P]] : tensor<16x64xf32>, tensor<64x32xf32>)
// No decode of the whole weight is left.
// CHECK-NOT: ins(%[[W]]
func.func @fp8_transpose_rhs(%x: tensor<16x64xf8E4M3FN>, %w: tensor<32x64xf8E4M3FN>) -> tensor<16x32xf32> {
  %s = arith.constant 0.5 : f32
  %r = fp8.scaled_matmul %x, %w scales %s, %s {transpose_rhs} : tensor<16x64xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// Attention's Q K^T per head: K [b, n, k] becomes [b, k, n].
// CHECK-LABEL: func.func @q_kt
// CHECK-SAME: %{{.+}}: tensor<4x8x16xbf16>, %[[K:.+]]: tensor<4x8x16xbf16>
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[K]] : tensor<4x8x16xbf16>) outs(%{{.+}} : tensor<4x16x8xbf16>)
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[P]] : tensor<4x8x16xbf16>, tensor<4x16x8xbf16>)
func.func @q_kt(%q: tensor<4x8x16xbf16>, %k: tensor<4x8x16xbf16>) -> tensor<4x8x8xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x8x8xbf16>
  %c = linalg.fill ins(%z : bf16) outs(%e : tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
  %r = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%q, %k : tensor<4x8x16xbf16>, tensor<4x8x16xbf16>) outs(%c : tensor<4x8x8xbf16>) -> tensor<4x8x8xbf16>
  return %r : tensor<4x8x8xbf16>
}

// -----

// B already runs along N, and a dynamic one: nothing to do for the first;
// the second is copied with its dynamic sizes.
// CHECK-LABEL: func.func @already_kn
// CHECK: linalg.matmul
// CHECK-NOT: linalg.generic
func.func @already_kn(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
// CHECK-LABEL: func.func @dynamic_nk
// CHECK-SAME: %{{.+}}: tensor<?x64xf32>, %[[W:.+]]: tensor<?x64xf32>
// CHECK: %[[N:.+]] = tensor.dim %[[W]], %c0
// CHECK: tensor.empty(%[[N]]) : tensor<64x?xf32>
func.func @dynamic_nk(%x: tensor<?x64xf32>, %w: tensor<?x64xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x64xf32>, tensor<?x64xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// A chain of element-wise producers (a scaling, then a negation) is computed
// inside the copy, one after the other, while each has no other user: the
// copy reads the argument and nothing else is left. A producer with another
// user stays, and the copy reads its result.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %{{.+}}: tensor<16x64xf32>, %[[W:.+]]: tensor<32x64xf32>
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[W]] : tensor<32x64xf32>) outs(%{{.+}} : tensor<64x32xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[S:.+]] = arith.mulf %[[IN]]
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[S]]
// CHECK-NEXT: linalg.yield %[[N]] : f32
// CHECK: ins(%{{.+}}, %[[P]] : tensor<16x64xf32>, tensor<64x32xf32>)
// CHECK-LABEL: func.func @shared
// CHECK: %[[S:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<32x64xf32>) outs(%{{.+}} : tensor<32x64xf32>)
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[S]] : tensor<32x64xf32>) outs(%{{.+}} : tensor<64x32xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @chain(%x: tensor<16x64xf32>, %w: tensor<32x64xf32>) -> tensor<16x32xf32> {
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : tensor<32x64xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x64xf32>) outs(%e0 : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  } -> tensor<32x64xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<32x64xf32>) outs(%e0 : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.negf %in : f32
    linalg.yield %m : f32
  } -> tensor<32x64xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %n : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
func.func @shared(%x: tensor<16x64xf32>, %w: tensor<32x64xf32>) -> (tensor<16x32xf32>, tensor<32x64xf32>) {
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : tensor<32x64xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x64xf32>) outs(%e0 : tensor<32x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  } -> tensor<32x64xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %s : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r, %s : tensor<16x32xf32>, tensor<32x64xf32>
}

// -----

// A producer read through a broadcast (a scale computed from an amax) is not
// computed inside the copy, where it would run once per element: the
// scaling is, reading the scale.
// CHECK-LABEL: func.func @broadcast_producer
// CHECK:      %[[INV:.+]] = linalg.generic {{.+}} iterator_types = []} ins(%{{.+}} : tensor<f32>)
// CHECK:      arith.divf
// CHECK:      linalg.generic {{.+}} ins(%arg1, %[[INV]] : tensor<32x64xf32>, tensor<f32>) outs(%{{.+}} : tensor<64x32xf32>)
// CHECK-NOT:  arith.divf
func.func @broadcast_producer(%x: tensor<16x64xf32>, %w: tensor<32x64xf32>, %amax: tensor<f32>) -> tensor<16x32xf32> {
  %e00 = tensor.empty() : tensor<f32>
  %inv = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%amax : tensor<f32>) outs(%e00 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 448.0 : f32
    %m = arith.divf %c, %in : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %e0 = tensor.empty() : tensor<32x64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%w, %inv : tensor<32x64xf32>, tensor<f32>) outs(%e0 : tensor<32x64xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %m = arith.mulf %in, %k : f32
    linalg.yield %m : f32
  } -> tensor<32x64xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %s : tensor<16x64xf32>, tensor<32x64xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// An FP8 weight [K, N] is decoded panel by panel: blocks of 512 x 256 of
// M x N in an scf.forall, 256-deep K panels in order in an scf.for, each
// decoding its 256 x 256 panel of i8 codes into an f32 tile that the
// panel's contraction reads, and its 512 x 256 panel of the FP8 activation
// likewise. Neither operand is decoded whole; the scaling writes into the
// result's buffer.
// CHECK-LABEL: func.func @fp8_decode_in_panels
// CHECK-SAME: %[[X:.+]]: tensor<1024x768xi8>, %[[W:.+]]: tensor<768x512xi8>
// CHECK-NOT: tensor<1024x768xf32>
// CHECK: %[[R:.+]] = scf.forall (%[[M:.+]], %[[N:.+]]) = (0, 0) to (1024, 512) step (512, 256) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<1024x512xf32>)
// CHECK-DAG: %[[XB:.+]] = tensor.extract_slice %[[X]][%[[M]], 0] [512, 768] [1, 1] : tensor<1024x768xi8> to tensor<512x768xi8>
// CHECK-DAG: %[[WB:.+]] = tensor.extract_slice %[[W]][0, %[[N]]] [768, 256] [1, 1] : tensor<768x512xi8> to tensor<768x256xi8>
// CHECK-DAG: %[[CB:.+]] = tensor.extract_slice %[[OUT]][%[[M]], %[[N]]] [512, 256] [1, 1]
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[CB]] : tensor<512x256xf32>)
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (tensor<512x256xf32>)
// CHECK: %[[XP:.+]] = tensor.extract_slice %[[XB]][0, %[[K]]] [512, 256] [1, 1] : tensor<512x768xi8> to tensor<512x256xi8>
// CHECK: %[[XPANEL:.+]] = linalg.generic {{.+}} ins(%[[XP]] : tensor<512x256xi8>) outs(%{{.+}} : tensor<512x256xf32>)
// CHECK: %[[WP:.+]] = tensor.extract_slice %[[WB]][%[[K]], 0] [256, 256] [1, 1] : tensor<768x256xi8> to tensor<256x256xi8>
// CHECK: %[[WPANEL:.+]] = linalg.generic {{.+}} ins(%[[WP]] : tensor<256x256xi8>) outs(%{{.+}} : tensor<256x256xf32>)
// CHECK: arith.bitcast {{.+}} : i32 to f32
// CHECK: %[[P:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XPANEL]], %[[WPANEL]] : tensor<512x256xf32>, tensor<256x256xf32>) outs(%[[ACC]] : tensor<512x256xf32>)
// CHECK: scf.yield %[[P]]
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: tensor<768x512xf32>
// CHECK-NOT: tensor<768x256xf32>
// CHECK: linalg.generic {{.+}} ins(%[[R]] : tensor<1024x512xf32>) outs(%[[R]] : tensor<1024x512xf32>)
// CHECK: arith.mulf
// CHECK: return
func.func @fp8_decode_in_panels(%x: tensor<1024x768xf8E4M3FN>, %w: tensor<768x512xf8E4M3FN>) -> tensor<1024x512xf32> {
  %s = arith.constant 0.5 : f32
  %r = fp8.scaled_matmul %x, %w scales %s, %s : tensor<1024x768xf8E4M3FN>, tensor<768x512xf8E4M3FN> -> tensor<1024x512xf32>
  return %r : tensor<1024x512xf32>
}

// -----

// Dynamic sizes: partial blocks and panels (affine.min), and the decodes of
// the whole operands, whose sizes the loops read, are still gone: the sizes
// come from their inits.
// CHECK-LABEL: func.func @fp8_dynamic
// CHECK-SAME: %[[X:.+]]: tensor<?x?xi8>, %[[W:.+]]: tensor<?x?xi8>
// CHECK-NOT: ins(%[[X]]
// CHECK-NOT: ins(%[[W]]
// CHECK: scf.forall
// CHECK: affine.min
// CHECK: scf.for
// CHECK: affine.min
// CHECK: %[[XP:.+]] = tensor.extract_slice %{{.+}} : tensor<?x?xi8> to tensor<?x?xi8>
// CHECK: %[[XPANEL:.+]] = linalg.generic {{.+}} ins(%[[XP]] : tensor<?x?xi8>) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK: %[[WP:.+]] = tensor.extract_slice %{{.+}} : tensor<?x?xi8> to tensor<?x?xi8>
// CHECK: %[[WPANEL:.+]] = linalg.generic {{.+}} ins(%[[WP]] : tensor<?x?xi8>) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XPANEL]], %[[WPANEL]] : tensor<?x?xf32>, tensor<?x?xf32>)
func.func @fp8_dynamic(%x: tensor<?x?xf8E5M2>, %w: tensor<?x?xf8E4M3FN>) -> tensor<?x?xf32> {
  %s = arith.constant 0.5 : f32
  %r = fp8.scaled_matmul %x, %w scales %s, %s : tensor<?x?xf8E5M2>, tensor<?x?xf8E4M3FN> -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// An f32 weight of a large GEMM is copied panel by panel (GotoBLAS's packed
// B: contiguous rows in cache); the activation is read as it is. A small
// GEMM reads its weight as it is.
// CHECK-LABEL: func.func @f32_weight
// CHECK-SAME: %[[X:.+]]: tensor<1024x768xf32>, %[[W:.+]]: tensor<768x512xf32>
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: %[[WP:.+]] = tensor.extract_slice %{{.+}} : tensor<768x256xf32> to tensor<256x256xf32>
// CHECK: %[[PANEL:.+]] = linalg.generic {{.+}} ins(%[[WP]] : tensor<256x256xf32>) outs(%{{.+}} : tensor<256x256xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.matmul ins(%{{.+}}, %[[PANEL]] : tensor<512x256xf32>, tensor<256x256xf32>)
func.func @f32_weight(%x: tensor<1024x768xf32>, %w: tensor<768x512xf32>, %c: tensor<1024x512xf32>) -> tensor<1024x512xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<1024x768xf32>, tensor<768x512xf32>) outs(%c : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %r : tensor<1024x512xf32>
}
// CHECK-LABEL: func.func @f32_small
// CHECK-NOT: scf.forall
// CHECK: linalg.matmul
func.func @f32_small(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
