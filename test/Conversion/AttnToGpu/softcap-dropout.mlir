// RUN: attention-opt %s --convert-attn-to-gpu --canonicalize | FileCheck %s

// Softcap in the GPU kernel: each raw score s of the S = Q K^T fragments
// becomes the log2-domain logit c tanh(s * scale / c) * log2(e), with
// tanh(y) = 1 - 2 / (2^(2 y log2 e) + 1) on the exp2 the online softmax
// uses. Here c = 30, scale = 1/8: 2 log2(e) / 8 / 30 = 0.01202..., and
// 30 log2(e) = 43.28...; the causal mask comes after the cap.
// CHECK-LABEL: gpu.func @softcap_sdpa0
// CHECK-DAG: %[[CLOG2E:.*]] = arith.constant 43.2808495 : f32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[Y2:.*]] = arith.constant 0.0120224589 : f32
// CHECK: nvgpu.mma.sync
// CHECK: %[[S:.*]] = vector.extract %{{.*}}[0, 0] : f32 from vector<2x2xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[S]], %[[Y2]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp2 %[[Y]] : f32
// CHECK-NEXT: %[[E1:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[TWO]], %[[E1]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.subf %[[ONE]], %[[Q]] : f32
// CHECK-NEXT: arith.mulf %[[T]], %[[CLOG2E]] : f32
// CHECK: arith.cmpi sle
// CHECK: arith.select
// CHECK: gpu.return
func.func @softcap(%q: tensor<1x2x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x64xf16>) -> tensor<1x2x128x64xf16> {
  %o = attn.sdpa %q, %k, %v causal(top_left) {softcap = 30.0 : f32} : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16> -> tensor<1x2x128x64xf16>
  return %o : tensor<1x2x128x64xf16>
}

// Dropout in the GPU kernel: the flat index of key 0 in each of the
// thread's two rows is ((batch * Hq + head) * Tq + row) * Tk; a weight's
// counter adds its key. After the row sums took the weights, each P V
// operand is kept times 1 / (1 - p) iff its Philox-4x32-10 uniform is
// >= p, with the high product words from mul.hi.u32. (The first round's
// products of the zero third word fold away: its key word meets the
// counter's high word directly.)
// CHECK-LABEL: gpu.func @dropout_sdpa0
// CHECK-DAG: %[[KEEPSCALE:.*]] = arith.constant 1.33333337 : f32
// CHECK-DAG: %[[P:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[SEED:.*]] = arith.constant 42 : i32
// CHECK-DAG: %[[BX:.*]] = gpu.block_id x
// CHECK-DAG: %[[HEAD:.*]] = gpu.block_id y
// CHECK-DAG: %[[BATCH:.*]] = gpu.block_id z
// CHECK: %[[BH:.*]] = arith.muli %[[BATCH]], %c4 : index
// CHECK: %[[PLANE0:.*]] = arith.addi %[[BH]], %[[HEAD]] : index
// CHECK: %[[PLANE:.*]] = arith.muli %[[PLANE0]], %c128 : index
// CHECK: %[[RA:.*]] = arith.addi %[[PLANE]], %[[ROWA:.*]] : index
// CHECK: %[[BASEA:.*]] = arith.muli %[[RA]], %c128 : index
// CHECK: scf.for
// CHECK: %[[CTR:.*]] = arith.addi %[[BASEA]], %{{.*}} : index
// CHECK: %[[C64:.*]] = arith.index_cast %[[CTR]] : index to i64
// CHECK: %[[LO:.*]] = arith.trunci %[[C64]] : i64 to i32
// CHECK: %[[HI64:.*]] = arith.shrui %[[C64]], %c32_i64 : i64
// CHECK: %[[HI:.*]] = arith.trunci %[[HI64]] : i64 to i32
// CHECK: arith.muli %[[LO]], %c-766435501_i32 : i32
// CHECK: llvm.call_intrinsic "llvm.nvvm.mulhi.ui"(%c-766435501_i32, %[[LO]]) : (i32, i32) -> i32
// CHECK: arith.xori %[[HI]], %[[SEED]] : i32
// CHECK: %[[U:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: %[[KEEP:.*]] = arith.cmpf oge, %[[U]], %[[P]] : f32
// CHECK: %[[KEPT:.*]] = arith.mulf %{{.*}}, %[[KEEPSCALE]] : f32
// CHECK: %[[W:.*]] = arith.select %[[KEEP]], %[[KEPT]], %[[ZERO]] : f32
// CHECK: arith.truncf %[[W]] : f32 to bf16
// CHECK: nvvm.mma.sync
// CHECK: gpu.return
func.func @dropout(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x4x128x64xbf16>, %v: tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16> {
  %o = attn.sdpa %q, %k, %v {dropout_p = 0.25 : f32, seed = 42 : i64} : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>
  return %o : tensor<2x4x128x64xbf16>
}
