// attn-capture-constant-addresses: inside OpenMP parallel regions, the
// addresses of constant data come from outside, laundered, so that regions
// that differ only in the weights they read outline to identical functions.
// RUN: attention-opt %s --attn-capture-constant-addresses | FileCheck %s
// Translated, the two blocks' regions become functions that read their
// weights from the captured values and name no global.
// RUN: attention-opt %s --attn-capture-constant-addresses | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// LLVM's MergeFunctions then keeps one of them: as attention-run runs it,
// on outlined functions marked unnamed_addr (their addresses only go to
// the OpenMP runtime), both regions fork the same function and the other
// is gone...
// RUN: attention-opt %s --attn-capture-constant-addresses | mlir-translate --mlir-to-llvmir | sed -E 's/^(define internal void @two_blocks\.\.omp_par[^(]*\([^)]*\))/\1 unnamed_addr/' | opt -S -passes=mergefunc | FileCheck %s --check-prefix=JIT
// ...and as opt runs it on functions whose address might matter, the
// other becomes a thunk.
// RUN: attention-opt %s --attn-capture-constant-addresses | mlir-translate --mlir-to-llvmir | opt -S -passes=mergefunc | FileCheck %s --check-prefix=MERGED
// Without the pass, each region names its own weight and nothing merges.
// RUN: mlir-translate --mlir-to-llvmir %s | opt -S -passes=mergefunc | FileCheck %s --check-prefix=UNMERGED

