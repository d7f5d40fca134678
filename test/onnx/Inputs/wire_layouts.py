"""Writes ONNX models whose weights are laid out in the protobuf wire format
the way onnx.save never does, to test that the importer finds each weight's
bytes where protobuf would (python3-onnx, numpy).

usage: wire_layouts.py DIR          writes DIR/wire.onnx, DIR/x.npy,
                                    DIR/bad_size.onnx, DIR/located.onnx
       wire_layouts.py --check DIR  compares DIR/y_*.npy with NumPy

wire.onnx computes Y = X (W1 + W2 + W3 + W4 + W5) + B for X [2, 32], with
the weights [32, 32] (4 KiB; W2 is float16, 2 KiB, and Cast):
  W1  fields in onnx.save's order, its bytes at an offset of 1 mod 8 in
      the file (a doc_string before them sized for it)
  W2  float16, its bytes at 2 mod 8
  W3  fields in reverse order (raw_data first, data_type after it), its
      bytes at 3 mod 8
  W4  two raw_data fields, the first of zeros: protobuf keeps the last
  W5  data_type twice (INT64, then FLOAT: the last counts) and an unknown
      field, its bytes at 5 mod 8
  B   [32], 128 bytes: below the size of a weight
The graph's fields come before the model's other fields are done, and the
initializers after the nodes: all legal, none what onnx.save writes.
bad_size.onnx: a weight whose raw_data is 4 bytes short of its shape.
located.onnx: a weight whose data_location is EXTERNAL and then 7, which
protobuf drops as unknown: an external weight (without a location).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

N = 32


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_varint(number, v):
    return varint(number << 3 | 0) + varint(v)


def field_bytes(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data


def weights():
    rng = np.random.default_rng(7)
    w = {n: rng.standard_normal((N, N)).astype(np.float32) for n in ("W1", "W3", "W4", "W5")}
    w["W2"] = rng.standard_normal((N, N)).astype(np.float16)
    b = rng.standard_normal(N).astype(np.float32)
    x = rng.standard_normal((2, N)).astype(np.float32)
    return w, b, x


def dims():
    return field_varint(1, N) + field_varint(1, N)


def entry_at(prefix_len, build, raw, want_mod):
    """An initializer field whose raw bytes land at want_mod mod 8 in the
    file, `prefix_len` bytes (all before the field's tag) preceding it:
    build(pad) gives the tensor's fields around a doc_string of `pad`
    bytes and returns them with the raw bytes' offset among them."""
    for pad in range(16):
        body, at = build(field_bytes(12, b"d" * pad))
        entry = field_bytes(5, body)
        offset = prefix_len + len(entry) - len(body) + at
        if offset % 8 == want_mod:
            assert entry[len(entry) - len(body) + at:][:len(raw)] == raw
            return entry, offset
    raise SystemExit("no padding gives the offset")


def ordinary(name, dtype, raw):
    """onnx.save's order: dims, data_type, name, (doc_string), raw_data."""
    def build(doc):
        head = dims() + field_varint(2, dtype) + field_bytes(8, name.encode()) + doc
        body = head + field_bytes(9, raw)
        return body, len(body) - len(raw)
    return build


def model_bytes(graph_body_fn):
    nodes = [
        helper.make_node("MatMul", ["X", "W1"], ["a"], name="m1"),
        helper.make_node("Cast", ["W2"], ["w2f"], to=TensorProto.FLOAT, name="c2"),
        helper.make_node("MatMul", ["X", "w2f"], ["b"], name="m2"),
        helper.make_node("MatMul", ["X", "W3"], ["c"], name="m3"),
        helper.make_node("MatMul", ["X", "W4"], ["d"], name="m4"),
        helper.make_node("MatMul", ["X", "W5"], ["e"], name="m5"),
        helper.make_node("Add", ["a", "b"], ["ab"], name="s1"),
        helper.make_node("Add", ["ab", "c"], ["abc"], name="s2"),
        helper.make_node("Add", ["abc", "d"], ["abcd"], name="s3"),
        helper.make_node("Add", ["abcd", "e"], ["abcde"], name="s4"),
        helper.make_node("Add", ["abcde", "B"], ["Y"], name="bias"),
    ]
    graph = helper.make_graph(
        nodes, "wire", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, N])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, N])])
    model = helper.make_model(helper.make_graph([], "unused", [], []),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ClearField("graph")
    head = model.SerializeToString()
    graph_head = graph.SerializeToString()
    # The graph field's length prefix depends on the body, and the body's
    # padding on the offsets: fix the prefix's size first (a 3-byte
    # varint covers 16 KiB to 2 MiB), then fill it in.
    prefix = len(head) + 1 + 3 + len(graph_head)
    body = graph_body_fn(prefix)
    graph_bytes = graph_head + body
    assert len(varint(len(graph_bytes))) == 3
    return head + varint(7 << 3 | 2) + varint(len(graph_bytes)) + graph_bytes


def write(d):
    w, b, x = weights()
    offsets = {}

    def body(prefix):
        out = b""

        def add(name, build, raw, want_mod):
            nonlocal out
            entry, offsets[name] = entry_at(prefix + len(out), build, raw, want_mod)
            out += entry

        add("W1", ordinary("W1", TensorProto.FLOAT, w["W1"].tobytes()), w["W1"].tobytes(), 1)
        add("W2", ordinary("W2", TensorProto.FLOAT16, w["W2"].tobytes()), w["W2"].tobytes(), 2)

        def reversed_fields(doc):
            raw = field_bytes(9, w["W3"].tobytes())
            body = doc + raw + field_bytes(8, b"W3") + field_varint(2, TensorProto.FLOAT) + dims()
            return body, len(doc) + len(raw) - N * N * 4
        add("W3", reversed_fields, w["W3"].tobytes(), 3)
        out += field_bytes(5, dims() + field_varint(2, TensorProto.FLOAT) +
                           field_bytes(8, b"W4") + field_bytes(9, bytes(N * N * 4)) +
                           field_bytes(9, w["W4"].tobytes()))

        def retyped(doc):
            head = dims() + field_varint(2, TensorProto.INT64) + \
                field_varint(2, TensorProto.FLOAT) + field_bytes(8, b"W5") + \
                field_varint(999, 5) + doc
            body = head + field_bytes(9, w["W5"].tobytes())
            return body, len(body) - N * N * 4
        add("W5", retyped, w["W5"].tobytes(), 5)
        out += field_bytes(5, field_varint(1, N) + field_varint(2, TensorProto.FLOAT) +
                           field_bytes(8, b"B") + field_bytes(9, b.tobytes()))
        return out

    data = model_bytes(body)
    with open(os.path.join(d, "wire.onnx"), "wb") as f:
        f.write(data)
    for name in offsets:
        assert data[offsets[name]:offsets[name] + N * N] == w[name].tobytes()[:N * N]
    # onnx itself reads the file as written (W4: the second raw_data).
    m = onnx.load(os.path.join(d, "wire.onnx"))
    read = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    assert all(np.array_equal(read[n], w[n]) for n in w)
    np.save(os.path.join(d, "x.npy"), x)
    print("weight bytes at mod 8: " +
          ", ".join("%s %d" % (n, offsets[n] % 8) for n in sorted(offsets)))

    def bad_body(prefix):
        # (16 KiB and more, for the 3-byte length above.)
        return field_bytes(5, field_varint(1, 4 * N) + field_varint(1, N) +
                           field_varint(2, TensorProto.FLOAT) + field_bytes(8, b"W1") +
                           field_bytes(9, bytes(4 * N * N * 4 - 4)))
    with open(os.path.join(d, "bad_size.onnx"), "wb") as f:
        f.write(model_bytes(bad_body))

    def located_body(prefix):
        # data_location EXTERNAL, then a value the enum does not have:
        # protobuf keeps EXTERNAL (and the second as an unknown field).
        return field_bytes(5, field_varint(1, 4 * N) + field_varint(1, N) +
                           field_varint(2, TensorProto.FLOAT) + field_bytes(8, b"W1") +
                           field_varint(14, 1) + field_varint(14, 7) +
                           field_bytes(9, bytes(4 * N * N * 4)))
    with open(os.path.join(d, "located.onnx"), "wb") as f:
        f.write(model_bytes(located_body))


def check(d):
    w, b, x = weights()
    total = sum(v.astype(np.float64) for v in w.values())
    want = x.astype(np.float64) @ total + b
    for name in sorted(f for f in os.listdir(d) if f.startswith("y_")):
        got = np.load(os.path.join(d, name))
        err = float(np.abs(got - want).max())
        print("%s max_abs_err<1e-4 %s" % (name[:-4], err < 1e-4))


if sys.argv[1] == "--check":
    check(sys.argv[2])
else:
    os.makedirs(sys.argv[1], exist_ok=True)
    write(sys.argv[1])
