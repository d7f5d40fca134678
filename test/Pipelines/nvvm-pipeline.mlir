// REQUIRES: ptxas
// The GPU pipeline from attn to host LLVM code plus an embedded GPU binary,
// stage by stage: PTX (format=isa), ptxas's resource report for sm_90 and
// sm_80, and the default fatbin (cubin + PTX).
//
// RUN: attention-opt %s --attn-lower-to-nvvm-pipeline="format=isa toolkit=%cuda_toolkit" -o %t.isa.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.isa.mlir
// RUN: %python %attn_src/scripts/extract_ptx.py %t.isa.mlir > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
//
// RUN: attention-opt %s --attn-lower-to-nvvm-pipeline="format=isa chip=sm_80 toolkit=%cuda_toolkit" -o %t.80.mlir
// RUN: %python %attn_src/scripts/extract_ptx.py %t.80.mlir > %t.80.ptx
// RUN: FileCheck %s --check-prefix=PTX80 < %t.80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.80.ptx -o %t.80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
//
// RUN: attention-opt %s --attn-lower-to-nvvm-pipeline="toolkit=%cuda_toolkit" | FileCheck %s --check-prefix=FATBIN

// GPT-2 small's causal attention core.
func.func @gpt2_core(%q: tensor<1x12x1024x64xf16>, %k: tensor<1x12x1024x64xf16>, %v: tensor<1x12x1024x64xf16>) -> tensor<1x12x1024x64xf16> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16> -> tensor<1x12x1024x64xf16>
  return %o : tensor<1x12x1024x64xf16>
}

// The issue's large case: bf16, d = 128.
func.func @big_bf16(%q: tensor<8x16x4096x128xbf16>, %k: tensor<8x16x4096x128xbf16>, %v: tensor<8x16x4096x128xbf16>) -> tensor<8x16x4096x128xbf16> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<8x16x4096x128xbf16>, tensor<8x16x4096x128xbf16>, tensor<8x16x4096x128xbf16> -> tensor<8x16x4096x128xbf16>
  return %o : tensor<8x16x4096x128xbf16>
}

// Host: the entry points take device memrefs and launch the kernels, which
// live in a gpu.binary; the C interface is what the runtime calls.
// HOST: llvm.func @gpt2_core(
// HOST: gpu.launch_func @attn_gpu_kernels::@gpt2_core_sdpa0 blocks in
// HOST: llvm.func @_mlir_ciface_gpt2_core(
// HOST: llvm.func @big_bf16(
// HOST: gpu.launch_func @attn_gpu_kernels::@big_bf16_sdpa0 blocks in
// HOST: gpu.binary @attn_gpu_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "

// PTX: .target sm_90
// PTX-LABEL: .entry gpt2_core_sdpa0(
// PTX: .maxntid 128, 1, 1
// K/V tiles double-buffered ([2 x 64 x 72] f16 each), filled by cp.async
// (16 bytes, L2 only; the source size is 0 past the keys).
// PTX: .shared .align 16 .b8 {{.*}}[18432];
// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, 16;
// PTX: cp.async.commit_group
// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// PTX: cp.async.commit_group
// PTX: cp.async.wait_group 1
// PTX: bar.sync
// PTX: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: shfl.sync.bfly.b32
// PTX: ex2.approx.f32
// PTX: cvt.rn.f16x2.f32
// PTX: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: st.global.b32
// PTX-LABEL: .entry big_bf16_sdpa0(
// d = 128: 32-key tiles, so that two buffers of K and V fit 48 KiB.
// PTX: .shared .align 16 .b8 {{.*}}[17408];
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: cvt.rn.bf16x2.f32
// PTX: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// PTX80: .target sm_80
// PTX80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// Both kernels fit the register file without spilling (ptxas lists the
// entries in reverse order).
// PTXAS: Compiling entry function 'big_bf16_sdpa0'
// PTXAS-NEXT: Function properties for big_bf16_sdpa0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NEXT: Used {{[0-9]?[0-9]|1[0-9][0-9]|2[0-4][0-9]}} registers, used 1 barriers, 34816 bytes smem
// PTXAS: Compiling entry function 'gpt2_core_sdpa0'
// PTXAS-NEXT: Function properties for gpt2_core_sdpa0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NEXT: Used {{[0-9]?[0-9]|1[0-9][0-9]|2[0-4][0-9]}} registers, used 1 barriers, 36864 bytes smem

// FATBIN: gpu.binary @attn_gpu_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {ISAToBinaryTimeInMs = {{[0-9]+}} : i64, LLVMIRToISATimeInMs = {{[0-9]+}} : i64}, "P\ED
