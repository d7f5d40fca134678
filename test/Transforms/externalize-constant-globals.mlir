// RUN: attention-opt %s --attn-externalize-constant-globals=min-bytes=16 | FileCheck %s
// RUN: attention-opt %s --attn-externalize-constant-globals=min-bytes=16 | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: attention-opt %s --attn-externalize-constant-globals | FileCheck %s --check-prefix=DEFAULT
// RUN: not attention-opt %s --attn-externalize-constant-globals=min-bytes=-1 2>&1 | FileCheck %s --check-prefix=BAD

// A blob (the ONNX importer's weights, constant packing's panels) and
// inline bytes become declarations of the same name, type and alignment;
// the data moves to attn.external_data, which LLVM's translation ignores.
// CHECK: llvm.mlir.global external constant @blob() {addr_space = 0 : i32, alignment = 64 : i64, attn.external_data = dense_resource<weights> : tensor<16xi8>} : !llvm.array<16 x i8>
// IR: @blob = external constant [16 x i8], align 64
llvm.mlir.global private constant @blob(dense_resource<weights> : tensor<16xi8>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<16 x i8>
// CHECK: llvm.mlir.global external constant @inline() {addr_space = 0 : i32, alignment = 4 : i64, attn.external_data = dense<[0, 0, -128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, -128, 64]> : tensor<16xi8>} : !llvm.array<16 x i8>
// IR: @inline = external constant [16 x i8], align 4
llvm.mlir.global private unnamed_addr constant @inline(dense<[0, 0, -128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, -128, 64]> : tensor<16xi8>) {addr_space = 0 : i32, alignment = 4 : i64} : !llvm.array<16 x i8>

// An internal hidden one too, at default visibility: a hidden declaration
// would be assumed within 2 GiB of the code, which the JIT's heap data need
// not be.
// CHECK: llvm.mlir.global external constant @hidden() {{.*}}attn.external_data = dense<
// IR: @hidden = external constant [16 x i8]{{$}}
llvm.mlir.global internal hidden constant @hidden(dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi8>) {addr_space = 0 : i32} : !llvm.array<16 x i8>

// Uses keep the symbol.
// CHECK-LABEL: llvm.func @load
// CHECK: llvm.mlir.addressof @blob : !llvm.ptr
// IR-LABEL: define float @load
// IR: load float, ptr getelementptr inbounds nuw (i8, ptr @blob, i64 8)
llvm.func @load() -> f32 {
  %p = llvm.mlir.addressof @blob : !llvm.ptr
  %q = llvm.getelementptr %p[2] : (!llvm.ptr) -> !llvm.ptr, f32
  %v = llvm.load %q : !llvm.ptr -> f32
  llvm.return %v : f32
}

// Left alone: a byte array below min-bytes, a splat (LLVM writes it as a
// fill), other element types (attn-byte-constant-globals has not made them
// bytes), a mutable global, a global with an initializer region, and
// globals that are more than the module's own plain data: a public one
// (whose export a shared object would lose), a thread-local one, one in
// its own section and one in another address space.
// CHECK: llvm.mlir.global private constant @small(dense<[1, 2, 3, 4]> : tensor<4xi8>)
llvm.mlir.global private constant @small(dense<[1, 2, 3, 4]> : tensor<4xi8>) {addr_space = 0 : i32} : !llvm.array<4 x i8>
// CHECK: llvm.mlir.global private constant @splat(dense<0> : tensor<32xi8>)
llvm.mlir.global private constant @splat(dense<0> : tensor<32xi8>) {addr_space = 0 : i32} : !llvm.array<32 x i8>
// CHECK: llvm.mlir.global private constant @floats(dense<{{.*}}> : tensor<8xf32>)
llvm.mlir.global private constant @floats(dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>) {addr_space = 0 : i32} : !llvm.array<8 x f32>
// CHECK: llvm.mlir.global private @mutable(dense<{{.*}}> : tensor<16xi8>)
llvm.mlir.global private @mutable(dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi8>) {addr_space = 0 : i32} : !llvm.array<16 x i8>
// CHECK: llvm.mlir.global private constant @region()
llvm.mlir.global private constant @region() {addr_space = 0 : i32} : !llvm.array<16 x i8> {
  %0 = llvm.mlir.constant(dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi8>) : !llvm.array<16 x i8>
  llvm.return %0 : !llvm.array<16 x i8>
}

// CHECK: llvm.mlir.global external constant @public(dense<
llvm.mlir.global external constant @public(dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi8>) {addr_space = 0 : i32} : !llvm.array<16 x i8>
// CHECK: llvm.mlir.global private thread_local constant @tls(dense<
llvm.mlir.global private thread_local constant @tls(dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi8>) {addr_space = 0 : i32} : !llvm.array<16 x i8>
// CHECK: llvm.mlir.global private constant @placed(dense<{{.*}}section = ".attn_test"
llvm.mlir.global private constant @placed(dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi8>) {addr_space = 0 : i32, section = ".attn_test"} : !llvm.array<16 x i8>
// CHECK: llvm.mlir.global private constant @space1(dense<{{.*}}addr_space = 1 : i32
llvm.mlir.global private constant @space1(dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi8>) {addr_space = 1 : i32} : !llvm.array<16 x i8>

// Below the default threshold (65536 bytes), nothing changes.
// DEFAULT: llvm.mlir.global private constant @blob(dense_resource<weights> : tensor<16xi8>)
// DEFAULT: llvm.mlir.global private unnamed_addr constant @inline(dense<

// BAD: error: attn-externalize-constant-globals: min-bytes must be >= 0, got -1

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
