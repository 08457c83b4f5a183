// Real transformer graphs exported by other compilers (test/Inputs/graphs):
// fp8-opt parses and prints them, upstream mlir-opt reads the result back,
// and the key ops survive. Printed by mlir-opt, the round trip through
// fp8-opt (custom and generic form) is identical to mlir-opt's own reading
// of the file: nothing changed in meaning. fp8-verify accepts them (no FP8).

// RUN: fp8-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir | mlir-opt | FileCheck %s --check-prefix=LLAMA
// RUN: fp8-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir | grep linalg.batch_matmul | count 3
// RUN: mlir-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir > %t.llama.ref
// RUN: fp8-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir | mlir-opt | diff %t.llama.ref -
// RUN: fp8-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir -mlir-print-op-generic | mlir-opt | diff %t.llama.ref -
// RUN: fp8-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir -fp8-verify -o /dev/null

// LLAMA-LABEL: func.func @main(%arg0: tensor<1x128x4096xbf16>, %arg1: tensor<14336x4096xbf16>, %arg2: tensor<14336x4096xbf16>, %arg3: tensor<4096x14336xbf16>) -> tensor<1x128x4096xbf16>
// LLAMA: linalg.transpose ins(%arg1 : tensor<14336x4096xbf16>)
// LLAMA: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<1x128x4096xbf16>, tensor<1x4096x14336xbf16>) outs(%{{.+}} : tensor<1x128x14336xbf16>) -> tensor<1x128x14336xbf16>
// LLAMA: math.exp %{{.+}} : bf16
// LLAMA: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<1x128x4096xbf16>, tensor<1x4096x14336xbf16>)
// LLAMA: %[[DOWN:.+]] = linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<1x128x14336xbf16>, tensor<1x14336x4096xbf16>) outs(%{{.+}} : tensor<1x128x4096xbf16>) -> tensor<1x128x4096xbf16>
// LLAMA: return %[[DOWN]] : tensor<1x128x4096xbf16>

// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir | mlir-opt | FileCheck %s --check-prefix=QWEN
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir | grep "call @rtclock()" | count 24
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir | grep "call @record_timing(" | count 12
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir | grep "llvm.mlir.global private constant" | count 12
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir | grep "linalg.matmul" | count 7
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir | grep "tosa.matmul" | count 2
// RUN: mlir-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir > %t.qwen.ref
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir | mlir-opt | diff %t.qwen.ref -
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir -mlir-print-op-generic | mlir-opt | diff %t.qwen.ref -
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir -fp8-verify -o /dev/null

// QWEN: func.func private @rtclock() -> f64
// QWEN: func.func private @record_timing(!llvm.ptr, f64)
// QWEN: llvm.mlir.global private constant @op_name_input_layernorm("input_layernorm\00") {addr_space = 0 : i32}
// QWEN: llvm.mlir.global private constant @op_name_ffn_down("ffn_down_projection\00") {addr_space = 0 : i32}
// QWEN-LABEL: func.func @subgraph0
// QWEN: %[[T0:.+]] = call @rtclock() : () -> f64
// QWEN: llvm.mlir.addressof @op_name_input_layernorm : !llvm.ptr
// QWEN: linalg.matmul {cast = #linalg.type_fn<cast_signed>} ins(%{{.+}}, %{{.+}} : tensor<40x1536xf32>, tensor<1536x1536xf32>) outs(%{{.+}} : tensor<40x1536xf32>)
// QWEN: tosa.matmul %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<12x40x128xf32>, tensor<12x128x40xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<12x40x40xf32>
// QWEN: tosa.cast %{{.+}} : (tensor<1x1x1x40xi64>) -> tensor<1x1x1x40xf32>
// QWEN: tosa.matmul

// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir | mlir-opt | FileCheck %s --check-prefix=ATTN
// RUN: mlir-opt %graphs/buddy_next-attention_tosa.mlir > %t.attn.ref
// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir | mlir-opt | diff %t.attn.ref -
// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir -mlir-print-op-generic | mlir-opt | diff %t.attn.ref -
// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir -fp8-verify -o /dev/null

// ATTN: func.func private @rtclock() -> f64
// ATTN-LABEL: func.func @kernel(%arg0: tensor<32x40x128xf32>, %arg1: tensor<32x128x40xf32>, %arg2: tensor<1x1x40x40xf32>, %arg3: tensor<1x32x40x128xf32>)
// ATTN: call @rtclock() : () -> f64
// ATTN: tosa.matmul %arg0, %arg1, %{{.+}}, %{{.+}} : (tensor<32x40x128xf32>, tensor<32x128x40xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<32x40x40xf32>
// ATTN: tosa.reduce_max %{{.+}} {axis = 3 : i32}
// ATTN: tosa.exp
// ATTN: tosa.reduce_sum %{{.+}} {axis = 3 : i32}
// ATTN: tosa.matmul %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<32x40x40xf32>, tensor<32x40x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<32x40x128xf32>
// ATTN: call @rtclock() : () -> f64
// ATTN-LABEL: func.func @main()
// ATTN: func.func private @printMemrefF32(tensor<*xf32>)
