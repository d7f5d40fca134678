# RUN: %python %s %t | FileCheck %s
#
# TopK through the CPU pipeline against a reference sort in Python (exact:
# values bit for bit, indices equal): largest and smallest, the axis last,
# first and in the middle, K of 1, a few and the whole axis, K = 0, rows
# with many equal values (the lower index first, ONNX's tiebreak), NaN (as
# torch.topk takes it: larger than every number), float32, float16, int32
# and int64, a dynamic dim beside the axis, sorted=0 (sorted anyway),
# opset 9's k attribute, K folded from min(5, x.shape[-1]), K of 256 or
# more (a merge sort of the row) with ties, NaN and odd lengths, and K of
# 256 or more in rows of 16 K elements or more (the candidates past a
# threshold, sorted) with the same hazards. Then the refusals: K larger
# than the axis, a K that is not a constant, a dynamic axis.

import math
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import counting_print, run_model  # noqa: E402

print, failures = counting_print()
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(43)
TYPES = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
         np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}


def reference(x, k, axis, largest):
    """Values and indices of the k best along `axis`, best first, equal
    values by index, NaN above every number."""
    moved = np.moveaxis(x, axis, -1)
    vals = np.empty(moved.shape[:-1] + (k,), x.dtype)
    idxs = np.empty(moved.shape[:-1] + (k,), np.int64)
    for row in np.ndindex(moved.shape[:-1]):
        v = moved[row]

        def key(i):
            nan = isinstance(v[i], np.floating) and math.isnan(v[i])
            # (int64 compared as Python ints: float() merges neighbours
            # above 2**53.)
            num = 0.0 if nan else (int(v[i]) if v.dtype.kind == "i" else float(v[i]))
            return ((0 if nan else 1), -num, i) if largest else ((1 if nan else 0), num, i)
        order = sorted(range(len(v)), key=key)[:k]
        vals[row] = v[order]
        idxs[row] = order
    return np.moveaxis(vals, -1, axis), np.moveaxis(idxs, -1, axis)


