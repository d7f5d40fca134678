// RUN: attention-opt %s --attn-vectorize-contractions='cache-n=2304' | FileCheck %s
// RUN: attention-opt %s --attn-vectorize-contractions | FileCheck %s --check-prefix=NBLOCK
// RUN: attention-opt %s --attn-vectorize-contractions='cache-n=128' | FileCheck %s --check-prefix=CACHEN
// RUN: attention-opt %s --attn-vectorize-contractions='pack-b=false cache-n=2304' | FileCheck %s --check-prefix=NOPACK
// RUN: attention-opt %s --attn-vectorize-contractions='pack-b-once=false cache-n=2304' | FileCheck %s --check-prefix=ONCEOFF
// RUN: attention-opt %s --attn-vectorize-contractions='register-m=4 register-n=16' | FileCheck %s --check-prefix=CONST
// RUN: attention-opt %s --attn-vectorize-contractions='split-n-items=0' | FileCheck %s --check-prefix=SPLITOFF
// RUN: attention-opt %s --attn-vectorize-contractions='split-n-items=0 cache-n=128' | FileCheck %s --check-prefix=SPLITOFFN
// RUN: attention-opt %s --attn-vectorize-contractions='split-n-items=0 cache-n=160' | FileCheck %s --check-prefix=NARROW
// RUN: not attention-opt %s --attn-vectorize-contractions='cache-m=0 register-n=48' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attention-opt %s --attn-vectorize-contractions='cache-n=-32' 2>&1 | FileCheck %s --check-prefix=BADN

// BAD: attn-vectorize-contractions: tile sizes must be positive, register-m at most 64 and register-n at most 256, got cache-m=0 cache-k=256 register-m=8 register-n=48
// BADN: attn-vectorize-contractions: cache-n must be 0 (by size) or positive, got -32
// (The widths of the last n blocks of @prime_tiles and @split_bias, below.)
// CACHEN: #[[LAST:.*]] = affine_map<(d0) -> (-d0 + 224, 128)>
// NARROW: #{{.*}} = affine_map<(d0) -> (-d0 + 768, 160)>

// (The CHECK, NOPACK and ONCEOFF runs take all of N in one block,
// cache-n=2304, to show the m blocks' loops alone; NBLOCK and CACHEN show
// the n blocks.)

