// RUN: attention-opt %s --attn-vectorize-sdpa -cse | FileCheck %s
// RUN: attention-opt %s --attn-vectorize-sdpa='block-q=32 block-kv=64 register-keys=8 register-rows=2 polynomial-exp=false' -cse | FileCheck %s --check-prefix=SMALL
// RUN: not attention-opt %s --attn-vectorize-sdpa='block-q=24' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attention-opt %s --attn-vectorize-sdpa='accumulators=0' 2>&1 | FileCheck %s --check-prefix=BADACC
// RUN: attention-opt %s --attn-vectorize-sdpa='block-q=32 block-kv=64 accumulators=4' -cse | FileCheck %s --check-prefix=AVX2
// RUN: attention-opt %s --attn-vectorize-sdpa='bf16-dot' -cse | FileCheck %s --check-prefix=BF16
// RUN: attention-opt %s --attn-vectorize-sdpa='bf16-widen' -cse | FileCheck %s --check-prefix=WIDEN
// RUN: attention-opt %s --attn-vectorize-sdpa='f16-widen' -cse | FileCheck %s --check-prefix=F16
// RUN: attention-opt %s --attn-vectorize-sdpa='avx512-scalef' -cse | FileCheck %s --check-prefix=SCALEF
// RUN: attention-opt %s --attn-vectorize-sdpa='streaming-stores=false' -cse | FileCheck %s --check-prefix=NOSTREAM
// RUN: attention-opt %s --attn-vectorize-sdpa='block-kv=96 register-keys=6 register-rows=6' -cse | FileCheck %s --check-prefix=TILE6
// RUN: attention-opt %s --attn-vectorize-sdpa='avx512-scalef' --convert-vector-to-llvm='enable-x86vector' | FileCheck %s --check-prefix=SCALEF-LLVM
// RUN: attention-opt %s --attn-vectorize-sdpa='parallel=false' -cse | FileCheck %s --check-prefix=SERIAL
// RUN: attention-opt %s --attn-vectorize-sdpa='mask-copy-limit-mib=0' -cse | FileCheck %s --check-prefix=NOCOPY
// RUN: not attention-opt %s --attn-vectorize-sdpa='mask-copy-limit-mib=-1' 2>&1 | FileCheck %s --check-prefix=BADLIMIT
// BADLIMIT: mask-copy-limit-mib >= 0; got {{.*}} mask-copy-limit-mib=-1

