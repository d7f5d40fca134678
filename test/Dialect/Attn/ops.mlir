// Round trip of every attn op: custom form, and custom -> generic -> custom.
// RUN: attention-opt %s | attention-opt | FileCheck %s
// RUN: attention-opt %s -mlir-print-op-generic | attention-opt | FileCheck %s

// CHECK-LABEL: func @self_attention
// CHECK: attn.self_attention %{{.*}} : tensor<6x3xf32> -> tensor<6x3xf32>
// CHECK: attn.self_attention %{{.*}} {scale = 5.000000e-01 : f32} : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
func.func @self_attention(%x: tensor<6x3xf32>, %y: tensor<2x?x64xbf16>) -> (tensor<6x3xf32>, tensor<2x?x64xbf16>) {
  %0 = attn.self_attention %x : tensor<6x3xf32> -> tensor<6x3xf32>
  %1 = attn.self_attention %y {scale = 0.5 : f32} : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  return %0, %1 : tensor<6x3xf32>, tensor<2x?x64xbf16>
}

// CHECK-LABEL: func @sdpa_plain
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
func.func @sdpa_plain(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.sdpa %q, %q, %q : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// CHECK-LABEL: func @sdpa_causal_gqa_dropout
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} causal(top_left) {dropout_p = 1.000000e-01 : f32, scale = 1.250000e-01 : f32, seed = 42 : i64} : tensor<2x8x?x64xf16>, tensor<2x2x?x64xf16>, tensor<2x2x?x32xf16> -> tensor<2x8x?x32xf16>
func.func @sdpa_causal_gqa_dropout(%q: tensor<2x8x?x64xf16>, %k: tensor<2x2x?x64xf16>, %v: tensor<2x2x?x32xf16>) -> tensor<2x8x?x32xf16> {
  %0 = attn.sdpa %q, %k, %v causal(top_left) {scale = 0.125 : f32, dropout_p = 0.1 : f32, seed = 42 : i64} : tensor<2x8x?x64xf16>, tensor<2x2x?x64xf16>, tensor<2x2x?x32xf16> -> tensor<2x8x?x32xf16>
  return %0 : tensor<2x8x?x32xf16>
}

// CHECK-LABEL: func @sdpa_masks
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : masked_where_true) : {{.*}}, tensor<4x6xi1> -> tensor<1x2x4x8xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : attend_where_true) causal(bottom_right) : {{.*}}, tensor<1x1x4x6xi1> -> tensor<1x2x4x8xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : additive) : {{.*}}, tensor<1x1x1x6xf32> -> tensor<1x2x4x8xf32>
func.func @sdpa_masks(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %m: tensor<4x6xi1>, %m4: tensor<1x1x4x6xi1>, %a: tensor<1x1x1x6xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %0 = attn.sdpa %q, %k, %k mask(%m : masked_where_true) : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<4x6xi1> -> tensor<1x2x4x8xf32>
  %1 = attn.sdpa %q, %k, %k mask(%m4 : attend_where_true) causal(bottom_right) : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x4x6xi1> -> tensor<1x2x4x8xf32>
  %2 = attn.sdpa %q, %k, %k mask(%a : additive) : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x1x6xf32> -> tensor<1x2x4x8xf32>
  return %0, %1, %2 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// CHECK-LABEL: func @sdpa_seq_major
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} causal(top_left) layout(seq_major) : tensor<1x?x12x64xf32>, tensor<1x?x12x64xf32>, tensor<1x?x12x64xf32> -> tensor<1x?x12x64xf32>
func.func @sdpa_seq_major(%q: tensor<1x?x12x64xf32>) -> tensor<1x?x12x64xf32> {
  %0 = attn.sdpa %q, %q, %q causal(top_left) layout(seq_major) : tensor<1x?x12x64xf32>, tensor<1x?x12x64xf32>, tensor<1x?x12x64xf32> -> tensor<1x?x12x64xf32>
  return %0 : tensor<1x?x12x64xf32>
}

