// fp8-pipeline on the real graphs in Inputs/graphs (exported by other
// projects): every GEMM is accounted for in the report, the projections go to
// FP8, attention, softmax and norms stay in high precision, fp8-verify (the
// last pass of the pipeline) passes, and a second run changes nothing.
//
// Llama-3-8B SwiGLU FFN from torch-mlir (accelgen): 3 bf16 batch_matmuls with
// transposed, batch-broadcast weights.
// RUN: fp8-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir --fp8-pipeline="history=16 report=%t.ffn.json" -o %t.ffn.mlir
// RUN: FileCheck %s --check-prefix=FFN < %t.ffn.mlir
// RUN: FileCheck %s --check-prefix=FFN-JSON < %t.ffn.json
// RUN: fp8-opt %t.ffn.mlir --fp8-pipeline="history=16" | diff - %t.ffn.mlir
//
// FFN-COUNT-3: fp8.scaled_matmul {{.*}} {transpose_rhs}
// FFN-NOT: linalg.batch_matmul
// FFN-JSON: "totals": {
// FFN-JSON-NEXT: "flops": 45097156608,
// FFN-JSON-NEXT: "fp8": 3,
// FFN-JSON-NEXT: "fp8_flop_share": 1,
//
// A DeepSeek-R1-Distill-Qwen-1.5B decoder layer from buddy-mlir, TOSA + linalg
// with timing calls and LLVM globals: 7 projections to FP8, the attention
// (2 tosa.matmul, padding mask, softmax op by op) fused into one f32
// fp8.attention with its GQA (12 query heads, 2 KV heads) recovered, foreign
// ops pass through.
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir --fp8-pipeline="report=%t.layer.json" -o %t.layer.mlir
// RUN: FileCheck %s --check-prefix=LAYER < %t.layer.mlir
// RUN: FileCheck %s --check-prefix=LAYER-ATTN < %t.layer.mlir
// RUN: FileCheck %s --check-prefix=LAYER-JSON < %t.layer.json
// RUN: fp8-opt %t.layer.mlir --fp8-pipeline | diff - %t.layer.mlir
//
// LAYER: llvm.mlir.global
// LAYER: call @rtclock()
// LAYER-COUNT-7: fp8.scaled_matmul
// LAYER-NOT: tosa.
// LAYER-ATTN: fp8.attention {{.+}} mask {{.+}} : tensor<1x1x1x40xf32> scale {{.+}} : tensor<1x12x40x128xf32>, tensor<1x2x40x128xf32>, tensor<1x2x40x128xf32> -> tensor<1x12x40x128xf32>
// LAYER-JSON-NOT: activation_x_activation
// LAYER-JSON: "fused": true,
// LAYER-JSON: "kv_heads": 2,
// LAYER-JSON: "mask": "additive",
// LAYER-JSON: "query_heads": 12,
// LAYER-JSON: "totals": {
// LAYER-JSON: "fp8": 7,
// LAYER-JSON-NEXT: "fp8_flop_share": 1,
// LAYER-JSON: "gemms": 7,
// LAYER-JSON-NEXT: "gemms_with_dynamic_sizes": 0,
// LAYER-JSON-NEXT: "high_precision": 0,
//
// The buddy-mlir attention core: fused, no GEMM left (with
// fuse-attention=false, both are activation x activation and stay).
// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir --fp8-pipeline="report=%t.attn.json" | FileCheck %s --check-prefix=ATTN
// RUN: FileCheck %s --check-prefix=ATTN-JSON < %t.attn.json
// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir --fp8-pipeline="fuse-attention=false report=%t.attn-unfused.json" | FileCheck %s --check-prefix=UNFUSED
// RUN: FileCheck %s --check-prefix=UNFUSED-JSON < %t.attn-unfused.json
// ATTN-NOT: linalg.batch_matmul
// ATTN: fp8.attention {{.+}} mask {{.+}} : tensor<1x1x40x40xf32>
// ATTN-NOT: linalg.batch_matmul
// ATTN-JSON: "fused": true,
// ATTN-JSON: "gemms": 0,
// UNFUSED-NOT: fp8.
// UNFUSED: linalg.batch_matmul
// UNFUSED-JSON-COUNT-2: "reason": "activation_x_activation"
// Unfused with fp8-attention they are eligible, but the sequence length
// (40) is not a multiple of 16, so they still stay in high precision, for
// that reason. Fused, the attention's scores go to FP8 (per-token scales
// have no alignment rule).
// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir --fp8-pipeline="fp8-attention fuse-attention=false report=%t.attn8.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=ATTN-FP8 < %t.attn8.json
// ATTN-FP8-COUNT-2: "reason": "k_or_n_not_multiple_of_16"
// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir --fp8-pipeline="fp8-attention" | FileCheck %s --check-prefix=ATTN-FP8-FUSED
// ATTN-FP8-FUSED: fp8.attention {{.+}} scales {{.+}} mask {{.+}} : tensor<1x1x40x40xf32>

// Once the fp8 ops are lowered, each output is plain upstream MLIR that
// upstream mlir-opt parses and verifies.
// RUN: fp8-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir --fp8-pipeline="history=16" | fp8-opt --convert-fp8-to-linalg --fp8-expand-float8 | mlir-opt --verify-each | FileCheck %s --check-prefix=UPSTREAM
// RUN: fp8-opt %graphs/buddy_deepseek-r1-qwen1.5b_layer_tosa_timed.mlir --fp8-pipeline | fp8-opt --convert-fp8-to-linalg --fp8-expand-float8 | mlir-opt --verify-each | FileCheck %s --check-prefix=UPSTREAM
// RUN: fp8-opt %graphs/buddy_next-attention_tosa.mlir --fp8-pipeline | fp8-opt --convert-fp8-to-linalg --fp8-expand-float8 | mlir-opt --verify-each | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM-NOT: {{ fp8\.[a-z_]+ }}
// UPSTREAM-NOT: #fp8
// UPSTREAM-NOT: f8E
// UPSTREAM: func.func

// The bundled example (README quick start): three projections to FP8, RMSNorm,
// SiLU and the residual add untouched.
// RUN: fp8-opt %fp8_src_root/examples/llama-ffn-block.mlir --fp8-pipeline="history=16" | FileCheck %s --check-prefix=EXAMPLE
// EXAMPLE-LABEL: func.func @llama_ffn
// EXAMPLE: math.rsqrt
// EXAMPLE-COUNT-3: fp8.scaled_matmul {{.*}} {transpose_rhs} : tensor<16x{{64|128}}xf8E4M3FN>, tensor<{{64|128}}x{{64|128}}xf8E4M3FN> -> tensor<16x{{64|128}}xbf16>
// EXAMPLE: arith.addf %{{.+}}, %{{.+}} : bf16

// An op of an unregistered dialect is not TOSA (and not a crash).
// RUN: echo '"foo.bar"() : () -> ()' | fp8-opt -allow-unregistered-dialect --fp8-pipeline | FileCheck %s --check-prefix=UNREGISTERED
// UNREGISTERED: "foo.bar"() : () -> ()