// GPT-2 small's causal core. Before: one attn.sdpa. After: Q, K, V read in
// place (read-only buffers), one work item per (batch, head, 64-row query
// block; causal: the blocks of a head from the last to the first, so that a
// thread's next item reads a prefix of the keys it just read); the item packs
// Q^T * scale, then walks the key blocks in two loops
// (blocks every row sees, then blocks crossing the diagonal, which evaluate
// the lane predicate), each with: 4-key x 64-row score tiles (16 FMAs per
// column of d), the online max (one cmpf ogt + select per vector: a single
// vmaxps) and rescale, exp of the scores with their sums, taken as
// 2^(s log2(e) - m log2(e)) (inline: one rounding, a degree-5 polynomial, 2^n
// built in the exponent bits; math.exp2 with polynomial-exp=false),
// and the output update in 4-row x 64-column tiles (guarded where the key
// block of V holds non-finite values, checked once per call before the
// items). The output blocks are written with non-temporal stores (the
// result is only returned). The result is the output buffer as a tensor.
// With avx512-scalef, 2^x is x clamped at -160 (2^-160 rounds to 0),
// n = roundeven(x) (vrndscaleps), the degree-5 polynomial of f = x - n, and
// p * 2^n in one vscalefps: the op's operands (src, a, b) reach the
// intrinsic as (a, b, passthrough), so the polynomial comes first and n
// second, all 16 lanes, rounding 4 (current direction). No exponent bits.
// SCALEF-LABEL: func.func @causal(
// SCALEF-NOT: arith.shli
// SCALEF: %[[LOW:.*]] = arith.constant dense<-1.600000e+02> : vector<16xf32>
// SCALEF: %[[BELOW:.*]] = arith.cmpf olt, %[[X:.*]], %[[LOW]] : vector<16xf32>
// SCALEF: %[[XC:.*]] = arith.select %[[BELOW]], %[[LOW]], %[[X]] : vector<16xi1>, vector<16xf32>
// SCALEF: %[[N:.*]] = math.roundeven %[[XC]] : vector<16xf32>
// SCALEF: %[[F:.*]] = arith.subf %[[XC]], %[[N]] : vector<16xf32>
// SCALEF-COUNT-4: vector.fma %{{.*}}, %[[F]], %{{.*}} : vector<16xf32>
// SCALEF: %[[P:.*]] = vector.fma %{{.*}}, %[[F]], %{{.*}} : vector<16xf32>
// SCALEF: %[[ALL:.*]] = arith.constant -1 : i16
// SCALEF: %[[CUR:.*]] = arith.constant 4 : i32
// SCALEF: x86vector.avx512.mask.scalef %[[P]], %[[N]], %[[P]], %[[ALL]], %[[CUR]] : vector<16xf32>
// SCALEF-NOT: arith.shli
// SCALEF-LABEL: func.func @
// Through convert-vector-to-llvm the op becomes the intrinsic, whose
// operands are (value scaled, exponent, passthrough, mask, rounding): the
// polynomial first, n second. (Should MLIR map the op's operands
// differently, this check fails instead of the code computing n * 2^p.)
// SCALEF-LLVM-LABEL: func.func @causal(
// SCALEF-LLVM: %[[N:.*]] = math.roundeven %{{.*}} : vector<16xf32>
// SCALEF-LLVM: %[[F:.*]] = arith.subf %{{.*}}, %[[N]] : vector<16xf32>
// SCALEF-LLVM-COUNT-4: llvm.intr.fmuladd
// SCALEF-LLVM: %[[P:.*]] = llvm.intr.fmuladd(%{{.*}}, %[[F]], %{{.*}})
// SCALEF-LLVM: llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[P]], %[[N]], %[[P]], %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>, i16, i32) -> vector<16xf32>
// CHECK-LABEL: func.func @causal(
// CHECK-SAME: %[[Q:.*]]: tensor<1x12x1024x64xf32>, %[[K:.*]]: tensor<1x12x1024x64xf32>, %[[V:.*]]: tensor<1x12x1024x64xf32>)
// CHECK-NOT: attn.sdpa
// CHECK: %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only : tensor<1x12x1024x64xf32> to memref<1x12x1024x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x12x1024x64xf32>
// Once per call, each 128-key block of V: the sum of its values times 0
// (NaN iff one is not finite), into a table by batch, head and key block.
// CHECK: %[[NQB:.*]] = arith.ceildivui %c1024, %c64 : index
// CHECK: %[[NKB:.*]] = arith.ceildivui %c1024, %c128 : index
// CHECK: %[[CHECKS:.*]] = memref.alloc(%c1, %c12, %[[NKB]]) {alignment = 64 : i64} : memref<?x?x?xf32>
// CHECK: scf.forall (%[[CB:.*]], %[[CH:.*]], %[[CK:.*]]) in (%c1, %c12, %[[NKB]]) {
// CHECK: %[[CJ0:.*]] = arith.muli %[[CK]], %c128 : index
// CHECK: scf.for
// CHECK-COUNT-4: vector.fma
// CHECK: vector.reduction <add>
// CHECK: memref.store %{{.*}}, %[[CHECKS]][%[[CB]], %[[CH]], %[[CK]]] : memref<?x?x?xf32>
// The work items (batch, head, block of 64 query rows) run on one worker
// per thread of the OpenMP team, no more than there are items. Each worker
// cuts its scratch (Qt, St, O, alpha) from one heap block, and takes
// chunks of consecutive items, max(1, left / (2 workers)) as last read,
// from a shared counter by an atomic add.
// CHECK: %[[NITEMS:.*]] = arith.muli %{{.*}}, %[[NQB]] : index
// CHECK: %[[THREADS:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK: %[[T:.*]] = arith.index_cast %[[THREADS]] : i32 to index
// CHECK: %[[MIN:.*]] = arith.minsi %[[NITEMS]], %[[T]] : index
// CHECK: %[[WORKERS:.*]] = arith.maxsi %c1, %[[MIN]] : index
// CHECK: %[[NEXT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xi64>
// CHECK: memref.store %c0_i64, %[[NEXT]][%c0] : memref<16xi64>
// CHECK: %[[N64:.*]] = arith.index_cast %[[NITEMS]] : index to i64
// CHECK: scf.forall (%{{.*}}) in (%[[WORKERS]]) {
// CHECK: %[[SCRATCH:.*]] = memref.alloc() {alignment = 64 : i64} : memref<65792xi8>
// CHECK: %[[QT:.*]] = memref.view %[[SCRATCH]][%c0][] : memref<65792xi8> to memref<64x64xf32>
// CHECK: %[[ST:.*]] = memref.view %[[SCRATCH]][%c16384][] : memref<65792xi8> to memref<128x64xf32>
// CHECK: %[[ACC:.*]] = memref.view %[[SCRATCH]][%c49152][] : memref<65792xi8> to memref<64x64xf32>
// CHECK: %[[ALPHA:.*]] = memref.view %[[SCRATCH]][%c65536][] : memref<65792xi8> to memref<64xf32>
// CHECK: scf.while : () -> (i64, i64) {
// CHECK: %[[SEEN:.*]] = memref.atomic_rmw addi %c0_i64, %[[NEXT]][%c0] : (i64, memref<16xi64>) -> i64
// CHECK: %[[LEFT:.*]] = arith.subi %[[N64]], %[[SEEN]] : i64
// CHECK: %[[TWICE:.*]] = arith.muli %[[WORKERS]], %c2 : index
// CHECK: %[[TWICE64:.*]] = arith.index_cast %[[TWICE]] : index to i64
// CHECK: %[[SHARE:.*]] = arith.divsi %[[LEFT]], %[[TWICE64]] : i64
// CHECK: %[[CHUNK:.*]] = arith.maxsi %[[SHARE]], %c1_i64 : i64
// CHECK: %[[FIRST:.*]] = memref.atomic_rmw addi %[[CHUNK]], %[[NEXT]][%c0] : (i64, memref<16xi64>) -> i64
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[FIRST]], %[[N64]] : i64
// CHECK: scf.condition(%[[MORE]]) %[[FIRST]], %[[CHUNK]] : i64, i64
// CHECK: } do {
// CHECK: ^bb0(%[[F64:.*]]: i64, %[[C64:.*]]: i64):
// CHECK: %[[F:.*]] = arith.index_cast %[[F64]] : i64 to index
// CHECK: %[[C:.*]] = arith.index_cast %[[C64]] : i64 to index
// CHECK: %[[END:.*]] = arith.addi %[[F]], %[[C]] : index
// CHECK: %[[LAST:.*]] = arith.minsi %[[NITEMS]], %[[END]] : index
// CHECK: scf.for %[[ITEM:.*]] = %[[F]] to %[[LAST]] step %c1 {
// CHECK: %[[QBLK:.*]] = arith.remui %[[ITEM]], %[[NQB]] : index
// CHECK: %[[REST:.*]] = arith.divui %[[ITEM]], %[[NQB]] : index
// CHECK: %[[H:.*]] = arith.remui %[[REST]], %c12 : index
// CHECK: %[[B:.*]] = arith.divui %[[REST]], %c12 : index
// Without `parallel`: one worker, and no call into libomp.
// SERIAL-LABEL: func.func @causal(
// SERIAL-NOT: omp_get_max_threads
// SERIAL: scf.forall (%{{.*}}) in (%c1) {
// SERIAL: memref.alloc() {alignment = 64 : i64} : memref<65792xi8>
// SERIAL: scf.while
// SERIAL-LABEL: func.func @
// Causal: a head's query blocks from the last to the first.
// CHECK: %[[LASTQB:.*]] = arith.subi %[[NQB]], %c1 : index
// CHECK: %[[REVQB:.*]] = arith.subi %[[LASTQB]], %[[QBLK]] : index
// CHECK: arith.muli %[[REVQB]], %c64 : index
// Q^T, scaled by 1/sqrt(64), in 16 x 16 blocks: 16 row loads, 4 stages of
// 16 two-source shuffles, 16 stores.
// CHECK: %[[SCALE:.*]] = arith.constant dense<1.250000e-01> : vector<16xf32>
// CHECK: scf.for %[[R:.*]] = %c0 to %c64 step %c16 {
// CHECK: scf.for %[[C:.*]] = %c0 to %c64 step %c16 {
// CHECK: vector.load %[[QB]][%[[B]], %[[H]], %{{.*}}, %[[C]]] : {{.*}}, vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : vector<16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK-NOT: vector.shuffle
// CHECK-COUNT-16: vector.store %{{.*}}, %[[QT]][%{{.*}}, %[[R]]] : memref<64x64xf32>, vector<16xf32>
// Unmasked key blocks [0, nFull).
// CHECK: %{{.*}}:8 = scf.for %{{.*}} = %c0 to %{{.*}} step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c4 iter_args
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK-COUNT-4: vector.load %[[QT]]
// CHECK: memref.load %[[KB]]
// CHECK: vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-COUNT-16: vector.fma
// CHECK: scf.yield
// CHECK-NOT: arith.cmpi
// CHECK: vector.store %{{.*}}, %[[ST]]
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[S:.*]], %[[M:.*]] : vector<16xf32>
// CHECK: arith.select %[[GT]], %[[S]], %[[M]] : vector<16xi1>, vector<16xf32>
// CHECK-NOT: arith.maximumf
// alpha = 2^(m2_old - m2), m2 = m * log2(e).
// CHECK: %[[LOG2E:.*]] = arith.constant dense<1.44269502> : vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[LOG2E]] : vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[LOG2E]] : vector<16xf32>
// CHECK: arith.subf
// CHECK: arith.cmpf olt
// CHECK: arith.addf
// CHECK-COUNT-5: vector.fma
// CHECK: arith.shli %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: vector.store %{{.*}}, %[[ALPHA]]
// P = 2^(St * log2(e) - m2): the subtraction is an FMA.
// CHECK: %[[SV:.*]] = vector.load %[[ST]]
// CHECK: vector.fma %[[SV]], %[[LOG2E]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-5: vector.fma
// CHECK: arith.shli %{{.*}}, %{{.*}} : vector<16xi32>
// The key block's entry of the table picks the unguarded or guarded P V.
// CHECK: %[[TOTAL:.*]] = memref.load %[[CHECKS]][%[[B]], %[[H]], %{{.*}}] : memref<?x?x?xf32>
// CHECK: %[[FINITE:.*]] = arith.cmpf ord, %[[TOTAL]], %[[TOTAL]] : f32
// CHECK: scf.if %[[FINITE]]
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c4 {
// CHECK: memref.load %[[ALPHA]]
// CHECK: scf.for
// CHECK: vector.load %[[VB]]
// CHECK: memref.load %[[ST]]
// CHECK-COUNT-4: vector.fma
// CHECK: } else {
// CHECK: arith.cmpf une
// CHECK: arith.select
// Masked key blocks [nFull, nBlocks): the causal lane predicate. The key
// tiles run in four loops by the first row vector that sees them: 16, 12, 8,
// then 4 FMAs per column of d; the vectors left out are stored as -inf.
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c4 iter_args
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK-COUNT-16: vector.fma
// CHECK: arith.cmpi slt
// CHECK: arith.index_cast %{{.*}} : index to i32
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: %[[R1:.*]]:4 = scf.for %{{.*}} = %[[LO1:.*]] to %{{.*}} step %c4 iter_args
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK-COUNT-12: vector.fma
// CHECK: scf.yield
// CHECK: vector.store %[[NEGINF:.*]], %[[ST]][%{{.*}}, %c0]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4 iter_args
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK-COUNT-8: vector.fma
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4 iter_args
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK-COUNT-4: vector.fma
// CHECK: scf.yield
// The output tiles of 4 rows stop at their last visible key:
// min(nk, max(0, q0 + i0 + 4 - j0)).
// CHECK: scf.if
// CHECK: scf.for %[[I0:.*]] = %c0 to %c64 step %c4 {
// CHECK: arith.addi %{{.*}}, %[[I0]] : index
// CHECK: arith.maxsi %c0, %{{.*}} : index
// CHECK: %[[NKR:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.for %{{.*}} = %c0 to %[[NKR]] step %c1 iter_args
// Epilogue: out = O * (1 / l), rows up to Tq, in 64-byte aligned
// streaming stores.
// CHECK: arith.divf
// CHECK: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] {alignment = 64 : i64, nontemporal = true}
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<1x12x1024x64xf32> to tensor<1x12x1024x64xf32>

// SMALL-LABEL: func.func @causal(
// SMALL: memref<32x64xf32>
// SMALL: memref<64x32xf32>
// SMALL: scf.for %{{.*}} = %c0 to %c64 step %c8 iter_args
// SMALL-COUNT-16: vector.fma
// SMALL: math.exp2 %{{.*}} : vector<16xf32>
// SMALL: scf.for %{{.*}} = %c0 to %c32 step %c2 {

// BAD: attn-vectorize-sdpa: block-q must be a multiple of 16 in [16, 256], block-kv in [1, 1024], register-keys, register-rows and accumulators in [1, 64], mask-copy-limit-mib >= 0; got block-q=24
// BADACC: got block-q=64 block-kv=128 register-keys=4 register-rows=4 accumulators=0

// A register tile size that does not divide the block becomes the largest
// one that does: 6 keys divide the 96-key block (6 x 4 vectors, all 24
// accumulators), 6 rows do not divide the 64-row item, so output tiles take
// 4 rows (4 x 4 vectors), not 6 halved to 3 and 1.
// TILE6-LABEL: func.func @causal(
// TILE6: scf.for %{{.*}} = %c0 to %c96 step %c6 iter_args
// TILE6: %{{.*}}:24 = scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// TILE6-COUNT-24: vector.fma
// TILE6-NOT: vector.fma
// TILE6: scf.yield
// TILE6: scf.for %{{.*}} = %c0 to %c64 step %c4 {
// TILE6: %{{.*}}:16 = scf.for %{{.*}} = %c0 to %c96 step %c1 iter_args
// TILE6-COUNT-16: vector.fma
// TILE6-NOT: vector.fma
// TILE6: scf.yield

// AVX2's 16 ymm registers (the pipeline's choice there: accumulators=4,
// 32 x 64 blocks): score tiles of two keys over 32 query rows (2 x 2
// vectors: 2 broadcasts and 2 loads of Qt per 4 FMAs), and output tiles of
// two rows x 32 columns (2 x 2 vectors), instead of 4 keys and 4 rows.
// AVX2-LABEL: func.func @causal(
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c2 iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>) {
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// AVX2-COUNT-4: vector.fma
// AVX2-NOT: vector.fma
// AVX2: scf.yield
// AVX2: scf.for %{{.*}} = %c0 to %c32 step %c2 {
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// AVX2-COUNT-4: vector.fma
// AVX2-NOT: vector.fma
// AVX2: scf.yield
func.func @causal(%q: tensor<1x12x1024x64xf32>, %k: tensor<1x12x1024x64xf32>, %v: tensor<1x12x1024x64xf32>) -> tensor<1x12x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32> -> tensor<1x12x1024x64xf32>
  return %o : tensor<1x12x1024x64xf32>
}

