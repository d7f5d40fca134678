"""Prints a module whose @main applies x = (x @ w) * x N times (argv[1]) to
64x64 tensors: two parallel regions per step once the CPU pipeline lowers
it (the matmul, then the product), to exercise the function split."""
import sys

steps = int(sys.argv[1])
t = "tensor<64x64xf32>"
print("func.func @main(%%x0: %s, %%w: %s) -> %s {" % (t, t, t))
print("  %zero = arith.constant 0.0 : f32")
for i in range(steps):
    print("  %%e%d = tensor.empty() : %s" % (i, t))
    print("  %%z%d = linalg.fill ins(%%zero : f32) outs(%%e%d : %s) -> %s"
          % (i, i, t, t))
    print("  %%m%d = linalg.matmul ins(%%x%d, %%w : %s, %s) outs(%%z%d : %s)"
          " -> %s" % (i, i, t, t, i, t, t))
    print("  %%x%d = arith.mulf %%m%d, %%x%d : %s" % (i + 1, i, i, t))
print("  return %%x%d : %s" % (steps, t))
print("}")
