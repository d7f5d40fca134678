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

func.func @head_dim(%q: tensor<1x2x64x320xf16>, %k: tensor<1x2x64x320xf16>, %v: tensor<1x2x64x320xf16>) -> tensor<1x2x64x320xf16> {
  // expected-error @+1 {{cannot run on the GPU: attn.sdpa has head dim 320; the GPU kernel needs static head dims up to 256}}
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x320xf16>, tensor<1x2x64x320xf16>, tensor<1x2x64x320xf16> -> tensor<1x2x64x320xf16>
  return %o : tensor<1x2x64x320xf16>
}

// -----

func.func @other_op(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  // expected-error @+1 {{the GPU target compiles entry points whose results are attn.sdpa of the arguments (or of reshapes, transposes and concatenations of them); 'arith.addf' in @other_op has no GPU lowering yet (use the CPU target)}}
  %s = arith.addf %q, %q : tensor<1x2x64x64xf16>
  %o = attn.sdpa %s, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

// A projection, as attn-decompose writes the weights of
// attn.multi_head_attention: the error names the contraction (at the attn
// op's location after decomposition), not the constant of its zero fill,
// which comes first in the function.
func.func @projection(%x: tensor<1x2x64x64xf16>, %w: tensor<64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<128x64xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<128x64xf16>) -> tensor<128x64xf16>
  %x2 = tensor.collapse_shape %x [[0, 1, 2], [3]] : tensor<1x2x64x64xf16> into tensor<128x64xf16>
  // expected-error @+1 {{the GPU target compiles entry points whose results are attn.sdpa of the arguments (or of reshapes, transposes and concatenations of them); 'linalg.matmul' in @projection has no GPU lowering yet (use the CPU target); projections (the weights of attn.multi_head_attention and attn.causal_attention become such contractions) do not run on the GPU yet}}
  %m = linalg.matmul ins(%x2, %w : tensor<128x64xf16>, tensor<64x64xf16>) outs(%f : tensor<128x64xf16>) -> tensor<128x64xf16>
  %q = tensor.expand_shape %m [[0, 1, 2], [3]] output_shape [1, 2, 64, 64] : tensor<128x64xf16> into tensor<1x2x64x64xf16>
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

func.func @returns_argument(%q: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  // expected-error @-1 {{cannot run on the GPU: @returns_argument returns a value that is not an attn.sdpa result (or a reshape of one) or a concatenation}}
  return %q : tensor<1x2x64x64xf16>
}

// -----

func.func @dynamic_heads(%q: tensor<1x?x64x64xf16>, %k: tensor<1x?x64x64xf16>, %v: tensor<1x?x64x64xf16>) -> tensor<1x?x64x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: attn.sdpa has a dynamic head count; the GPU kernel needs static head counts}}
  %o = attn.sdpa %q, %k, %v : tensor<1x?x64x64xf16>, tensor<1x?x64x64xf16>, tensor<1x?x64x64xf16> -> tensor<1x?x64x64xf16>
  return %o : tensor<1x?x64x64xf16>
}

// -----

func.func @index_argument(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>, %n: index) -> tensor<1x2x64x64xf16> {
  // expected-error @-1 {{cannot run on the GPU: argument 3 of @index_argument has type 'index'; GPU entry points take ranked tensors}}
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

// A view needs its sizes to follow from its source's: one dynamic dim split
// into two dynamic dims has no inferable split.
func.func @two_dynamic_dims_in_a_group(%q: tensor<1x?x64xf16>, %k: tensor<1x?x?x64xf16>, %v: tensor<1x?x?x64xf16>) -> tensor<1x?x?x64xf16> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %q, %c1 : tensor<1x?x64xf16>
  // expected-error @+1 {{cannot run on the GPU: 'tensor.expand_shape' groups two dynamic dims; the GPU target takes reshapes whose sizes follow from their source}}
  %qe = tensor.expand_shape %q [[0], [1, 2], [3]] output_shape [1, %n, 1, 64] : tensor<1x?x64xf16> into tensor<1x?x?x64xf16>
  %o = attn.sdpa %qe, %k, %v : tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16>, tensor<1x?x?x64xf16> -> tensor<1x?x?x64xf16>
  return %o : tensor<1x?x?x64xf16>
}

// -----

func.func @returns_reshaped_argument(%q: tensor<1x64x128xf16>) -> tensor<1x64x2x64xf16> {
  // expected-error @-1 {{cannot run on the GPU: @returns_reshaped_argument returns a value that is not an attn.sdpa result (or a reshape of one) or a concatenation}}
  %e = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 64, 2, 64] : tensor<1x64x128xf16> into tensor<1x64x2x64xf16>
  return %e : tensor<1x64x2x64xf16>
}