// A projection x[1, T, 768] @ w[768, 2304] (T dynamic): parallel 64-row
// blocks, 256-deep k blocks, 32-column register tiles of 8 rows whose C
// rows stay in vector registers across the k loop (one B row load, eight
// broadcasts and FMAs per k), then the rows past the last full tile in
// tiles of 4, 2 and 1 rows, the same vector code on fewer rows. Each n
// tile's B micro-panel (256 x 32) is first copied into one contiguous
// buffer, carried by the n loop, which the register tiles read instead of
// w's rows 9 KiB apart (with pack-b=false they read w directly); a block of
// fewer than two rows (T = 1) copies nothing, and the one-row tile reads
// w directly.
// The zero fill of the init is gone:
// C is a bare tensor.empty, and the first k block starts its registers (the
// rest rows' too) from zeros instead of reading C.
// With T known only at run time, an scf.if on T first takes the rows that
// make fewer than split-n-items (4) m blocks, up to 3 x 64 = 192, as one
// block split into 4 chunks of N (576 columns), each chunk's loops the
// same as below; more rows take the m blocks (the else branch). Each
// branch has a tensor.empty of its own, beside the original, so that the
// scf.if bufferizes to one buffer.
#xa = affine_map<(b, m, k, n) -> (b, m, k)>
#wa = affine_map<(b, m, k, n) -> (k, n)>
#ca = affine_map<(b, m, k, n) -> (b, m, n)>
// CHECK-LABEL: func.func @projection(
// CHECK-NOT: linalg.fill
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<32xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[FEWEMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<1x?x2304xf32>
// CHECK-NEXT: %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<1x?x2304xf32>
// CHECK-NEXT: %[[T:.*]] = tensor.dim %arg0, %c1 : tensor<1x?x768xf32>
// CHECK-NEXT: %[[FEW:.*]] = arith.cmpi sle, %[[T]], %c192 : index
// CHECK-NEXT: scf.if %[[FEW]] -> (tensor<1x?x2304xf32>) {
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 2304) step (1, 576) shared_outs(%{{.*}} = %[[FEWEMPTY]])
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c256
// CHECK: scf.for %{{.*}} = %c0 to %c576 step %c32
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c8
// CHECK-COUNT-8: vector.fma
// CHECK: } else {
// CHECK: scf.forall (%{{.*}}, %[[M0:.*]]) = (0, 0) to (1, %{{.*}}) step (1, 64) shared_outs(%{{.*}} = %[[EMPTY]])
// CHECK: scf.for %[[K0:.*]] = %c0 to %c768 step %c256
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K0]], %c0 : index
// CHECK: %[[REM:.*]] = arith.remui %{{.*}}, %c8
// CHECK: %[[FULL:.*]] = arith.subi %{{.*}}, %[[REM]]
// CHECK: %[[PACK0:.*]] = tensor.empty() : tensor<256x32xf32>
// CHECK: %[[TWOROWS:.*]] = arith.cmpi uge, %[[ROWS:.*]], %c2 : index
// CHECK: %[[PACKROWS:.*]] = arith.select %[[TWOROWS]], %c256, %c0 : index
// CHECK: scf.for %[[N:.*]] = %c0 to %c2304 step %c32 iter_args(%{{.*}} = %{{.*}}, %[[PACKARG:.*]] = %[[PACK0]])
// CHECK: %[[PACKED:.*]] = scf.for %[[KP:.*]] = %c0 to %[[PACKROWS]] step %c1 iter_args(%[[P:.*]] = %[[PACKARG]])
// CHECK: %[[BROW:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %[[N]]], %{{.*}} {in_bounds = [true]} : tensor<768x2304xf32>, vector<32xf32>
// CHECK: vector.transfer_write %[[BROW]], %[[P]][%[[KP]], %c0] {in_bounds = [true]} : vector<32xf32>, tensor<256x32xf32>
// CHECK: scf.for %[[M:.*]] = %c0 to %[[FULL]] step %c8
// CHECK: %[[INIT:.*]]:8 = scf.if %[[FIRST]] -> (vector<32xf32>, {{.*}}) {
// CHECK: scf.yield %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]] :
// CHECK: } else {
// CHECK-COUNT-8: vector.transfer_read {{.*}} {in_bounds = [true]} : tensor<1x?x2304xf32>, vector<32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args(%{{.*}} = %[[INIT]]#0, {{.*}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK: vector.transfer_read %[[PACKED]][%{{.*}}, %c0], %{{.*}} {in_bounds = [true]} : tensor<256x32xf32>, vector<32xf32>
// CHECK-COUNT-8: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-8: vector.transfer_write {{.*}} : vector<32xf32>, tensor<1x?x2304xf32>
// CHECK: %[[LEFT4:.*]] = arith.subi %[[ROWS]], %[[FULL]]
// CHECK: %[[REM4:.*]] = arith.remui %[[LEFT4]], %c4
// CHECK: %[[END4:.*]] = arith.subi %[[ROWS]], %[[REM4]]
// CHECK: scf.for %{{.*}} = %[[FULL]] to %[[END4]] step %c4
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args({{.*}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK: vector.transfer_read %[[PACKED]][%{{.*}}, %c0], %{{.*}} {in_bounds = [true]} : tensor<256x32xf32>, vector<32xf32>
// CHECK-COUNT-4: vector.fma
// CHECK: %[[LEFT2:.*]] = arith.subi %[[ROWS]], %[[END4]]
// CHECK: %[[REM2:.*]] = arith.remui %[[LEFT2]], %c2
// CHECK: %[[END2:.*]] = arith.subi %[[ROWS]], %[[REM2]]
// CHECK: scf.for %{{.*}} = %[[END4]] to %[[END2]] step %c2
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args({{.*}}) -> (vector<32xf32>, vector<32xf32>)
// CHECK: vector.transfer_read %[[PACKED]][%{{.*}}, %c0], %{{.*}} {in_bounds = [true]} : tensor<256x32xf32>, vector<32xf32>
// CHECK-COUNT-2: vector.fma
// CHECK: scf.for %[[R:.*]] = %[[END2]] to %[[ROWS]] step %c1 iter_args
// CHECK: %[[RINIT:.*]] = scf.if %[[FIRST]] -> (vector<32xf32>) {
// CHECK: scf.yield %[[ZERO]] : vector<32xf32>
// CHECK: } else {
// CHECK: vector.transfer_read %{{.*}}[%c0, %[[R]], %[[N]]]
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args(%{{.*}} = %[[RINIT]]) -> (vector<32xf32>)
// CHECK: vector.transfer_read %{{.*}}[%{{.*}}, %[[N]]], %{{.*}} {in_bounds = [true]} : tensor<768x2304xf32>, vector<32xf32>
// CHECK: tensor.extract %{{.*}}[%c0, %[[R]], %{{.*}}] : tensor<1x?x256xf32>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: vector.fma
// CHECK-NEXT: scf.yield
// CHECK: vector.transfer_write %{{.*}}, %{{.*}}[%c0, %[[R]], %[[N]]] {in_bounds = [true]} : vector<32xf32>, tensor<1x?x2304xf32>
// CHECK-NOT: linalg.generic
// CHECK: tensor.insert_slice
// By default a weight larger than 4 MiB (w is 6.75 MiB) is split into
// sequential n blocks around the parallel m blocks, so that all m blocks
// read one part of w while it is in the shared last-level cache: here
// blocks of 1152 columns (42 register tiles' columns of 768 rows fit in
// 4 MiB: the 72 tiles of N take 2 blocks, of 36 tiles each). The m blocks of an
// n block work on its slice of C, and their panel copies read w at the
// n block's column offset NB + N.
// NBLOCK-LABEL: func.func @projection(
// NBLOCK-SAME: %{{.*}}: tensor<1x?x768xf32>, %[[W:.*]]: tensor<768x2304xf32>)
// NBLOCK: tensor.empty(%{{.*}}) : tensor<1x?x2304xf32>
// NBLOCK-NEXT: %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<1x?x2304xf32>
// NBLOCK: } else {
// NBLOCK: scf.for %[[NB:.*]] = %c0 to %c2304 step %c1152 iter_args(%[[C:.*]] = %[[EMPTY]]) -> (tensor<1x?x2304xf32>)
// NBLOCK: %[[CB:.*]] = tensor.extract_slice %[[C]][0, 0, %[[NB]]] [1, %{{.*}}, 1152] [1, 1, 1]
// NBLOCK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, %{{.*}}) step (1, 64) shared_outs(%{{.*}} = %[[CB]]) -> (tensor<1x?x1152xf32>)
// NBLOCK: scf.for %[[K0:.*]] = %c0 to %c768 step %c256
// NBLOCK: scf.for %[[N:.*]] = %c0 to %c1152 step %c32
// NBLOCK: %[[COL:.*]] = affine.apply #{{.*}}()[%[[NB]], %[[N]]]
// NBLOCK: vector.transfer_read %[[W]][%{{.*}}, %[[COL]]], %{{.*}} {in_bounds = [true]} : tensor<768x2304xf32>, vector<32xf32>
// NBLOCK-COUNT-8: vector.fma
// NBLOCK: scf.forall.in_parallel
// NBLOCK: tensor.insert_slice %{{.*}} into %[[C]][0, 0, %[[NB]]] [1, %{{.*}}, 1152] [1, 1, 1]
// NOPACK-LABEL: func.func @projection(
// NOPACK-NOT: tensor<256x32xf32>
// NOPACK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, %{{.*}}) step (1, 64)
// NOPACK-NOT: tensor<256x32xf32>
// NOPACK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args
// NOPACK-NEXT: affine.apply
// NOPACK-NEXT: vector.transfer_read %{{.*}} : tensor<768x2304xf32>, vector<32xf32>
// NOPACK-COUNT-8: vector.fma
func.func @projection(%x: tensor<1x?x768xf32>, %w: tensor<768x2304xf32>) -> tensor<1x?x2304xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %t = tensor.dim %x, %c1 : tensor<1x?x768xf32>
  %e = tensor.empty(%t) : tensor<1x?x2304xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x?x2304xf32>) -> tensor<1x?x2304xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x768xf32>, tensor<768x2304xf32>) outs(%f : tensor<1x?x2304xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x2304xf32>
  return %r : tensor<1x?x2304xf32>
}

