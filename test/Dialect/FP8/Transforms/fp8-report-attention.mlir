// The JSON report (report=<file> of fp8-classify / fp8-pipeline) has one
// "attention" record per attention fp8-fuse-attention found: fused (the
// fp8.attention, its shape and options), or left as written with the
// reason, on the contraction that consumes the softmax. With
// fuse-attention=false the list is empty (attention is not searched for).
//
// RUN: fp8-gen --arch=llama --layers=1 --hidden=64 --heads=4 --kv-heads=2 --seq=8 --batch=2 --dtype=bf16 --form=named \
// RUN: | fp8-opt --fp8-pipeline="report=%t.fused.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=FUSED < %t.fused.json
// RUN: fp8-gen --arch=llama --layers=1 --hidden=64 --heads=4 --kv-heads=2 --seq=8 --batch=2 --dtype=bf16 --form=named --mode=train \
// RUN: | fp8-opt --fp8-pipeline="report=%t.train.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=TRAIN < %t.train.json
// RUN: fp8-opt %s --fp8-fuse-attention --fp8-classify="report=%t.op.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=OP < %t.op.json
// RUN: fp8-gen --arch=llama --layers=1 --hidden=64 --heads=4 --kv-heads=2 --seq=8 --batch=2 --dtype=bf16 --form=named \
// RUN: | fp8-opt --fp8-pipeline="fuse-attention=false report=%t.off.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=OFF < %t.off.json

// Llama's GQA attention, fused: the heads stay in the batch dimension, and
// the graph's repeat of K and V is undone (8 query heads read 4 KV heads).
// FUSED:      "attention": [
// FUSED-NEXT:   {
// FUSED-NEXT:     "batch": 1,
// FUSED-NEXT:     "causal": true,
// FUSED-NEXT:     "causal_offset": 0,
// FUSED-NEXT:     "element_type": "bf16",
// FUSED-NEXT:     "fp8_scores": false,
// FUSED-NEXT:     "fp8_values": false,
// FUSED-NEXT:     "function": "forward",
// FUSED-NEXT:     "fused": true,
// FUSED-NEXT:     "head_dim": 16,
// FUSED-NEXT:     "key_length": 8,
// FUSED-NEXT:     "kv_heads": 4,
// FUSED-NEXT:     "location": "{{.+}}",
// FUSED-NEXT:     "lse": false,
// FUSED-NEXT:     "mask": "none",
// FUSED-NEXT:     "op": "fp8.attention",
// FUSED-NEXT:     "query_heads": 8,
// FUSED-NEXT:     "query_length": 8,
// FUSED-NEXT:     "scale": 0.25,
// FUSED-NEXT:     "value_head_dim": 16
// FUSED-NEXT:   }
// FUSED-NEXT: ],

// A training step saves P for the backward: both fuse. The forward keeps
// its log-sum-exp; the backward reads K and V unrepeated too (4 KV heads),
// its dK and dV replacing the graph's sums over each group.
// TRAIN:      "attention": [
// TRAIN-NEXT:   {
// TRAIN:          "function": "train_step",
// TRAIN-NEXT:     "fused": true,
// TRAIN:          "kv_heads": 4,
// TRAIN:          "lse": true,
// TRAIN-NEXT:     "mask": "none",
// TRAIN-NEXT:     "op": "fp8.attention",
// TRAIN:        {
// TRAIN:          "causal": true,
// TRAIN:          "function": "train_step",
// TRAIN-NEXT:     "fused": true,
// TRAIN:          "kv_heads": 4,
// TRAIN-NOT:      "lse"
// TRAIN:          "op": "fp8.attention_grad",
// TRAIN-NEXT:     "query_heads": 8,
// TRAIN-NEXT:     "query_length": 8,
// TRAIN-NEXT:     "scale": 0.25,
// TRAIN-NEXT:     "value_head_dim": 16
// TRAIN-NEXT:   }
// TRAIN-NEXT: ],
// TRAIN-NOT:      "fused": false

// The op written directly: a boolean mask and the lse.
// OP:      "attention": [
// OP-NEXT:   {
// OP-NEXT:     "batch": 2,
// OP-NEXT:     "causal": false,
// OP-NEXT:     "element_type": "f32",
// OP-NEXT:     "fp8_scores": false,
// OP-NEXT:     "fp8_values": false,
// OP-NEXT:     "function": "masked",
// OP-NEXT:     "fused": true,
// OP-NEXT:     "head_dim": 16,
// OP-NEXT:     "key_length": null,
// OP-NEXT:     "kv_heads": 2,
// OP-NEXT:     "location": "{{.+}}",
// OP-NEXT:     "lse": true,
// OP-NEXT:     "mask": "boolean",
// OP-NEXT:     "op": "fp8.attention",
// OP-NEXT:     "query_heads": 4,
// OP-NEXT:     "query_length": 8,
// OP-NEXT:     "scale": 0.125,
// OP-NEXT:     "value_head_dim": 16
// OP-NEXT:   }
// OP-NEXT: ],

// OFF: "attention": [],
func.func @masked(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x?x16xf32>,
                  %v: tensor<2x2x?x16xf32>, %m: tensor<2x1x1x?xi1>)
    -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>) {
  %o, %lse = fp8.attention %q, %k, %v mask %m : tensor<2x1x1x?xi1> scale 0.125
      : tensor<2x4x8x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32>
      -> tensor<2x4x8x16xf32>, tensor<2x4x8xf32>
  return %o, %lse : tensor<2x4x8x16xf32>, tensor<2x4x8xf32>
}