// GQA in the seq_major layout with dynamic sizes: K/V head h / 4, indices
// (batch, token, head, column) in Q; the output's dynamic sizes are Q's.
// CHECK-LABEL: func.func @gqa_seq_major(
// CHECK: %[[DB:.*]] = memref.dim %{{.*}}, %c0
// CHECK: %[[DT:.*]] = memref.dim %{{.*}}, %c1
// CHECK: memref.alloc(%[[DB]], %[[DT]]) {alignment = 64 : i64} : memref<?x?x8x32xf32>
// K and V are copied head-major ([B, Hk, Tk, d], allocated in that branch
// only) once per call when Tq spans more than one query block, so that a
// key block's rows are contiguous; the items read them through a transposed
// view of the copy (indices still (batch, token, head, column)), or in
// place otherwise.
// CHECK: %[[NQB:.*]] = arith.ceildivui %[[DT]], %c64
// CHECK: %[[SEVERAL:.*]] = arith.cmpi ugt, %[[NQB]], %c1
// CHECK: %[[KV:.*]]:2 = scf.if %[[SEVERAL]]
// CHECK: %[[KP:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {alignment = 64 : i64} : memref<?x2x?x32xf32>
// CHECK: %[[VP:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {alignment = 64 : i64} : memref<?x2x?x32xf32>
// CHECK: scf.forall (%[[PB:.*]], %[[PH:.*]], %[[PT:.*]]) in
// CHECK: %[[KR:.*]] = vector.load %[[K:.*]][%[[PB]], %[[PT]], %[[PH]], %c0] : memref<?x?x2x32xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: vector.store %[[KR]], %[[KP]][%[[PB]], %[[PH]], %[[PT]], %c0]
// CHECK: %[[VR:.*]] = vector.load %[[V:.*]][%[[PB]], %[[PT]], %[[PH]], %c0] : memref<?x?x2x32xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: vector.store %[[VR]], %[[VP]][%[[PB]], %[[PH]], %[[PT]], %c0]
// CHECK: %[[KT:.*]] = memref.transpose %[[KP]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[KC:.*]] = memref.cast %[[KT]]
// CHECK: %[[VT:.*]] = memref.transpose %[[VP]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[VC:.*]] = memref.cast %[[VT]]
// CHECK: scf.yield %[[KC]], %[[VC]]
// CHECK: } else {
// CHECK: scf.yield %[[K]], %[[V]]
// Not causal: the query blocks in order (every item reads all keys).
// CHECK: scf.forall (%{{.*}}) in
// CHECK: scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK: %[[GQB:.*]] = arith.remui %[[ITEM]], %{{.*}} : index
// CHECK: %[[REST:.*]] = arith.divui %[[ITEM]], %{{.*}} : index
// CHECK: %[[HQ:.*]] = arith.remui %[[REST]], %c8 : index
// CHECK: arith.divui %[[REST]], %c8 : index
// CHECK: %[[HK:.*]] = arith.divui %[[HQ]], %c4
// CHECK-NEXT: arith.muli %[[GQB]], %c64 : index
// CHECK: memref.load %[[KV]]#0[%{{.*}}, %{{.*}}, %[[HK]], %{{.*}}] : memref<?x?x2x32xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: vector.load %[[KV]]#1[%{{.*}}, %{{.*}}, %[[HK]], %{{.*}}] : memref<?x?x2x32xf32, strided<[?, ?, ?, 1], offset: ?>>, vector<16xf32>
func.func @gqa_seq_major(%q: tensor<?x?x8x32xf32>, %k: tensor<?x?x2x32xf32>, %v: tensor<?x?x2x32xf32>) -> tensor<?x?x8x32xf32> {
  %o = attn.sdpa %q, %k, %v layout(seq_major) : tensor<?x?x8x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32> -> tensor<?x?x8x32xf32>
  return %o : tensor<?x?x8x32xf32>
}

