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

def AttnFuseHeadsPass : Pass<"attn-fuse-heads", "mlir::ModuleOp"> {
  let summary = "Fuse the seed's MultiHeadAttentionWrapper into one multi-head attention";
  let description = [{
    N `attn.causal_attention` heads on the same input whose outputs are
    concatenated on the last dim (the seed's `MultiHeadAttentionWrapper`) are
    one `attn.multi_head_attention` with N heads, the heads' weights stacked
    side by side ([d_in, N*d]), biases stacked likewise, causal, and no
    output projection: head i of the fused op reads exactly Wq_i, Wk_i, Wv_i
    and writes exactly the columns head i wrote. The fused form runs one wide
    projection and one batched attention core instead of N of each. Heads
    with dropout (independent random streams) or with different scales are
    left alone.

    Before:
    ```mlir
    %a = attn.causal_attention %x weights(%wq0, %wk0, %wv0) : ... -> tensor<2x6x2xf32>
    %b = attn.causal_attention %x weights(%wq1, %wk1, %wv1) : ... -> tensor<2x6x2xf32>
    %c = tensor.concat dim(2) %a, %b : ... -> tensor<2x6x4xf32>
    ```
    After:
    ```mlir
    %wq = tensor.concat dim(1) %wq0, %wq1 : ... -> tensor<3x4xf32>   // likewise wk, wv
    %c = attn.multi_head_attention %x weights(%wq, %wk, %wv) causal {num_heads = 2 : i64} : ... -> tensor<2x6x4xf32>
    ```
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def AttnDecomposePass : Pass<"attn-decompose", "mlir::ModuleOp"> {
  let summary = "Split compound attention ops into projections, head ops and attn.sdpa";
  let description = [{
    `attn.multi_head_attention` and `attn.causal_attention` become their
    parts: the Q/K/V projections of the shared input (three contractions:
    one over the concatenated weights would copy them on every call),
    `attn.split_heads`, one `attn.sdpa` (causal top-left, scale 1/sqrt(head
    dim), the op's dropout), `attn.merge_heads` and the output projection.
    `attn.self_attention` becomes `attn.sdpa(x, x, x)` with scale 1. The
    later passes then only need to understand `attn.sdpa`. Projections are
    computed in f32, as in the plain lowering.

    Before:
    ```mlir
    %y = attn.multi_head_attention %x weights(%wq, %wk, %wv) out_proj(%wo, %bo) causal {num_heads = 12 : i64} : ...
    ```
    After:
    ```mlir
    %q = linalg.generic ... (x @ wq)   // likewise %k, %v (+ biases)
    %qh = attn.split_heads %q {num_heads = 12 : i64} ...
    %o = attn.sdpa %qh, %kh, %vh causal(top_left) {scale = 0.125 : f32} ...
    %c = attn.merge_heads %o ...
    %y = linalg.generic ... (c @ wo + bo)
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::tensor::TensorDialect"
  ];
}

def AttnFoldHeadTransposesPass
    : Pass<"attn-fold-head-transposes", "mlir::ModuleOp"> {
  let summary = "Fold head split/merge transposes into the SDPA's indexing";
  let description = [{
    `attn.split_heads` is a view plus a transpose (a copy of Q, K or V) and
    `attn.merge_heads` a transpose plus a view (a copy of the context). When
    all three operands of an `attn.sdpa` come from `split_heads` and its
    result only feeds `merge_heads`, the transposes are folded into the
    SDPA: operands become `tensor.expand_shape` views [B..., T, H, d], the
    SDPA reads and writes `layout(seq_major)`, and the merge becomes a
    `tensor.collapse_shape`. Inverse pairs merge(split(x)) and
    split(merge(y)) cancel. At the linalg level (graphs imported unfused),
    a `linalg.transpose` feeding a structured op (a head transpose read by
    an elementwise op such as a rotary embedding, a transpose of batch dims
    only) becomes that operand's indexing map, and one that only reads a
    `linalg.generic`'s result becomes the producer's output map, so that
    transpose is not materialised. The attention-level folds run first, so
    an `attn.sdpa` between head transposes takes them all. An f32
    contraction never has an operand's two innermost loops moved or split
    (m, k in A; k, n in B; m, n in C is the layout
    `attn-vectorize-contractions` takes): a transpose or reshape that would
    (a projection written straight into [B, H, T, d], K^T folded into
    Q K^T, the context's transpose before the merge folded into P V) stays
    a copy. After
    lowering, no `linalg.transpose` and no copy remains for the seed's head
    split or merge.

    Before:
    ```mlir
    %qh = attn.split_heads %q {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
    ... (same for k, v)
    %o = attn.sdpa %qh, %kh, %vh causal(top_left) : ... -> tensor<1x12x?x64xf32>
    %c = attn.merge_heads %o : tensor<1x12x?x64xf32> -> tensor<1x?x768xf32>
    ```
    After:
    ```mlir
    %qv = tensor.expand_shape %q [[0], [1], [2, 3]] ... into tensor<1x?x12x64xf32>
    %o = attn.sdpa %qv, %kv, %vv causal(top_left) layout(seq_major) : ... -> tensor<1x?x12x64xf32>
    %c = tensor.collapse_shape %o [[0], [1], [2, 3]] : tensor<1x?x12x64xf32> into tensor<1x?x768xf32>
    ```
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def AttnFoldRepeatedKvPass
    : Pass<"attn-fold-repeated-kv", "mlir::ModuleOp"> {
  let dependentDialects = ["mlir::tensor::TensorDialect"];
  let summary = "Hand grouped-query attention its unrepeated K and V";
  let description = [{
    Grouped-query models written without a GQA op repeat each key/value
    head n times before the attention (Hugging Face's `repeat_kv`:
    `k[:, :, None].expand(B, Hkv, n, T, d).reshape(B, Hkv * n, T, d)`),
    and multi-query models broadcast their one K/V head to all query heads.
    Imported, that is an `expand_shape`, a broadcasting `linalg.generic`
    (or `linalg.broadcast`) and a `collapse_shape`: n copies of K and V
    written, then read by every query head. `attn.sdpa` reads head
    h / (Hq / Hkv) itself, so this pass gives it the unrepeated K and V
    ([B, Hkv, T, d]); the copies are left dead.

    Only repeats that keep each head's copies together are folded (head h
    of the repeated tensor is head h / n of the source). `k.repeat(1, n, 1,
    1)` tiles the heads instead (h reads h % Hkv) and stays as it is, as
    does a K or V broadcast along another dim, or a K repeated differently
    from V. Dims of size 1 on both sides (a static batch of 1) may be read
    at index 0.

    Before:
    ```mlir
    %e = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, %t, 64] : tensor<1x2x?x64xf32> into tensor<1x2x1x?x64xf32>
    %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], ...} ins(%e : tensor<1x2x1x?x64xf32>) outs(%init : tensor<1x2x4x?x64xf32>) { linalg.yield %in }
    %kr = tensor.collapse_shape %b [[0], [1, 2], [3], [4]] : tensor<1x2x4x?x64xf32> into tensor<1x8x?x64xf32>
    ... (the same for v)
    %o = attn.sdpa %q, %kr, %vr : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
    ```
    After:
    ```mlir
    %o = attn.sdpa %q, %k, %v : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
    ```
  }];
}

def AttnFoldMaskPass : Pass<"attn-fold-mask", "mlir::ModuleOp"> {
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
  let summary = "Fold causal and sliding-window masks into attributes";
  let description = [{
    A causal mask held as data costs a Tq x Tk read per call and hides the
    structure the flash lowering uses to skip blocks above the diagonal.
    This pass proves that a constant mask operand is exactly a causal
    triangle and replaces it by `causal(top_left)` or `causal(bottom_right)`:

    - bool `triu(ones, 1)` with true = masked (the seed's buffer), also
      sliced at the origin (`mask[:T, :T]`, any T; a slice one row or one
      column wide broadcasts that row or column, which is no triangle);
    - bool `tril(ones)` with true = attend;
    - additive constants with 0 below and -inf, -1e4, -1e9 or finfo(f32).min
      above the diagonal;
    - a triangle on the diagonal offset by Tk - Tq (bottom-right, ONNX);
    - any of these computed in the IR from indices alone (`linalg.generic`
      on `linalg.index` comparisons and `arith.select`, `tensor.generate`):
      static-shaped computations are evaluated at compile time.

    The seed's "first method" (softmax, multiply by a 0/1 mask, renormalise
    by the row sum) is causal softmax: `linalg.softmax` -> `linalg.mul` by a
    0/1 constant -> `linalg.reduce` (sum) -> `linalg.broadcast` ->
    `linalg.div` becomes one select (-inf where the mask is 0) before the
    softmax.

    A constant mask that masks nothing is dropped. A triangle with another
    diagonal, a non-constant mask, a mask that differs between batch or head
    planes, a mask on broadcast (size-1) axes that masks something, or an
    additive constant holding other values (a bias) stays a mask.

    Before:
    ```mlir
    %m = arith.constant dense<[[false, true], [false, false]]> : tensor<2x2xi1>
    %o = attn.sdpa %q, %k, %v mask(%m : masked_where_true) : ..., tensor<2x2xi1> -> ...
    ```
    After:
    ```mlir
    %o = attn.sdpa %q, %k, %v causal(top_left) : ...
    ```
  }];
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
    body loops over key/value blocks with `scf.for`. The scale is folded
    into the Q block. Causal attention stops the key loop
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
      %qs = ... Q block * scale
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

def AttnVectorizeSdpaPass : Pass<"attn-vectorize-sdpa", "mlir::ModuleOp"> {
  let summary = "Lower f32 attn.sdpa to a register-blocked flash-attention loop nest in vector IR (CPU)";
  let description = [{
    Takes every f32 `attn.sdpa` (bf16 with `bf16-dot` or `bf16-widen`, f16
    with `f16-widen`: operand loads widened to f32, f32 softmax and
    accumulators, the output rounded back; an f16 mask is widened to f32
    once per call) with head dims that are static multiples
    of 16 (causal of either alignment, sliding windows, softcap, dropout,
    explicit masks of the three kinds, GQA, both layouts, ranks 2-4,
    dynamic batch and sequence lengths); the others are left to
    `attn-fuse-softmax` (so are decode steps: a static query length below
    8, where query rows in the lanes would leave them mostly empty). A static query length below
    `block-q` shrinks the work item to it (rounded up to 16 rows) and
    scales `register-keys` up accordingly.

    A work item is a (batch, head, block of `block-q` query rows). The
    items run on workers, one `scf.forall` iteration each: one worker per
    thread of the OpenMP team (`omp_get_max_threads()`, at most one per
    item; one without `parallel`), each taking guided chunks of
    consecutive items (max(1, left / (2 workers))) from a shared atomic
    counter, in the items' order, and allocating its scratch once. The
    item transposes its scaled Q block into Qt [d, block-q], so
    that query rows lie along the vector lanes: the online softmax's row
    max, row sum and rescale factor are vectors, and the row reductions are
    vertical. exp(s - m) is taken as 2^(s log2(e) - m2) with m2 = m log2(e)
    (one FMA), and 2^x inline: one rounding, a degree-5 polynomial (degree
    3 for bf16-dot weights, which are rounded to bf16 next), 2^n in the
    exponent bits or, with `avx512-scalef`, one vscalefps. Per block of
    `block-kv` keys:

    ```
    St = K_j Qt        register tiles of register-keys keys x block-q rows:
                       broadcast K[j, c], FMA with the Qt row (vector<16xf32>)
    m' = max(m, max_j St);  alpha = exp(m - m')
    St = exp(St - m');  l = l * alpha + sum_j St
    O  = O * alpha + St^T V_j
                       register tiles of register-rows rows x up to 128
                       columns: broadcast St[j, i], FMA with the V row
    ```

    and out = O / l (0 for a row that sees no key), written with streaming
    stores when the result is only returned. An explicit mask is applied
    to the score tiles before their max: a mask that is the same for every
    query row (key padding, [B, 1, 1, Tk]) as one value per key broadcast
    over the lanes (i1: a select of the whole vector; additive: an add);
    one that varies along the rows read transposed: an f32 mask of its own
    per (batch, head) through a per-key-block copy Mt [Bc, block-q]
    transposed like Qt (each load prefetching the next block), as is a
    shared one larger than `mask-copy-limit-mib`; one shared by several
    batches or heads within it, or any i1 or bf16 mask, transposed
    once per call into one contiguous [Tk, block-q] panel per row block,
    f32, the 16 bits of a bf16 mask (half of f32's memory; widened by a
    shift where the tile adds them), or bytes for an i1 mask (1 where
    hidden: the mask's own size; its rows read 16 bytes at a time through
    the buffer's address, as memref cannot view i1 as i8), an i1 mask
    applied by compare and select, so a hidden +inf or NaN score still
    weighs 0; one
    broadcast
    along the keys ([B, 1, Tq, 1]) widened once per call to f32 rows
    without the key dim, one vector per 16 rows loaded per work item.
    Soft-capped scores (c tanh(s / c)) are capped as the tile is stored,
    before the mask. Dropout zeroes weights after the row sum and before
    P V, with the Philox keep-mask (flat index in [B, Hq, Tq, Tk]) of the
    other lowerings, 16 lanes at a time. Causal attention and windows visit only the key
    blocks some row of the item sees (from the window's left edge to the
    block's last visible key) and evaluate the element predicate only in
    blocks that cross the diagonal, a window edge or the end of K; causal
    items take a head's query blocks from the last to the first, so that a
    thread's next item reads a prefix of the keys it just read, and the
    cheapest items come last. A key
    of weight 0 adds nothing even when its value is inf or NaN (blocks with
    non-finite values take a guarded copy of the output update). The
    scratch (Qt, St, O: 64 KiB at the defaults, d = 64) is one heap block
    per worker; no Tq x Tk buffer, no transposed K or V.

    Before:
    ```mlir
    %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x12x1024x64xf32>, ... -> tensor<1x12x1024x64xf32>
    ```
    After (abridged):
    ```mlir
    %qm = bufferization.to_buffer %q read_only : ... to memref<1x12x1024x64xf32, strided<[?, ?, ?, 1], offset: ?>>
    %out = memref.alloc() {alignment = 64 : i64} : memref<1x12x1024x64xf32>
    %threads = call @omp_get_max_threads() : () -> i32
    scf.forall (%w) in (%workers) {
      %scratch = memref.alloc() : memref<65792xi8>
      %qt = memref.view %scratch[%c0][] : memref<65792xi8> to memref<64x64xf32>
                                                  (and St, O, alpha)
      scf.while: take a chunk of items from the counter (memref.atomic_rmw)
        scf.for %item = %first to %last {
          (%b, %h, %qb) of %item (causal: %qb = 15 - %qb)
          Qt = Q block^T * scale; O = 0
          %s1:8 = scf.for %blk = %c0 to %full ... { scores, exp, O update }
          %s2:8 = scf.for %blk = %full to %end ... { the same, with the predicate }
          out block = O / l
        }
    }
    %o = bufferization.to_tensor %out restrict writable : ...
    ```
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"64",
           "Query rows per work item (a multiple of 16)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"128",
           "Keys per step of the online softmax">,
    Option<"registerKeys", "register-keys", "int64_t", /*default=*/"4",
           "Most keys per score register tile: the largest count up to "
           "this that fits `accumulators` and divides `block-kv`">,
    Option<"registerRows", "register-rows", "int64_t", /*default=*/"4",
           "Most query rows per output register tile (the largest count "
           "up to this that divides `block-q`); rows and columns are "
           "chosen within `accumulators` for the fewest loads per FMA "
           "(4 x 64 columns with 24, 2 x 32 with 4)">,
    Option<"accumulators", "accumulators", "int64_t", /*default=*/"24",
           "Most vector<16xf32> accumulators of a register tile: 24 of "
           "AVX-512's 32 registers; 4 (8 of AVX2's 16 ymm) for AVX2">,
    Option<"parallel", "parallel", "bool", /*default=*/"true",
           "One worker per thread of the OpenMP team that runs the "
           "parallel loop (false: one worker, and no call into libomp)">,
    Option<"maskCopyLimitMiB", "mask-copy-limit-mib", "int64_t",
           /*default=*/"64",
           "An f32 mask that several items share (broadcast over batches "
           "or heads) and that varies along the rows is transposed once "
           "per call into a copy of its own size only up to this many "
           "MiB (static shapes; a dynamically sized one is copied); a "
           "larger one is transposed per key block of each item, with "
           "no second copy">,
    Option<"polynomialExp", "polynomial-exp", "bool", /*default=*/"true",
           "2^x as an inline polynomial for non-positive arguments "
           "(false: math.exp2)">,
    Option<"avx512Scalef", "avx512-scalef", "bool", /*default=*/"false",
           "The inline 2^x takes n = roundeven(x) (vrndscaleps) and p(f) * "
           "2^n as one x86vector.avx512.mask.scalef (vscalefps): 3 ops "
           "fewer than building 2^n from the bits; only for CPUs with "
           "AVX-512F">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "Also take bf16 cores (head dims multiples of 32), with "
           "avx512_bf16 dot products (x86vector.avx512.dot) and f32 "
           "softmax and accumulation: only for CPUs with avx512_bf16">,
    Option<"bf16Widen", "bf16-widen", "bool", /*default=*/"false",
           "Also take bf16 cores without dot products (no bf16-dot, or a "
           "head dim that is not a multiple of 32): the f32 loop nest with "
           "every operand load widened to f32 and the output rounded to "
           "bf16">,
    Option<"f16Widen", "f16-widen", "bool", /*default=*/"false",
           "Also take f16 cores: the f32 loop nest with every operand load "
           "widened to f32 (vcvtph2ps), f16 masks widened once per call, "
           "and the output rounded to f16">,
    Option<"streamingStores", "streaming-stores", "bool", /*default=*/"true",
           "Write the output with non-temporal stores (vmovntps; "
           "attn-fence-streaming-stores adds the sfence) when the result "
           "is only returned from the function: the stores skip reading "
           "each line from memory first and do not keep the output in "
           "cache (a caller in the module that reads it back gets it "
           "from memory)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
    "mlir::linalg::LinalgDialect", "mlir::math::MathDialect",
    "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "mlir::vector::VectorDialect",
    "mlir::x86vector::X86VectorDialect"
  ];
}

def AttnDecomposeLinalgAggregatesPass
    : Pass<"attn-decompose-linalg-aggregates", "mlir::ModuleOp"> {
  let summary = "Decompose linalg.softmax and other aggregate ops into structured linalg";
  let description = [{
    `linalg.softmax` has no loop lowering of its own; this pass rewrites it
    (and every other op implementing `AggregatedOpInterface`) into the
    structured ops it stands for, so linalg-level inputs that use it compile.

    Before: `%w = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>`
    After: `linalg.fill` + `linalg.generic` (max), `linalg.generic` (sub,
    exp), `linalg.generic` (sum), `linalg.generic` (div).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def AttnFuseElementwisePass
    : Pass<"attn-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuse chains of elementwise linalg.generic ops into one";
  let description = [{
    An imported graph spells each elementwise step as its own op, each a
    pass over memory: the book's GELU is nine `linalg.generic` ops over a
    [T, 4 d] tensor, its LayerNorm five. An all-parallel producer with a
    single use is fused into the all-parallel consumer of its result
    (upstream's elementwise fusion), so each chain becomes one loop nest.
    Reductions and contractions are never consumers: fused into a matmul's
    operand an elementwise op would turn it into out + f(a) * b, which
    `attn-vectorize-contractions` no longer recognises.

    Before:
    ```mlir
    %p = linalg.generic {... ["parallel", "parallel"]} ins(%x : ...) { math.powf }
    %m = linalg.generic {... ["parallel", "parallel"]} ins(%p, %c : ...) { arith.mulf }
    %a = linalg.generic {... ["parallel", "parallel"]} ins(%x, %m : ...) { arith.addf }
    ```
    After: one `linalg.generic` computing x + c * x^3.

    Splat constant operands of all-parallel ops (the graph's scalars, such
    as GELU's 0.5 and the exponent of x^3, imported as 0-d tensors) become
    scalar `arith.constant`s in the body, so later folds see them:
    `attn-approximate-math` expands `math.powf(x, 3)` into two multiplies
    only when the exponent is a constant. Only where the inits' maps are
    permutations, so the remaining operands still size every loop.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def AttnApproximateMathPass : Pass<"attn-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replace math.exp, math.tanh and math.erf by vectorizable polynomial approximations";
  let description = [{
    `math.exp` lowers to a call of libm's scalar `expf`, which LLVM cannot
    vectorize: the softmax then runs one exponential at a time. This pass
    rewrites f32 `math.exp` / `math.exp2` / `math.tanh` (soft-capped scores;
    f16/bf16 via f32) into
    MLIR's polynomial approximation (range reduction, a polynomial, a scale by
    2^k; relative error ~1e-7), plain arithmetic that vectorizes to AVX-512.
    `math.erf` (the exact GELU of imported feed-forward layers) is always
    rewritten, also with `exp-and-tanh=false`: LLVM has no lowering of it.
    So is `math.expm1`, which `convert-math-to-llvm` would write as
    exp(x) - 1 (a 1% error at x = 1e-5): upstream's (u - 1) * x / log(u)
    with u = exp(x) keeps a small x to a few ulp.
    So is `math.powf` by a constant exponent (2, 3, 0.5, -1, ...: an
    imported `torch.pow(x, 3)`), into multiplications, sqrt or a division
    instead of a libm call per element. Only ops on scalars and vectors
    are rewritten; ops on whole tensors are left for
    `convert-elementwise-to-linalg`, which the CPU pipeline runs first.

    Before: `%e = math.exp %x : f32`
    After: `arith.mulf`/`arith.addf`/`math.fma` ... `arith.bitcast` (no call)
  }];
  let options = [
    Option<"expAndTanh", "exp-and-tanh", "bool", /*default=*/"true",
           "Approximate exp, exp2 and tanh too (false: only erf and expm1; "
           "exp and tanh then call libm)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
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
    `tensor.concat`, a dependency compiled modules must not have.) The
    arguments of public functions are marked `bufferization.writable =
    false` (unless they carry the attribute): the runtime's inputs are
    const, so an op that would update an argument in place updates a copy.

    Before: `func.func @f(%x: tensor<2x4xf32>) -> tensor<2x8xf32>` with a
    `tensor.concat`. After: `func.func @f(%x: memref<2x4xf32>) ->
    memref<2x8xf32>` with `memref.subview` + `linalg.copy`.
  }];
  let dependentDialects = [
    "mlir::bufferization::BufferizationDialect", "mlir::linalg::LinalgDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def AttnVectorizeCopiesPass
    : Pass<"attn-vectorize-copies", "mlir::func::FuncOp"> {
  let summary = "Copy buffers (and transpose them: by runs when the innermost dims stay, in 16 x 16 register blocks when they move) in vectors, in parallel chunks";
  let description = [{
    Rewrites each `linalg.copy` (and `memref.copy`) between strided memrefs
    of bytes-wide elements into loops over the runs the two share: the
    innermost dims contiguous in both (size-1 dims and identity layouts
    count as contiguous) are one run per index of the outer dims. A run is
    copied as 64-byte `vector.load`/`vector.store`s on 1-D views
    (`memref.reinterpret_cast` at the run's offset) and a scalar tail.
    At the top level of a function, with `parallel`, the runs are split
    into chunks of 32 Ki elements and the (outer index, chunk) pairs form
    an `scf.forall`; copies inside other loops stay serial. Without it,
    `convert-linalg-to-parallel-loops` copies one element per iteration of
    a loop over all dims (a KV cache's present outputs took 20x the
    attention of a decode step).

    A `linalg.transpose` on memrefs that leaves its innermost dims in place
    (a head split or merge, `[B, T, H, d]` <-> `[B, H, T, d]`) is copied
    the same way: the runs are those dims, each read from the source at the
    permuted outer index. One that moves the innermost dim, of 32-bit
    elements whose innermost dims are contiguous (K^T, a transposed weight
    or Gemm's transA operand, channels-last to channels-first `[0, 3, 1,
    2]`, keys laid out for Q K `[0, 2, 3, 1]`), is a 2-D transpose per
    index of the other dims: the destination dim that reads the source's
    innermost dim (rows) against the destination's innermost dim
    (columns). It is copied in 16 x 16 blocks: 16 `vector<16xf32>` row
    loads from the source, contiguous along its innermost dim, transposed
    in registers by `vector.shuffle`s, 16 row stores contiguous along the
    destination's; the rows and columns past the last whole block as
    scalar loops; at the top level, with `parallel`, an `scf.forall` over
    (index of the other dims, strip of 16 destination rows). Transposes of
    other element widths that move the innermost dim are left to the
    default lowering.

    Before (a KV cache's past copied into its present buffer):
    ```mlir
    %sv = memref.subview %alloc[0, 0, 0, 0] [1, 12, 1023, 64] [1, 1, 1, 1]
        : memref<1x12x1024x64xf32> to memref<1x12x1023x64xf32, strided<[786432, 65536, 64, 1]>>
    linalg.copy ins(%past : memref<1x12x1023x64xf32>) outs(%sv : ...)
    ```
    After: an `scf.forall (%o, %c) in (12, 2)` over the 12 runs of 65472
    elements (one per head) and their chunks, each copying
    `vector<16xf32>`s between `memref<?xf32, strided<[1], offset: ?>>`
    views of the two buffers.
  }];
  let options = [
    Option<"parallel", "parallel", "bool", "true",
           "Copy top-level copies' chunks in an scf.forall">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect"
  ];
}

def AttnFenceStreamingStoresPass
    : Pass<"attn-fence-streaming-stores", "mlir::func::FuncOp"> {
  let summary = "Put a store fence after the streaming stores of each parallel work item";
  let description = [{
    Non-temporal `vector.store` ops (`attn-vectorize-sdpa`'s output with
    `streaming-stores`) are weakly ordered on x86: without a fence, the
    thread that joins a parallel loop may read the output before the
    workers' stores are visible. This pass inserts `llvm.x86.sse.sfence`
    at the end of the body of every `omp.loop_nest` that holds such a
    store, and before the returns of a function that holds one. It runs
    after `convert-scf-to-openmp` and its canonicalization: buffer
    deallocation rejects the fence (an op of unknown memory effects), and
    a `memref.alloca_scope` around one would not be inlined.

    Before:
    ```mlir
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c16) step (%c1) {
        vector.store %v, %out[%i, %c0] {nontemporal = true} : memref<16x16xf32>, vector<16xf32>
        omp.yield
      }
    }
    return
    ```
    After:
    ```mlir
        vector.store %v, %out[%i, %c0] {nontemporal = true} : memref<16x16xf32>, vector<16xf32>
        llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
        omp.yield
      ...
    llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
    return
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AttnByteConstantGlobalsPass
    : Pass<"attn-byte-constant-globals", "mlir::ModuleOp"> {
  let summary = "Hold each large constant llvm.mlir.global as one byte array";
  let description = [{
    A packed weight lowers to a constant global of nested arrays
    (`!llvm.array<50 x array<1600 x array<32 x f32>>>`): translation to
    LLVM IR then builds one constant per innermost row, and the object
    writer emits the data one float at a time. For the d_model 1600
    projections (41 MB) that was most of the time from LLVM dialect to
    machine code. This pass retypes every constant global of at least
    `min-bytes` bytes whose value is dense data (inline or a
    `dense_resource` blob) as `!llvm.array<N x i8>` with the same bytes,
    which LLVM holds as one byte string and writes in one copy. A blob is
    shared, not copied. Uses need no change: pointers are opaque, and the
    `llvm.getelementptr`s on the global's address carry their own element
    type; the alignment is raised to the element's size where it was
    lower (an i8 array's ABI alignment is 1). Splat values, i1 data
    (bit-packed in MLIR, a byte per element in memory), widths that memory
    pads (f80, i24: only elements of 1, 2, 4, 8 or 16 bytes are retyped)
    and globals with an initializer region are left alone.

    Before:
    ```mlir
    llvm.mlir.global private constant @w(dense_resource<packed_weight> : tensor<24x768x32xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<24 x array<768 x array<32 x f32>>>
    ```
    After:
    ```mlir
    llvm.mlir.global private constant @w(dense_resource<packed_weight> : tensor<2359296xi8>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2359296 x i8>
    ```
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"4096",
           "Smallest global, in bytes, that is retyped">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AttnExternalizeConstantGlobalsPass
    : Pass<"attn-externalize-constant-globals", "mlir::ModuleOp"> {
  let summary = "Move the bytes of large constant globals out of the code LLVM compiles";
  let description = [{
    Even as one byte string (`attn-byte-constant-globals`), a weight passes
    through LLVM several times: translation copies it into an LLVM
    constant, the object writer into a section buffer that is copied each
    time it grows, and the JIT linker into executable memory. For a
    2-block GPT-2 large file (370 MB of weights) that was 8.7 s of a 10 s
    compile, in memmove and page faults. This pass makes every constant
    `!llvm.array<N x i8>` global of at least `min-bytes` bytes whose value
    is non-splat dense data (inline or a `dense_resource` blob) an external
    declaration of the same name, type and alignment, and moves its value
    into the discardable attribute `attn.external_data`. Only private and
    internal globals qualify (a public one would lose its export), not
    thread-local ones, those in a named section or comdat, externally
    initialized ones or those in another address space; the declaration
    has default visibility (a hidden one would be assumed within 2 GiB of
    the code, which data in a JIT process's heap need not be). Whoever generates
    code must then define the symbol from those bytes: attnrt's JIT
    (`attention-run`) copies them into memory it owns and, for
    `--emit-shared-object`, assembles them into a hidden read-only data
    section of the shared object beside the code.

    It is not part of `attn-lower-to-cpu-pipeline`, whose output stays
    self-contained for `mlir-translate` and `mlir-runner`; `attention-run`
    runs it after the pipeline (`--inline-constants-below`). Run it after
    `attn-byte-constant-globals`, which gives large constants the byte
    form.

    Before:
    ```mlir
    llvm.mlir.global private constant @w(dense_resource<packed_weight> : tensor<2359296xi8>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2359296 x i8>
    ```
    After:
    ```mlir
    llvm.mlir.global external constant @w() {addr_space = 0 : i32, alignment = 64 : i64, attn.external_data = dense_resource<packed_weight> : tensor<2359296xi8>} : !llvm.array<2359296 x i8>
    ```
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"65536",
           "Smallest global, in bytes, whose data is moved out">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AttnCaptureConstantAddressesPass
    : Pass<"attn-capture-constant-addresses", "mlir::ModuleOp"> {
  let summary = "Pass the addresses of constant data into OpenMP parallel regions as captured values";
  let description = [{
    Translation to LLVM IR outlines each `omp.parallel` region into a
    function, which receives the values the region uses from outside; a
    global's address is a constant, though, which the outlined function
    names itself. A model's repeated blocks (GPT-2's twelve) therefore
    outline into copies of each kernel that differ only in the weights they
    read, and LLVM optimized and generated code for every copy: most of
    the codegen time of a 12-block model. In every function with parallel
    regions, this pass rewrites the uses of the address of a constant
    global whose data is not a splat (non-splat dense data or a blob, or
    an external declaration's bytes) into the address passed through
    `llvm.intr.launder.invariant.group`, which generates no code: inside
    an outermost `omp.parallel`, one such value per global, built just
    before the region; outside regions (canonicalization hoists addresses
    to the entry block), right after the address, for all its uses, so
    that the descriptors and offsets built from it are no constant
    expressions either. The copies then outline into identical functions;
    `attention-run` merges them (LLVM's MergeFunctions) before optimizing,
    so each kernel is compiled once. In the outlined function the weights'
    pointer is then an argument of unknown origin: LLVM no longer knows
    that it points to constant memory. Splat constants (LLVM folds loads
    from them), mutable, thread-local and non-default address space
    globals, and functions without parallel regions are left alone.

    Before:
    ```mlir
    omp.parallel {
      %w = llvm.mlir.addressof @__constant_24x768x32xf32_3 : !llvm.ptr
      ... llvm.getelementptr %w[%i] ...
    }
    ```
    After:
    ```mlir
    %0 = llvm.mlir.addressof @__constant_24x768x32xf32_3 : !llvm.ptr
    %1 = llvm.intr.launder.invariant.group %0 : !llvm.ptr
    omp.parallel {
      ... llvm.getelementptr %1[%i] ...
    }
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def AttnParallelizeOuterDimsPass
    : Pass<"attn-parallelize-outer-dims", "mlir::func::FuncOp"> {
  let summary = "Run linalg ops in parallel over their outer dims, the innermost one a vectorizable loop";
  let description = [{
    `convert-linalg-to-parallel-loops` makes every parallel dim of an op one
    dim of a single `scf.parallel`, which `convert-scf-to-openmp` collapses
    into one OpenMP loop: each iteration recovers its indices with integer
    divisions, and LLVM vectorizes nothing (an imported GELU over [T, 3072]
    ran as scalar code with a division per element). This pass tiles each
    `linalg.generic`, `linalg.map` and `linalg.fill` (tensor.pad's fill of
    its padding value) on buffers that sits directly in a function and whose
    innermost dim is parallel by 1 along its other parallel dims, as an
    `scf.parallel`: the threads split the outer dims, and the innermost dim
    stays one loop over contiguous elements
    (`attn-serialize-nested-parallel-loops` makes it an `scf.for`), which
    LLVM vectorizes. Reduction dims in the middle stay whole in each tile;
    ops whose innermost dim is a reduction (row sums, already a loop per
    row) and ops whose outer dims are all 1 are left as they are.

    Before:
    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x : memref<?x?x3072xf32>) outs(%y : memref<?x?x3072xf32>) {...}
    ```
    After:
    ```mlir
    scf.parallel (%b, %t) = (%c0, %c0) to (%B, %T) step (%c1, %c1) {
      %xs = memref.subview %x[%b, %t, 0] [1, 1, 3072] [1, 1, 1]
      %ys = memref.subview %y[%b, %t, 0] [1, 1, 3072] [1, 1, 1]
      linalg.generic {...} ins(%xs : ...) outs(%ys : ...) {...}
    }
    ```
  }];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect"];
}

def AttnReshapeReductionsPass
    : Pass<"attn-reshape-reductions", "mlir::func::FuncOp"> {
  let summary = "Collapse trailing reduction dims into one, split a reduction with few rows into 16 partial rows, and sum columns in blocks";
  let description = [{
    Prepares reductions on tensors for `attn-vectorize-row-reductions`,
    which takes an op whose innermost dim is its only reduction dim, one
    row per index of the parallel dims, the rows over the threads:

    - a `linalg.generic` whose loops are parallel ones followed by several
      reduction ones (ReduceMax over axes [1, 2] of [B, T, C]; any
      reduction over all axes), every input reading the reduction dims as
      its trailing dims in order or not at all, gets them collapsed into
      one (`linalg::collapseOpIterationDims`: `tensor.collapse_shape` of the
      inputs, no copy for a contiguous buffer);
    - a reduction whose parallel dims make fewer than 8 rows (static sizes;
      one for a reduction over all axes) and whose static length is at
      least 16384 and a multiple of 16 is split into 16 rows of partial
      results, the reduction dim as [16, length / 16], and a final
      reduction of the 16 into the original init (`linalg::splitReduction`;
      combiners without an identity, and bodies that read the loop indices
      with `linalg.index`, as ArgMax's does, are left alone). The split is fixed at
      compile time, so the result does not depend on the number of threads;
    - a column reduction, its one input reading the reduction dims as its
      leading dims and the kept ones as its trailing dims (ReduceSum over
      axes [0, 1] of [B, T, C]), static, with a multiple of 16 and at least
      32 columns, loops as out[nb, ni] += x[k, nb, ni] over blocks of 64
      (or 32, 16) columns: the blocks parallel, the rows in order, the
      columns innermost along memory (before, each column was summed down
      a stride of C as one scalar chain); each column sums in the same
      order.

    Both change the order of additions only (partial sums); the collapse
    rewrites `linalg.index` of the collapsed dims into the original
    indices. On [4, 512,
    768], 2 threads (Zen 4): over all axes ReduceSum 1.30 -> 0.06 ms, and
    a ReduceL2 5e-4 off the float64 result before, 5e-8 after; ReduceMax
    over axes [1, 2] 1.24 -> 0.08 ms; ReduceSum over axes [0, 1] 1.39 ->
    0.09 ms.

    Before (ReduceSum over all axes):
    ```mlir
    linalg.generic {indexing_maps = [(d0, d1, d2) -> (d0, d1, d2), (d0, d1, d2) -> ()],
                    iterator_types = ["reduction", "reduction", "reduction"]}
        ins(%x : tensor<4x512x768xf32>) outs(%zero : tensor<f32>)
    ```
    After:
    ```mlir
    %flat = tensor.collapse_shape %x [[0, 1, 2]] : tensor<4x512x768xf32> into tensor<1572864xf32>
    %rows = tensor.expand_shape %flat [[0, 1]] output_shape [16, 98304] : ... into tensor<16x98304xf32>
    %partial = linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%rows : tensor<16x98304xf32>) outs(%zeros16 : tensor<16xf32>)
    linalg.generic {iterator_types = ["reduction"]}
        ins(%partial : tensor<16xf32>) outs(%zero : tensor<f32>)
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def AttnVectorizeRowReductionsPass
    : Pass<"attn-vectorize-row-reductions", "mlir::func::FuncOp"> {
  let summary = "Sum each row of a last-dim reduction with vector accumulators, the rows in parallel";
  let description = [{
    Row sums (ReduceSum/ReduceMean over the last axis, LayerNorm's mean and
    variance) are `linalg.generic` ops whose innermost dim is the reduction.
    As loops each row is one chain of dependent scalar additions, which LLVM
    may not reorder and so does not vectorize: every element waits for the
    previous addition. This pass takes each such op on buffers that sits
    directly in a function, in its `scf.if` branches or in an
    `scf.forall`'s body (an imported op's per-row work, such as TopK's
    block maxima; the tile loop inside runs serially) (every other dim
    parallel, one f32 output not
    indexed by the reduction dim, `out + summand` as the body's result, or
    `maximumf`/`maxnumf`/`minimumf`/`minnumf` of the two,
    the summand computed by lanewise arith/math ops from inputs that are
    either contiguous along the row or one value per row), tiles it by 1
    along its parallel dims as an `scf.parallel` and writes each row as
    vector code: the summand on `vector<16xf32>` loads, four independent
    accumulators over 64 elements a step, then 16 at a time, a horizontal
    `vector.reduction`, and the original body as a scalar loop for the last
    N mod 16 elements (max and min the same way, from their identity:
    -inf or +inf for maximumf and minimumf, NaN for maxnumf and minnumf,
    which pass over it, or the infinity under nnan). The additions are
    reassociated (partial sums). Other
    reductions (products, a reduction dim in the middle, transposed reads,
    other element types) are left to the default lowering.

    Before (the variance of a LayerNorm):
    ```mlir
    linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, 0),
                                     (d0, d1) -> (d0, 0)],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x, %mean : memref<?x768xf32>, memref<?x1xf32>)
        outs(%var : memref<?x1xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %d = arith.subf %in, %m : f32
      %sq = arith.mulf %d, %d : f32
      %s = arith.addf %out, %sq : f32
      linalg.yield %s : f32
    }
    ```
    After:
    ```mlir
    scf.parallel (%r) = (%c0) to (%T) step (%c1) {
      %xs = memref.subview %x[%r, 0] [1, 768] [1, 1]
      %m = memref.load %mean_row[%c0, %c0] : memref<1x1xf32, ...>
      %acc:4 = scf.for %j = %c0 to %c768 step %c64 iter_args(...) {
        %v = vector.load %xs[%c0, %j] : ..., vector<16xf32>
        %d = arith.subf %v, %mb : vector<16xf32>
        %sq = arith.mulf %d, %d : vector<16xf32>
        %a0 = arith.addf %acc0, %sq : vector<16xf32>
        ...
      }
      ... scf.for (16 at a time), vector.reduction <add>, scalar tail ...
      memref.store %sum, %var_row[%c0, %c0]
    }
    ```
  }];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::arith::ArithDialect"];
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

def AttnSerializeSmallParallelLoopsPass
    : Pass<"attn-serialize-small-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Run parallel loops of little work on the calling thread";
  let description = [{
    An OpenMP region costs its fork and join, about a microsecond with the
    team awake and more when a worker has to be woken, and its schedule's
    bookkeeping. A parallel loop whose whole work is less than that (the
    fills of a few small buffers, a one-row scan, the copy of a short
    output) is faster as a plain loop. This pass estimates each outermost
    reduction-free `scf.parallel`'s work statically (its trip count times
    its body's operations, inner loops multiplied out; a vector op counts
    once per 16 elements of its widest vector, a math op 16 times as much)
    and turns those below `min-work` operations into `scf.for` nests. A
    loop whose work cannot be estimated (a dynamic trip count, a call, a
    copy of dynamic size) stays parallel, even with one iteration: as an
    OpenMP region its code is outlined, and the same region of every
    transformer block is compiled once (attn-guided-omp-schedule gives it
    the static schedule).

    Before (the zero fill of a 50-entry buffer):
    ```mlir
    scf.parallel (%i) = (%c0) to (%c50) step (%c1) {
      memref.store %zero, %buf[%i] : memref<50xf32>
    }
    ```
    After:
    ```mlir
    scf.for %i = %c0 to %c50 step %c1 {
      memref.store %zero, %buf[%i] : memref<50xf32>
    }
    ```
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"4096",
           "Estimated operations from which a loop stays parallel">,
  ];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def AttnGuidedOmpSchedulePass
    : Pass<"attn-guided-omp-schedule", "mlir::ModuleOp"> {
  let summary = "Give every omp.wsloop without a schedule schedule(guided, chunk), or schedule(static) when it is small";
  let description = [{
    `convert-scf-to-openmp` leaves the schedule of its `omp.wsloop`s to the
    runtime, which splits the iterations statically into one contiguous
    range per thread: the call then takes as long as its slowest thread,
    and on a shared host one core often runs slower than the other for part
    of a call. With `schedule(guided, chunk)` threads take chunks of the
    remaining iterations, large ones first and down to `chunk` items at the
    end, so the faster thread takes over the rest. (`dynamic, 1` pays one
    atomic fetch per iteration, more than the work in loops of tiny items
    such as the row copies of a K/V layout change.) A loop that already has
    a schedule keeps it.

    A loop of one iteration, or of little work (below `static-below`
    operations, estimated as `attn-serialize-small-parallel-loops` does),
    gets `schedule(static)`
    instead: every request for a chunk costs a few tenths of a microsecond
    in the OpenMP runtime and a guided loop makes dozens (2.3 us for one
    iteration, 9.5 us for 3141 on 2 threads, against 1.0-1.9 us static),
    more than a slower thread could cost such a loop.

    Before:
    ```mlir
    omp.wsloop {
      omp.loop_nest (%h, %qb) : index = (%c0, %c0) to (%c12, %c32) step (%c1, %c1) collapse(2) {
    ```
    After:
    ```mlir
    %c1 = arith.constant 1 : index
    omp.wsloop schedule(guided = %c1 : index) {
      omp.loop_nest (%h, %qb) : index = ...
    ```
  }];
  let options = [
    Option<"chunk", "chunk", "int64_t", /*default=*/"1",
           "Fewest iterations a thread takes at a time">,
    Option<"staticBelow", "static-below", "int64_t", /*default=*/"262144",
           "Loops of fewer estimated operations get schedule(static) (0: none)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::LLVM::LLVMDialect",
    "mlir::omp::OpenMPDialect"
  ];
}

def AttnSplitParallelFunctionsPass
    : Pass<"attn-split-parallel-functions", "mlir::ModuleOp"> {
  let summary = "Split functions with many omp.parallel regions into parts of a few regions each";
  let description = [{
    MLIR's OpenMP translation outlines every `omp.parallel` region with
    LLVM's CodeExtractor, which first builds an analysis cache of the whole
    function around the region: a function with R regions and N
    instructions costs R x N. A whole model lowers to one `main` with
    hundreds of regions (GPT-2 small's 12 blocks: about 300), and those
    caches took about 28% of its compile. (`attn-lower-to-cpu-pipeline`'s
    `regions-per-function`, 8 by default.)
    This pass cuts the top-level ops
    of such a function into consecutive parts of at least
    `regions-per-part` regions (the last may have fewer), moves each part
    into a private function `<name>_part<i>` (LLVM linkage internal) and
    calls them in order.

    The values a part uses from before it become its arguments, constants
    (ConstantLike ops and `memref.get_global`) are cloned into it instead,
    so that they stay constants inside its regions, and the values later
    ops use become its results. A cut is only made where every value live
    across it is a memref, integer, index, float or vector, and none may
    point into stack memory (the results of an op with a `memref.alloca`
    or `llvm.alloca` in it, or made from such a value by anything but a
    load); otherwise it moves past that op. Functions with at most
    `regions-per-part` regions, or more than one block, are left alone.

    Before (regions-per-part=1):
    ```mlir
    func.func @main(%a: memref<8xf32>) -> memref<8xf32> {
      %c = arith.constant 1.0 : f32
      %t = memref.alloc() : memref<8xf32>
      omp.parallel { ... %a, %t, %c ... }
      omp.parallel { ... %t ... }
      return %t : memref<8xf32>
    }
    ```
    After:
    ```mlir
    func.func @main(%a: memref<8xf32>) -> memref<8xf32> {
      %t = call @main_part0(%a) : (memref<8xf32>) -> memref<8xf32>
      call @main_part1(%t) : (memref<8xf32>) -> ()
      return %t : memref<8xf32>
    }
    func.func private @main_part0(%a: memref<8xf32>) -> memref<8xf32> {
      %c = arith.constant 1.0 : f32
      %t = memref.alloc() : memref<8xf32>
      omp.parallel { ... }
      return %t : memref<8xf32>
    }
    func.func private @main_part1(%t: memref<8xf32>) { omp.parallel { ... } return }
    ```
  }];
  let options = [
    Option<"regionsPerPart", "regions-per-part", "unsigned", /*default=*/"8",
           "Parallel regions after which a part ends (at least 1)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect"];
}

def ConvertAttnToGpuPass : Pass<"convert-attn-to-gpu", "mlir::ModuleOp"> {
  let summary = "attn.sdpa entry points -> a flash-attention GPU kernel on tensor cores";
  let description = [{
    Rewrites every public function whose results are `attn.sdpa` ops of its
    arguments into a host function on device buffers (destination passing:
    one memref argument per input, then one per result) that launches one
    generated kernel per `attn.sdpa`, and puts the kernels into
    `gpu.module @attn_gpu_kernels`. Reshapes that only regroup dims
    (`tensor.expand_shape`/`collapse_shape`) and transposes that keep the
    last dim (`linalg.transpose`, as `memref.transpose`) between the
    arguments, the `attn.sdpa` ops and the results become `memref` views
    of the buffers,
    so ONNX's 3-D attention ([B, T, H * d] expanded to seq_major
    [B, T, H, d]) runs on the caller's buffers in place; their sizes must
    follow from their sources (one dynamic dim per group).
    A returned `tensor.concat` of arguments (a KV cache: ONNX's
    present_key = concat(past_key, K) along the sequence) is built in its
    result buffer by copy kernels launched first, and read there.
    A mask computed by an elementwise `linalg.generic` of arguments (ONNX's
    nonpad_kv_seqlen masks) is not materialized: the kernel evaluates its
    payload per score, from the generator's inputs (an argument padded
    with a constant is read from the argument) and the scalars it captures
    (computed on the host).

    The kernel is FlashAttention-2 shaped: one block of 4 warps per
    (query tile of 64 rows, head, batch); each warp owns 16 query rows and
    keeps its Q fragments, the running max and sum and the output
    accumulator in registers. K and V tiles are staged in shared memory
    (rows padded by 16 bytes so that fragment loads are free of bank
    conflicts); Q K^T and P V run on tensor cores (m16n8k16 MMAs with f32
    accumulation: `nvgpu.mma.sync` for f16, `nvvm.mma.sync` for bf16, which
    nvgpu cannot lower); P never leaves
    registers (the accumulator layout of Q K^T is the operand layout of
    P V). Causal tiles past the diagonal are never loaded; only tiles that
    straddle the diagonal or the end of the keys are masked. Grouped-query
    heads read their K/V head by index.

    f32 operands are rounded to bf16 (or f16, option `f32-as-f16`) as they
    are loaded; accumulation, softmax and the result stay f32.

    Supported: f16, bf16 and f32 operands of rank 2 to 4, either head layout, head
    dims up to 256 (others than multiples of 8 are staged by element and
    computed padded with zeros), any sequence lengths, causal
    none/top_left/bottom_right, sliding windows, explicit masks (bool of
    either kind or additive, any shape that broadcasts to the scores; each
    thread reads its entries), softcap (c tanh(s / c) on exp2, before the
    masks), dropout (the Philox-4x32-10 keep-mask of every CPU form, on
    the flat [B, Hq, Tq, Tk] index, with mul.hi.u32), any scale. Anything
    else (other ops in the function, operands that are not its arguments
    or reshapes or concatenations of them, concatenations that are not
    returned, non-tensor arguments) is an error naming the op
    and what the GPU path would need.

    Before: `func.func @f(%q: tensor<1x12x1024x64xf16>, ...) -> tensor<...>`
    with `attn.sdpa ... causal(top_left)`. After: `func.func @f(%q:
    memref<1x12x1024x64xf16>, ..., %out: memref<...>)` with a
    `gpu.launch_func @attn_gpu_kernels::@f_sdpa0 blocks in (16, 12, 1)
    threads in (128, 1, 1)`, and the `gpu.func ... kernel` with
    `nvgpu.mma.sync`, `gpu.shuffle xor` and `math.exp2`.
  }];
  let options = [
    Option<"useLdmatrix", "ldmatrix", "bool", "true",
           "Load K and V operand fragments from shared memory with "
           "ldmatrix (false: one shared-memory load per element pair)">,
    Option<"warps", "warps", "int64_t", "4",
           "Warps per block; each owns 16 query rows (4: 64-row tiles, 8: "
           "128-row tiles sharing each staged K/V tile)">,
    Option<"blockKV", "block-kv", "int64_t", "64",
           "Keys per staged K/V tile (a multiple of 16; halved until both "
           "tiles fit 48 KiB of shared memory)">,
    Option<"stages", "stages", "int64_t", "2",
           "K/V staging: 2 = double-buffered asynchronous copies (cp.async; "
           "the next tile loads while this one is computed), 1 = load, "
           "barrier, compute. f32 operands always use 1">,
    Option<"f32AsF16", "f32-as-f16", "bool", "false",
           "Feed f32 operands to the tensor cores as f16 (more mantissa, "
           "overflows past 65504) instead of bf16 (f32 range)">,
  ];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::nvgpu::NVGPUDialect",
    "mlir::NVVM::NVVMDialect", "mlir::LLVM::LLVMDialect",
    "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
    "mlir::math::MathDialect", "mlir::memref::MemRefDialect",
    "mlir::vector::VectorDialect", "mlir::func::FuncDialect",
    "mlir::ub::UBDialect"
  ];
}

def AttnVectorizeContractionsPass
    : Pass<"attn-vectorize-contractions", "mlir::ModuleOp"> {
  let summary = "Cache- and register-tile f32 contractions and vectorize the register tiles";
  let description = [{
    For every f32 contraction on tensors of the form
    C[..., m, n] += A[..., m, k] * B[..., k, n] (n contiguous in B and C,
    static): the projections of attention blocks and the P V products. A
    width that is not a multiple of `register-n` (a vocabulary head's 50257
    columns) is first split along n into the columns that are, then at
    most one part each of register-n / 2, / 4, ... down to 8 columns (each
    a contraction with register tiles of its own width), and the last
    columns (fewer than 8) as a linalg op of their own (dot products, below); with
    a zero-fill init every part computes its own slice of the fill's empty
    tensor in place, so C is not filled first, and a constant B is packed
    part by part from its slices. Each part's loop nest becomes

    ```
    scf.for n blocks (cache-n)                 a large shared weight only
    scf.forall m blocks (cache-m)              threads' work items
      scf.for k blocks (cache-k)               the A block stays in L2
        scf.for n tiles (register-n)           a B micro-panel in L1,
          scf.for k: copy the panel's rows     packed (pack-b)
          scf.for m tiles (register-m), peeled full tiles vectorized
            scf.for k                          C tile hoisted to registers
              per k: one B row load, per row a broadcast of A and vector.fma
          scf.for rest tiles of 4, 2, 1 rows   the same, fewer rows
    ```

    A static M of more than one and at most two blocks (cache-m < M <=
    2 cache-m; a batch of 128-token sequences) stays one block of M rows
    when the batch dims are a multiple of 4: each m block reads all of B,
    and the batch then provides work items that divide evenly over 1, 2
    or 4 threads. Other batches keep cache-m rows.

    The rows past the last full tile run as vector tiles of 4, 2 and 1 rows
    (those below register-m; each at most once for register-m up to 8).
    Other ops are untouched.

    With `pack-b` (the default) each n tile first copies its B micro-panel
    (cache-k rows of register-n floats) into one contiguous buffer, a
    `tensor<cache-k x register-n>` carried by the n loop, and the register
    tiles read the panel from there. In place the panel's rows are N floats
    apart; at N = 768 (3 KiB, 48 cache lines) all 256 of them map to 4 of
    L1's 64 sets and the panel never stays in L1. The copy is one load and
    store per 2 x cache-m FLOPs.

    With `pack-b-once` as well (the default), a B that every m block shares
    (a weight, indexed by k and n only; static shapes; at least
    `pack-b-once-blocks` m blocks, 8 by default) is packed once, before the m blocks, into
    `tensor<N/register-n x K x register-n>` by an `scf.forall` over groups
    of B's rows: every panel is K consecutive rows, a k block's panel is a
    contiguous range of it, and the copy reads B's rows in order, which the
    hardware prefetchers follow (a panel's column slice, one cache line per
    row N floats apart, crosses a page every row or two and is not
    prefetched). The copy is then one pass over B per call instead of one
    per m block and batch.

    An operand read with its last two dims swapped (A as [..., k, m], B as
    [..., n, k]: ONNX Gemm's transA / transB, a MatMul of a Transpose, an
    einsum such as `mk,nk->mn`) is first transposed into that layout, once
    per call before the op (`linalg.transpose`), or at compile time for a
    constant (a new constant). Not a B read by few rows (static M): the
    generic lowering's dot products along k read it once, in place, below
    `register-m` rows for a constant and below 128 for a B transposed on
    every call that fits in 16 MiB (`register-m` for a larger one); with a
    dynamic M and a non-constant B an `scf.if` on M picks between the two
    at run time. The other way round, a constant 2-D B
    read as [k, n] by fewer than `register-m` rows (static M) is
    transposed at compile time into [n, k] and left to those dot products
    (the register tiles are not built for a row or two), and so is any B
    of fewer than 8 columns (static N: a classifier head, the last columns
    split off a ragged N; a non-constant one by a `linalg.transpose`),
    whose scalar loops read C on every multiply-add. Ops with a static
    size of 0 are left alone.

    A constant B (an ONNX initializer, inline `dense` values or a
    `dense_resource` blob) is packed at compile time instead, into a new
    constant of the same kind in that layout, whatever the number of m
    blocks: no copy is left at run time.

    A contraction whose init is a zero `linalg.fill` of a `tensor.empty`
    gets a fresh `tensor.empty` instead, and its first k block starts the
    register rows from zeros (an `scf.if` on the k-block index, in every
    tile, the rest tiles included) rather than reading C. A bias add that
    follows (`out[..., n] + bias[n]`, out_proj's) folds in the same way: the
    first k block starts from the bias row, and the add disappears. No pass
    over C is left besides the contraction, and bufferization no longer
    copies one shared zero tensor per projection.

    A weight shared by several m blocks (a dynamic M, or static shapes
    with at least `split-n-items` m blocks, which otherwise split N) that
    is larger than about 4 MiB (`cache-n`: K x cache-n floats) gets an
    `scf.for` over n blocks around the parallel m blocks: every m block of
    an n block reads the same part of B, which stays in the last-level
    cache that the threads share, instead of each m block streaming all of
    a large B from memory. The blocks are a whole number of register
    tiles, as few as fit, each of ceil(tiles / blocks) tiles but the last,
    which takes the rest. x[1, 1024, 2048] @ W[2048,
    5632] on 2 threads: 77-89 ms in one block, 61 ms in 11 blocks of 512
    columns.

    With few m blocks (fewer than `split-n-items`, 4 by default, times
    batch), e.g. a projection of 128 tokens, every m block would read all
    of B, and on two threads each thread all of W. Such a contraction gets
    one block of all M rows instead, and its work items are
    `split-n-items` chunks of N (multiples of register-n): each thread
    reads its share of B once, and each panel copy serves all M rows.
    With a dynamic M (a model exported with a dynamic sequence length)
    the row count decides at run time: an `scf.if` on M holds two copies
    of the contraction, N split up to (split-n-items - 1) / batch x
    cache-m rows (192 with the defaults and a batch of 1), m blocks above.
    A bias add that folds into the contraction moves into both branches;
    a constant B is packed once, at the start of the function, for both.
    x[M, 768] @ W[768, 3072] on 2 threads at M = 16: 0.67 ms in one m
    block, 0.34 ms split.

    Before: `linalg.generic {iterator_types = ["parallel", "parallel",
    "reduction", "parallel"]}` (x[1, T, 768] times w[768, 768]). After:
    the loop nest above with `vector.transfer_read`, `vector.fma` on
    `vector<32xf32>` rows and `vector.transfer_write`.
  }];
  let options = [
    Option<"cacheM", "cache-m", "int64_t", "64", "Rows per parallel block">,
    Option<"cacheK", "cache-k", "int64_t", "256",
           "Reduction block (one longer than a static K is all of K: one "
           "block, a panel buffer of K rows)">,
    Option<"cacheN", "cache-n", "int64_t", "0",
           "At most this many columns per sequential n block around the "
           "m blocks, for a weight that several m blocks share (0: the "
           "columns of which K rows take up to 4 MiB; below register-n: "
           "none); blocks of ceil(tiles / blocks) register tiles, the last "
           "taking the rest">,
    Option<"registerM", "register-m", "int64_t", "8", "Rows per register tile (1-64)">,
    Option<"registerN", "register-n", "int64_t", "32",
           "Columns per register tile (a multiple of the vector width, at most 256)">,
    Option<"packB", "pack-b", "bool", "true",
           "Copy each B micro-panel (cache-k x register-n) to a contiguous "
           "buffer before the m tiles read it">,
    Option<"packBOnce", "pack-b-once", "bool", "true",
           "With pack-b, pack all of a shared B (a weight indexed by k and "
           "n only) once, in parallel, before the m blocks, when two or "
           "more m blocks read it; a constant B at compile time">,
    Option<"packBOnceBlocks", "pack-b-once-blocks", "int64_t", "8",
           "The fewest m blocks (times batch) for which pack-b-once packs "
           "a B that is not constant at run time">,
    Option<"splitNItems", "split-n-items", "int64_t", "4",
           "Contractions with fewer m blocks (times batch) than this take "
           "all M rows in one block and split N into this many chunks, the "
           "work items; a dynamic M chooses at run time (0 or 1: never)">,
  ];
  let dependentDialects = [
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
    "mlir::affine::AffineDialect", "mlir::tensor::TensorDialect",
    "mlir::arith::ArithDialect"
  ];
}

#endif // ATTN_PASSES_TD
