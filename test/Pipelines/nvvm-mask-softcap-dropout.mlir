// REQUIRES: ptxas
// Explicit masks, softcap and dropout through the GPU pipeline to PTX and
// ptxas: each thread reads its mask entries from global memory (bytes for
// i1), the cap's tanh runs on ex2.approx and one division per score, the
// dropout
// generator stays in 32-bit registers (mul.hi.u32 and xor.b32;
// no 64-bit products of its multipliers 0xD2511F53 = 3528531795 and
// 0xCD9E8D57 = 3449720151), and the kernel does not spill.
//
// RUN: attention-opt %s --attn-lower-to-nvvm-pipeline="format=isa toolkit=%cuda_toolkit" -o %t.isa.mlir
// RUN: %python %attn_src/scripts/extract_ptx.py %t.isa.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: FileCheck %s --check-prefix=PTX-NO64 < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// GPT-2 small's causal core in training mode, Gemma-style capped scores
// and a 256-key window.
// (The key-padding case below: a batch of 4 padded sequences.)
func.func @padded(%q: tensor<4x12x1024x64xf16>, %k: tensor<4x12x1024x64xf16>, %v: tensor<4x12x1024x64xf16>, %m: tensor<4x1x1x1024xi1>) -> tensor<4x12x1024x64xf16> {
  %o = attn.sdpa %q, %k, %v mask(%m : masked_where_true) causal(top_left) : tensor<4x12x1024x64xf16>, tensor<4x12x1024x64xf16>, tensor<4x12x1024x64xf16>, tensor<4x1x1x1024xi1> -> tensor<4x12x1024x64xf16>
  return %o : tensor<4x12x1024x64xf16>
}

func.func @train_core(%q: tensor<1x12x1024x64xbf16>, %k: tensor<1x12x1024x64xbf16>, %v: tensor<1x12x1024x64xbf16>) -> tensor<1x12x1024x64xbf16> {
  %o = attn.sdpa %q, %k, %v causal(top_left) {window_left = 255 : i64, softcap = 50.0 : f32, dropout_p = 0.1 : f32, seed = 1234 : i64} : tensor<1x12x1024x64xbf16>, tensor<1x12x1024x64xbf16>, tensor<1x12x1024x64xbf16> -> tensor<1x12x1024x64xbf16>
  return %o : tensor<1x12x1024x64xbf16>
}

// PTX-LABEL: .entry padded_sdpa0(
// PTX: .param .u64 .ptr .align 1 padded_sdpa0_param_{{[0-9]+}}
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: ld.global.{{[bus]}}8
// PTX: ex2.approx.f32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// PTX-LABEL: .entry train_core_sdpa0(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: ex2.approx.f32
// PTX: div.rn.f32
// PTX: mul.hi.u32
// PTX: xor.b32
// PTX: mul.hi.u32
// PTX: cvt.rn.bf16x2.f32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: st.global.b32

// PTX-NO64-NOT: {{mul.lo.s64.*(3528531795|3449720151)}}
// PTX-NO64-NOT: {{mul.wide.u32.*(3528531795|3449720151)}}
// PTX-NO64: .entry padded_sdpa0(

// ptxas lists the entries in reverse order.
// PTXAS: Compiling entry function 'train_core_sdpa0'
// PTXAS-NEXT: Function properties for train_core_sdpa0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NEXT: Used {{[0-9]?[0-9]|1[0-9][0-9]|2[0-4][0-9]}} registers, used 1 barriers, 36864 bytes smem
// PTXAS: Compiling entry function 'padded_sdpa0'
// PTXAS-NEXT: Function properties for padded_sdpa0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NEXT: Used {{[0-9]?[0-9]|1[0-9][0-9]|2[0-4][0-9]}} registers, used 1 barriers, 36864 bytes smem