// A static Tq below 64 shrinks the work item to Tq rounded up to 16 rows,
// with more keys per score tile (here 16 x 16 rows).
// CHECK-LABEL: func.func @short_queries(
// CHECK: memref<64x16xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c16 iter_args
func.func @short_queries(%q: tensor<2x10x64xf32>, %k: tensor<2x500x64xf32>) -> tensor<2x10x64xf32> {
  %o = attn.sdpa %q, %k, %k causal(bottom_right) : tensor<2x10x64xf32>, tensor<2x500x64xf32>, tensor<2x500x64xf32> -> tensor<2x10x64xf32>
  return %o : tensor<2x10x64xf32>
}

// A result whose head dim is dynamic (the verifier allows it) is allocated
// with V's static head dim, not Q's.
// CHECK-LABEL: func.func @dynamic_result_dim(
// CHECK: %[[DV:.*]] = arith.constant 32 : index
// CHECK: memref.alloc(%[[DV]]) {alignment = 64 : i64} : memref<1x2x64x?xf32>
func.func @dynamic_result_dim(%q: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x32xf32>) -> tensor<1x2x64x?xf32> {
  %o = attn.sdpa %q, %q, %v : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x32xf32> -> tensor<1x2x64x?xf32>
  return %o : tensor<1x2x64x?xf32>
}

// A result the function reads back (here in an elementwise add) is written
// with ordinary stores: streaming stores would send its lines to memory just
// before they are read. streaming-stores=false does the same everywhere.
// CHECK-LABEL: func.func @consumed(
// CHECK: arith.divf
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 64 : i64} : memref<1x2x64x64xf32>, vector<16xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<1x2x64x64xf32>
// NOSTREAM-NOT: nontemporal
// NOSTREAM: vector.store %{{.*}}, %{{.*}}[%{{.*}}] {alignment = 64 : i64} : memref<1x12x1024x64xf32>, vector<16xf32>
// NOSTREAM-NOT: nontemporal
func.func @consumed(%q: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  %r = arith.addf %o, %o : tensor<1x2x64x64xf32>
  return %r : tensor<1x2x64x64xf32>
}

// Explicit masks. Key padding ([B, 1, 1, Tk], the same for every query
// row): one i1 per key, loaded once per key of a score tile, selects the
// whole score vector (-inf where the key is hidden) before the block max.
// An f32 additive mask that varies along the query rows and is read by one
// item per row block ([B, H, Tq, Tk]) is read per key block into Mt [Bc,
// Br] (16 rows of 16 keys per masked load, the last chunk of K masked,
// transposed in registers like Qt; each line loaded prefetches the same
// rows' line of the next key block) and added to the score vectors.
func.func @masked(%q: tensor<2x4x64x64xf32>, %pad: tensor<2x1x1x64xi1>, %bias: tensor<2x4x64x64xf32>)
    -> (tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>) {
  %a = attn.sdpa %q, %q, %q mask(%pad : attend_where_true) causal(top_left) : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x1x1x64xi1> -> tensor<2x4x64x64xf32>
  %b = attn.sdpa %q, %q, %q mask(%bias : additive) : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32> -> tensor<2x4x64x64xf32>
  return %a, %b : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>
}
// CHECK-LABEL: func.func @masked(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x64x64xf32>, %[[PAD:.*]]: tensor<2x1x1x64xi1>, %[[BIAS:.*]]: tensor<2x4x64x64xf32>)
// CHECK-NOT: attn.sdpa
// CHECK: %[[PADM:.*]] = bufferization.to_buffer %[[PAD]] read_only : tensor<2x1x1x64xi1> to memref<2x1x1x64xi1, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: scf.forall (%{{.*}}) in
// CHECK: scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK: %[[REST:.*]] = arith.divui %[[ITEM]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.divui %[[REST]], %c4 : index
// CHECK: %[[KP:.*]] = memref.load %[[PADM]][%[[B]], %c0, %c0, %{{.*}}] : memref<2x1x1x64xi1, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: %[[S:.*]] = arith.select %[[KP]], %{{.*}}#0, %cst{{.*}} : vector<16xf32>
// CHECK: arith.cmpf ogt, %[[S]], %{{.*}} : vector<16xf32>
// CHECK: %[[BIASM:.*]] = bufferization.to_buffer %[[BIAS]] read_only : tensor<2x4x64x64xf32> to memref<2x4x64x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: scf.forall (%{{.*}}) in
// CHECK: memref.view %{{.*}}[%c16384][] : memref<98560xi8> to memref<128x64xf32>
// CHECK: %[[MT:.*]] = memref.view %{{.*}}[%c49152][] : memref<98560xi8> to memref<128x64xf32>
// CHECK: scf.for %[[ITEM2:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK: %[[REST2:.*]] = arith.divui %[[ITEM2]], %{{.*}} : index
// CHECK: %[[H2:.*]] = arith.remui %[[REST2]], %c4 : index
// CHECK: %[[B2:.*]] = arith.divui %[[REST2]], %c4 : index
// CHECK: %[[INK:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: vector.maskedload %[[BIASM]][%[[B2]], %[[H2]], %{{.*}}, %{{.*}}], %[[INK]], %{{.*}} : memref<2x4x64x64xf32, strided<[?, ?, ?, 1], offset: ?>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: memref.prefetch %[[BIASM]][%[[B2]], %[[H2]], %{{.*}}, %{{.*}}], read, locality<3>, data : memref<2x4x64x64xf32, strided<[?, ?, ?, 1], offset: ?>>
// CHECK-COUNT-32: vector.shuffle
// CHECK: vector.store %{{.*}}, %[[MT]][%{{.*}}, %{{.*}}] : memref<128x64xf32>, vector<16xf32>
// CHECK: %[[MV:.*]] = vector.load %[[MT]][%{{.*}}, %c0] : memref<128x64xf32>, vector<16xf32>
// CHECK: %[[SB:.*]] = arith.addf %{{.*}}#0, %[[MV]] : vector<16xf32>
// CHECK: arith.cmpf ogt, %[[SB]], %{{.*}} : vector<16xf32>

