// RUN: attention-opt %s --attn-fuse-elementwise | FileCheck %s

// An elementwise chain (x^3, a broadcast bias add, tanh) becomes one
// linalg.generic; it is not fused into the contraction that reads it
// (which stays out + a * b), and the square feeding a reduction stays its
// own op. A producer read twice by one consumer is fused (recomputed in
// registers, no tensor in between).
// CHECK-LABEL: func.func @chain(
// CHECK: %[[ACT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<16xf32>)
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ACT]], %arg2 : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[SQ]] : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg0 : tensor<8x16xf32>, tensor<8x16xf32>)
// CHECK-NEXT: ^bb0(%[[IN0:.*]]: f32, %[[IN1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T0:.*]] = arith.addf %[[IN1]], %[[IN1]]
// CHECK-NEXT: %[[T1:.*]] = arith.addf %[[IN0]], %[[IN0]]
// CHECK-NEXT: arith.mulf %[[T1]], %[[T0]]
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (n)>
#red = affine_map<(m, n) -> (m)>
#row2 = affine_map<(m, n) -> (n)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @chain(%x: tensor<8x16xf32>, %bias: tensor<16xf32>, %w: tensor<16x32xf32>) -> (tensor<8x32xf32>, tensor<8xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %cube = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    %t = arith.mulf %s, %v : f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  %biased = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%cube, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%biased : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.tanh %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%act, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f2 : tensor<8x32xf32>) {
  ^bb0(%av: f32, %bv: f32, %o: f32):
    %p = arith.mulf %av, %bv : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %e3 = tensor.empty() : tensor<8xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<8x16xf32>) outs(%f3 : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %both = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%twice, %twice : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %s = arith.mulf %v, %u : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %mm, %sum, %both : tensor<8x32xf32>, tensor<8xf32>, tensor<8x16xf32>
}

// A bias add written into a contraction's result (it reads its init: the
// form attn-vectorize-contractions folds into its registers) stays as it
// is under a residual add; a contraction with a splat constant operand
// keeps it as an operand.
// CHECK-LABEL: func.func @bias_then_residual(
// CHECK: %[[MM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %{{.*}} : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<32xf32>) outs(%[[MM]] : tensor<8x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[B]], %arg2 : tensor<8x32xf32>, tensor<8x32xf32>)
func.func @bias_then_residual(%x: tensor<8x16xf32>, %bias: tensor<32xf32>, %res: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %w = arith.constant dense<0.5> : tensor<16x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%av: f32, %bv: f32, %o: f32):
    %p = arith.mulf %av, %bv : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %biased = linalg.generic {indexing_maps = [#row2, #id], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<32xf32>) outs(%mm : tensor<8x32xf32>) {
  ^bb0(%bv: f32, %o: f32):
    %s = arith.addf %o, %bv : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  %out = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%biased, %res : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%v: f32, %r: f32, %o: f32):
    %s = arith.addf %v, %r : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %out : tensor<8x32xf32>
}

// Splat constant operands of all-parallel ops (the graph's scalars 0.5 and
// 3, a splat of the full shape) become scalar constants in the fused body,
// so that math.powf(x, 3) has a constant exponent for attn-approximate-math
// to expand (approximate-math.mlir); a constant that is not a splat stays
// an operand.
// CHECK-LABEL: func.func @splat_scalars(
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ROW:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[ROW]] : tensor<4x2xf32>, tensor<2xf32>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = math.powf %[[X]], %[[THREE]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[P]], %[[HALF]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[M]], %[[TWO]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[T]], %[[R]] : f32
// CHECK-NEXT: linalg.yield %[[A]]
#s0 = affine_map<(m, n) -> ()>
#col = affine_map<(m, n) -> (n)>
func.func @splat_scalars(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %three = arith.constant dense<3.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<4x2xf32>
  %row = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %cube = linalg.generic {indexing_maps = [#id, #s0, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %three : tensor<4x2xf32>, tensor<f32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%v: f32, %p: f32, %o: f32):
    %r = math.powf %v, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %halved = linalg.generic {indexing_maps = [#id, #s0, #id], iterator_types = ["parallel", "parallel"]} ins(%cube, %half : tensor<4x2xf32>, tensor<f32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%v: f32, %h: f32, %o: f32):
    %r = arith.mulf %v, %h : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %doubled = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%halved, %two : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %r = arith.mulf %v, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %out = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%doubled, %row : tensor<4x2xf32>, tensor<2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%v: f32, %r: f32, %o: f32):
    %s = arith.addf %v, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %out : tensor<4x2xf32>
}