def topk_model(path, dtype, dims, k, attrs, opset=13, k_input=True):
    inputs = [helper.make_tensor_value_info("x", TYPES[dtype], dims)]
    inits = []
    names = ["x"]
    if k_input:
        inits.append(helper.make_tensor("k", TensorProto.INT64, [1], [k]))
        names.append("k")
    else:
        attrs = dict(attrs, k=k)
    graph = helper.make_graph(
        [helper.make_node("TopK", names, ["values", "indices"], **attrs)], "g", inputs,
        [helper.make_tensor_value_info("values", TYPES[dtype], None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


def same(got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype.kind == "f":
        bits = {2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
        return np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(
            got[~np.isnan(got)].view(bits), want[~np.isnan(want)].view(bits))
    return np.array_equal(got, want)


ties = rng.integers(-3, 4, (3, 40)).astype(np.float32)
nans = rng.standard_normal((2, 30)).astype(np.float32)
nans[0, [3, 17]] = np.nan
nans[1, :] = np.nan
nans[1, 5] = 1.0
# Long rows: NaN anywhere (a whole block of them in row 1, all but a few
# in row 2); row 0 of signed_zeros is -0 and +0 only.
long_nans = np.where(rng.random((3, 333)) < 0.05, np.nan,
                     rng.standard_normal((3, 333))).astype(np.float32)
long_nans[1, 32:48] = np.nan
long_nans[2, :] = np.nan
long_nans[2, [7, 100, 250]] = [1.0, -2.0, 3.0]
signed_zeros = np.where(rng.random((2, 100)) < 0.5, -0.0, 0.0).astype(np.float32)
signed_zeros[1, ::9] = rng.standard_normal(12).astype(np.float32)
threshold_nans = np.where(rng.random((3, 6000)) < 0.05, np.nan,
                          rng.standard_normal((3, 6000))).astype(np.float32)
threshold_nans[1, 640:704] = np.nan
threshold_nans[2, :] = np.nan
threshold_nans[2, rng.choice(6000, 100, replace=False)] = rng.standard_normal(100)
threshold_zeros = np.where(rng.random((2, 4800)) < 0.5, -0.0, 0.0).astype(np.float32)
threshold_zeros[1, ::50] = rng.standard_normal(96).astype(np.float32)
cases = [
    ("[50] K=5", rng.standard_normal(50).astype(np.float32), 5, {}, None),
    ("[3, 100] K=7 smallest", rng.standard_normal((3, 100)).astype(np.float32), 7,
     {"largest": 0}, None),
    ("[4, 37, 6] axis 1 K=37", rng.standard_normal((4, 37, 6)).astype(np.float32), 37,
     {"axis": 1}, None),
    ("[64, 5] axis 0 K=3 smallest", rng.standard_normal((64, 5)).astype(np.float32), 3,
     {"axis": 0, "largest": 0}, None),
    ("[3, 40] K=1", rng.standard_normal((3, 40)).astype(np.float32), 1, {}, None),
    ("[3, 40] K=0", rng.standard_normal((3, 40)).astype(np.float32), 0, {}, None),
    ("ties K=12", ties, 12, {}, None),
    ("ties K=12 smallest", ties, 12, {"largest": 0}, None),
    ("NaN K=4", nans, 4, {}, None),
    ("NaN K=4 smallest", nans, 4, {"largest": 0}, None),
    ("float16 [5, 64] K=8", rng.standard_normal((5, 64)).astype(np.float16), 8, {}, None),
    ("int32 [6, 50] K=9", rng.integers(-20, 20, (6, 50)).astype(np.int32), 9, {}, None),
    ("int64 [50, 6] axis 0 K=9 smallest", rng.integers(-2**40, 2**40, (50, 6)), 9,
     {"axis": 0, "largest": 0}, None),
    ("[B, 33] B dynamic K=6", rng.standard_normal((5, 33)).astype(np.float32), 6, {},
     ["B", 33]),
    ("[4, 33] sorted=0 K=6", rng.standard_normal((4, 33)).astype(np.float32), 6,
     {"sorted": 0}, None),
    # From K = 256 on, the row is merge-sorted: ties, NaN and odd lengths.
    ("sort ties [2, 600] K=300", rng.integers(-5, 6, (2, 600)).astype(np.float32), 300, {},
     None),
    ("sort NaN [2, 513] K=513 smallest", np.where(rng.random((2, 513)) < 0.05, np.nan,
                                                  rng.standard_normal((2, 513))).astype(np.float32),
     513, {"largest": 0}, None),
    ("sort [1000] K=1000 ascending input", np.arange(1000, dtype=np.float32), 1000, {}, None),
    ("sort [700, 3] axis 0 K=256", rng.standard_normal((700, 3)).astype(np.float32), 256,
     {"axis": 0}, None),
    ("sort int64 [3, 300] K=299 smallest", rng.integers(-10, 10, (3, 300)), 299,
     {"largest": 0}, None),
    # Rows of 4 blocks of 16 and more are scanned block by block, a block
    # passed over when its extreme does not beat the buffer's last entry:
    # a sampling step's logits, ties inside and across blocks, NaN in the
    # blocks (largest and smallest), -0 against +0, integers and float16,
    # lengths with a tail after the last block, and the orders in which
    # every element enters (ascending for largest) or none after the first
    # K (descending).
    ("blocks [2, 50257] K=50", rng.standard_normal((2, 50257)).astype(np.float32), 50, {},
     None),
    ("blocks ties [3, 1000] K=10", rng.integers(-4, 5, (3, 1000)).astype(np.float32), 10,
     {}, None),
    ("blocks ties [3, 1000] K=10 smallest", rng.integers(-4, 5, (3, 1000)).astype(np.float32),
     10, {"largest": 0}, None),
    ("blocks NaN [3, 333] K=20", long_nans, 20, {}, None),
    ("blocks NaN [3, 333] K=20 smallest", long_nans, 20, {"largest": 0}, None),
    ("blocks signed zeros [2, 100] K=7", signed_zeros, 7, {}, None),
    ("blocks signed zeros [2, 100] K=7 smallest", signed_zeros, 7, {"largest": 0}, None),
    ("blocks int64 [2, 1000] K=7 smallest", rng.integers(-2**40, 2**40, (2, 1000)), 7,
     {"largest": 0}, None),
    ("blocks int32 ties [2, 999] K=30", rng.integers(-3, 3, (2, 999)).astype(np.int32), 30,
     {}, None),
    ("blocks float16 [2, 500] K=9", rng.standard_normal((2, 500)).astype(np.float16), 9, {},
     None),
    ("blocks [1000, 70] axis 0 K=3", rng.standard_normal((1000, 70)).astype(np.float32), 3,
     {"axis": 0}, None),
    ("blocks ascending [4096] K=40", np.arange(4096, dtype=np.float32), 40, {}, None),
    ("blocks descending [4096] K=40 smallest", np.arange(4096, dtype=np.float32), 40,
     {"largest": 0}, None),
    ("blocks descending [4096] K=255", np.arange(4096, dtype=np.float32)[::-1].copy(), 255,
     {}, None),
    ("blocks [B, 500] B dynamic K=4", rng.standard_normal((3, 500)).astype(np.float32), 4,
     {}, ["B", 500]),
    # K of 256 or more in a row of 16 K elements or more: the K-th best
    # block extreme is a threshold, the elements that reach it are sorted.
    # A top-p step's logits; ties inside and across blocks (the threshold
    # itself tied many times); NaN, a whole block of it, and a row of NaN
    # but for a few numbers (smallest then needs NaN to fill K); -0
    # against +0; the orders that make every block a candidate (ascending
    # for largest, descending for smallest); K at exactly len / 16;
    # integers, float16, a tail after the last block, a non-last axis and
    # a dynamic dim beside the axis.
    ("threshold [2, 50257] K=1000", rng.standard_normal((2, 50257)).astype(np.float32),
     1000, {}, None),
    ("threshold [2, 50257] K=256 smallest", rng.standard_normal((2, 50257)).astype(np.float32),
     256, {"largest": 0}, None),
    ("threshold ties [3, 8192] K=300", rng.integers(-6, 7, (3, 8192)).astype(np.float32),
     300, {}, None),
    ("threshold ties [3, 8192] K=300 smallest",
     rng.integers(-6, 7, (3, 8192)).astype(np.float32), 300, {"largest": 0}, None),
    ("threshold NaN [3, 6000] K=300", threshold_nans, 300, {}, None),
    ("threshold NaN [3, 6000] K=300 smallest", threshold_nans, 300, {"largest": 0}, None),
    ("threshold signed zeros [2, 4800] K=300", threshold_zeros, 300, {}, None),
    ("threshold signed zeros [2, 4800] K=300 smallest", threshold_zeros, 300,
     {"largest": 0}, None),
    ("threshold ascending [8192] K=500", np.arange(8192, dtype=np.float32), 500, {}, None),
    ("threshold descending [8192] K=500 smallest",
     np.arange(8192, dtype=np.float32)[::-1].copy(), 500, {"largest": 0}, None),
    ("threshold K = len/16 [2, 4096] K=256", rng.standard_normal((2, 4096)).astype(np.float32),
     256, {}, None),
    ("threshold int64 [2, 5000] K=300 smallest", rng.integers(-2**40, 2**40, (2, 5000)),
     300, {"largest": 0}, None),
    ("threshold int32 ties [2, 5000] K=300", rng.integers(-3, 3, (2, 5000)).astype(np.int32),
     300, {}, None),
    ("threshold float16 [2, 4100] K=256", rng.standard_normal((2, 4100)).astype(np.float16),
     256, {}, None),
    ("threshold [5000, 3] axis 0 K=300", rng.standard_normal((5000, 3)).astype(np.float32),
     300, {"axis": 0}, None),
    ("threshold [B, 4800] B dynamic K=300", rng.standard_normal((2, 4800)).astype(np.float32),
     300, {}, ["B", 4800]),
]
for what, x, k, attrs, dims in cases:
    path = os.path.join(work, "topk.onnx")
    topk_model(path, x.dtype.type, dims or list(x.shape), k, attrs)
    got = run_model(work, path, {"x": x}, n_out=2)
    if isinstance(got, str):
        print("FAIL TopK %s: %s" % (what, got))
        continue
    axis = attrs.get("axis", -1)
    want_v, want_i = reference(x, k, axis, attrs.get("largest", 1) != 0)
    ok = same(got[0], want_v) and same(got[1], want_i)
    print("%s TopK %s" % ("ok" if ok else "FAIL", what),
          "" if ok else "got %s %s, want %s %s" % (got[0], got[1], want_v, want_i))
# CHECK: ok TopK [50] K=5
# CHECK: ok TopK [3, 100] K=7 smallest
# CHECK: ok TopK [4, 37, 6] axis 1 K=37
# CHECK: ok TopK [64, 5] axis 0 K=3 smallest
# CHECK: ok TopK [3, 40] K=1
# CHECK: ok TopK [3, 40] K=0
# CHECK: ok TopK ties K=12
# CHECK: ok TopK ties K=12 smallest
# CHECK: ok TopK NaN K=4
# CHECK: ok TopK NaN K=4 smallest
# CHECK: ok TopK float16 [5, 64] K=8
# CHECK: ok TopK int32 [6, 50] K=9
# CHECK: ok TopK int64 [50, 6] axis 0 K=9 smallest
# CHECK: ok TopK [B, 33] B dynamic K=6
# CHECK: ok TopK [4, 33] sorted=0 K=6
# CHECK: ok TopK sort ties [2, 600] K=300
# CHECK: ok TopK sort NaN [2, 513] K=513 smallest
# CHECK: ok TopK sort [1000] K=1000 ascending input
# CHECK: ok TopK sort [700, 3] axis 0 K=256
# CHECK: ok TopK sort int64 [3, 300] K=299 smallest
# CHECK: ok TopK blocks [2, 50257] K=50
# CHECK: ok TopK blocks ties [3, 1000] K=10
# CHECK: ok TopK blocks ties [3, 1000] K=10 smallest
# CHECK: ok TopK blocks NaN [3, 333] K=20
# CHECK: ok TopK blocks NaN [3, 333] K=20 smallest
# CHECK: ok TopK blocks signed zeros [2, 100] K=7
# CHECK: ok TopK blocks signed zeros [2, 100] K=7 smallest
# CHECK: ok TopK blocks int64 [2, 1000] K=7 smallest
# CHECK: ok TopK blocks int32 ties [2, 999] K=30
# CHECK: ok TopK blocks float16 [2, 500] K=9
# CHECK: ok TopK blocks [1000, 70] axis 0 K=3
# CHECK: ok TopK blocks ascending [4096] K=40
# CHECK: ok TopK blocks descending [4096] K=40 smallest
# CHECK: ok TopK blocks descending [4096] K=255
# CHECK: ok TopK blocks [B, 500] B dynamic K=4
# CHECK: ok TopK threshold [2, 50257] K=1000
# CHECK: ok TopK threshold [2, 50257] K=256 smallest
# CHECK: ok TopK threshold ties [3, 8192] K=300
# CHECK: ok TopK threshold ties [3, 8192] K=300 smallest
# CHECK: ok TopK threshold NaN [3, 6000] K=300
# CHECK: ok TopK threshold NaN [3, 6000] K=300 smallest
# CHECK: ok TopK threshold signed zeros [2, 4800] K=300
# CHECK: ok TopK threshold signed zeros [2, 4800] K=300 smallest
# CHECK: ok TopK threshold ascending [8192] K=500
# CHECK: ok TopK threshold descending [8192] K=500 smallest
# CHECK: ok TopK threshold K = len/16 [2, 4096] K=256
# CHECK: ok TopK threshold int64 [2, 5000] K=300 smallest
# CHECK: ok TopK threshold int32 ties [2, 5000] K=300
# CHECK: ok TopK threshold float16 [2, 4100] K=256
# CHECK: ok TopK threshold [5000, 3] axis 0 K=300
# CHECK: ok TopK threshold [B, 4800] B dynamic K=300

# Opset 9: K as the attribute k.
x = rng.standard_normal((3, 20)).astype(np.float32)
path = os.path.join(work, "topk9.onnx")
topk_model(path, np.float32, [3, 20], 4, {}, opset=9, k_input=False)
got = run_model(work, path, {"x": x}, n_out=2)
want_v, want_i = reference(x, 4, -1, True)
ok = not isinstance(got, str) and same(got[0], want_v) and same(got[1], want_i)
print("%s TopK opset 9 attribute k" % ("ok" if ok else "FAIL"), "" if ok else got)
# CHECK: ok TopK opset 9 attribute k

# K as min(5, x.shape[-1]), as torch exports min(top_k, x.size(-1)):
# Shape, Gather and Min of static sizes fold to a constant K.
graph = helper.make_graph(
    [helper.make_node("Shape", ["x"], ["s"]),
     helper.make_node("Gather", ["s", "last"], ["n"], axis=0),
     helper.make_node("Min", ["n", "five"], ["k"]),
     helper.make_node("TopK", ["x", "k"], ["values", "indices"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 20])],
    [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
    [helper.make_tensor("last", TensorProto.INT64, [1], [-1]),
     helper.make_tensor("five", TensorProto.INT64, [1], [5])])
path = os.path.join(work, "topk_min.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
got = run_model(work, path, {"x": x}, n_out=2)
want_v, want_i = reference(x, 5, -1, True)
ok = not isinstance(got, str) and same(got[0], want_v) and same(got[1], want_i)
print("%s TopK K = min(5, x.shape[-1])" % ("ok" if ok else "FAIL"), "" if ok else got)
# CHECK: ok TopK K = min(5, x.shape[-1])

# The same folding of known integers with an empty side: [0] against [1]
# broadcasts to [0] (it read past the empty one).
for op in ("Min", "Max", "Add"):
    graph = helper.make_graph(
        [helper.make_node(op, ["e", "one"], ["y"])], "g", [],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        [helper.make_tensor("e", TensorProto.INT64, [0], []),
         helper.make_tensor("one", TensorProto.INT64, [1], [5])])
    path = os.path.join(work, "empty_known.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    got = run_model(work, path, {})
    ok = not isinstance(got, str) and got[0].shape == (0,)
    print("%s %s of [0] and [1] known integers: %s" % (
        "ok" if ok else "FAIL", op, got if isinstance(got, str) else list(got[0].shape)))
# CHECK: ok Min of [0] and [1] known integers: [0]
# CHECK: ok Max of [0] and [1] known integers: [0]
# CHECK: ok Add of [0] and [1] known integers: [0]

# The imported IR of a [2, 100] row scan: per row (an scf.forall), each
# block's extreme first (a reduction of the row's first 96 elements as
# [6, 16]: the max for largest, the min ignoring NaN for smallest), then a
# loop over the 6 blocks that reads a block only when its extreme enters
# the buffer, then the 4 elements after the last block.
translate = os.path.join(os.path.dirname(os.environ["ATTENTION_RUN"]), "attention-translate")
for largest in (1, 0):
    path = os.path.join(work, "topk_ir.onnx")
    topk_model(path, np.float32, [2, 100], 3, {"largest": largest})
    ir = subprocess.run([translate, "--import-onnx", path], capture_output=True, text=True)
    print("IR largest=%d" % largest)
    print(ir.stdout + ir.stderr)
# CHECK-LABEL: IR largest=1
# CHECK: scf.forall (%[[ROW:.*]]) in (2)
# CHECK: %[[SPAN:.*]] = tensor.extract_slice %arg0[%[[ROW]], 0] [1, 96] [1, 1] : tensor<2x100xf32> to tensor<96xf32>
# CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %[[SPAN]] {{\[}}[0, 1]] output_shape [6, 16]
# CHECK: %[[LOWEST:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6xf32>)
# CHECK: %[[EXTREMES:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[BLOCKS]] : tensor<6x16xf32>) outs(%[[LOWEST]] : tensor<6xf32>)
# CHECK: arith.maximumf
# CHECK: scf.for %[[BLOCK:.*]] = %c0 to %c6
# CHECK: tensor.extract %[[EXTREMES]][%[[BLOCK]]]
# CHECK: arith.cmpf ogt
# CHECK: scf.if
# CHECK: arith.muli %[[BLOCK]], %c16
# CHECK: scf.for %{{.*}} = %c96 to %c100
# CHECK: tensor.parallel_insert_slice
# CHECK-LABEL: IR largest=0
# CHECK: linalg.generic
# CHECK: arith.minnumf
# CHECK: scf.for %{{.*}} = %c0 to %c6
# CHECK: arith.cmpf olt

# The imported IR of the threshold path, [2, 4096] K=256 smallest: per row,
# the extremes of 256 blocks of 16 (minnumf from NaN, so that a block of
# NaN alone keeps NaN), their merge sort (8 passes), the 256th as the
# threshold, a count of the blocks whose extreme the threshold does not
# beat (which sizes the buffers), a loop over the blocks that gathers the
# elements of those blocks, the count of them moving on only for an
# element the threshold does not beat, then ceil(log2(count)) merge passes
# over the gathered elements and the first 256.
path = os.path.join(work, "topk_threshold_ir.onnx")
topk_model(path, np.float32, [2, 4096], 256, {"largest": 0})
ir = subprocess.run([translate, "--import-onnx", path], capture_output=True, text=True)
print("IR threshold")
print(ir.stdout + ir.stderr)
# CHECK-LABEL: IR threshold
# CHECK: scf.forall (%[[TROW:.*]]) in (2)
# CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [256, 16]
# CHECK: %[[TNAN:.*]] = arith.constant 0x7FC00000 : f32
# CHECK: %[[TSTART:.*]] = linalg.fill ins(%[[TNAN]] : f32) outs(%{{.*}} : tensor<256xf32>)
# CHECK: %[[TEXT:.*]] = linalg.generic {{.*}} outs(%[[TSTART]] : tensor<256xf32>)
# CHECK: arith.minnumf
# CHECK: %[[TSORTED:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %c8 step
# CHECK: %[[T:.*]] = tensor.extract %[[TSORTED]]#0[%c255] : tensor<256xf32>
# CHECK: %[[PASSING:.*]] = scf.for %[[PBLK:.*]] = %{{.*}} to %c256{{.*}} iter_args({{.*}}) -> (index)
# CHECK: tensor.extract %[[TEXT]][%[[PBLK]]]
# CHECK: arith.cmpf olt, %[[T]],
# CHECK: %[[ROOM0:.*]] = arith.muli %[[PASSING]], %c16
# CHECK: %[[ROOM:.*]] = arith.addi %[[ROOM0]], %c0
# CHECK: tensor.empty(%[[ROOM]]) : tensor<?xf32>
# CHECK: tensor.empty(%[[ROOM]]) : tensor<?xi64>
# CHECK: %[[GATHERED:.*]]:3 = scf.for %[[TBLK:.*]] = %{{.*}} to %c256{{.*}} iter_args({{.*}}) -> (tensor<?xf32>, tensor<?xi64>, index)
# CHECK: tensor.extract %[[TEXT]][%[[TBLK]]]
# CHECK: arith.cmpf olt, %[[T]],
# CHECK: scf.if
# CHECK: tensor.extract %arg0[%[[TROW]], %{{.*}}] : tensor<2x4096xf32>
# CHECK: tensor.insert
# CHECK: arith.cmpf olt, %[[T]],
# CHECK: arith.index_castui
# CHECK: %[[FOUND:.*]] = tensor.extract_slice %{{.*}}#0[0] [%[[COUNT:.*]]] [1] : tensor<?xf32> to tensor<?xf32>
# CHECK: math.ctlz
# CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[FOUND]], %{{.*}} = %{{.*}}) -> (tensor<?xf32>, tensor<?xi64>)
# CHECK: tensor.empty(%[[COUNT]]) : tensor<?xf32>
# CHECK: tensor.extract_slice %{{.*}}[0] [256] [1] : tensor<?xf32> to tensor<256xf32>
# CHECK: tensor.parallel_insert_slice

# Refusals.
path = os.path.join(work, "refused.onnx")
topk_model(path, np.float32, [3, 20], 21, {})
print("refused K=21 of 20:", run_model(work, path, {"x": x}, n_out=2))
# CHECK: refused K=21 of 20: {{.*}}error: {{.*}}the axis must have a static size of at least K = 21, got 'tensor<3x20xf32>'
topk_model(path, np.float32, [3, "T"], 4, {})
print("refused dynamic axis:", run_model(work, path, {"x": x}, n_out=2))
# CHECK: refused dynamic axis: {{.*}}error: {{.*}}the axis must have a static size of at least K = 4, got 'tensor<3x?xf32>'
graph = helper.make_graph(
    [helper.make_node("TopK", ["x", "k"], ["values", "indices"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 20]),
     helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
    [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("indices", TensorProto.INT64, None)])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
print("refused K as an input:", run_model(work, path, {"x": x, "k": np.array([4])}, n_out=2))
# CHECK: refused K as an input: {{.*}}error: {{.*}}K must be a constant non-negative scalar
print("%d failed" % len(failures))
# CHECK: 0 failed
