// The CPU pipeline ends with attn-capture-constant-addresses: the bias, a
// non-splat constant, reaches the parallel region over the 1024 rows (enough
// work to be one; attn-serialize-small-parallel-loops) as a
// laundered address built outside it (capture-constant-addresses=false:
// the region's code names the global itself).
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline | FileCheck %s
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline=capture-constant-addresses=false | FileCheck %s --check-prefix=OFF
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR

// CHECK: llvm.mlir.global private constant @[[BIAS:__constant_16xf32]](dense<[0.000000e+00, 1.000000e+00,
// CHECK-LABEL: llvm.func @add_bias(
// CHECK: %[[A:.*]] = llvm.mlir.addressof @[[BIAS]] : !llvm.ptr
// CHECK-NEXT: %[[L:.*]] = llvm.intr.launder.invariant.group %[[A]] : !llvm.ptr
// CHECK-NOT: llvm.mlir.addressof
// CHECK: omp.parallel {
// CHECK-NOT: llvm.mlir.addressof
// CHECK: llvm.return
// OFF-LABEL: llvm.func @add_bias(
// OFF-NOT: launder
// OFF: omp.parallel {
// OFF-NOT: launder
// OFF: llvm.return
// IR-LABEL: define internal void @add_bias..omp_par(
// IR-NOT: @__constant_16xf32
// IR: ret void
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @add_bias(%x: tensor<1024x16xf32>) -> tensor<1024x16xf32> {
  %bias = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<16xf32>
  %init = tensor.empty() : tensor<1024x16xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<1024x16xf32>, tensor<16xf32>) outs(%init : tensor<1024x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1024x16xf32>
  return %y : tensor<1024x16xf32>
}