// A weight shared by pack-b-once-blocks (8) or more m blocks (static
// shapes; here 8 blocks of 64 rows) is packed once, before the m blocks, into
// tensor<N/32 x K x 32>: a parallel loop over groups of 16 of w's rows
// copies each row's 32-column pieces into their panels, so every panel is K
// consecutive rows. The register tiles of n tile N read row k0 + k of panel
// N / 32, and no n tile copies a panel of its own. With
// pack-b-once=false each n tile copies its 256 x 32 panel as above.
// CHECK-LABEL: func.func @shared_weight(
// CHECK-SAME: %[[X:.*]]: tensor<1x512x768xf32>, %[[W:.*]]: tensor<768x2304xf32>)
// CHECK: %[[ALL0:.*]] = tensor.empty() : tensor<72x768x32xf32>
// CHECK: %[[ALL:.*]] = scf.forall (%[[G:.*]]) in (48) shared_outs(%[[DST:.*]] = %[[ALL0]]) -> (tensor<72x768x32xf32>)
// CHECK: %[[R0:.*]] = arith.muli %[[G]], %c16 : index
// CHECK: %[[GROUP:.*]] = tensor.extract_slice %[[DST]][0, %[[R0]], 0] [72, 16, 32] [1, 1, 1]
// CHECK: scf.for %[[R:.*]] = %c0 to %c16 step %c1 iter_args(%{{.*}} = %[[GROUP]])
// CHECK: %[[ROW:.*]] = arith.addi %[[R0]], %[[R]] : index
// CHECK: scf.for %[[P:.*]] = %c0 to %c72 step %c1 iter_args(%[[T:.*]] = %{{.*}})
// CHECK: %[[COL:.*]] = arith.muli %[[P]], %c32 : index
// CHECK: %[[PIECE:.*]] = vector.transfer_read %[[W]][%[[ROW]], %[[COL]]], %{{.*}} {in_bounds = [true]} : tensor<768x2304xf32>, vector<32xf32>
// CHECK: vector.transfer_write %[[PIECE]], %[[T]][%[[P]], %[[R]], %c0] {in_bounds = [true]} : vector<32xf32>, tensor<72x16x32xf32>
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[DST]][0, %[[R0]], 0] [72, 16, 32] [1, 1, 1]
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 512) step (1, 64)
// CHECK-NOT: tensor<256x32xf32>
// CHECK: scf.for %[[K0:.*]] = %c0 to %c768 step %c256
// CHECK: scf.for %[[N:.*]] = %c0 to %c2304 step %c32 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x64x2304xf32>)
// CHECK: %[[PANEL:.*]] = arith.divui %[[N]], %c32 : index
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c8
// CHECK: scf.for %[[KK:.*]] = %c0 to %c256 step %c1
// CHECK: %[[K:.*]] = arith.addi %[[K0]], %[[KK]] : index
// CHECK: vector.transfer_read %[[ALL]][%[[PANEL]], %[[K]], %c0], %{{.*}} {in_bounds = [true]} : tensor<72x768x32xf32>, vector<32xf32>
// CHECK-COUNT-8: vector.fma
// The packed weight is read at panel (NB + N) / 32 in n blocks of 1152
// columns; with cache-n=128, 18 blocks of 128 columns (4 register tiles).
// NBLOCK-LABEL: func.func @shared_weight(
// NBLOCK: %[[ALL:.*]] = scf.forall (%{{.*}}) in (48) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<72x768x32xf32>)
// NBLOCK: scf.for %[[NB:.*]] = %c0 to %c2304 step %c1152 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x512x2304xf32>)
// NBLOCK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 512) step (1, 64) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x512x1152xf32>)
// NBLOCK: scf.for %[[K0:.*]] = %c0 to %c768 step %c256
// NBLOCK: scf.for %[[N:.*]] = %c0 to %c1152 step %c32
// NBLOCK: %[[COL:.*]] = arith.addi %[[NB]], %[[N]] : index
// NBLOCK: %[[PANEL:.*]] = arith.divui %[[COL]], %c32 : index
// NBLOCK: vector.transfer_read %[[ALL]][%[[PANEL]], %{{.*}}, %c0], %{{.*}} {in_bounds = [true]} : tensor<72x768x32xf32>, vector<32xf32>
// CACHEN-LABEL: func.func @shared_weight(
// CACHEN: scf.for %{{.*}} = %c0 to %c2304 step %c128 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x512x2304xf32>)
// CACHEN: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 512) step (1, 64) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x512x128xf32>)
// ONCEOFF-LABEL: func.func @shared_weight(
// ONCEOFF-NOT: tensor<72x768x32xf32>
// ONCEOFF: scf.for %{{.*}} = %c0 to %c2304 step %c32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x64x2304xf32>, tensor<256x32xf32>)
// ONCEOFF-LABEL: func.func @one_block(
// NOPACK-LABEL: func.func @shared_weight(
// NOPACK-NOT: tensor<72x768x32xf32>
// NOPACK: vector.transfer_read %{{.*}} : tensor<768x2304xf32>, vector<32xf32>
// NOPACK-LABEL: func.func @one_block(
// A single m block (T = 64) reads the weight once anyway: it keeps the
// per-panel copy, which needs no buffer of all of w. With fewer than 4
// (split-n-items) m blocks, the work items are 4 chunks of N instead, each
// of all 64 rows and 192 columns, so that each thread reads its share of w
// (with split-n-items=0: one item of all of N).
// CHECK-LABEL: func.func @one_block(
// CHECK-NOT: tensor<24x768x32xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 768) step (1, 192)
// CHECK: scf.for %{{.*}} = %c0 to %c192 step %c32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x64x192xf32>, tensor<256x32xf32>)
// SPLITOFF-LABEL: func.func @one_block(
// SPLITOFF: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 64) step (1, 64)
// SPLITOFF: scf.for %{{.*}} = %c0 to %c768 step %c32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x64x768xf32>, tensor<256x32xf32>)
func.func @shared_weight(%x: tensor<1x512x768xf32>, %w: tensor<768x2304xf32>) -> tensor<1x512x2304xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x512x2304xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x512x2304xf32>) -> tensor<1x512x2304xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x512x768xf32>, tensor<768x2304xf32>) outs(%f : tensor<1x512x2304xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x512x2304xf32>
  return %r : tensor<1x512x2304xf32>
}

func.func @one_block(%x: tensor<1x64x768xf32>, %w: tensor<768x768xf32>) -> tensor<1x64x768xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x768xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x768xf32>) -> tensor<1x64x768xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x64x768xf32>, tensor<768x768xf32>) outs(%f : tensor<1x64x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x64x768xf32>
  return %r : tensor<1x64x768xf32>
}