// CHECK-LABEL: func @sdpa_window
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} causal(bottom_right) {window_left = 255 : i64} :
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {softcap = 5.000000e+01 : f32, window_left = 2 : i64, window_right = 2 : i64} :
func.func @sdpa_window(%q: tensor<2x?x64xf32>) -> (tensor<2x?x64xf32>, tensor<2x?x64xf32>) {
  %0 = attn.sdpa %q, %q, %q causal(bottom_right) {window_left = 255 : i64} : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %1 = attn.sdpa %q, %q, %q {window_left = 2 : i64, window_right = 2 : i64, softcap = 50.0 : f32} : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  return %0, %1 : tensor<2x?x64xf32>, tensor<2x?x64xf32>
}

// CHECK-LABEL: func @causal_attention
// CHECK: attn.causal_attention %{{.*}} weights(%{{.*}}, %{{.*}}, %{{.*}}) {dropout_p = 5.000000e-01 : f32, seed = 123 : i64} : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
// CHECK: attn.causal_attention %{{.*}} weights(%{{.*}}, %{{.*}}, %{{.*}}) bias(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x2xf32>
func.func @causal_attention(%x: tensor<2x6x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>) -> (tensor<2x6x2xf32>, tensor<2x6x2xf32>) {
  %0 = attn.causal_attention %x weights(%w, %w, %w) {dropout_p = 0.5 : f32, seed = 123 : i64} : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  %1 = attn.causal_attention %x weights(%w, %w, %w) bias(%b, %b, %b) : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x2xf32>
  return %0, %1 : tensor<2x6x2xf32>, tensor<2x6x2xf32>
}

// CHECK-LABEL: func @multi_head_attention
// CHECK: attn.multi_head_attention %{{.*}} weights(%{{.*}}, %{{.*}}, %{{.*}}) out_proj(%{{.*}}, %{{.*}}) causal {dropout_p = 1.000000e-01 : f32, num_heads = 12 : i64, seed = 7 : i64}
// CHECK: attn.multi_head_attention %{{.*}} weights(%{{.*}}, %{{.*}}, %{{.*}}) bias(%{{.*}}, %{{.*}}, %{{.*}}) out_proj(%{{.*}}) {num_heads = 12 : i64}
// CHECK: attn.multi_head_attention %{{.*}} weights(%{{.*}}, %{{.*}}, %{{.*}}) {num_heads = 2 : i64} : (tensor<6x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
func.func @multi_head_attention(%x: tensor<1x?x768xf32>, %w: tensor<768x768xf32>, %b: tensor<768xf32>, %s: tensor<6x3xf32>, %ws: tensor<3x4xf32>) -> (tensor<1x?x768xf32>, tensor<1x?x768xf32>, tensor<6x4xf32>) {
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%w, %b) causal {num_heads = 12 : i64, dropout_p = 0.1 : f32, seed = 7 : i64} : (tensor<1x?x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  %1 = attn.multi_head_attention %x weights(%w, %w, %w) bias(%b, %b, %b) out_proj(%w) {num_heads = 12 : i64} : (tensor<1x?x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768x768xf32>) -> tensor<1x?x768xf32>
  %2 = attn.multi_head_attention %s weights(%ws, %ws, %ws) {num_heads = 2 : i64} : (tensor<6x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  return %0, %1, %2 : tensor<1x?x768xf32>, tensor<1x?x768xf32>, tensor<6x4xf32>
}

// CHECK-LABEL: func @heads
// CHECK: attn.split_heads %{{.*}} {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
// CHECK: attn.merge_heads %{{.*}} : tensor<1x12x?x64xf32> -> tensor<1x?x768xf32>
func.func @heads(%x: tensor<1x?x768xf32>) -> tensor<1x?x768xf32> {
  %0 = attn.split_heads %x {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
  %1 = attn.merge_heads %0 : tensor<1x12x?x64xf32> -> tensor<1x?x768xf32>
  return %1 : tensor<1x?x768xf32>
}