// -----

func.func @operand_from_an_sdpa(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<2x64x64xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  %c = tensor.collapse_shape %o [[0, 1], [2], [3]] : tensor<1x2x64x64xf16> into tensor<2x64x64xf16>
  %kc = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<1x2x64x64xf16> into tensor<2x64x64xf16>
  // expected-error @+1 {{cannot run on the GPU: its operands must be arguments of @operand_from_an_sdpa, reshapes or concatenations of them (the GPU target compiles attention cores)}}
  %o2 = attn.sdpa %c, %kc, %kc : tensor<2x64x64xf16>, tensor<2x64x64xf16>, tensor<2x64x64xf16> -> tensor<2x64x64xf16>
  return %o2 : tensor<2x64x64xf16>
}

// -----

// A concatenation is built in the result buffer that returns it.
func.func @concat_not_returned(%q: tensor<1x2x1x64xf16>, %pk: tensor<1x2x63x64xf16>, %k: tensor<1x2x1x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x1x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: 'tensor.concat' is not a result of @concat_not_returned; the GPU target builds concatenations (KV caches) in result buffers}}
  %kc = tensor.concat dim(2) %pk, %k : (tensor<1x2x63x64xf16>, tensor<1x2x1x64xf16>) -> tensor<1x2x64x64xf16>
  %o = attn.sdpa %q, %kc, %v : tensor<1x2x1x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x1x64xf16>
  return %o : tensor<1x2x1x64xf16>
}

// -----

func.func @concat_of_a_result(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> (tensor<1x2x64x64xf16>, tensor<1x2x128x64xf16>) {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16> -> tensor<1x2x64x64xf16>
  // expected-error @+1 {{cannot run on the GPU: 'tensor.concat' joins values that are not arguments of @concat_of_a_result (or reshapes of them)}}
  %c = tensor.concat dim(2) %k, %o : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x128x64xf16>
  return %o, %c : tensor<1x2x64x64xf16>, tensor<1x2x128x64xf16>
}

// -----

// A mask generator's inputs must be arguments: the kernel reads them.
#gen_map = affine_map<(d0, d1) -> (d0, d1)>
func.func @generator_of_a_constant(%q: tensor<64x64xf16>, %k: tensor<64x64xf16>, %v: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %c = arith.constant dense<0.0> : tensor<64x64xf16>
  %e = tensor.empty() : tensor<64x64xf16>
  // expected-error @+1 {{cannot run on the GPU: this mask's linalg.generic reads a value that is not an argument; the GPU kernel evaluates elementwise masks of arguments per score}}
  %m = linalg.generic {indexing_maps = [#gen_map, #gen_map], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<64x64xf16>) outs(%e : tensor<64x64xf16>) {
  ^bb0(%x: f16, %out: f16):
    linalg.yield %x : f16
  } -> tensor<64x64xf16>
  %o = attn.sdpa %q, %k, %v mask(%m : additive) : tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %o : tensor<64x64xf16>
}

// -----

// A reshape of a transposed value is not a view of a contiguous buffer.
func.func @reshaped_transpose(%q: tensor<2x64x64xf16>, %k: tensor<128x64xf16>, %v: tensor<128x64xf16>) -> tensor<128x64xf16> {
  %e = tensor.empty() : tensor<64x2x64xf16>
  %t = linalg.transpose ins(%q : tensor<2x64x64xf16>) outs(%e : tensor<64x2x64xf16>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<64x2x64xf16> into tensor<128x64xf16>
  // expected-error @+1 {{cannot run on the GPU: an operand reshapes a transposed value, which has no view on the GPU target's buffers}}
  %o = attn.sdpa %c, %k, %v : tensor<128x64xf16>, tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x64xf16>
  return %o : tensor<128x64xf16>
}

// -----

// A transpose that moves the last dim is not a view with contiguous rows.
func.func @transpose_of_the_last_dim(%q: tensor<64x64xf16>, %k: tensor<64x64xf16>, %v: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %e = tensor.empty() : tensor<64x64xf16>
  // expected-error @+1 {{the GPU target compiles entry points whose results are attn.sdpa of the arguments (or of reshapes, transposes and concatenations of them); 'linalg.transpose' in @transpose_of_the_last_dim has no GPU lowering yet (use the CPU target)}}
  %t = linalg.transpose ins(%k : tensor<64x64xf16>) outs(%e : tensor<64x64xf16>) permutation = [1, 0]
  %o = attn.sdpa %q, %t, %v : tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return %o : tensor<64x64xf16>
}