#bias_split = affine_map<(b, m, n) -> (n)>
#out_split = affine_map<(b, m, n) -> (b, m, n)>
// Split N with a constant weight and out_proj's bias (T = 130: 3 m blocks,
// fewer than 4): one block of all 130 rows, 4 work items of 192 columns. A
// work item's register tiles read the bias and the compile-time packed
// panels at its column offset N0: bias[N0 + n], panel (N0 + n) / 32. The
// original weight is gone: the rest rows read the packed panels too.
// CHECK-LABEL: func.func @split_bias(
// CHECK-SAME: %[[X:.*]]: tensor<1x130x768xf32>, %[[BIAS:.*]]: tensor<768xf32>)
// CHECK-NOT: tensor<768x768xf32>
// CHECK: %[[PACKED:.*]] = arith.constant dense<5.000000e-01> : tensor<24x768x32xf32>
// CHECK-NOT: tensor<768x768xf32>
// CHECK: scf.forall (%{{.*}}, %[[N0:.*]]) = (0, 0) to (1, 768) step (1, 192)
// CHECK: scf.for %[[K0:.*]] = %c0 to %c768 step %c256
// CHECK: scf.for %[[N:.*]] = %c0 to %c192 step %c32
// CHECK: %[[COL:.*]] = arith.addi %[[N0]], %[[N]] : index
// CHECK: %[[PANEL:.*]] = arith.divui %[[COL]], %c32 : index
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c8
// CHECK: %[[BCOL:.*]] = affine.apply #{{.*}}()[%[[N0]], %[[N]]]
// CHECK: vector.transfer_read %[[BIAS]][%[[BCOL]]]
// CHECK: vector.transfer_read %[[PACKED]][%[[PANEL]], %{{.*}}, %c0]
// CHECK-COUNT-8: vector.fma
// The 2 rows past the last full tile (one tile of 2, its loop folded away)
// start from the bias at N0 + n too.
// CHECK: scf.if %{{.*}} -> (vector<32xf32>, vector<32xf32>)
// CHECK: %[[RCOL:.*]] = affine.apply #{{.*}}()[%[[N0]], %[[N]]]
// CHECK: vector.transfer_read %[[BIAS]][%[[RCOL]]]
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args({{.*}}) -> (vector<32xf32>, vector<32xf32>)
// CHECK: vector.transfer_read %[[PACKED]][%[[PANEL]], %{{.*}}, %c0]
// CHECK: tensor.extract %{{.*}}[%c0, %c128, %{{.*}}]
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: vector.fma
// CHECK: tensor.extract %{{.*}}[%c0, %c129, %{{.*}}]
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: vector.fma
// CHECK-NEXT: scf.yield
// CHECK-NOT: tensor<768x768xf32>
// Without split-n-items, the 3 m blocks of 130 rows share the packed
// constant in n blocks (cache-n=128): panel (NB + N) / 32, bias[NB + N].
// SPLITOFFN-LABEL: func.func @split_bias(
// SPLITOFFN-SAME: %{{.*}}: tensor<1x130x768xf32>, %[[BIAS:.*]]: tensor<768xf32>)
// SPLITOFFN: %[[PACKED:.*]] = arith.constant dense<5.000000e-01> : tensor<24x768x32xf32>
// SPLITOFFN: scf.for %[[NB:.*]] = %c0 to %c768 step %c128
// SPLITOFFN: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 130) step (1, 64) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x130x128xf32>)
// SPLITOFFN: scf.for %[[N:.*]] = %c0 to %c128 step %c32
// SPLITOFFN: %[[COL:.*]] = arith.addi %[[NB]], %[[N]] : index
// SPLITOFFN: %[[PANEL:.*]] = arith.divui %[[COL]], %c32 : index
// SPLITOFFN: %[[BCOL:.*]] = affine.apply #{{.*}}()[%[[NB]], %[[N]]]
// SPLITOFFN-NEXT: vector.transfer_read %[[BIAS]][%[[BCOL]]]
// SPLITOFFN: vector.transfer_read %[[PACKED]][%[[PANEL]], %{{.*}}, %c0]
// With cache-n=160 (5 of the 24 tiles fit): 5 blocks, 4 of 160 columns
// and a narrower last one of 128, whose width min(768 - NB, 160) the n
// tiles run to; the packed constant and the bias are read at NB + N there
// too.
// NARROW-LABEL: func.func @split_bias(
// NARROW-SAME: %{{.*}}: tensor<1x130x768xf32>, %[[BIAS:.*]]: tensor<768xf32>)
// NARROW: %[[PACKED:.*]] = arith.constant dense<5.000000e-01> : tensor<24x768x32xf32>
// NARROW: scf.for %[[NB:.*]] = %c0 to %c768 step %c160
// NARROW: %[[WIDTH:.*]] = affine.min #{{.*}}(%[[NB]])
// NARROW: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 130) step (1, 64) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x130x?xf32>)
// NARROW: scf.for %[[N:.*]] = %c0 to %[[WIDTH]] step %c32
// NARROW: %[[COL:.*]] = arith.addi %[[NB]], %[[N]] : index
// NARROW: %[[PANEL:.*]] = arith.divui %[[COL]], %c32 : index
// NARROW: %[[BCOL:.*]] = affine.apply #{{.*}}()[%[[NB]], %[[N]]]
// NARROW-NEXT: vector.transfer_read %[[BIAS]][%[[BCOL]]]
// NARROW: vector.transfer_read %[[PACKED]][%[[PANEL]], %{{.*}}, %c0]
// SPLITOFF-LABEL: func.func @split_bias(
// SPLITOFF: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 130) step (1, 64)
func.func @split_bias(%x: tensor<1x130x768xf32>, %bias: tensor<768xf32>) -> tensor<1x130x768xf32> {
  %cst = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<768x768xf32>
  %e = tensor.empty() : tensor<1x130x768xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x130x768xf32>) -> tensor<1x130x768xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x130x768xf32>, tensor<768x768xf32>) outs(%f : tensor<1x130x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x130x768xf32>
  %y = linalg.generic {indexing_maps = [#bias_split, #out_split], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : tensor<768xf32>) outs(%r : tensor<1x130x768xf32>) {
  ^bb0(%bv: f32, %o: f32):
    %s = arith.addf %bv, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x130x768xf32>
  return %y : tensor<1x130x768xf32>
}

// A constant weight (here w[2, 32] = 0 .. 63, row-major) is packed at
// compile time, whatever the number of m blocks (T is dynamic here): a new
// constant in the panel layout [N/16][K][16] (panel 0: rows 0-15 and
// 32-47; panel 1: 16-31 and 48-63) that the register tiles read, and no
// copy at run time. Weights held as resource blobs (the ONNX importer's
// initializers) become a packed resource blob. It is made once, at the
// start of the function, and both branches of the scf.if on T read it:
// few rows as 2 chunks of one 16-column panel (N0 = 0, 16), more as m
// blocks.
// CONST-LABEL: func.func @constant_weight(
// CONST: %[[PACKED:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, {{.*}}, 1.500000e+01], [3.200000e+01, {{.*}}, 4.700000e+01]], {{\[\[}}1.600000e+01, {{.*}}, 3.100000e+01], [4.800000e+01, {{.*}}, 6.300000e+01]]]> : tensor<2x2x16xf32>
// CONST-NOT: tensor<2x2x16xf32>
// CONST: scf.forall (%{{.*}}, %[[N0:.*]]) = (0, 0) to (1, 32) step (1, 16)
// CONST: %[[PANEL0:.*]] = arith.divui %[[N0]], %c16 : index
// CONST: vector.transfer_read %[[PACKED]][%[[PANEL0]], %{{.*}}, %c0], %{{.*}} {in_bounds = [true]} : tensor<2x2x16xf32>, vector<16xf32>
// CONST: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, %{{.*}}) step (1, 64)
// CONST-NOT: arith.constant dense
// CONST-NOT: scf.forall (%{{.*}}) in
// CONST-NOT: tensor<256x16xf32>
// CONST: scf.for %[[N:.*]] = %c0 to %c32 step %c16
// CONST: %[[PANEL:.*]] = arith.divui %[[N]], %c16 : index
// CONST: vector.transfer_read %[[PACKED]][%[[PANEL]], %{{.*}}, %c0], %{{.*}} {in_bounds = [true]} : tensor<2x2x16xf32>, vector<16xf32>
// CONST-COUNT-4: vector.fma
// With register-m = 4 the rest rows take tiles of 2 and 1 rows, no 4-row
// tile; the one-row tile reads the packed constant too.
// CONST-NOT: step %c4
// CONST: scf.for %{{.*}} step %c2 iter_args
// CONST-NOT: step %c4
// CONST: scf.for %{{.*}} step %c1 iter_args
// CONST: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args({{.*}}) -> (vector<16xf32>)
// CONST-NEXT: vector.transfer_read %[[PACKED]][%[[PANEL]], %{{.*}}, %c0]
func.func @constant_weight(%x: tensor<1x?x2xf32>) -> tensor<1x?x32xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]]> : tensor<2x32xf32>
  %t = tensor.dim %x, %c1 : tensor<1x?x2xf32>
  %e = tensor.empty(%t) : tensor<1x?x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x2xf32>, tensor<2x32xf32>) outs(%f : tensor<1x?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x32xf32>
  return %r : tensor<1x?x32xf32>
}

