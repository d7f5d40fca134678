// attn-approximate-math: exp, exp2, tanh and erf become polynomial arithmetic
// (no libm call), also for f16 (computed in f32). With exp-and-tanh=false
// (the CPU pipeline's fast-exp=false) only erf is, which LLVM cannot lower,
// and expm1, which it lowers as exp(x) - 1.
// powf by a constant exponent becomes multiplications (or sqrt) in both.
// RUN: attention-opt %s -attn-approximate-math | FileCheck %s
// RUN: attention-opt %s -attn-approximate-math=exp-and-tanh=false | FileCheck %s --check-prefix=ERFONLY

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

// CHECK-LABEL: func.func @erf(
// CHECK-NOT: math.erf
// CHECK: return
// ERFONLY-LABEL: func.func @exps(
// ERFONLY: math.exp %{{.*}} : f32
// ERFONLY: math.exp2
// ERFONLY-LABEL: func.func @tanh(
// ERFONLY: math.tanh
// ERFONLY-LABEL: func.func @erf(
// ERFONLY-NOT: math.erf
// ERFONLY: return
func.func @erf(%x: vector<16xf32>) -> vector<16xf32> {
  %a = math.erf %x : vector<16xf32>
  return %a : vector<16xf32>
}

// expm1 in either mode: (u - 1) * x / log(u) with u = exp(x), keeping x
// where u rounds to 1 (convert-math-to-llvm's exp(x) - 1 cancels a small x
// away). The exp is then approximated only with exp-and-tanh.
// CHECK-LABEL: func.func @expm1(
// CHECK-NOT: math.exp
// CHECK: %[[LOG:.*]] = math.log
// CHECK: %[[RATIO:.*]] = arith.divf %arg0, %[[LOG]]
// CHECK: arith.mulf %{{.*}}, %[[RATIO]]
// CHECK-NOT: math.exp
// CHECK: return
// ERFONLY-LABEL: func.func @expm1(
// ERFONLY: %[[U:.*]] = math.exp %arg0
// ERFONLY: %[[ISONE:.*]] = arith.cmpf ueq, %[[U]]
// ERFONLY: %[[LOG:.*]] = math.log %[[U]]
// ERFONLY: %[[RATIO:.*]] = arith.divf %arg0, %[[LOG]]
// ERFONLY: %[[R:.*]] = arith.select %[[ISONE]], %arg0,
// ERFONLY-NOT: math.expm1
// ERFONLY: return %[[R]]
func.func @expm1(%x: vector<16xf32>) -> vector<16xf32> {
  %a = math.expm1 %x : vector<16xf32>
  return %a : vector<16xf32>
}

// Other math ops are left alone.
// CHECK-LABEL: func.func @others
// CHECK: math.sin
func.func @others(%x: f32) -> f32 {
  %a = math.sin %x : f32
  return %a : f32
}

// powf by a constant exponent (torch.pow(x, 3) in the book's GELU) becomes
// multiplications, in either mode; a variable exponent stays a powf.
// CHECK-LABEL: func.func @pow(
// CHECK: %[[SQ:.*]] = arith.mulf %arg0, %arg0
// CHECK: %[[CUBE:.*]] = arith.mulf %arg0, %[[SQ]]
// CHECK: math.powf %arg0, %arg1
// CHECK: return %[[CUBE]]
// ERFONLY-LABEL: func.func @pow(
// ERFONLY: arith.mulf
// ERFONLY: arith.mulf
// ERFONLY: math.powf %{{.*}}, %arg1
func.func @pow(%x: f32, %e: f32) -> (f32, f32) {
  %c3 = arith.constant 3.0 : f32
  %a = math.powf %x, %c3 : f32
  %b = math.powf %x, %e : f32
  return %a, %b : f32, f32
}

// Ops on whole tensors are left alone (the patterns build scalar and
// vector compares; on a tensor they made invalid IR), and the pipeline
// turns them into linalg.generic first, whose scalar bodies are rewritten.
// CHECK-LABEL: func.func @whole_tensors(
// CHECK: math.tanh %{{.*}} : tensor<4x16xf32>
// CHECK: math.exp %{{.*}} : tensor<4x16xf32>
// CHECK: math.erf %{{.*}} : tensor<4x16xf32>
// ERFONLY-LABEL: func.func @whole_tensors(
// ERFONLY: math.erf %{{.*}} : tensor<4x16xf32>
func.func @whole_tensors(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %g = math.tanh %x : tensor<4x16xf32>
  %e = math.exp %g : tensor<4x16xf32>
  %r = math.erf %e : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