// A varying mask that several items share (broadcast over batches or
// heads: here [H, Tq, Tk] over B = 2), and any i1 one, is transposed once
// per call into MtAll [.., Tq / Br, Tk, Br]: each item's panel of Tk keys
// x Br rows is contiguous, so the tiles load the mask vector of 16 rows
// for a key straight from it (row block, key, lane offset), without Mt or
// per-block transposes. An f32 mask is read by masked vector loads, an i1
// one 16 bytes at a time through the buffer's address (a vector load of i1
// would read bits; element by element in the last 16 keys when Tk is not a
// multiple of 16). The i1 mask's MtAll holds bytes, 1 where the key is
// hidden (masked_where_true: where the bit is set), a quarter of f32's
// memory; the tiles load 16 of them per score vector, compare with 0 and
// select -inf, so that a hidden +inf or NaN score still weighs 0.
func.func @masked_shared(%q: tensor<2x4x64x64xf32>, %shared: tensor<4x64x64xf32>, %hide: tensor<64x64xi1>)
    -> (tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>) {
  %a = attn.sdpa %q, %q, %q mask(%shared : additive) : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<4x64x64xf32> -> tensor<2x4x64x64xf32>
  %b = attn.sdpa %q, %q, %q mask(%hide : masked_where_true) : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<64x64xi1> -> tensor<2x4x64x64xf32>
  return %a, %b : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>
}
// CHECK-LABEL: func.func @masked_shared(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x64x64xf32>, %[[SHARED:.*]]: tensor<4x64x64xf32>, %[[HIDE:.*]]: tensor<64x64xi1>)
// CHECK: %[[SM:.*]] = bufferization.to_buffer %[[SHARED]] read_only : tensor<4x64x64xf32> to memref<4x64x64xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: %[[ALL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x1x64x64xf32>
// CHECK: scf.forall (%[[TH:.*]], %[[TR:.*]], %[[TK:.*]]) in (%c4, %{{.*}}, %{{.*}}) {
// CHECK: vector.maskedload %[[SM]][%[[TH]], %{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<4x64x64xf32, strided<[?, ?, 1], offset: ?>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK: vector.store %{{.*}}, %[[ALL]][%[[TH]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<4x1x64x64xf32>, vector<16xf32>
// CHECK: scf.forall (%{{.*}}) in
// CHECK: memref.view %{{.*}}[%c16384][] : memref<65792xi8> to memref<128x64xf32>
// CHECK-NOT: to memref<128x64xf32>
// CHECK: memref.view %{{.*}}[%c49152][] : memref<65792xi8> to memref<64x64xf32>
// CHECK: scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK: %[[QB:.*]] = arith.remui %[[ITEM]], %{{.*}} : index
// CHECK: %[[REST:.*]] = arith.divui %[[ITEM]], %{{.*}} : index
// CHECK: %[[H:.*]] = arith.remui %[[REST]], %c4 : index
// CHECK: %[[MV:.*]] = vector.load %[[ALL]][%[[H]], %[[QB]], %{{.*}}, %c0] : memref<4x1x64x64xf32>, vector<16xf32>
// CHECK: %[[SB:.*]] = arith.addf %{{.*}}#0, %[[MV]] : vector<16xf32>
// CHECK: arith.cmpf ogt, %[[SB]], %{{.*}} : vector<16xf32>
// CHECK: %[[HM:.*]] = bufferization.to_buffer %[[HIDE]] read_only : tensor<64x64xi1> to memref<64x64xi1, strided<[?, 1], offset: ?>>
// CHECK: %[[ALLB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x64x64xi8>
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[HM]]
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[HM]]
// CHECK: %[[PTR64:.*]] = arith.index_cast %[[PTR]] : index to i64
// CHECK: scf.forall
// CHECK: %[[WHOLE:.*]] = arith.cmpi ule, %{{.*}}, %c64 : index
// CHECK: %[[ROWS:.*]]:16 = scf.if %[[WHOLE]] -> (vector<16xi1>
// CHECK: arith.muli %{{.*}}, %[[STRIDES]]#0 : index
// CHECK: %[[ROWOFF:.*]] = arith.addi %[[OFF]], %{{.*}} : index
// CHECK: arith.muli %{{.*}}, %[[STRIDES]]#1 : index
// CHECK: %[[EL:.*]] = arith.addi %[[ROWOFF]], %{{.*}} : index
// CHECK: %[[EL64:.*]] = arith.index_cast %[[EL]] : index to i64
// CHECK: %[[ADDR:.*]] = arith.addi %[[PTR64]], %[[EL64]] : i64
// CHECK: %[[P:.*]] = llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr
// CHECK: %[[BYTES:.*]] = llvm.load %[[P]] {alignment = 1 : i64} : !llvm.ptr -> vector<16xi8>
// CHECK: arith.cmpi ne, %[[BYTES]], %{{.*}} : vector<16xi8>
// CHECK-COUNT-15: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> vector<16xi8>
// CHECK: } else {
// CHECK-COUNT-16: memref.load %[[HM]]
// CHECK: vector.from_elements %{{.*}} : vector<16xi1>
// CHECK: arith.select %[[ROWS]]#0, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xi8>
// CHECK-COUNT-64: vector.shuffle %{{.*}}, %{{.*}} {{\[}}{{.*}}] : vector<16xi8>, vector<16xi8>
// CHECK-COUNT-16: vector.store %{{.*}}, %[[ALLB]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<1x64x64xi8>, vector<16xi8>
// CHECK: scf.forall (%{{.*}}) in
// CHECK: scf.for %[[ITEM2:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK: %[[QB2:.*]] = arith.remui %[[ITEM2]], %{{.*}} : index
// CHECK: %[[M:.*]] = vector.load %[[ALLB]][%[[QB2]], %{{.*}}, %c0] : memref<1x64x64xi8>, vector<16xi8>
// CHECK: %[[HID:.*]] = arith.cmpi ne, %[[M]], %{{.*}} : vector<16xi8>
// CHECK: arith.select %[[HID]], %{{.*}}, %{{.*}}#0 : vector<16xi1>, vector<16xf32>

// With mask-copy-limit-mib=0 (a shared f32 mask larger than the limit:
// 64 KiB rounds up to 1 MiB) the shared mask gets no transposed copy: each
// item transposes its key block into Mt as for a mask of its own (a
// second view of the worker's scratch), reading the mask through its
// broadcast (the head index only). The i1 mask still gets its byte panels.
// NOCOPY-LABEL: func.func @masked_shared(
// NOCOPY: %[[SM:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<4x64x64xf32> to memref<4x64x64xf32, strided<[?, ?, 1], offset: ?>>
// NOCOPY-NOT: memref<4x1x64x64xf32>
// NOCOPY: memref.view %{{.*}}[%c16384][] : memref<98560xi8> to memref<128x64xf32>
// NOCOPY: %[[MT:.*]] = memref.view %{{.*}}[%c49152][] : memref<98560xi8> to memref<128x64xf32>
// NOCOPY: vector.maskedload %[[SM]][%{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : memref<4x64x64xf32, strided<[?, ?, 1], offset: ?>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// NOCOPY: memref.prefetch %[[SM]]
// NOCOPY: vector.store %{{.*}}, %[[MT]][%{{.*}}, %{{.*}}] : memref<128x64xf32>, vector<16xf32>
// NOCOPY: memref.alloc() {alignment = 64 : i64} : memref<1x64x64xi8>
// NOCOPY-LABEL: func.func @masked_bf16(