// MatMul broadcasting as the ONNX importer writes it: x[1, T, 768]'s batch
// dim is indexed by 0 while w[2, 768, 768] has two. It is a contraction
// all the same: the batch is tiled one at a time, x read at batch 0.
#xz = affine_map<(b, m, k, n) -> (0, m, k)>
#wz = affine_map<(b, m, k, n) -> (b, k, n)>
// CHECK-LABEL: func.func @broadcast_batch(
// CHECK-SAME: %[[X:.*]]: tensor<1x?x768xf32>
// CHECK: scf.forall (%{{.*}}, %[[M0:.*]]) = (0, 0) to (2, %{{.*}}) step (1, 64)
// CHECK: tensor.extract_slice %[[X]][0, %[[M0]], 0] [1, %{{.*}}, 768] [1, 1, 1]
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c256
// CHECK-COUNT-8: vector.fma
func.func @broadcast_batch(%x: tensor<1x?x768xf32>, %w: tensor<2x768x768xf32>) -> tensor<2x?x768xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %t = tensor.dim %x, %c1 : tensor<1x?x768xf32>
  %e = tensor.empty(%t) : tensor<2x?x768xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x?x768xf32>) -> tensor<2x?x768xf32>
  %r = linalg.generic {indexing_maps = [#xz, #wz, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x768xf32>, tensor<2x768x768xf32>) outs(%f : tensor<2x?x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x?x768xf32>
  return %r : tensor<2x?x768xf32>
}

// out_proj with its bias: the bias add after the contraction folds into
// it. The first k block starts every register row from the bias row (the
// rest rows' too); no elementwise pass remains. The bias add moves into
// both branches of the scf.if on T, and each folds into its copy: the
// chunk at column N0 reads the bias at N0 + n.
#ba = affine_map<(b, m, n) -> (n)>
#oa = affine_map<(b, m, n) -> (b, m, n)>
// CHECK-LABEL: func.func @out_proj_bias(
// CHECK-SAME: %[[X:.*]]: tensor<1x?x768xf32>, %[[W:.*]]: tensor<768x768xf32>, %[[BIAS:.*]]: tensor<768xf32>)
// CHECK-NOT: linalg.fill
// CHECK: scf.if
// CHECK-NEXT: tensor.dim
// CHECK-NEXT: %[[FEWOUT:.*]] = scf.forall (%{{.*}}, %[[N0:.*]]) = (0, 0) to (1, 768) step (1, 192)
// CHECK: scf.for %[[FN:.*]] = %c0 to %c192 step %c32
// CHECK: scf.if
// CHECK-NEXT: %[[FCOL:.*]] = affine.apply #{{.*}}()[%[[N0]], %[[FN]]]
// CHECK-NEXT: vector.transfer_read %[[BIAS]][%[[FCOL]]], %{{.*}} {in_bounds = [true]} : tensor<768xf32>, vector<32xf32>
// CHECK-NOT: linalg.generic
// CHECK: scf.yield %[[FEWOUT]] : tensor<1x?x768xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: tensor.dim
// CHECK-NEXT: %[[OUT:.*]] = scf.forall
// CHECK: %[[FIRST:.*]] = arith.cmpi eq
// CHECK: scf.for %[[N:.*]] = %c0 to %c768 step %c32
// CHECK: %[[INIT:.*]]:8 = scf.if %[[FIRST]]
// CHECK: %[[ROW:.*]] = vector.transfer_read %[[BIAS]][%[[N]]], %{{.*}} {in_bounds = [true]} : tensor<768xf32>, vector<32xf32>
// CHECK: scf.yield %[[ROW]], %[[ROW]], %[[ROW]], %[[ROW]], %[[ROW]], %[[ROW]], %[[ROW]], %[[ROW]] :
// CHECK: scf.if %[[FIRST]] -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>) {
// CHECK-NEXT: %[[ROW4:.*]] = vector.transfer_read %[[BIAS]][%[[N]]], %{{.*}} {in_bounds = [true]} : tensor<768xf32>, vector<32xf32>
// CHECK-NEXT: scf.yield %[[ROW4]], %[[ROW4]], %[[ROW4]], %[[ROW4]] :
// CHECK: scf.if %[[FIRST]] -> (vector<32xf32>, vector<32xf32>) {
// CHECK-NEXT: %[[ROW2:.*]] = vector.transfer_read %[[BIAS]][%[[N]]], %{{.*}} {in_bounds = [true]} : tensor<768xf32>, vector<32xf32>
// CHECK-NEXT: scf.yield %[[ROW2]], %[[ROW2]] :
// CHECK: scf.if %[[FIRST]] -> (vector<32xf32>) {
// CHECK-NEXT: %[[RROW:.*]] = vector.transfer_read %[[BIAS]][%[[N]]], %{{.*}} {in_bounds = [true]} : tensor<768xf32>, vector<32xf32>
// CHECK-NEXT: scf.yield %[[RROW]] : vector<32xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK: scf.yield %[[OUT]] : tensor<1x?x768xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
// In n blocks (cache-n=128: 6 blocks of 128 columns), the first k block
// starts from the bias at the block's column offset NB + N (after the
// panel copy, which reads w there too).
// CACHEN-LABEL: func.func @out_proj_bias(
// CACHEN-SAME: %[[BIAS:[^ ]*]]: tensor<768xf32>)
// CACHEN: scf.for %[[NB:.*]] = %c0 to %c768 step %c128
// CACHEN: scf.forall
// CACHEN: scf.for %[[N:.*]] = %c0 to %c128 step %c32
// CACHEN: vector.transfer_read %{{.*}} : tensor<768x768xf32>, vector<32xf32>
// CACHEN: %[[COL:.*]] = affine.apply #{{.*}}()[%[[NB]], %[[N]]]
// CACHEN-NEXT: vector.transfer_read %[[BIAS]][%[[COL]]], %{{.*}} {in_bounds = [true]} : tensor<768xf32>, vector<32xf32>
// CACHEN-NOT: linalg.generic
// CACHEN: return
func.func @out_proj_bias(%x: tensor<1x?x768xf32>, %w: tensor<768x768xf32>, %bias: tensor<768xf32>) -> tensor<1x?x768xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %t = tensor.dim %x, %c1 : tensor<1x?x768xf32>
  %e = tensor.empty(%t) : tensor<1x?x768xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x?x768xf32>) -> tensor<1x?x768xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x768xf32>, tensor<768x768xf32>) outs(%f : tensor<1x?x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x768xf32>
  %y = linalg.generic {indexing_maps = [#ba, #oa], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : tensor<768xf32>) outs(%r : tensor<1x?x768xf32>) {
  ^bb0(%bv: f32, %o: f32):
    %s = arith.addf %o, %bv : f32
    linalg.yield %s : f32
  } -> tensor<1x?x768xf32>
  return %y : tensor<1x?x768xf32>
}

// An accumulator that is not a zero fill (here an argument: C += A B) is
// read in every k block, the first included, by the full tiles and by the
// rest rows. The scf.if on T is the only one, in both of its branches.
// CHECK-LABEL: func.func @accumulate(
// CHECK: scf.if %{{.*}} -> (tensor<1x?x768xf32>) {
// CHECK-NOT: scf.if
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: scf.if
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %c4
// CHECK: %[[CROW:.*]] = vector.transfer_read %{{.*}}[%c0, %[[R]], %{{.*}}]
// CHECK-COUNT-3: vector.transfer_read
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args(%{{.*}} = %[[CROW]], 
// CHECK-NOT: scf.if
// CHECK: } else {
// CHECK-NOT: scf.if
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: scf.if
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %c4
// CHECK: %[[CROW:.*]] = vector.transfer_read %{{.*}}[%c0, %[[R]], %{{.*}}]
// CHECK-COUNT-3: vector.transfer_read
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args(%{{.*}} = %[[CROW]], 
// CHECK-NOT: scf.if
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @accumulate(%x: tensor<1x?x768xf32>, %w: tensor<768x768xf32>, %c: tensor<1x?x768xf32>) -> tensor<1x?x768xf32> {
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x768xf32>, tensor<768x768xf32>) outs(%c : tensor<1x?x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x768xf32>
  return %r : tensor<1x?x768xf32>
}

// As few n blocks as fit, of ceil(tiles / blocks) register tiles but the
// last: w's 7 tiles of 32 columns with 4 that fit (cache-n=128) take 2
// blocks, of 4 tiles and a narrower last one of 3 (a dynamic width, min(224 - NB,
// 128), that the m blocks' n tiles run to). A single static m block keeps
// one block (it reads w once anyway; here the work items are chunks of N
// instead).
// CACHEN-LABEL: func.func @prime_tiles(
// CACHEN: scf.for %[[NB:.*]] = %c0 to %c224 step %c128 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x?x224xf32>)
// CACHEN: %[[WIDTH:.*]] = affine.min #[[LAST]](%[[NB]])
// CACHEN: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, %{{.*}}) step (1, 64) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x?x?xf32>)
// CACHEN: scf.for %{{.*}} = %c0 to %[[WIDTH]] step %c32
// CACHEN-LABEL: func.func @one_block_wide(
// CACHEN-NOT: step %c128
// CACHEN: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 768) step (1, 192)
// SPLITOFFN-LABEL: func.func @one_block_wide(
// SPLITOFFN-NOT: step %c128
// SPLITOFFN: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 64) step (1, 64)
// SPLITOFFN: scf.for %{{.*}} = %c0 to %c768 step %c32
// A dynamic K in A with a static B: blocks from B's K (here 64 rows: all
// of N fits 4 MiB by default; cache-n=128 gives 18 blocks).
// CHECK-LABEL: func.func @dynamic_k(
// CHECK-NOT: step %c128
// CHECK: vector.fma
// NBLOCK-LABEL: func.func @dynamic_k(
// NBLOCK-NOT: scf.for
// NBLOCK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, %{{.*}}) step (1, 64) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x?x2304xf32>)
// NBLOCK: vector.fma
// CACHEN-LABEL: func.func @dynamic_k(
// CACHEN: scf.for %{{.*}} = %c0 to %c2304 step %c128
// CACHEN: vector.fma
func.func @prime_tiles(%x: tensor<1x?x64xf32>, %w: tensor<64x224xf32>) -> tensor<1x?x224xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %t = tensor.dim %x, %c1 : tensor<1x?x64xf32>
  %e = tensor.empty(%t) : tensor<1x?x224xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x?x224xf32>) -> tensor<1x?x224xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x64xf32>, tensor<64x224xf32>) outs(%f : tensor<1x?x224xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x224xf32>
  return %r : tensor<1x?x224xf32>
}

func.func @one_block_wide(%x: tensor<1x64x768xf32>, %w: tensor<768x768xf32>) -> tensor<1x64x768xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x768xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x768xf32>) -> tensor<1x64x768xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x64x768xf32>, tensor<768x768xf32>) outs(%f : tensor<1x64x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x64x768xf32>
  return %r : tensor<1x64x768xf32>
}

