// RUN: attention-opt %s --convert-attn-to-gpu --split-input-file --verify-diagnostics
// RUN: not attention-opt %s --convert-attn-to-gpu='warps=0 block-kv=24' --split-input-file 2>&1 | FileCheck %s --check-prefix=OPTIONS

// OPTIONS: convert-attn-to-gpu: warps must be in [1, 16], block-kv a multiple of 16 in [16, 256] and stages 1 or 2, got warps=0 block-kv=24 stages=2

func.func @rank5(%q: tensor<2x1x2x64x64xf16>, %k: tensor<2x1x2x64x64xf16>, %v: tensor<2x1x2x64x64xf16>) -> tensor<2x1x2x64x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: attn.sdpa has rank-5 operands; the GPU kernel takes ranks 2 to 4 ([B, H, T, d])}}
  %o = attn.sdpa %q, %k, %v : tensor<2x1x2x64x64xf16>, tensor<2x1x2x64x64xf16>, tensor<2x1x2x64x64xf16> -> tensor<2x1x2x64x64xf16>
  return %o : tensor<2x1x2x64x64xf16>
}

// -----

func.func @dynamic_key_head_dim(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x?xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: attn.sdpa has a dynamic key head dim; the GPU kernel needs it static}}
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x?xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

func.func @head_dim(%q: tensor<1x2x64x40xf16>, %k: tensor<1x2x64x40xf16>, %v: tensor<1x2x64x40xf16>) -> tensor<1x2x64x40xf16> {
  // expected-error @+1 {{cannot run on the GPU: attn.sdpa has head dim 40; the GPU kernel needs static head dims that are multiples of 16 up to 256}}
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x40xf16>, tensor<1x2x64x40xf16>, tensor<1x2x64x40xf16> -> tensor<1x2x64x40xf16>
  return %o : tensor<1x2x64x40xf16>
}

// -----

func.func @other_op(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  // expected-error @+1 {{the GPU target compiles entry points whose results are attn.sdpa of the arguments; 'arith.addf' in @other_op has no GPU lowering yet (use the CPU target)}}
  %s = arith.addf %q, %q : tensor<1x2x64x64xf16>
  %o = attn.sdpa %s, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

func.func @returns_argument(%q: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  // expected-error @-1 {{cannot run on the GPU: @returns_argument returns a value that is not an attn.sdpa result}}
  return %q : tensor<1x2x64x64xf16>
}

// -----

func.func @dynamic_heads(%q: tensor<1x?x64x64xf16>, %k: tensor<1x?x64x64xf16>, %v: tensor<1x?x64x64xf16>) -> tensor<1x?x64x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: attn.sdpa has a dynamic head count; the GPU kernel needs static head counts}}
  %o = attn.sdpa %q, %k, %v : tensor<1x?x64x64xf16>, tensor<1x?x64x64xf16>, tensor<1x?x64x64xf16> -> tensor<1x?x64x64xf16>
  return %o : tensor<1x?x64x64xf16>
}
