// attn-approximate-math: exp, exp2 and tanh become polynomial arithmetic (no libm
// call), also for f16 (computed in f32).
// RUN: attention-opt %s -attn-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @exps(
// CHECK-NOT: math.exp
// CHECK: arith.bitcast
// CHECK-NOT: math.exp
// CHECK: return
func.func @exps(%x: f32, %y: vector<16xf32>, %h: f16) -> (f32, vector<16xf32>, f32, f16) {
  %a = math.exp %x : f32
  %b = math.exp %y : vector<16xf32>
  %c = math.exp2 %x : f32
  %d = math.exp %h : f16
  return %a, %b, %c, %d : f32, vector<16xf32>, f32, f16
}

// CHECK-LABEL: func.func @tanh(
// CHECK-NOT: math.tanh
// CHECK: return
func.func @tanh(%x: f32) -> f32 {
  %a = math.tanh %x : f32
  return %a : f32
}

// Other math ops are left alone.
// CHECK-LABEL: func.func @others
// CHECK: math.sin
func.func @others(%x: f32) -> f32 {
  %a = math.sin %x : f32
  return %a : f32
}