func.func @dynamic_k(%x: tensor<1x?x?xf32>, %w: tensor<64x2304xf32>) -> tensor<1x?x2304xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %t = tensor.dim %x, %c1 : tensor<1x?x?xf32>
  %e = tensor.empty(%t) : tensor<1x?x2304xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x?x2304xf32>) -> tensor<1x?x2304xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x?xf32>, tensor<64x2304xf32>) outs(%f : tensor<1x?x2304xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x2304xf32>
  return %r : tensor<1x?x2304xf32>
}

// K dynamic on both sides: it may be 0, when no k block runs to write C,
// so the zero fill stays (the result of a bare tensor.empty was garbage)
// and the register tiles accumulate onto it.
// CHECK-LABEL: func.func @dynamic_k_both(
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x?x32xf32>)
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %[[ZEROS]]) -> (tensor<1x?x32xf32>)
// CHECK: vector.fma
func.func @dynamic_k_both(%x: tensor<1x?x?xf32>, %w: tensor<?x32xf32>) -> tensor<1x?x32xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %t = tensor.dim %x, %c1 : tensor<1x?x?xf32>
  %e = tensor.empty(%t) : tensor<1x?x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x?xf32>, tensor<?x32xf32>) outs(%f : tensor<1x?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x32xf32>
  return %r : tensor<1x?x32xf32>
}

// Q K^T reads K as [n, k] (n not contiguous in it; ONNX Gemm's transB, an
// einsum "mk,nk->mn"): with 128 rows or more K is transposed once into
// [k, n] before the contraction, which then takes the register tiles. Read
// in place the op is dot products, which win below that while K stays in
// the cache (Gemm 1024x768x768 with transB: 13.4 ms in place against 5.5
// ms).
// CHECK-LABEL: func.func @transposed_b(
// CHECK: %[[KT:.*]] = linalg.transpose ins(%arg1 : tensor<128x64xf32>) outs(%{{.*}} : tensor<64x128xf32>) permutation = [1, 0]
// CHECK: scf.forall
// CHECK: vector.transfer_read %[[KT]]
// CHECK: vector.fma
// CHECK-NOT: linalg.matmul
// CHECK: return
#qa = affine_map<(m, n, k) -> (m, k)>
#ka = affine_map<(m, n, k) -> (n, k)>
#sa = affine_map<(m, n, k) -> (m, n)>
func.func @transposed_b(%q: tensor<128x64xf32>, %k: tensor<128x64xf32>) -> tensor<128x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %s = linalg.matmul indexing_maps = [#qa, #ka, #sa] ins(%q, %k : tensor<128x64xf32>, tensor<128x64xf32>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %s : tensor<128x128xf32>
}

// A read as [..., k, m] (Gemm's transA; 1.17 s in place at 1024x768x768)
// is transposed the same way, here per batch (the last two dims swapped),
// and so is a B read as [..., n, k] in the same op.
// CHECK-LABEL: func.func @transposed_a_and_b(
// CHECK-DAG: %[[AT:.*]] = linalg.transpose ins(%arg0 : tensor<2x?x64xf32>) outs(%{{.*}} : tensor<2x64x?xf32>) permutation = [0, 2, 1]
// CHECK-DAG: %[[BT:.*]] = linalg.transpose ins(%arg1 : tensor<2x32x?xf32>) outs(%{{.*}} : tensor<2x?x32xf32>) permutation = [0, 2, 1]
// CHECK: scf.forall
// CHECK: vector.fma
// CHECK-NOT: linalg.generic
// CHECK: return
#ta = affine_map<(b, m, n, k) -> (b, k, m)>
#tb = affine_map<(b, m, n, k) -> (b, n, k)>
#tc = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @transposed_a_and_b(%a: tensor<2x?x64xf32>, %b: tensor<2x32x?xf32>) -> tensor<2x64x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  %r = linalg.generic {indexing_maps = [#ta, #tb, #tc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x?x64xf32>, tensor<2x32x?xf32>) outs(%f : tensor<2x64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x64x32xf32>
  return %r : tensor<2x64x32xf32>
}

