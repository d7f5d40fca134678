//===- Passes.td - passes of the attention compiler ------------*- tablegen -*-===//
//
// Every pass of the project: what it does, why it exists, and an example.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_TD
#define ATTN_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalgPass : Pass<"convert-attn-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower every attn op to plain, unfused linalg/tensor/arith/math";
  let description = [{
    The reference lowering: each attn op becomes the textbook sequence of
    `linalg.generic` ops (projection matmuls, head split via
    `tensor.expand_shape` + `linalg.transpose`, Q K^T, scale, mask, a
    max-subtracted softmax, dropout, P V, head merge, out_proj). Nothing is
    fused, so its numbers are the baseline every optimizing pass is checked
    against.

    f16/bf16 operands are extended to f32 first and the result truncated back:
    all accumulation is f32. A fully masked query row yields 0. Dropout uses
    Philox-4x32-10 keyed by the op's `seed`, counting over the flat index of the
    attention weight, so a run is reproducible and independent of tiling.

    Before:
    ```mlir
    %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<2x4x8xf32>, ... -> tensor<2x4x8xf32>
    ```
    After: `linalg.fill` + `linalg.generic` (Q K^T), a masking/scaling generic,
    max and sum reductions, a normalising generic and the P V contraction.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect"
  ];
}

def AttnFuseSoftmaxPass : Pass<"attn-fuse-softmax", "mlir::ModuleOp"> {
  let summary = "Lower attn.sdpa to a fused, flash-style tiled loop nest";
  let description = [{
    The plain lowering materialises the Tq x Tk scores and walks them five
    times (scale/mask, max, exp, sum, normalise). This pass fuses scale, mask,
    softmax and dropout into one pass over key/value blocks with an online
    softmax (running max and sum, rescaled accumulator), so no score matrix
    exists: memory is O(block-q x block-kv) per task instead of O(Tq x Tk).

    The result is an `scf.forall` over (batch..., head, query block) whose
    body loops over key/value blocks with `scf.for`. Scale x log2(e) is folded
    into the Q block and `exp2` is used. Causal attention stops the key loop
    at the diagonal (blocks above it are never computed) and evaluates the
    element predicate only on blocks that cross the diagonal. A fully masked
    row yields 0. Dropout uses the same Philox counters as the plain lowering.
    With `block-kv` >= Tk the key loop has one iteration: the row-wise fused
    softmax.

    Before:
    ```mlir
    %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x12x?x64xf32>, ... -> tensor<1x12x?x64xf32>
    ```
    After (abridged):
    ```mlir
    %o = scf.forall (%b, %h, %qb) in (1, 12, %nq) shared_outs(%out = %init) {
      %qs = ... Q block * scale * log2(e)
      %s1:3 = scf.for %j = %c0 to %full step %bkv iter_args(%m, %l, %acc) { no predicate }
      %s2:3 = scf.for %j = %full to %end step %bkv iter_args(...) { causal predicate }
      %ob = acc / l
      scf.forall.in_parallel { tensor.parallel_insert_slice %ob into %out[...] }
    }
    ```
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"64",
           "Query rows per task">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"128",
           "Keys per step of the online softmax">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect"
  ];
}

def AttnEmitCInterfacePass : Pass<"attn-emit-c-interface", "mlir::ModuleOp"> {
  let summary = "Mark public functions with llvm.emit_c_interface";
  let description = [{
    The runtime calls compiled entry points through their C interface
    (`_mlir_ciface_<name>`, one pointer per memref descriptor), which is stable
    across ranks and argument counts. This pass sets `llvm.emit_c_interface` on
    every public `func.func` with a body so that the LLVM lowering emits it.

    Before: `func.func @main(%x: tensor<4xf32>) -> tensor<4xf32>`
    After:  `func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {llvm.emit_c_interface}`
  }];
}

def AttnBufferizePass : Pass<"attn-bufferize", "mlir::ModuleOp"> {
  let summary = "One-shot bufferization configured for compiled entry points";
  let description = [{
    Runs upstream one-shot module bufferization with the settings the runtime
    relies on: function boundaries are bufferized with identity-layout
    memrefs (dense row-major buffers the runtime can hand over and take
    back), and every buffer copy is a `linalg.copy`, which lowers to loops.
    (The upstream default, `memref.copy`, becomes a call to `memrefCopy` in
    libmlir_c_runner_utils whenever a view is strided, e.g. for
    `tensor.concat`, a dependency compiled modules must not have.)

    Before: `func.func @f(%x: tensor<2x4xf32>) -> tensor<2x8xf32>` with a
    `tensor.concat`. After: `func.func @f(%x: memref<2x4xf32>) ->
    memref<2x8xf32>` with `memref.subview` + `linalg.copy`.
  }];
  let dependentDialects = [
    "mlir::bufferization::BufferizationDialect", "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def AttnSerializeNestedParallelLoopsPass
    : Pass<"attn-serialize-nested-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Keep only the outermost scf.parallel of each loop nest parallel";
  let description = [{
    `convert-linalg-to-parallel-loops` makes every parallel dimension an
    `scf.parallel`, including those nested inside reduction loops (the `n`
    loop of a matmul inside its `k` loop). Forking threads there would cost
    more than the work, so this pass turns every `scf.parallel` nested in
    another one into plain `scf.for` loops, leaving one parallel region per
    loop nest (batch x heads x rows) for `convert-scf-to-openmp`.

    Before:
    ```mlir
    scf.parallel (%b, %t) = ... {
      scf.for %k = ... {
        scf.parallel (%n) = ... { ... }
      }
    }
    ```
    After: the inner `scf.parallel (%n)` is `scf.for %n`.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

#endif // ATTN_PASSES_TD
