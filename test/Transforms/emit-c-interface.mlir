// attn-emit-c-interface marks public functions with bodies only.
// RUN: attention-opt %s -attn-emit-c-interface | FileCheck %s

// CHECK-LABEL: func.func @entry
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @entry(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// CHECK-LABEL: func.func private @helper
// CHECK-NOT: llvm.emit_c_interface
// CHECK: return
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// CHECK: func.func private @external(tensor<4xf32>)
// CHECK-NOT: llvm.emit_c_interface
func.func private @external(tensor<4xf32>)