// A constant B read as [n, k] (an nn.Linear weight in a Gemm with transB)
// is transposed at compile time, into a new constant, which the register
// tiles' packing then takes as any constant weight: the packed panel
// holds w's column 0 (0..31), then column 1 (100..131). No transpose is
// left at run time.
// CHECK-LABEL: func.func @transposed_constant_b(
// CHECK: arith.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, {{.*}}, 3.100000e+01], [1.000000e+02, 1.010000e+02, {{.*}}, 1.310000e+02]]]> : tensor<1x2x32xf32>
// CHECK-NOT: linalg.transpose
// CHECK: vector.fma
// CHECK: return
#wt = affine_map<(b, m, k, n) -> (n, k)>
func.func @transposed_constant_b(%x: tensor<1x?x2xf32>) -> tensor<1x?x32xf32> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %w = arith.constant dense<[[0.0, 100.0], [1.0, 101.0], [2.0, 102.0], [3.0, 103.0], [4.0, 104.0], [5.0, 105.0], [6.0, 106.0], [7.0, 107.0], [8.0, 108.0], [9.0, 109.0], [10.0, 110.0], [11.0, 111.0], [12.0, 112.0], [13.0, 113.0], [14.0, 114.0], [15.0, 115.0], [16.0, 116.0], [17.0, 117.0], [18.0, 118.0], [19.0, 119.0], [20.0, 120.0], [21.0, 121.0], [22.0, 122.0], [23.0, 123.0], [24.0, 124.0], [25.0, 125.0], [26.0, 126.0], [27.0, 127.0], [28.0, 128.0], [29.0, 129.0], [30.0, 130.0], [31.0, 131.0]]> : tensor<32x2xf32>
  %t = tensor.dim %x, %c1 : tensor<1x?x2xf32>
  %e = tensor.empty(%t) : tensor<1x?x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wt, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x?x2xf32>, tensor<32x2xf32>) outs(%f : tensor<1x?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x32xf32>
  return %r : tensor<1x?x32xf32>
}

// B read as [n, k] by fewer rows than a register tile (a decode step):
// left in place, where the generic lowering's dot products read each row of
// B once (Gemm transB [1, 768] x [3072, 768]^T: 0.08 ms, 0.39 ms through
// the tiles). With a dynamic M and a B that is not a constant, an scf.if on
// M chooses at run time: the transposed, register-tiled copy of the op for
// at least 128 rows (B, 32 KiB, stays in the cache: its dot products in
// place beat a transpose on every call below that; a B above 16 MiB
// switches at register-m rows, 8), the op as it was below.
// CHECK-LABEL: func.func @transposed_b_few_rows(
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul
// CHECK-NOT: vector.fma
// CHECK: return
func.func @transposed_b_few_rows(%q: tensor<4x64xf32>, %k: tensor<128x64xf32>, %f: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %s = linalg.matmul indexing_maps = [#qa, #ka, #sa] ins(%q, %k : tensor<4x64xf32>, tensor<128x64xf32>) outs(%f : tensor<4x128xf32>) -> tensor<4x128xf32>
  return %s : tensor<4x128xf32>
}
// CHECK-LABEL: func.func @transposed_b_dynamic_rows(
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c0 : tensor<?x64xf32>
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[M]], %c128 : index
// CHECK: scf.if %[[ENOUGH]] -> (tensor<?x128xf32>) {
// CHECK: linalg.transpose ins(%arg1 : tensor<128x64xf32>) outs(%{{.*}} : tensor<64x128xf32>) permutation = [1, 0]
// CHECK: vector.fma
// CHECK: } else {
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<?x64xf32>, tensor<128x64xf32>)
// CHECK: return
func.func @transposed_b_dynamic_rows(%q: tensor<?x64xf32>, %k: tensor<128x64xf32>, %f: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %s = linalg.matmul indexing_maps = [#qa, #ka, #sa] ins(%q, %k : tensor<?x64xf32>, tensor<128x64xf32>) outs(%f : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %s : tensor<?x128xf32>
}

// A constant B read as [k, n] by fewer rows than a register tile (static
// M: a decode step's projection) is transposed at compile time into
// [n, k] and left to the generic lowering's dot products along k, which
// read each row of it once (x[1, 1, 768] @ W[768, 3072]: 0.39 ms through
// the register tiles, 0.09 ms): the new constant holds w's columns as rows
// (column 0: 0, 32; column 1: 1, 33).
// CHECK-LABEL: func.func @constant_few_rows(
// CHECK: %[[WT:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 3.200000e+01], [1.000000e+00, 3.300000e+01], {{.*}}> : tensor<32x2xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%arg0, %[[WT]] : tensor<1x4x2xf32>, tensor<32x2xf32>)
// CHECK-NOT: vector.fma
// CHECK: return
func.func @constant_few_rows(%x: tensor<1x4x2xf32>) -> tensor<1x4x32xf32> {
  %cst = arith.constant 0.0 : f32
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]]> : tensor<2x32xf32>
  %e = tensor.empty() : tensor<1x4x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x4x2xf32>, tensor<2x32xf32>) outs(%f : tensor<1x4x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x4x32xf32>
  return %r : tensor<1x4x32xf32>
}

// Fewer than 8 columns in all (a classifier head): B (here an argument)
// transposed to [N, K] by a linalg.transpose, the product left to the
// generic lowering's dot products along contiguous k; the scalar loops
// read C on every multiply-add (x[4096, 768] @ W[768, 7]: 8.8 ms, now
// 0.52 ms).
// CHECK-LABEL: func.func @narrow(
// CHECK: %[[WT:.*]] = linalg.transpose ins(%arg1 : tensor<64x7xf32>) outs(%{{.*}} : tensor<7x64xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[WT]] : tensor<128x64xf32>, tensor<7x64xf32>)
// CHECK-NOT: vector.fma
// CHECK: return
func.func @narrow(%x: tensor<128x64xf32>, %w: tensor<64x7xf32>) -> tensor<128x7xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x7xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x7xf32>) -> tensor<128x7xf32>
  %r = linalg.matmul ins(%x, %w : tensor<128x64xf32>, tensor<64x7xf32>) outs(%f : tensor<128x7xf32>) -> tensor<128x7xf32>
  return %r : tensor<128x7xf32>
}

// A static size of 0 (K or N) leaves nothing to tile: the op stays (its
// lowering returns the init). The tiling crashed on it.
// CHECK-LABEL: func.func @zero_sizes(
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<4x0xf32>, tensor<0x32xf32>)
// CHECK: linalg.matmul ins(%arg2, %arg3 : tensor<64x16xf32>, tensor<16x0xf32>)
// CHECK-NOT: vector.fma
// CHECK: return
func.func @zero_sizes(%a: tensor<4x0xf32>, %b: tensor<0x32xf32>, %c: tensor<64x16xf32>, %d: tensor<16x0xf32>) -> (tensor<4x32xf32>, tensor<64x0xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x0xf32>, tensor<0x32xf32>) outs(%f : tensor<4x32xf32>) -> tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<64x0xf32>
  %r2 = linalg.matmul ins(%c, %d : tensor<64x16xf32>, tensor<16x0xf32>) outs(%e2 : tensor<64x0xf32>) -> tensor<64x0xf32>
  return %r, %r2 : tensor<4x32xf32>, tensor<64x0xf32>
}

