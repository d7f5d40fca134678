// RUN: attention-opt %s --attn-split-parallel-functions=regions-per-part=1 --split-input-file | FileCheck %s
// RUN: attention-opt %s --attn-split-parallel-functions=regions-per-part=2 --split-input-file | FileCheck %s --check-prefix=TWO
// RUN: not attention-opt %s --attn-split-parallel-functions=regions-per-part=0 --split-input-file 2>&1 | FileCheck %s --check-prefix=ZERO

// Three regions, one per part: the buffer made in the first part is
// passed on, the argument to the part that uses it, the constants are
// cloned into the parts that use them, and what the function returns
// comes back from the part that made it (with the dealloc after the last
// region).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>)
// CHECK-NEXT: %[[T:.*]] = call @main_part0() : () -> memref<8xf32>
// CHECK-NEXT: call @main_part1(%[[T]]) : (memref<8xf32>) -> ()
// CHECK-NEXT: %[[U:.*]] = call @main_part2(%[[A]], %[[T]]) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
// CHECK-NEXT: return %[[U]] : memref<8xf32>
// CHECK: func.func private @main_part0() -> memref<8xf32> attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 1.000000e+00 : f32
// CHECK: %[[T0:.*]] = memref.alloc() : memref<8xf32>
// CHECK: omp.parallel
// CHECK: return %[[T0]] : memref<8xf32>
// CHECK: func.func private @main_part1(%{{.*}}: memref<8xf32>)
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 2.000000e+00 : f32
// CHECK: omp.parallel
// CHECK: return{{$}}
// CHECK: func.func private @main_part2(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>) -> memref<8xf32>
// CHECK: memref.alloc()
// CHECK: omp.parallel
// CHECK: memref.dealloc
// Two regions a part: the first two regions stay together.
// TWO-LABEL: func.func @main(
// TWO-NEXT: %[[T:.*]] = call @main_part0() : () -> memref<8xf32>
// TWO-NEXT: %[[U:.*]] = call @main_part1(%{{.*}}, %[[T]])
// TWO-NEXT: return %[[U]]
// TWO-NOT: main_part2
// ZERO: error: attn-split-parallel-functions: regions-per-part must be at least 1, got 0
func.func @main(%a: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %t = memref.alloc() : memref<8xf32>
  omp.parallel {
    memref.store %one, %t[%c0] : memref<8xf32>
    omp.terminator
  }
  omp.parallel {
    memref.store %two, %t[%c0] : memref<8xf32>
    omp.terminator
  }
  %u = memref.alloc() : memref<8xf32>
  omp.parallel {
    %x = memref.load %a[%c0] : memref<8xf32>
    %y = memref.load %t[%c0] : memref<8xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %u[%c0] : memref<8xf32>
    omp.terminator
  }
  memref.dealloc %t : memref<8xf32>
  return %u : memref<8xf32>
}

// -----

// Stack memory is not live across a cut: the alloca made before the first
// region is used after the second, so the first cut moves past its last
// use (the load); the third region is the second part.
// CHECK-LABEL: func.func @stack(
// CHECK-NEXT: %[[V:.*]] = call @stack_part0(%{{.*}}) : (memref<8xf32>) -> f32
// CHECK-NEXT: call @stack_part1(%[[V]], %{{.*}}) : (f32, memref<8xf32>) -> ()
// CHECK-NEXT: return %[[V]] : f32
// CHECK: func.func private @stack_part0(
// CHECK: memref.alloca()
// CHECK: omp.parallel
// CHECK: omp.parallel
// CHECK: %[[L:.*]] = memref.load
// CHECK: return %[[L]] : f32
// CHECK: func.func private @stack_part1(
// CHECK: omp.parallel
func.func @stack(%a: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %s = memref.alloca() : memref<8xf32>
  omp.parallel {
    memref.store %one, %s[%c0] : memref<8xf32>
    omp.terminator
  }
  omp.parallel {
    memref.store %one, %a[%c0] : memref<8xf32>
    omp.terminator
  }
  %v = memref.load %s[%c0] : memref<8xf32>
  omp.parallel {
    memref.store %v, %a[%c0] : memref<8xf32>
    omp.terminator
  }
  return %v : f32
}

// -----

// A function with no more regions than a part holds is left alone.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: call
// CHECK: omp.parallel
// CHECK-NOT: func.func private @small_part
func.func @small(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    memref.store %one, %a[%c0] : memref<8xf32>
    omp.terminator
  }
  return
}

// -----

// An address of stack memory, even as an index, is not live across a cut:
// here it is live to the end, so nothing is cut.
// CHECK-LABEL: func.func @escape(
// CHECK-NOT: call
// CHECK: return
// CHECK-NOT: func.func private @escape_part
func.func @escape(%a: memref<8xf32>) -> index {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %s = memref.alloca() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %s : memref<8xf32> -> index
  omp.parallel {
    memref.store %one, %a[%c0] : memref<8xf32>
    omp.terminator
  }
  omp.parallel {
    memref.store %one, %a[%p] : memref<8xf32>
    omp.terminator
  }
  return %p : index
}

// -----

// A global's memref is cloned into each part that reads it, like the
// constants; a part's name that is taken gets another.
memref.global "private" constant @g : memref<8xf32> = dense<1.0>
func.func private @global_part0()
// CHECK-LABEL: func.func @global(
// CHECK-NEXT: call @global_part0_0(%{{.*}}) : (memref<8xf32>) -> ()
// CHECK-NEXT: call @global_part1(%{{.*}}) : (memref<8xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @global_part0_0(%{{.*}}: memref<8xf32>) attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK: memref.get_global @g
// CHECK: omp.parallel
// CHECK: func.func private @global_part1(%{{.*}}: memref<8xf32>) attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK: memref.get_global @g
// CHECK: omp.parallel
func.func @global(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @g : memref<8xf32>
  omp.parallel {
    %x = memref.load %g[%c0] : memref<8xf32>
    memref.store %x, %a[%c0] : memref<8xf32>
    omp.terminator
  }
  omp.parallel {
    %x = memref.load %g[%c0] : memref<8xf32>
    memref.store %x, %a[%c0] : memref<8xf32>
    omp.terminator
  }
  return
}
