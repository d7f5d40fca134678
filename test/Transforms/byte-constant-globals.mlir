// RUN: attention-opt %s --attn-byte-constant-globals=min-bytes=16 | FileCheck %s
// RUN: attention-opt %s --attn-byte-constant-globals=min-bytes=16 | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: attention-opt %s --attn-byte-constant-globals | FileCheck %s --check-prefix=DEFAULT

// Inline dense floats of a nested array: the same 16 bytes as one i8
// array, alignment kept. In LLVM IR they are one byte string: 1.0, 2.0,
// 3.0, 4.0 little-endian.
// CHECK: llvm.mlir.global private constant @inline(dense<[0, 0, -128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, -128, 64]> : tensor<16xi8>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<16 x i8>
// IR: @inline = private constant [16 x i8] c"\00\00\80?\00\00\00@\00\00@@\00\00\80@", align 64
// Below the default threshold (4096 bytes), nothing changes.
// DEFAULT: llvm.mlir.global private constant @inline(dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>) {{.*}} : !llvm.array<2 x array<2 x f32>>
llvm.mlir.global private constant @inline(dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2 x array<2 x f32>>

// A blob (how the ONNX importer and the packing of constant weights hold
// data) is shared under its own name, retyped; the bytes are unchanged.
// CHECK: llvm.mlir.global private constant @blob(dense_resource<weights> : tensor<16xi8>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<16 x i8>
// IR: @blob = private constant [16 x i8] c"\00\00\80?\00\00\00@\00\00@@\00\00\80@", align 64
llvm.mlir.global private constant @blob(dense_resource<weights> : tensor<2x2xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2 x array<2 x f32>>

// bf16 data: two bytes per value.
// CHECK: llvm.mlir.global private constant @bf16(dense<[-128, 63, 0, 64, 64, 64, -128, 64, -96, 64, -64, 64, -32, 64, 0, 65]> : tensor<16xi8>) {{.*}} : !llvm.array<16 x i8>
llvm.mlir.global private constant @bf16(dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xbf16>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<8 x bf16>

// An i8 array's ABI alignment is 1: the element's (4 for f32) is kept when
// the global has none or less.
// CHECK: llvm.mlir.global private constant @unaligned(dense<{{.*}}> : tensor<16xi8>) {addr_space = 0 : i32, alignment = 4 : i64} : !llvm.array<16 x i8>
llvm.mlir.global private constant @unaligned(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
// CHECK: llvm.mlir.global private constant @align2(dense<{{.*}}> : tensor<16xi8>) {addr_space = 0 : i32, alignment = 4 : i64} : !llvm.array<16 x i8>
llvm.mlir.global private constant @align2(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) {addr_space = 0 : i32, alignment = 2 : i64} : !llvm.array<4 x f32>

// Left alone: widths padded in memory (f80 takes 16 bytes, i24 4, but 10
// and 3 in the attribute), a splat (LLVM writes it as a fill), i1 values (bit-packed in
// the attribute, a byte each in memory), a mutable global, one below
// min-bytes, and one with an initializer region.
// CHECK: llvm.mlir.global private constant @f80(dense<{{.*}}> : tensor<2xf80>) {{.*}} : !llvm.array<2 x f80>
llvm.mlir.global private constant @f80(dense<[1.0, 2.0]> : tensor<2xf80>) {addr_space = 0 : i32} : !llvm.array<2 x f80>
// CHECK: llvm.mlir.global private constant @i24(dense<{{.*}}> : tensor<6xi24>) {{.*}} : !llvm.array<6 x i24>
llvm.mlir.global private constant @i24(dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi24>) {addr_space = 0 : i32} : !llvm.array<6 x i24>
// CHECK: llvm.mlir.global private constant @splat(dense<0.000000e+00> : tensor<4x4xf32>) {{.*}} : !llvm.array<4 x array<4 x f32>>
llvm.mlir.global private constant @splat(dense<0.0> : tensor<4x4xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x array<4 x f32>>
// CHECK: llvm.mlir.global private constant @bits(dense<{{.*}}> : tensor<32xi1>) {{.*}} : !llvm.array<32 x i1>
llvm.mlir.global private constant @bits(dense<[true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, true]> : tensor<32xi1>) {addr_space = 0 : i32} : !llvm.array<32 x i1>
// CHECK: llvm.mlir.global private @mutable(dense<{{.*}}> : tensor<2x2xf32>) {{.*}} : !llvm.array<2 x array<2 x f32>>
llvm.mlir.global private @mutable(dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x array<2 x f32>>
// CHECK: llvm.mlir.global private constant @small(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>) {{.*}} : !llvm.array<2 x f32>
llvm.mlir.global private constant @small(dense<[1.0, 2.0]> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
// CHECK: llvm.mlir.global private constant @region() {{.*}} : !llvm.array<4 x f32>
llvm.mlir.global private constant @region() {addr_space = 0 : i32} : !llvm.array<4 x f32> {
  %0 = llvm.mlir.constant(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) : !llvm.array<4 x f32>
  llvm.return %0 : !llvm.array<4 x f32>
}

// A use through the global's address is unchanged: the GEP names its own
// element type.
// CHECK-LABEL: llvm.func @second_row(
// CHECK: %[[ADDR:.*]] = llvm.mlir.addressof @inline : !llvm.ptr
// CHECK: llvm.getelementptr %[[ADDR]][0, 1, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<2 x array<2 x f32>>
llvm.func @second_row() -> !llvm.ptr {
  %0 = llvm.mlir.addressof @inline : !llvm.ptr
  %1 = llvm.getelementptr %0[0, 1, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<2 x array<2 x f32>>
  llvm.return %1 : !llvm.ptr
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