llvm.mlir.global private constant @w1(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
llvm.mlir.global private constant @w2(dense<[5.0, 6.0, 7.0, 8.0]> : tensor<4xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
// Bytes defined outside the module (attn-externalize-constant-globals).
llvm.mlir.global external constant @external() {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<16 x i8>
// Splats stay named: LLVM folds loads from them.
llvm.mlir.global private constant @splat(dense<1.0> : tensor<4xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
// So do mutable globals, thread-local ones (each thread has its own
// address) and those in other address spaces.
llvm.mlir.global private @state(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
llvm.mlir.global private thread_local constant @per_thread(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
llvm.mlir.global private constant @far(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) {addr_space = 1 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>

// Two blocks, one region each, reading their own weight: the addresses
// named inside move out, laundered, one per region and global.
// CHECK-LABEL: llvm.func @two_blocks(
// CHECK-NEXT: %[[A1:.*]] = llvm.mlir.addressof @w1 : !llvm.ptr
// CHECK-NEXT: %[[L1:.*]] = llvm.intr.launder.invariant.group %[[A1]] : !llvm.ptr
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: llvm.getelementptr %[[L1]][0, 1]
// CHECK-NEXT: llvm.load
// CHECK-NEXT: llvm.getelementptr %[[L1]][0, 2]
// CHECK-NOT: llvm.mlir.addressof
// CHECK: omp.terminator
// CHECK-NEXT: }
// CHECK-NEXT: %[[A2:.*]] = llvm.mlir.addressof @w2 : !llvm.ptr
// CHECK-NEXT: %[[L2:.*]] = llvm.intr.launder.invariant.group %[[A2]] : !llvm.ptr
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: llvm.getelementptr %[[L2]][0, 1]
// CHECK-NOT: llvm.mlir.addressof
// CHECK: llvm.return
//
// IR-LABEL: define void @two_blocks(
// IR: call ptr @llvm.launder.invariant.group.p0(ptr @w1)
// IR: call ptr @llvm.launder.invariant.group.p0(ptr @w2)
// IR: define internal void @two_blocks..omp_par
// IR-NOT: @w{{[12]}}
// IR: ret void
// IR: define internal void @two_blocks..omp_par
// IR-NOT: @w{{[12]}}
// IR: ret void
//
// JIT-LABEL: define void @two_blocks(
// JIT: call void {{.*}} @__kmpc_fork_call(ptr @{{[0-9]+}}, i32 1, ptr @two_blocks..omp_par,
// JIT: call void {{.*}} @__kmpc_fork_call(ptr @{{[0-9]+}}, i32 1, ptr @two_blocks..omp_par,
// JIT-NOT: @two_blocks..omp_par.1
//
// MERGED: define internal void @two_blocks..omp_par.1(
// MERGED-NEXT: tail call void @two_blocks..omp_par(
// MERGED-NEXT: ret void
// UNMERGED: define internal void @two_blocks..omp_par.1(
// UNMERGED-NEXT: omp.par.entry
llvm.func @two_blocks(%out: !llvm.ptr) {
  omp.parallel {
    %w = llvm.mlir.addressof @w1 : !llvm.ptr
    %p = llvm.getelementptr %w[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
    %v = llvm.load %p : !llvm.ptr -> f32
    %q = llvm.getelementptr %w[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
    %u = llvm.load %q : !llvm.ptr -> f32
    %s = llvm.fadd %v, %u : f32
    llvm.store %s, %out : f32, !llvm.ptr
    omp.terminator
  }
  omp.parallel {
    %w = llvm.mlir.addressof @w2 : !llvm.ptr
    %p = llvm.getelementptr %w[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
    %v = llvm.load %p : !llvm.ptr -> f32
    %q = llvm.getelementptr %w[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x f32>
    %u = llvm.load %q : !llvm.ptr -> f32
    %s = llvm.fadd %v, %u : f32
    llvm.store %s, %out : f32, !llvm.ptr
    omp.terminator
  }
  llvm.return
}

// An address outside the regions (canonicalization hoists them to the
// entry) is laundered where it is, for all its uses: the offsets built from
// it are then no constant expressions either. A nested region's address
// moves before the outermost one. Splats, mutable, thread-local and
// far globals stay named, outside regions and in them.
// CHECK-LABEL: llvm.func @outside_and_nested(
// CHECK-NEXT: %[[S:.*]] = llvm.mlir.addressof @splat : !llvm.ptr
// CHECK-NEXT: %[[M:.*]] = llvm.mlir.addressof @state : !llvm.ptr
// CHECK-NEXT: %[[E:.*]] = llvm.mlir.addressof @external : !llvm.ptr
// CHECK-NEXT: %[[LE:.*]] = llvm.intr.launder.invariant.group %[[E]] : !llvm.ptr
// CHECK-NEXT: %[[P:.*]] = llvm.getelementptr %[[LE]][4]
// CHECK-NEXT: %[[A1:.*]] = llvm.mlir.addressof @w1 : !llvm.ptr
// CHECK-NEXT: %[[L1:.*]] = llvm.intr.launder.invariant.group %[[A1]] : !llvm.ptr
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: llvm.load %[[P]]
// CHECK-NEXT: llvm.load %[[S]]
// CHECK-NEXT: llvm.load %[[M]]
// CHECK-NEXT: %[[S2:.*]] = llvm.mlir.addressof @splat : !llvm.ptr
// CHECK-NEXT: llvm.load %[[S2]]
// CHECK-NEXT: %[[M2:.*]] = llvm.mlir.addressof @state : !llvm.ptr
// CHECK-NEXT: llvm.load %[[M2]]
// CHECK-NEXT: %[[T:.*]] = llvm.mlir.addressof @per_thread : !llvm.ptr
// CHECK-NEXT: llvm.load %[[T]]
// CHECK-NEXT: %[[F:.*]] = llvm.mlir.addressof @far : !llvm.ptr<1>
// CHECK-NEXT: llvm.load %[[F]]
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: llvm.load %[[L1]]
llvm.func @outside_and_nested(%out: !llvm.ptr) {
  %s = llvm.mlir.addressof @splat : !llvm.ptr
  %m = llvm.mlir.addressof @state : !llvm.ptr
  %e = llvm.mlir.addressof @external : !llvm.ptr
  %p = llvm.getelementptr %e[4] : (!llvm.ptr) -> !llvm.ptr, i8
  omp.parallel {
    %a = llvm.load %p : !llvm.ptr -> f32
    %b = llvm.load %s : !llvm.ptr -> f32
    %c = llvm.load %m : !llvm.ptr -> f32
    %s2 = llvm.mlir.addressof @splat : !llvm.ptr
    %b2 = llvm.load %s2 : !llvm.ptr -> f32
    %m2 = llvm.mlir.addressof @state : !llvm.ptr
    %c2 = llvm.load %m2 : !llvm.ptr -> f32
    %t = llvm.mlir.addressof @per_thread : !llvm.ptr
    %d = llvm.load %t : !llvm.ptr -> f32
    %f = llvm.mlir.addressof @far : !llvm.ptr<1>
    %g = llvm.load %f : !llvm.ptr<1> -> f32
    omp.parallel {
      %w = llvm.mlir.addressof @w1 : !llvm.ptr
      %x = llvm.load %w : !llvm.ptr -> f32
      llvm.store %x, %out : f32, !llvm.ptr
      omp.terminator
    }
    %ab = llvm.fadd %a, %b : f32
    %abc = llvm.fadd %ab, %c : f32
    %b2c2 = llvm.fadd %b2, %c2 : f32
    %dg = llvm.fadd %d, %g : f32
    %all = llvm.fadd %abc, %b2c2 : f32
    %sum = llvm.fadd %all, %dg : f32
    llvm.store %sum, %out : f32, !llvm.ptr
    omp.terminator
  }
  llvm.return
}

// CHECK-LABEL: llvm.func @no_regions(
// CHECK-NEXT: llvm.mlir.addressof @w1 : !llvm.ptr
// CHECK-NEXT: llvm.load
llvm.func @no_regions(%out: !llvm.ptr) {
  %w = llvm.mlir.addressof @w1 : !llvm.ptr
  %v = llvm.load %w : !llvm.ptr -> f32
  llvm.store %v, %out : f32, !llvm.ptr
  llvm.return
}