// A dynamic width is not the register tiles' in any layout: the
// transposed op stays as it is, untransposed.
// CHECK-LABEL: func.func @transposed_dynamic_n(
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul
// CHECK-NOT: vector.fma
// CHECK: return
func.func @transposed_dynamic_n(%q: tensor<64x64xf32>, %k: tensor<?x64xf32>, %f: tensor<64x?xf32>) -> tensor<64x?xf32> {
  %s = linalg.matmul indexing_maps = [#qa, #ka, #sa] ins(%q, %k : tensor<64x64xf32>, tensor<?x64xf32>) outs(%f : tensor<64x?xf32>) -> tensor<64x?xf32>
  return %s : tensor<64x?xf32>
}

// A width that is not a multiple of register-n (a vocabulary head's 50257
// columns) is split along n: 57 = 32 + 16 + 8 + 1 columns, register tiles
// 32, 16 and 8 wide, and one column of dot products (its B slice
// transposed to [1, K], read along contiguous k by the generic lowering).
// Each part computes its own slice of the fill's empty tensor (the 32-wide
// part in place, from zeros in registers; the last column under a fill of
// its own slice), so C is never filled whole. With register-n = 16:
// 48 + 8 + 1.
// CHECK-LABEL: func.func @ragged_n(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x57xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[E]][0, 0] [64, 32] [1, 1]
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %[[S0]])
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %{{.*}} into %[[E]][0, 0] [64, 32] [1, 1]
// CHECK: %[[R0:.*]] = tensor.extract_slice %[[I0]][0, 32] [64, 25] [1, 1]
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: vector.fma {{.*}} : vector<8xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64x1xf32>)
// CHECK: %[[BT:.*]] = linalg.transpose ins(%{{.*}} : tensor<64x1xf32>) outs(%{{.*}} : tensor<1x64xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[BT]] : tensor<64x64xf32>, tensor<1x64xf32>) outs(%[[F]] : tensor<64x1xf32>)
// CHECK: %[[I:.*]] = tensor.insert_slice %{{.*}} into %[[I0]][0, 32] [64, 25] [1, 1]
// CHECK: return %[[I]]
// CONST-LABEL: func.func @ragged_n(
// CONST: tensor.extract_slice %{{.*}}[0, 0] [64, 48] [1, 1]
// CONST: vector.fma {{.*}} : vector<16xf32>
// CONST-NOT: vector<32xf32>
// CONST: vector.fma {{.*}} : vector<8xf32>
// CONST: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<64x64xf32>, tensor<1x64xf32>)
func.func @ragged_n(%a: tensor<64x64xf32>, %b: tensor<64x57xf32>) -> tensor<64x57xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x57xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x57xf32>) -> tensor<64x57xf32>
  %n = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x57xf32>) outs(%f : tensor<64x57xf32>) -> tensor<64x57xf32>
  return %n : tensor<64x57xf32>
}

// A split constant weight: each vector part packs its own columns at
// compile time (from the slice of the constant), the last column becomes
// a constant of its own, transposed for its dot products ([1, K]), and
// the whole weight is no longer used. An
// accumulator that is not a zero fill is sliced as it is, each part
// reading its own slice of C.
// CHECK-LABEL: func.func @ragged_constant(
// CHECK-DAG: arith.constant dense<{{\[\[}}3.300000e+01, 7.400000e+01]]> : tensor<1x2xf32>
// CHECK-DAG: arith.constant dense<{{.*}}> : tensor<1x2x8xf32>
// CHECK-DAG: arith.constant dense<{{.*}}> : tensor<1x2x32xf32>
// CHECK-NOT: tensor<2x41xf32>
// CHECK: tensor.extract_slice %arg1[0, 0, 0] [1, %{{.*}}, 32] [1, 1, 1]
// CHECK: return
func.func @ragged_constant(%x: tensor<1x?x2xf32>, %c: tensor<1x?x41xf32>) -> tensor<1x?x41xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 33.0], [41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 74.0]]> : tensor<2x41xf32>
  %r = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x?x2xf32>, tensor<2x41xf32>) outs(%c : tensor<1x?x41xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x?x41xf32>
  return %r : tensor<1x?x41xf32>
}

// Only out + a * b: a unary op on an operand (out + exp(a) * b) or B
// carrying the row dim are not register-blocked.
// CHECK-LABEL: func.func @not_plain(
// CHECK-NOT: vector.fma
// CHECK: math.exp
// CHECK-NOT: vector.fma
// The third writes only C[0] of a 4 x 64 x 64 output (its map's 0 result
// on a dim of size 4): C[1..3] keep the init, which the register tiles
// would not write. It stays a linalg.generic.
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x64x64xf32>)
// CHECK-NOT: vector.fma
// CHECK: return
#a2 = affine_map<(m, k, n) -> (m, k)>
#b2 = affine_map<(m, k, n) -> (k, n)>
#bm = affine_map<(m, k, n) -> (m, k, n)>
#c2 = affine_map<(m, k, n) -> (m, n)>
#c0 = affine_map<(m, k, n) -> (0, m, n)>
func.func @not_plain(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %b3: tensor<64x64x64xf32>, %c: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<4x64x64xf32>) {
  %0 = linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %e = math.exp %x : f32
    %m = arith.mulf %e, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %1 = linalg.generic {indexing_maps = [#a2, #bm, #c2], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b3 : tensor<64x64xf32>, tensor<64x64x64xf32>) outs(%c : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4x64x64xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %2 = linalg.generic {indexing_maps = [#a2, #b2, #c0], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f4 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x64x64xf32>
  return %0, %1, %2 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<4x64x64xf32>
}

// A batch of 4 sequences of 128 rows (cache-m < M <= 2 cache-m, the batch
// a multiple of 4): each sequence stays one m block of 128 rows, since
// every m block reads all of w; the 4 blocks (fewer than
// pack-b-once-blocks) copy their panels per n tile. 129 rows are more
// than two blocks: 64-row blocks (12 of them, so w is packed once). A
// batch of 2 keeps 64-row blocks too (2 items would not divide evenly
// over 4 threads; its 4 blocks copy panels per n tile).
// CHECK-LABEL: func.func @batch_of_short_sequences(
// CHECK-NOT: tensor<24x768x32xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 128) step (1, 128)
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x128x768xf32>, tensor<256x32xf32>)
// CHECK: %[[ALL:.*]] = scf.forall (%{{.*}}) in (48) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<24x768x32xf32>)
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 129) step (1, 64)
// CHECK: vector.transfer_read %[[ALL]][{{.*}}], %{{.*}} {in_bounds = [true]} : tensor<24x768x32xf32>, vector<32xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, 128) step (1, 64)
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x64x768xf32>, tensor<256x32xf32>)
func.func @batch_of_short_sequences(%x1: tensor<4x128x768xf32>, %x2: tensor<4x129x768xf32>, %x3: tensor<2x128x768xf32>, %w: tensor<768x768xf32>) -> (tensor<4x128x768xf32>, tensor<4x129x768xf32>, tensor<2x128x768xf32>) {
  %cst = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x128x768xf32>
  %f1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<4x128x768xf32>) -> tensor<4x128x768xf32>
  %r1 = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x1, %w : tensor<4x128x768xf32>, tensor<768x768xf32>) outs(%f1 : tensor<4x128x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x128x768xf32>
  %e2 = tensor.empty() : tensor<4x129x768xf32>
  %f2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<4x129x768xf32>) -> tensor<4x129x768xf32>
  %r2 = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x2, %w : tensor<4x129x768xf32>, tensor<768x768xf32>) outs(%f2 : tensor<4x129x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x129x768xf32>
  %e3 = tensor.empty() : tensor<2x128x768xf32>
  %f3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<2x128x768xf32>) -> tensor<2x128x768xf32>
  %r3 = linalg.generic {indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x3, %w : tensor<2x128x768xf32>, tensor<768x768xf32>) outs(%f3 : tensor<2x128x768xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x128x768xf32>
  return %r1, %r2, %r3 : tensor<4x128x768xf32>, tensor<4x129x768xf32>, tensor<2x128x768xf32>
}
