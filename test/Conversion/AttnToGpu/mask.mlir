// RUN: attention-opt %s --convert-attn-to-gpu --canonicalize | FileCheck %s

// Explicit masks in the GPU kernel. The mask is one more kernel argument
// (before the result); each thread loads the entries of its scores, with
// the mask's dims aligned to the trailing dims of the scores [B, Hq, Tq,
// Tk] and its dims of size 1 read at 0. A key-padding mask [B, 1, 1, Tk]
// reads (batch, 0, 0, key); masked_where_true hides a score where it holds.
// Tk = 128 is two whole 64-key tiles, so every tile runs the unmasked loop
// and the keys need no clamp.
// CHECK-LABEL: func.func @key_padding(
// CHECK-SAME: %[[M:[a-z0-9]+]]: memref<2x1x1x128xi1>, %[[O:[a-z0-9]+]]: memref<2x4x128x64xf16>)
// CHECK: gpu.launch_func @attn_gpu_kernels::@key_padding_sdpa0 {{.*}} args({{.*}}, %[[M]] : memref<2x1x1x128xi1>, %[[O]] : memref<2x4x128x64xf16>)
// CHECK-LABEL: gpu.func @key_padding_sdpa0(
// CHECK-SAME: %[[KM:[a-z0-9]+]]: memref<2x1x1x128xi1>
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[BATCH:.*]] = gpu.block_id z
// CHECK: scf.for
// CHECK: nvgpu.mma.sync
// CHECK: %[[S:.*]] = arith.mulf
// CHECK-NEXT: %[[KEY:.*]] = arith.addi
// CHECK-NEXT: %[[HIDE:.*]] = memref.load %[[KM]][%[[BATCH]], %c0, %c0, %[[KEY]]] : memref<2x1x1x128xi1>
// CHECK-NEXT: arith.select %[[HIDE]], %[[NINF]], %[[S]] : f32
// CHECK: gpu.return
func.func @key_padding(%q: tensor<2x4x128x64xf16>, %k: tensor<2x4x128x64xf16>, %v: tensor<2x4x128x64xf16>, %m: tensor<2x1x1x128xi1>) -> tensor<2x4x128x64xf16> {
  %o = attn.sdpa %q, %k, %v mask(%m : masked_where_true) : tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x1x1x128xi1> -> tensor<2x4x128x64xf16>
  return %o : tensor<2x4x128x64xf16>
}

// An additive rank-2 mask [Tq, Tk] under causal masking: in the log2
// domain the entry is added times log2(e) (a finite entry that overflows
// there, finfo(f32).min, stays the most negative finite value). Rows past Tq read the last row
// (99); in the masked tiles (the diagonal, the end of the keys) keys past
// Tk read the last key, and the end-of-keys and causal predicates then
// hide them.
// CHECK-LABEL: gpu.func @bias_sdpa0(
// CHECK-SAME: %[[BM:[a-z0-9]+]]: memref<100x100xbf16>
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[L2S:.*]] = arith.constant 0.180336878 : f32
// CHECK: %[[ROWA:.*]] = arith.minui %{{.*}}, %c99 : index
// CHECK: scf.for
// CHECK: %[[U:.*]] = memref.load %[[BM]][%[[ROWA]], %{{.*}}] : memref<100x100xbf16>
// CHECK-NEXT: %[[UF:.*]] = arith.extf %[[U]] : bf16 to f32
// CHECK-NEXT: %[[UL:.*]] = arith.mulf %[[UF]], %[[LOG2E]] : f32
// CHECK-NEXT: %[[OVER:.*]] = arith.cmpf oeq, %[[UL]], %[[NINF:.*]] : f32
// CHECK-NEXT: %[[FINITE:.*]] = arith.cmpf one, %[[UF]], %[[NINF]] : f32
// CHECK-NEXT: %[[CLAMP:.*]] = arith.andi %[[OVER]], %[[FINITE]] : i1
// CHECK-NEXT: %[[UM:.*]] = arith.select %[[CLAMP]], %[[FMIN:.*]], %[[UL]] : f32
// CHECK-NEXT: arith.addf %{{.*}}, %[[UM]] : f32
// CHECK: scf.for
// CHECK: arith.mulf %{{.*}}, %[[L2S]] : f32
// CHECK-NEXT: %[[KEY:.*]] = arith.addi
// CHECK-NEXT: %[[KC:.*]] = arith.minui %[[KEY]], %c99 : index
// CHECK-NEXT: memref.load %[[BM]][%[[ROWA]], %[[KC]]] : memref<100x100xbf16>
// CHECK: arith.cmpi slt, %[[KEY]], %c100 : index
// CHECK: arith.cmpi sle, %[[KEY]]
// CHECK: gpu.return
func.func @bias(%q: tensor<1x4x100x64xbf16>, %k: tensor<1x4x100x64xbf16>, %v: tensor<1x4x100x64xbf16>, %m: tensor<100x100xbf16>) -> tensor<1x4x100x64xbf16> {
  %o = attn.sdpa %q, %k, %v mask(%m : additive) causal(top_left) : tensor<1x4x100x64xbf16>, tensor<1x4x100x64xbf16>, tensor<1x4x100x64xbf16>, tensor<100x100xbf16> -> tensor<1x4x100x64xbf16>
  return %o : tensor<1x4x100x64xbf16>
}
