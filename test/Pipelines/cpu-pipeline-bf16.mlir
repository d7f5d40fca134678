// f32 <-> bf16 conversions (a bf16 attention core computes in f32 and rounds
// its output to bf16). `bf16-conversions=native` leaves them to LLVM
// (vcvtneps2bf16 with avx512_bf16, a compiler-rt call without it);
// `expand` rewrites them into integer arithmetic that every x86 CPU runs:
// round to nearest even on the bits (add 0x7FFF + the kept lsb, shift by 16),
// and NaN kept a NaN. `auto` (the default) expands on every target CPU,
// those with avx512_bf16 (sapphirerapids) included: native conversions
// kept LLVM's loop vectorizer to narrow vectors on elementwise bf16 loops.
// test/execution runs it on the host.
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='bf16-conversions=native' | FileCheck %s --check-prefix=NATIVE
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='bf16-conversions=expand' | FileCheck %s --check-prefix=EXPAND
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=sapphirerapids' | FileCheck %s --check-prefix=EXPAND
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=sapphirerapids bf16-conversions=native' | FileCheck %s --check-prefix=NATIVE
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v4' | FileCheck %s --check-prefix=EXPAND
// RUN: not attention-opt %s -attn-lower-to-cpu-pipeline='bf16-conversions=fast' 2>&1 | FileCheck %s --check-prefix=BAD

// NATIVE: llvm.func @round_trip(
// NATIVE: llvm.fpext %{{.*}} : bf16 to f32
// NATIVE: llvm.fptrunc %{{.*}} : f32 to bf16

// EXPAND: llvm.func @round_trip(
// EXPAND-NOT: llvm.fptrunc
// EXPAND-NOT: llvm.fpext
// EXPAND-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// EXPAND-DAG: %[[QNAN:.*]] = llvm.mlir.constant(32704 : i16)
// EXPAND-DAG: %[[HALF:.*]] = llvm.mlir.constant(32767 : i32)
// EXPAND-DAG: %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : i32)
// bf16 -> f32: the bits shifted up.
// EXPAND: %[[XW:.*]] = llvm.zext %{{.*}} : i16 to i32
// EXPAND: llvm.shl %[[XW]], %[[SIXTEEN]]
// EXPAND: %[[SUM:.*]] = llvm.fadd
// f32 -> bf16: round to nearest even, NaN -> quiet NaN.
// EXPAND: %[[ISNAN:.*]] = llvm.fcmp "une" %[[SUM]], %[[SUM]]
// EXPAND: %[[BITS:.*]] = llvm.bitcast %[[SUM]] : f32 to i32
// EXPAND: %[[LSB0:.*]] = llvm.lshr %[[BITS]], %[[SIXTEEN]]
// EXPAND: %[[LSB:.*]] = llvm.and %[[LSB0]], %[[ONE]]
// EXPAND: %[[BIAS:.*]] = llvm.add %[[LSB]], %[[HALF]]
// EXPAND: %[[ROUNDED:.*]] = llvm.add %[[BITS]], %[[BIAS]]
// EXPAND: %[[HI:.*]] = llvm.lshr %[[ROUNDED]], %[[SIXTEEN]]
// EXPAND: %[[H16:.*]] = llvm.trunc %[[HI]] : i32 to i16
// EXPAND: %[[SEL:.*]] = llvm.select %[[ISNAN]], %[[QNAN]], %[[H16]]
// EXPAND: llvm.bitcast %[[SEL]] : i16 to bf16
// EXPAND: llvm.return

// BAD: Cannot find option named 'fast'!

func.func @round_trip(%x: bf16, %y: f32) -> bf16 {
  %a = arith.extf %x : bf16 to f32
  %b = arith.addf %a, %y : f32
  %c = arith.truncf %b : f32 to bf16
  return %c : bf16
}

// bf16 arithmetic (an op-by-op bf16 Mul) becomes f32 arithmetic between
// conversions first, which are then expanded like the others: left as a
// bf16 fmul, LLVM promoted it with native conversions of its own (a call
// of __truncsfbf2 on CPUs without avx512_bf16, which the JIT cannot link;
// denormal results flushed on those with it).
// EXPAND-LABEL: llvm.func @product(
// EXPAND-NOT: llvm.fptrunc
// EXPAND-NOT: : bf16 to f32
// EXPAND: %[[P:.*]] = llvm.fmul %{{.*}}, %{{.*}} : f32
// EXPAND-NOT: llvm.fmul %{{.*}} : bf16
// EXPAND: llvm.fcmp "une" %[[P]], %[[P]]
// EXPAND: llvm.return
// NATIVE-LABEL: llvm.func @product(
// NATIVE: llvm.fmul %{{.*}}, %{{.*}} : bf16
func.func @product(%x: bf16, %y: bf16) -> bf16 {
  %p = arith.mulf %x, %y : bf16
  return %p : bf16
}