// A bf16 core's additive mask is bf16: transposed once per call into MtAll
// as its 16 bits (i16 panels, half of an f32 copy), 16 keys of a row with one
// vector load of bf16 viewed as i16 (the last 16 keys, when Tk is not a
// multiple of 16, as scalars: a masked vector load of bf16 needs f32 -> bf16
// truncations on CPUs without avx512_bf16), then widened where the tile
// adds it to the scores: the bits shifted into the high half of an f32.
// BF16-LABEL: func.func @masked_bf16(
// BF16: %[[BM:.*]] = bufferization.to_buffer %arg1 read_only : tensor<2x64x64xbf16> to memref<2x64x64xbf16, strided<[?, ?, 1], offset: ?>>
// BF16: %[[ALL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x1x64x64xi16>
// BF16: scf.forall
// BF16: %[[WHOLE:.*]] = arith.cmpi ule, %{{.*}}, %{{.*}} : index
// BF16: scf.if %[[WHOLE]] -> (vector<16xi16>,
// BF16: %[[ROW:.*]] = vector.load %[[BM]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x64x64xbf16, strided<[?, ?, 1], offset: ?>>, vector<16xbf16>
// BF16: arith.bitcast %[[ROW]] : vector<16xbf16> to vector<16xi16>
// BF16: } else {
// BF16: %[[E:.*]] = memref.load %[[BM]]
// BF16: arith.bitcast %[[E]] : bf16 to i16
// BF16: vector.from_elements %{{.*}} : vector<16xi16>
// BF16: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23] : vector<16xi16>, vector<16xi16>
// BF16: vector.store %{{.*}}, %[[ALL]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x1x64x64xi16>, vector<16xi16>
// BF16: scf.forall
// BF16: x86vector.avx512.dot
// BF16: %[[BITS:.*]] = vector.load %[[ALL]][%{{.*}}, %{{.*}}, %{{.*}}, %c0] : memref<2x1x64x64xi16>, vector<16xi16>
// BF16: %[[WIDE:.*]] = arith.extui %[[BITS]] : vector<16xi16> to vector<16xi32>
// BF16: %[[HIGH:.*]] = arith.shli %[[WIDE]], %{{.*}} : vector<16xi32>
// BF16: %[[M:.*]] = arith.bitcast %[[HIGH]] : vector<16xi32> to vector<16xf32>
// BF16: arith.addf %{{.*}}, %[[M]] : vector<16xf32>
func.func @masked_bf16(%q: tensor<2x64x64xbf16>, %bias: tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16> {
  %o = attn.sdpa %q, %q, %q mask(%bias : additive) : tensor<2x64x64xbf16>, tensor<2x64x64xbf16>, tensor<2x64x64xbf16>, tensor<2x64x64xbf16> -> tensor<2x64x64xbf16>
  return %o : tensor<2x64x64xbf16>
}

// Masks broadcast along the keys (last dim 1: one value per query row,
// [B, 1, Tq, 1]) are widened once per call to f32 rows without the key dim
// (0 / -inf for i1, a linalg.generic reading index 0 of the unit dim), and
// each work item loads one vector per 16 of its rows (rows past Tq read 0)
// before its key loop; every score vector of those rows then takes the
// same vector. An additive one is added. A rank-0 mask is one value for
// every score, loaded like a key-padding value.
// CHECK-LABEL: func.func @masked_rows(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x64x64xf32>, %[[ROWS:.*]]: tensor<2x1x64x1xi1>, %[[RBIAS:.*]]: tensor<64x1xf32>, %[[ALL:.*]]: tensor<i1>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], {{.*}} ins(%[[ROWS]] : tensor<2x1x64x1xi1>) outs(%{{.*}} : tensor<2x1x64xf32>)
// CHECK: arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
// CHECK: %[[RM:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<2x1x64xf32> to memref<2x1x64xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: scf.forall (%{{.*}}) in
// CHECK: scf.for %[[ITEM:.*]] = %{{.*}} to %{{.*}} step %c1 {
// CHECK: %[[REST:.*]] = arith.divui %[[ITEM]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.divui %[[REST]], %c4 : index
// CHECK: %[[INQ:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: %[[RV:.*]] = vector.maskedload %[[RM]][%[[B]], %c0{{.*}}, %{{.*}}], %[[INQ]], %{{.*}} : memref<2x1x64xf32, strided<[?, ?, 1], offset: ?>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: scf.for
// CHECK: %[[RH:.*]] = arith.cmpf oeq, %[[RV]], %{{.*}} : vector<16xf32>
// CHECK: arith.select %[[RH]], %{{.*}}, %{{.*}}#0 : vector<16xi1>, vector<16xf32>
// CHECK: linalg.generic {{.*}} ins(%[[RBIAS]] : tensor<64x1xf32>) outs(%{{.*}} : tensor<64xf32>)
// CHECK: scf.forall
// CHECK: %[[BV:.*]] = vector.maskedload %{{.*}} : memref<64xf32, strided<[1], offset: ?>>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: scf.for
// CHECK: arith.addf %{{.*}}#0, %[[BV]] : vector<16xf32>
// CHECK: %[[ALLM:.*]] = bufferization.to_buffer %[[ALL]] read_only : tensor<i1> to memref<i1, strided<[], offset: ?>>
// CHECK: scf.forall
// CHECK: %[[AV:.*]] = memref.load %[[ALLM]][] : memref<i1, strided<[], offset: ?>>
// CHECK: arith.select %[[AV]], %{{.*}}, %{{.*}}#0 : vector<16xf32>
// CHECK-NOT: attn.sdpa
func.func @masked_rows(%q: tensor<2x4x64x64xf32>, %rows: tensor<2x1x64x1xi1>, %rbias: tensor<64x1xf32>, %all: tensor<i1>)
    -> (tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>) {
  %a = attn.sdpa %q, %q, %q mask(%rows : attend_where_true) : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x1x64x1xi1> -> tensor<2x4x64x64xf32>
  %b = attn.sdpa %q, %q, %q mask(%rbias : additive) causal(top_left) : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<64x1xf32> -> tensor<2x4x64x64xf32>
  %c = attn.sdpa %q, %q, %q mask(%all : masked_where_true) : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<i1> -> tensor<2x4x64x64xf32>
  return %a, %b, %c : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>
}

// A causal sliding window of 256 keys (window_left = 255) with soft-capped
// scores. The item's rows (diagonal keys first .. first + 63) may see keys
// [first - 255, kEnd), and all of them keys [first + 63 - 255, first + 1):
// the blocks [b0, b1) on the window's left edge and [b2, b3) on the diagonal
// take the lane predicate (left edge: lane <= key - row0 + 255), the blocks
// [b1, b2) between them do not, and blocks left of b0 are never visited.
// Every score is capped, 30 tanh(s / 30), before the predicate and the max.
// CHECK-LABEL: func.func @window(
// CHECK: scf.forall
// CHECK: scf.forall
// CHECK: %[[LAST:.*]] = arith.addi %[[FIRST:.*]], %c63 : index
// CHECK: %[[B3:.*]] = arith.ceildivui %{{.*}}, %c128 : index
// CHECK: arith.addi %[[FIRST]], %c-255 : index
// CHECK: arith.addi %[[LAST]], %c-255 : index
// CHECK: %[[B0:.*]] = arith.minsi %{{.*}}, %[[B3]] : index
// CHECK: %[[B1:.*]] = arith.minsi %{{.*}}, %[[B3]] : index
// CHECK: %[[B2:.*]] = arith.minsi %{{.*}}, %[[B3]] : index
// CHECK: scf.for %{{.*}} = %[[B0]] to %[[B1]] step %c1 iter_args
// CHECK: %[[INV:.*]] = arith.constant dense<0.0333333351> : vector<16xf32>
// CHECK: %[[X:.*]] = arith.mulf %{{.*}}, %[[INV]] : vector<16xf32>
// CHECK: %[[T:.*]] = math.tanh %[[X]] : vector<16xf32>
// CHECK: %[[CAP:.*]] = arith.constant dense<3.000000e+01> : vector<16xf32>
// CHECK: %[[S:.*]] = arith.mulf %[[T]], %[[CAP]] : vector<16xf32>
// CHECK: %[[FROM:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: %[[TO:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: %[[SEES:.*]] = arith.andi %[[FROM]], %[[TO]] : vector<16xi1>
// CHECK: arith.select %[[SEES]], %[[S]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: scf.for %{{.*}} = %[[B1]] to %[[B2]] step %c1 iter_args
// CHECK: math.tanh
// CHECK-NOT: arith.cmpi sle
// CHECK: scf.for %{{.*}} = %[[B2]] to %[[B3]] step %c1 iter_args
// CHECK: math.tanh
// CHECK: arith.andi
// CHECK-NOT: attn.sdpa
func.func @window(%q: tensor<1x2x512x64xf32>, %k: tensor<1x2x512x64xf32>, %v: tensor<1x2x512x64xf32>) -> tensor<1x2x512x64xf32> {
  %0 = attn.sdpa %q, %k, %v causal(top_left) {window_left = 255 : i64, softcap = 30.0 : f32} : tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32> -> tensor<1x2x512x64xf32>
  return %0 : tensor<1x2x512x64xf32>
}

// Dropout: each weight that reaches V is kept (times 1 / (1 - 0.25)) iff
// the Philox-4x32-10 number of its flat index in [B, Hq, Tq, Tk] is >= 0.25,
// after the row sum took it. Lane l of row vector i at key j has the counter
// ((b Hq + h) Tq + q0) Tk + (16 i + l) Tk + j; the generator's 32-bit words
// live in i64 lanes, each product one i64 multiply of operands masked to 32
// bits (vpmuludq).
// CHECK-LABEL: func.func @dropout(
// CHECK: scf.forall
// CHECK: %[[LANES:.*]] = arith.extsi %{{.*}} : vector<16xi32> to vector<16xi64>
// CHECK: %[[STRIDE:.*]] = arith.muli %[[LANES]], %{{.*}} : vector<16xi64>
// CHECK: %[[SUM:.*]] = arith.addf %arg{{[0-9]+}}, %[[P:.*]] : vector<16xf32>
// CHECK-NEXT: arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[FIRST:.*]] = vector.broadcast %{{.*}} : i64 to vector<16xi64>
// CHECK: %[[CTR:.*]] = arith.addi %[[FIRST]], %[[STRIDE]] : vector<16xi64>
// CHECK: %[[LOW32:.*]] = arith.constant dense<4294967295> : vector<16xi64>
// CHECK: %[[SH32:.*]] = arith.constant dense<32> : vector<16xi64>
// CHECK: arith.shrui %[[CTR]], %[[SH32]] : vector<16xi64>
// CHECK: %[[C0:.*]] = arith.andi %[[CTR]], %[[LOW32]] : vector<16xi64>
// CHECK: %[[M0:.*]] = arith.constant dense<3528531795> : vector<16xi64>
// CHECK: arith.muli %[[M0]], %[[C0]] : vector<16xi64>
// CHECK-COUNT-19: arith.muli %{{.*}} : vector<16xi64>
// CHECK: %[[U:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: %[[PDROP:.*]] = arith.constant dense<2.500000e-01> : vector<16xf32>
// CHECK: %[[KEEP:.*]] = arith.cmpf oge, %[[U]], %[[PDROP]] : vector<16xf32>
// CHECK: %[[INV:.*]] = arith.constant dense<1.33333337> : vector<16xf32>
// CHECK: %[[KEPT:.*]] = arith.mulf %[[P]], %[[INV]] : vector<16xf32>
// CHECK: %[[W:.*]] = arith.select %[[KEEP]], %[[KEPT]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.store %[[W]], %{{.*}} : memref<128x64xf32>, vector<16xf32>
// (The bf16 op needs bf16-dot or bf16-widen.)
// CHECK: attn.sdpa {{.*}} -> tensor<2x4x64x64xbf16>
// bf16 with dot products: the row sums take the pairs of every weight, P V
// those of the kept ones; widened, it is the f32 loop nest above.
// BF16-LABEL: func.func @dropout(
// BF16-NOT: attn.sdpa
// BF16: %[[ALL:.*]] = x86vector.avx512.cvt.packed.f32_to_bf16
// BF16: x86vector.avx512.dot %{{.*}}, %{{.*}}, %{{.*}} : vector<32xbf16> -> vector<16xf32>
// BF16: arith.cmpf oge
// BF16: arith.cmpf oge
// BF16: x86vector.avx512.cvt.packed.f32_to_bf16
// BF16: vector.store %{{.*}} : memref<{{.*}}xbf16>, vector<32xbf16>
// WIDEN-LABEL: func.func @dropout(
// WIDEN-NOT: attn.sdpa
// WIDEN: arith.cmpf oge
func.func @dropout(%q: tensor<2x4x64x64xf32>, %h: tensor<2x4x64x64xbf16>) -> (tensor<2x4x64x64xf32>, tensor<2x4x64x64xbf16>) {
  %0 = attn.sdpa %q, %q, %q causal(top_left) {dropout_p = 0.25 : f32, seed = 7 : i64} : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32> -> tensor<2x4x64x64xf32>
  %1 = attn.sdpa %h, %h, %h causal(top_left) {dropout_p = 0.25 : f32, seed = 7 : i64} : tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16> -> tensor<2x4x64x64xbf16>
  return %0, %1 : tensor<2x4x64x64xf32>, tensor<2x4x64x64xbf16>
}

// What the pass leaves to attn-fuse-softmax: other element types, head
// dims that are not multiples of 16, decode steps (static Tq < 8). (Empty
// dims are refused by the verifier.)
// CHECK-LABEL: func.func @untouched(
// CHECK-NOT: scf.forall
// CHECK-COUNT-3: attn.sdpa
func.func @untouched(%h: tensor<2x16x64xf16>, %q: tensor<2x16x64xf32>, %r: tensor<2x16x20xf32>, %one: tensor<2x1x64xf32>)
    -> (tensor<2x16x64xf16>, tensor<2x16x20xf32>, tensor<2x1x64xf32>) {
  %c = attn.sdpa %h, %h, %h : tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16> -> tensor<2x16x64xf16>
  %d = attn.sdpa %r, %r, %r : tensor<2x16x20xf32>, tensor<2x16x20xf32>, tensor<2x16x20xf32> -> tensor<2x16x20xf32>
  %e = attn.sdpa %one, %q, %q causal(bottom_right) : tensor<2x1x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32> -> tensor<2x1x64xf32>
  return %c, %d, %e : tensor<2x16x64xf16>, tensor<2x16x20xf32>, tensor<2x1x64xf32>
}

// bf16 with bf16-dot (CPUs with avx512_bf16): V is packed once with key
// pairs interleaved ([B, Hk, ceil(Tk / 2), 2 dv]; the odd last key pairs with
// zeros), each item packs Q^T in pairs along d, the scores are vdpbf16ps dot
// products of a broadcast K pair with 16 rows of Q pairs, P is stored in key
// pairs too, P V is a dot product per key pair, the softmax and the
// accumulators stay f32 and the output is rounded to bf16. With bf16-widen
// instead (the pipeline's choice without avx512_bf16) it is the f32 loop
// nest: Q rows, K elements and V rows are loaded as bf16 and widened to f32
// (no pairs, no dot products), and the output is rounded to bf16. Without
// either option the op is left to attn-fuse-softmax.
// CHECK-LABEL: func.func @bf16(
// CHECK: attn.sdpa
// BF16-LABEL: func.func @bf16(
// BF16: %[[VP:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) {alignment = 64 : i64} : memref<?x?x?x128xbf16>
// BF16: scf.forall
// BF16: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xbf16>
// BF16: vector.interleave %{{.*}}, %{{.*}} : vector<16xbf16> -> vector<32xbf16>
// BF16: vector.store %{{.*}}, %[[VP]]
// BF16: scf.forall
// BF16: %[[SCRATCH:.*]] = memref.alloc() {alignment = 64 : i64} : memref<73984xi8>
// BF16: %[[QP:.*]] = memref.view %[[SCRATCH]][%c0][] : memref<73984xi8> to memref<32x128xbf16>
// BF16: %[[PP:.*]] = memref.view %[[SCRATCH]][%c8192][] : memref<73984xi8> to memref<64x128xbf16>
// Q^T pairs: the transposed block's columns c, c + 1 rounded one by one
// (vcvtneps2bf16), then interleaved.
// BF16-COUNT-64: vector.shuffle
// BF16: %[[QC0:.*]] = x86vector.avx512.cvt.packed.f32_to_bf16 %{{.*}} : vector<16xf32> -> vector<16xbf16>
// BF16: %[[QC1:.*]] = x86vector.avx512.cvt.packed.f32_to_bf16 %{{.*}} : vector<16xf32> -> vector<16xbf16>
// BF16: %[[QPAIR:.*]] = vector.interleave %[[QC0]], %[[QC1]] : vector<16xbf16> -> vector<32xbf16>
// BF16: vector.store %[[QPAIR]], %[[QP]]
// BF16: scf.for %{{.*}} = %c0 to %c32{{.*}} step %c1 iter_args
// BF16-COUNT-4: vector.load %[[QP]]
// BF16: vector.load %{{.*}} : memref<2x4x99x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<2xbf16>
// BF16: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// BF16: vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// BF16-COUNT-4: x86vector.avx512.dot
// The rescale factor alpha keeps the degree-5 exp2 polynomial; the weights,
// rounded to bf16 next, take the degree-3 one.
// BF16: %[[C5:.*]] = arith.constant dense<0.00132647273> : vector<16xf32>
// BF16: vector.fma %[[C5]], %{{.*}}, %{{.*}} : vector<16xf32>
// BF16: arith.shli %{{.*}}, %{{.*}} : vector<16xi32>
// P in key pairs: two keys' weights rounded, then interleaved; the row sums
// add the rounded pairs with a dot product against ones.
// BF16: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : vector<32xbf16>
// BF16: %[[C3:.*]] = arith.constant dense<0.0550089106> : vector<16xf32>
// BF16-NOT: vector.fma %[[C5]]
// BF16: vector.fma %[[C3]], %{{.*}}, %{{.*}} : vector<16xf32>
// BF16-NOT: vector.fma %[[C5]]
// BF16: %[[P0:.*]] = x86vector.avx512.cvt.packed.f32_to_bf16 %{{.*}} : vector<16xf32> -> vector<16xbf16>
// BF16: %[[P1:.*]] = x86vector.avx512.cvt.packed.f32_to_bf16 %{{.*}} : vector<16xf32> -> vector<16xbf16>
// BF16: %[[PAIR:.*]] = vector.interleave %[[P0]], %[[P1]] : vector<16xbf16> -> vector<32xbf16>
// BF16: x86vector.avx512.dot %{{.*}}, %[[PAIR]], %[[ONES]] : vector<32xbf16> -> vector<16xf32>
// BF16: vector.store %[[PAIR]], %[[PP]]
// BF16: scf.if
// BF16: vector.load %[[VP]]
// BF16: vector.load %[[PP]]
// BF16: x86vector.avx512.dot
// BF16: } else {
// BF16: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// BF16: arith.select
// BF16: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// The bf16 output rows (128 bytes) take 32-byte aligned streaming stores.
// BF16-NEXT: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 32 : i64, nontemporal = true} : memref<2x4x100x64xbf16>, vector<16xbf16>
// BF16: bufferization.to_tensor %{{.*}} restrict writable : memref<2x4x100x64xbf16> to tensor<2x4x100x64xbf16>
// WIDEN-LABEL: func.func @bf16(
// WIDEN-NOT: x86vector.avx512.dot
// WIDEN: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x100x64xbf16>
// WIDEN: scf.forall
// WIDEN: memref.view %{{.*}}[%c0][] : memref<65792xi8> to memref<64x64xf32>
// WIDEN: vector.load %{{.*}} : memref<2x4x100x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<16xbf16>
// WIDEN-NEXT: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// WIDEN: memref.load %{{.*}} : memref<2x4x99x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// WIDEN-NEXT: arith.extf %{{.*}} : bf16 to f32
// WIDEN-NEXT: vector.broadcast %{{.*}} : f32 to vector<16xf32>
// WIDEN-NEXT: vector.fma %{{.*}} : vector<16xf32>
// WIDEN: vector.load %{{.*}} : memref<2x4x99x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<16xbf16>
// WIDEN-NEXT: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// WIDEN: vector.fma
// WIDEN: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// WIDEN-NEXT: vector.store %{{.*}}, %[[OUT]]
// WIDEN-NOT: x86vector.avx512.dot
// WIDEN: bufferization.to_tensor %[[OUT]] restrict writable : memref<2x4x100x64xbf16> to tensor<2x4x100x64xbf16>
func.func @bf16(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x4x99x64xbf16>) -> tensor<2x4x100x64xbf16> {
  %o = attn.sdpa %q, %k, %k causal(bottom_right) : tensor<2x4x100x64xbf16>, tensor<2x4x99x64xbf16>, tensor<2x4x99x64xbf16> -> tensor<2x4x100x64xbf16>
  return %o : tensor<2x4x100x64xbf16>
}

// f16 (f16-widen; without it the op is left to attn-fuse-softmax): the f32
// loop nest of the widened bf16 form, every operand load widened by
// arith.extf (vcvtph2ps), the output rounded by arith.truncf. An f16
// additive mask is widened to f32 once per call, before the items, and is
// then an f32 mask shared by the heads (transposed once into row panels).
// CHECK-LABEL: func.func @f16(
// CHECK: attn.sdpa
// F16-LABEL: func.func @f16(
// F16-NOT: attn.sdpa
// F16: linalg.generic {{.*}} ins(%arg2 : tensor<1x1x100x99xf16>) outs(%{{.*}} : tensor<1x1x100x99xf32>)
// F16-NEXT: ^bb0(%{{.*}}: f16, %{{.*}}: f32):
// F16-NEXT: arith.extf %{{.*}} : f16 to f32
// F16: scf.forall
// F16: vector.load %{{.*}} : memref<2x4x100x64xf16, strided<[?, ?, ?, 1], offset: ?>>, vector<16xf16>
// F16-NEXT: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// F16: vector.fma
// F16: arith.truncf %{{.*}} : vector<16xf32> to vector<16xf16>
// F16-NEXT: vector.store
// F16-NOT: x86vector
// F16: bufferization.to_tensor %{{.*}} restrict writable : memref<2x4x100x64xf16> to tensor<2x4x100x64xf16>
func.func @f16(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x99x64xf16>, %m: tensor<1x1x100x99xf16>) -> tensor<2x4x100x64xf16> {
  %o = attn.sdpa %q, %k, %k mask(%m : additive) : tensor<2x4x100x64xf16>, tensor<2x4x99x64xf16>, tensor<2x4x99x64xf16>, tensor<1x1x100x99xf16> -> tensor<2x4x100x64xf16>
  return %o : tensor<2x4x100x64xf16>
}
