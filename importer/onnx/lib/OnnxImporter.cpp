//===- OnnxImporter.cpp - ONNX models to MLIR ------------------------------===//
//
// Reads a ModelProto, turns graph inputs into @main's arguments,
// initializers into constants and nodes, in their (topological) order, into
// ops. The standard `Attention` operator becomes one attn.sdpa; the ops
// around attention in exported graphs are imported to linalg/tensor/arith.
// Anything else is an error naming the op type, the node and the opset.
//
//===----------------------------------------------------------------------===//

#include "attn/OnnxImporter.h"

#include "attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Verifier.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <optional>

namespace mlir::attn {
namespace {

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef fileName, const OnnxImportOptions &opts)
      : ctx(ctx), b(ctx), options(opts),
        fileLoc(FileLineColLoc::get(ctx, fileName, 0, 0)) {}

  OwningOpRef<ModuleOp> run(StringRef bytes) {
    onnx::ModelProto model;
    if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
        !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      emitError(fileLoc) << "not an ONNX model: the protobuf does not parse "
                            "(truncated or corrupt file?)";
      return nullptr;
    }
    if (!model.has_graph()) {
      emitError(fileLoc) << "ONNX model has no graph";
      return nullptr;
    }
    for (const auto &op : model.opset_import())
      if (op.domain().empty() || op.domain() == "ai.onnx")
        opset = op.version();
    if (opset < 13) {
      emitError(fileLoc) << "unsupported ONNX opset " << opset
                         << " (the importer reads opsets 13 to 25)";
      return nullptr;
    }
    OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
    b.setInsertionPointToEnd(module->getBody());
    if (!importGraph(model.graph()))
      return nullptr;
    // Whatever the model claims, only valid IR leaves the importer.
    if (verify(*module).failed()) {
      emitError(fileLoc) << "the imported module does not verify (see above); "
                            "the model is inconsistent";
      return nullptr;
    }
    return module;
  }

private:
  // ----- helpers -------------------------------------------------------------

  Location nodeLoc(const onnx::NodeProto &n) {
    return NameLoc::get(b.getStringAttr(n.name().empty() ? n.op_type() : n.name()),
                        fileLoc);
  }

  /// Reports an error on node `n` and marks the import failed.
  InFlightDiagnostic nodeError(const onnx::NodeProto &n) {
    failed = true;
    InFlightDiagnostic d = emitError(nodeLoc(n));
    if (n.name().empty())
      d << "ONNX node #" << nodeIndex;
    else
      d << "ONNX node '" << n.name() << "'";
    return std::move(d << " (" << n.op_type() << ", opset " << opset << "): ");
  }

  std::optional<Type> elemType(int dt) {
    switch (dt) {
    case onnx::TensorProto::FLOAT:
      return b.getF32Type();
    case onnx::TensorProto::FLOAT16:
      return b.getF16Type();
    case onnx::TensorProto::BFLOAT16:
      return b.getBF16Type();
    case onnx::TensorProto::BOOL:
      return b.getI1Type();
    case onnx::TensorProto::INT64:
      return b.getI64Type();
    case onnx::TensorProto::INT32:
      return b.getI32Type();
    default:
      return std::nullopt;
    }
  }

  const onnx::AttributeProto *attr(const onnx::NodeProto &n, StringRef name) {
    for (const auto &a : n.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(const onnx::NodeProto &n, StringRef name, int64_t dflt) {
    const auto *a = attr(n, name);
    return a ? a->i() : dflt;
  }
  std::optional<float> floatAttr(const onnx::NodeProto &n, StringRef name) {
    const auto *a = attr(n, name);
    if (!a)
      return std::nullopt;
    return a->f();
  }

  /// The value of input `i` of `n`, or null if absent ("" or past the end).
  Value input(const onnx::NodeProto &n, int i) {
    if (i >= n.input_size() || n.input(i).empty())
      return nullptr;
    auto it = values.find(n.input(i));
    if (it == values.end()) {
      nodeError(n) << "uses '" << n.input(i)
                   << "', which no graph input, initializer or earlier node "
                      "defines (is the graph topologically sorted?)";
      return nullptr;
    }
    return it->second;
  }

  void define(const onnx::NodeProto &n, int i, Value v) {
    if (i < n.output_size() && !n.output(i).empty())
      values[n.output(i)] = v;
  }

  bool wantsOutput(const onnx::NodeProto &n, int i) {
    return i < n.output_size() && !n.output(i).empty();
  }

  /// A TensorProto's contents as an elements attribute.
  std::optional<DenseElementsAttr> tensorAttr(const onnx::TensorProto &t) {
    std::optional<Type> elem = elemType(t.data_type());
    if (!elem) {
      emitError(fileLoc) << "initializer '" << t.name()
                         << "' has unsupported ONNX data type " << t.data_type();
      return std::nullopt;
    }
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      emitError(fileLoc) << "initializer '" << t.name()
                         << "' uses external data, which is not supported";
      return std::nullopt;
    }
    SmallVector<int64_t> shape;
    int64_t count = 1;
    for (int64_t d : t.dims()) {
      if (d < 0 || (d && count > (int64_t(1) << 40) / d)) {
        emitError(fileLoc) << "initializer '" << t.name()
                           << "' has an invalid or too large shape";
        return std::nullopt;
      }
      shape.push_back(d);
      count *= d;
    }
    auto type = RankedTensorType::get(shape, *elem);
    size_t width = elem->isInteger(1) ? 1 : elem->getIntOrFloatBitWidth() / 8;
    if (t.has_raw_data()) {
      if (t.raw_data().size() != static_cast<size_t>(count) * width) {
        emitError(fileLoc) << "initializer '" << t.name() << "' holds "
                           << t.raw_data().size() << " bytes, its shape needs "
                           << count * width;
        return std::nullopt;
      }
      if (elem->isInteger(1)) {
        SmallVector<bool> v(t.raw_data().begin(), t.raw_data().end());
        return DenseElementsAttr::get(type, ArrayRef<bool>(v));
      }
      return DenseElementsAttr::getFromRawBuffer(
          type, ArrayRef<char>(t.raw_data().data(), t.raw_data().size()));
    }
    // Typed fields.
    if (elem->isF32() && t.float_data_size() == count)
      return DenseElementsAttr::get(
          type, ArrayRef<float>(t.float_data().data(), t.float_data_size()));
    if (elem->isInteger(64) && t.int64_data_size() == count)
      return DenseElementsAttr::get(
          type, ArrayRef<int64_t>(t.int64_data().data(), t.int64_data_size()));
    if (elem->isInteger(32) && t.int32_data_size() == count)
      return DenseElementsAttr::get(
          type, ArrayRef<int32_t>(t.int32_data().data(), t.int32_data_size()));
    if (elem->isInteger(1) && t.int32_data_size() == count) {
      SmallVector<bool> v(t.int32_data().begin(), t.int32_data().end());
      return DenseElementsAttr::get(type, ArrayRef<bool>(v));
    }
    emitError(fileLoc) << "initializer '" << t.name()
                       << "' has no data matching its shape and type";
    return std::nullopt;
  }

  std::optional<RankedTensorType> valueInfoType(const onnx::ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type()) {
      emitError(fileLoc) << "graph value '" << vi.name() << "' is not a tensor";
      return std::nullopt;
    }
    const auto &tt = vi.type().tensor_type();
    std::optional<Type> elem = elemType(tt.elem_type());
    if (!elem) {
      emitError(fileLoc) << "graph value '" << vi.name()
                         << "' has unsupported ONNX data type " << tt.elem_type();
      return std::nullopt;
    }
    if (!tt.has_shape()) {
      emitError(fileLoc) << "graph value '" << vi.name()
                         << "' has no shape; the importer needs at least its rank";
      return std::nullopt;
    }
    SmallVector<int64_t> shape;
    for (const auto &d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          emitError(fileLoc) << "graph value '" << vi.name()
                             << "' has a negative dimension " << d.dim_value();
          return std::nullopt;
        }
        shape.push_back(d.dim_value());
      } else {
        shape.push_back(ShapedType::kDynamic);
      }
    }
    return RankedTensorType::get(shape, *elem);
  }

  // ----- the graph -----------------------------------------------------------

  bool importGraph(const onnx::GraphProto &g) {
    std::map<std::string, const onnx::TensorProto *> inits;
    for (const auto &t : g.initializer())
      inits[t.name()] = &t;
    SmallVector<Type> argTypes;
    SmallVector<std::string> argNames;
    for (const auto &vi : g.input()) {
      if (inits.count(vi.name()))
        continue; // an initializer listed as input: a constant
      auto t = valueInfoType(vi);
      if (!t)
        return false;
      argTypes.push_back(*t);
      argNames.push_back(vi.name());
    }
    SmallVector<Type> resultTypes;
    for (const auto &vi : g.output()) {
      auto t = valueInfoType(vi);
      if (!t)
        return false;
      resultTypes.push_back(*t);
    }
    auto fn = func::FuncOp::create(b, fileLoc, "main",
                                   b.getFunctionType(argTypes, resultTypes));
    Block *entry = fn.addEntryBlock();
    for (auto [i, name] : llvm::enumerate(argNames)) {
      fn.setArgAttr(i, "onnx.name", b.getStringAttr(name));
      values[name] = entry->getArgument(i);
    }
    for (auto [i, vi] : llvm::enumerate(g.output()))
      fn.setResultAttr(i, "onnx.name", b.getStringAttr(vi.name()));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entry);
    for (const auto &[name, t] : inits) {
      auto attr = tensorAttr(*t);
      if (!attr)
        return false;
      values[name] = arith::ConstantOp::create(b, fileLoc, *attr);
    }
    {
      if (options.raise)
        findAttentionChains(g);
      for (const auto &n : g.node()) {
        if (raisedAway.count(&n)) {
          ++nodeIndex;
          continue;
        }
        auto chain = raiseAt.find(&n);
        if (chain != raiseAt.end())
          emitRaisedAttention(n, chain->second);
        else
          importNode(n);
        ++nodeIndex;
        if (failed)
          return false;
      }
      SmallVector<Value> results;
      for (auto [i, vi] : llvm::enumerate(g.output())) {
        auto it = values.find(vi.name());
        if (it == values.end()) {
          emitError(fileLoc) << "graph output '" << vi.name()
                             << "' is not produced by any node";
          return false;
        }
        Value v = it->second;
        if (v.getType() != resultTypes[i]) {
          auto want = cast<RankedTensorType>(resultTypes[i]);
          auto got = cast<RankedTensorType>(v.getType());
          bool compatible = want.getElementType() == got.getElementType() &&
                            want.getRank() == got.getRank();
          for (int64_t d = 0; compatible && d < want.getRank(); ++d)
            compatible = ShapedType::isDynamic(want.getDimSize(d)) ||
                         ShapedType::isDynamic(got.getDimSize(d)) ||
                         want.getDimSize(d) == got.getDimSize(d);
          if (!compatible) {
            emitError(fileLoc) << "graph output '" << vi.name() << "' is declared "
                               << want << " but computes " << got;
            return false;
          }
          v = tensor::CastOp::create(b, fileLoc, want, v);
        }
        results.push_back(v);
      }
      func::ReturnOp::create(b, fileLoc, results);
    }
    return true;
  }

  void importNode(const onnx::NodeProto &n) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      nodeError(n) << "op domain '" << n.domain() << "' is not supported";
      return;
    }
    const std::string &op = n.op_type();
    // Inputs every op needs present (optional ones are checked where used).
    static const std::map<std::string, int> required = {
        {"Attention", 3}, {"Identity", 1}, {"Dropout", 1}, {"Add", 2},
        {"Sub", 2},       {"Mul", 2},      {"Div", 2},     {"Pow", 2},
        {"Where", 3},     {"Sqrt", 1},     {"MatMul", 2},  {"Transpose", 1},
        {"Reshape", 2},   {"Softmax", 1},  {"Constant", 0}};
    if (auto it = required.find(op); it != required.end()) {
      for (int i = 0; i < it->second; ++i)
        if (i >= n.input_size() || n.input(i).empty()) {
          nodeError(n) << "needs input #" << i << ", which is missing";
          return;
        }
      if (n.output_size() < 1 || n.output(0).empty()) {
        nodeError(n) << "has no output";
        return;
      }
    }
    if (op == "Attention")
      return importAttention(n);
    if (op == "Identity" || (op == "Dropout" && !wantsOutput(n, 1)))
      return define(n, 0, input(n, 0));
    if (op == "Constant")
      return importConstant(n);
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
        op == "Pow" || op == "Where")
      return importElementwise(n);
    if (op == "Sqrt")
      return importElementwise(n);
    if (op == "MatMul")
      return importMatMul(n);
    if (op == "Transpose")
      return importTranspose(n);
    if (op == "Reshape")
      return importReshape(n);
    if (op == "Softmax")
      return importSoftmax(n);
    nodeError(n) << "unsupported ONNX op '" << op << "'";
  }

  // ----- raising unfused attention -------------------------------------------
  //
  // Exports spell attention as MatMul(Q, K^T) -> [Where(mask, -inf, .) |
  // Add(., mask)] -> [Div | Mul by a constant] (in either order) -> Softmax
  // -> MatMul(., V). Such a chain becomes one attn.sdpa, emitted where the
  // last MatMul was; the nodes in between are skipped. Constant masks are
  // then folded into `causal` by attn-fold-mask like any other.

  struct AttentionChain {
    const onnx::NodeProto *qk = nullptr;
    std::string mask;         // tensor name or ""
    bool maskIsBool = false;  // Where(mask, -inf, s): true = masked
    double scale = 1.0;
  };

  std::map<const onnx::NodeProto *, AttentionChain> raiseAt;
  std::set<const onnx::NodeProto *> raisedAway;
  std::map<std::string, const onnx::NodeProto *> producer;
  std::map<std::string, int> uses;
  std::map<std::string, const onnx::TensorProto *> initByName;

  /// A scalar constant (initializer, Constant node, or Pow of two).
  std::optional<double> scalarConst(const std::string &name) {
    auto fromTensor = [](const onnx::TensorProto &t) -> std::optional<double> {
      int64_t count = 1;
      for (int64_t d : t.dims())
        count *= d;
      if (count != 1)
        return std::nullopt;
      if (t.data_type() == onnx::TensorProto::FLOAT) {
        if (t.float_data_size() == 1)
          return t.float_data(0);
        if (t.raw_data().size() == 4) {
          float f;
          std::memcpy(&f, t.raw_data().data(), 4);
          return f;
        }
      }
      if (t.data_type() == onnx::TensorProto::DOUBLE && t.raw_data().size() == 8) {
        double d;
        std::memcpy(&d, t.raw_data().data(), 8);
        return d;
      }
      return std::nullopt;
    };
    if (auto it = initByName.find(name); it != initByName.end())
      return fromTensor(*it->second);
    auto it = producer.find(name);
    if (it == producer.end())
      return std::nullopt;
    const onnx::NodeProto &p = *it->second;
    if (p.op_type() == "Constant") {
      if (const auto *a = attr(p, "value"); a && a->has_t())
        return fromTensor(a->t());
      return std::nullopt;
    }
    if (p.op_type() == "Pow" && p.input_size() == 2) {
      auto x = scalarConst(p.input(0)), y = scalarConst(p.input(1));
      if (x && y)
        return std::pow(*x, *y);
    }
    return std::nullopt;
  }

  bool isBoolTensor(const std::string &name) {
    if (auto it = initByName.find(name); it != initByName.end())
      return it->second->data_type() == onnx::TensorProto::BOOL;
    auto v = values.find(name);
    return v != values.end() &&
           cast<RankedTensorType>(v->second.getType()).getElementType().isInteger(1);
  }

  void findAttentionChains(const onnx::GraphProto &g) {
    for (const auto &t : g.initializer())
      initByName[t.name()] = &t;
    for (const auto &n : g.node()) {
      for (const auto &o : n.output())
        producer[o] = &n;
      for (const auto &i : n.input())
        ++uses[i];
    }
    for (const auto &o : g.output())
      ++uses[o.name()];
    auto single = [&](const std::string &name) { return uses[name] == 1; };
    for (const auto &pv : g.node()) {
      if (pv.op_type() != "MatMul" || pv.input_size() != 2)
        continue;
      auto sm = producer.find(pv.input(0));
      if (sm == producer.end() || sm->second->op_type() != "Softmax" ||
          !single(pv.input(0)))
        continue;
      const onnx::NodeProto *cur = sm->second;
      if (intAttr(*cur, "axis", -1) != -1)
        continue;
      AttentionChain chain;
      std::vector<const onnx::NodeProto *> skipped{cur};
      std::string x = cur->input(0);
      bool ok = true;
      for (int step = 0; step < 3 && ok; ++step) {
        auto p = producer.find(x);
        if (p == producer.end() || !single(x)) {
          ok = false;
          break;
        }
        const onnx::NodeProto &node = *p->second;
        if (node.op_type() == "MatMul") {
          chain.qk = &node;
          skipped.push_back(&node);
          break;
        }
        if ((node.op_type() == "Div" || node.op_type() == "Mul") &&
            node.input_size() == 2) {
          auto c = scalarConst(node.input(1));
          if (!c || *c == 0.0) {
            ok = false;
            break;
          }
          chain.scale *= node.op_type() == "Div" ? 1.0 / *c : *c;
          skipped.push_back(&node);
          x = node.input(0);
          continue;
        }
        if (node.op_type() == "Where" && node.input_size() == 3 &&
            chain.mask.empty()) {
          auto fillv = scalarConst(node.input(1));
          if (!fillv || *fillv > -1.0e4 || !isBoolTensor(node.input(0))) {
            ok = false;
            break;
          }
          chain.mask = node.input(0);
          chain.maskIsBool = true;
          skipped.push_back(&node);
          x = node.input(2);
          continue;
        }
        if (node.op_type() == "Add" && node.input_size() == 2 &&
            chain.mask.empty()) {
          chain.mask = node.input(1);
          skipped.push_back(&node);
          x = node.input(0);
          continue;
        }
        ok = false;
      }
      if (!ok || !chain.qk)
        continue;
      raiseAt[&pv] = chain;
      for (const auto *s : skipped)
        raisedAway.insert(s);
    }
  }

  /// attn.sdpa for a raised chain ending at `pv` (MatMul(P, V)).
  void emitRaisedAttention(const onnx::NodeProto &pv, const AttentionChain &c) {
    Location loc = nodeLoc(pv);
    Value q = input(*c.qk, 0), kT = input(*c.qk, 1), v = input(pv, 1);
    Value mask;
    if (!c.mask.empty()) {
      auto it = values.find(c.mask);
      if (it != values.end())
        mask = it->second;
    }
    if (failed || (!c.mask.empty() && !mask)) {
      failed = true;
      return;
    }
    auto qt = typeOf(q), kt = typeOf(kT), vt = typeOf(v);
    int64_t r = qt.getRank();
    if (r < 2 || kt.getRank() != r || vt.getRank() != r ||
        !isa<FloatType>(qt.getElementType())) {
      // Not the shape of an attention core: import the nodes one by one.
      for (const onnx::NodeProto *node : chainNodes(pv, c))
        importNode(*node);
      importNode(pv);
      return;
    }
    // K^T [.., d, Tk] -> K [.., Tk, d].
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < r; ++i)
      perm.push_back(i);
    std::swap(perm[r - 1], perm[r - 2]);
    SmallVector<OpFoldResult> ks = tensor::getMixedSizes(b, loc, kT);
    std::swap(ks[r - 1], ks[r - 2]);
    Value kInit = tensor::EmptyOp::create(b, loc, ks, kt.getElementType());
    Value k = linalg::TransposeOp::create(b, loc, kT, kInit, perm).getResult()[0];
    MaskKind kind = MaskKind::masked_where_true;
    if (mask && !c.maskIsBool)
      kind = MaskKind::additive;
    SmallVector<int64_t> outShape(qt.getShape());
    outShape.back() = vt.getShape().back();
    auto sdpa = SdpaOp::create(
        b, loc, RankedTensorType::get(outShape, qt.getElementType()), q, k, v,
        mask, CausalKindAttr::get(ctx, CausalKind::none),
        MaskKindAttr::get(ctx, kind),
        HeadLayoutAttr::get(ctx, HeadLayout::heads_major), IntegerAttr(),
        IntegerAttr(), FloatAttr(), b.getF32FloatAttr(float(c.scale)),
        b.getF32FloatAttr(0.0f), b.getI64IntegerAttr(0));
    if (verify(sdpa).failed()) {
      failed = true;
      return;
    }
    emitRemark(loc) << "raised MatMul -> " << (c.mask.empty() ? "" : "mask -> ")
                    << "scale -> Softmax -> MatMul (ending at node '"
                    << pv.name() << "') to attn.sdpa";
    define(pv, 0, sdpa);
  }

  /// The nodes of a chain in graph order (for the fallback).
  std::vector<const onnx::NodeProto *> chainNodes(const onnx::NodeProto &pv,
                                                  const AttentionChain &c) {
    std::vector<const onnx::NodeProto *> nodes;
    const onnx::NodeProto *cur = producer[pv.input(0)];
    while (cur) {
      nodes.insert(nodes.begin(), cur);
      if (cur == c.qk)
        break;
      std::string in = cur->op_type() == "Where" ? cur->input(2) : cur->input(0);
      cur = producer.count(in) ? producer[in] : nullptr;
    }
    return nodes;
  }

  // ----- the ops around attention in exported graphs -------------------------

  RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

  /// A constant tensor input as integers (shapes, permutations), if it is one.
  std::optional<SmallVector<int64_t>> constInts(Value v) {
    DenseElementsAttr attr;
    if (!v || !matchPattern(v, m_Constant(&attr)) ||
        !isa<IntegerType>(attr.getElementType()))
      return std::nullopt;
    SmallVector<int64_t> r;
    for (const APInt &x : attr.getValues<APInt>())
      r.push_back(x.getSExtValue());
    return r;
  }

  void importConstant(const onnx::NodeProto &n) {
    const auto *a = attr(n, "value");
    if (!a || !a->has_t()) {
      nodeError(n) << "only the 'value' form of Constant is supported";
      return;
    }
    auto value = tensorAttr(a->t());
    if (!value) {
      failed = true;
      return;
    }
    define(n, 0, arith::ConstantOp::create(b, nodeLoc(n), *value));
  }

  /// NumPy broadcasting of `ins` to one shape; returns the output sizes and
  /// each input's indexing map, or fails on incompatible static dims.
  bool broadcast(const onnx::NodeProto &n, ArrayRef<Value> ins,
                 SmallVector<OpFoldResult> &sizes, SmallVector<AffineMap> &maps) {
    int64_t rank = 0;
    for (Value v : ins)
      rank = std::max<int64_t>(rank, typeOf(v).getRank());
    sizes.assign(rank, b.getIndexAttr(1));
    SmallVector<bool> known(rank, false);
    for (Value v : ins) {
      auto t = typeOf(v);
      for (int64_t a = 0; a < t.getRank(); ++a) {
        int64_t od = rank - t.getRank() + a, d = t.getDimSize(a);
        if (d == 1)
          continue;
        auto cur = getConstantIntValue(sizes[od]);
        if (known[od] && !ShapedType::isDynamic(d) && cur && *cur != 1 && *cur != d) {
          nodeError(n) << "operand shapes do not broadcast: dim " << od << " is "
                       << *cur << " and " << d;
          return false;
        }
        if (!known[od] || (!ShapedType::isDynamic(d) && !cur)) {
          sizes[od] = tensor::getMixedSize(b, nodeLoc(n), v, a);
          known[od] = true;
        }
      }
    }
    for (Value v : ins) {
      auto t = typeOf(v);
      SmallVector<AffineExpr> e;
      for (int64_t a = 0; a < t.getRank(); ++a)
        e.push_back(t.getDimSize(a) == 1 ? b.getAffineConstantExpr(0)
                                         : b.getAffineDimExpr(rank - t.getRank() + a));
      maps.push_back(AffineMap::get(rank, 0, e, ctx));
    }
    maps.push_back(b.getMultiDimIdentityMap(rank));
    return true;
  }

  void importElementwise(const onnx::NodeProto &n) {
    const std::string &op = n.op_type();
    SmallVector<Value> ins;
    for (int i = 0; i < n.input_size(); ++i)
      ins.push_back(input(n, i));
    if (failed)
      return;
    Value data = op == "Where" ? ins[1] : ins[0];
    Type elem = typeOf(data).getElementType();
    if (!isa<FloatType>(elem)) {
      nodeError(n) << "only float tensors are supported, got " << elem;
      return;
    }
    SmallVector<OpFoldResult> sizes;
    SmallVector<AffineMap> maps;
    if (!broadcast(n, ins, sizes, maps))
      return;
    Location loc = nodeLoc(n);
    Value init = tensor::EmptyOp::create(b, loc, sizes, elem);
    Value r = linalg::GenericOp::create(
                  b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
                  SmallVector<utils::IteratorType>(maps.back().getNumDims(),
                                                   utils::IteratorType::parallel),
                  [&](OpBuilder &nb, Location l, ValueRange a) {
                    Value x;
                    if (op == "Add")
                      x = arith::AddFOp::create(nb, l, a[0], a[1]);
                    else if (op == "Sub")
                      x = arith::SubFOp::create(nb, l, a[0], a[1]);
                    else if (op == "Mul")
                      x = arith::MulFOp::create(nb, l, a[0], a[1]);
                    else if (op == "Div")
                      x = arith::DivFOp::create(nb, l, a[0], a[1]);
                    else if (op == "Pow")
                      x = math::PowFOp::create(nb, l, a[0], a[1]);
                    else if (op == "Sqrt")
                      x = math::SqrtOp::create(nb, l, a[0]);
                    else
                      x = arith::SelectOp::create(nb, l, a[0], a[1], a[2]);
                    linalg::YieldOp::create(nb, l, ValueRange{x});
                  })
                  .getResult(0);
    define(n, 0, r);
  }

  /// NumPy matmul: [..., M, K] x [..., K, N] with broadcast batch dims (a
  /// 2-D right operand is shared by every batch).
  void importMatMul(const onnx::NodeProto &n) {
    Value a = input(n, 0), w = input(n, 1);
    if (failed)
      return;
    auto at = typeOf(a), wt = typeOf(w);
    if (at.getRank() < 2 || wt.getRank() < 2) {
      nodeError(n) << "1-D MatMul operands are not supported";
      return;
    }
    int64_t r = std::max(at.getRank(), wt.getRank()); // output rank
    // Loops: out dims (r) then k.
    unsigned nl = r + 1, kd = r;
    auto operandMap = [&](RankedTensorType t, bool left) {
      SmallVector<AffineExpr> e;
      for (int64_t x = 0; x + 2 < t.getRank(); ++x) {
        int64_t od = r - t.getRank() + x;
        e.push_back(t.getDimSize(x) == 1 ? b.getAffineConstantExpr(0)
                                         : b.getAffineDimExpr(od));
      }
      if (left) {
        e.push_back(b.getAffineDimExpr(r - 2));
        e.push_back(b.getAffineDimExpr(kd));
      } else {
        e.push_back(b.getAffineDimExpr(kd));
        e.push_back(b.getAffineDimExpr(r - 1));
      }
      return AffineMap::get(nl, 0, e, ctx);
    };
    Location loc = nodeLoc(n);
    SmallVector<OpFoldResult> sizes;
    for (int64_t x = 0; x + 2 < r; ++x) {
      // Batch dim: from whichever operand has it (not 1).
      int64_t ai = x - (r - at.getRank()), wi = x - (r - wt.getRank());
      if (ai >= 0 && at.getDimSize(ai) != 1)
        sizes.push_back(tensor::getMixedSize(b, loc, a, ai));
      else if (wi >= 0)
        sizes.push_back(tensor::getMixedSize(b, loc, w, wi));
      else
        sizes.push_back(b.getIndexAttr(1));
    }
    sizes.push_back(tensor::getMixedSize(b, loc, a, at.getRank() - 2));
    sizes.push_back(tensor::getMixedSize(b, loc, w, wt.getRank() - 1));
    Type elem = at.getElementType();
    Value init = tensor::EmptyOp::create(b, loc, sizes, elem);
    init = linalg::FillOp::create(
               b, loc, ValueRange{arith::ConstantOp::create(b, loc, b.getZeroAttr(elem))},
               ValueRange{init})
               .getResult(0);
    SmallVector<utils::IteratorType> iters(nl, utils::IteratorType::parallel);
    iters[kd] = utils::IteratorType::reduction;
    Value out = linalg::GenericOp::create(
                    b, loc, TypeRange{init.getType()}, ValueRange{a, w},
                    ValueRange{init},
                    SmallVector<AffineMap>{operandMap(at, true), operandMap(wt, false),
                                           AffineMap::get(nl, 0,
                                                          [&] {
                                                            SmallVector<AffineExpr> e;
                                                            for (int64_t x = 0; x < r; ++x)
                                                              e.push_back(b.getAffineDimExpr(x));
                                                            return e;
                                                          }(),
                                                          ctx)},
                    iters,
                    [&](OpBuilder &nb, Location l, ValueRange v) {
                      Value p = arith::MulFOp::create(nb, l, v[0], v[1]);
                      linalg::YieldOp::create(
                          nb, l, ValueRange{arith::AddFOp::create(nb, l, v[2], p)});
                    })
                    .getResult(0);
    define(n, 0, out);
  }

  void importTranspose(const onnx::NodeProto &n) {
    Value x = input(n, 0);
    if (failed)
      return;
    auto t = typeOf(x);
    SmallVector<int64_t> perm;
    if (const auto *a = attr(n, "perm"))
      perm.assign(a->ints().begin(), a->ints().end());
    else
      for (int64_t i = t.getRank() - 1; i >= 0; --i)
        perm.push_back(i);
    if (static_cast<int64_t>(perm.size()) != t.getRank()) {
      nodeError(n) << "perm has " << perm.size() << " entries for a rank-"
                   << t.getRank() << " input";
      return;
    }
    Location loc = nodeLoc(n);
    SmallVector<OpFoldResult> in = tensor::getMixedSizes(b, loc, x), sizes;
    for (int64_t p : perm) {
      if (p < 0 || p >= t.getRank()) {
        nodeError(n) << "perm entry " << p << " is out of range";
        return;
      }
      sizes.push_back(in[p]);
    }
    Value init = tensor::EmptyOp::create(b, loc, sizes, t.getElementType());
    define(n, 0, linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0]);
  }

  /// Reshape to a constant shape (0 copies a dim, -1 is inferred), as a
  /// collapse to 1-D and an expand: views, no copy.
  void importReshape(const onnx::NodeProto &n) {
    Value x = input(n, 0), shapeV = input(n, 1);
    if (failed)
      return;
    auto t = typeOf(x);
    std::optional<SmallVector<int64_t>> target = constInts(shapeV);
    if (!target || !t.hasStaticShape()) {
      nodeError(n) << "only static reshapes to a constant shape are supported";
      return;
    }
    int64_t total = t.getNumElements(), known = 1, infer = -1;
    SmallVector<int64_t> shape(*target);
    for (auto [i, d] : llvm::enumerate(shape)) {
      if (d == 0 && intAttr(n, "allowzero", 0) == 0) {
        if (static_cast<int64_t>(i) >= t.getRank()) {
          nodeError(n) << "shape entry 0 at " << i << " has no input dim to copy";
          return;
        }
        d = t.getDimSize(i);
      }
      if (d == -1) {
        if (infer >= 0) {
          nodeError(n) << "more than one -1 in the target shape";
          return;
        }
        infer = i;
        continue;
      }
      if (d < 0) {
        nodeError(n) << "negative target dimension " << d;
        return;
      }
      known *= d;
    }
    if (infer >= 0)
      shape[infer] = known ? total / known : 0;
    int64_t product = 1;
    for (int64_t d : shape)
      product *= d;
    if (product != total) {
      nodeError(n) << "cannot reshape " << total << " elements into "
                   << product;
      return;
    }
    Location loc = nodeLoc(n);
    auto flatType = RankedTensorType::get({total}, t.getElementType());
    ReassociationIndices all;
    for (int64_t i = 0; i < t.getRank(); ++i)
      all.push_back(i);
    Value flat = t.getRank() == 1 ? x
                                  : Value(tensor::CollapseShapeOp::create(
                                        b, loc, flatType, x,
                                        SmallVector<ReassociationIndices>{all}));
    ReassociationIndices outAll;
    for (size_t i = 0; i < shape.size(); ++i)
      outAll.push_back(i);
    Value out = shape.size() == 1
                    ? flat
                    : Value(tensor::ExpandShapeOp::create(
                          b, loc, RankedTensorType::get(shape, t.getElementType()),
                          flat, SmallVector<ReassociationIndices>{outAll}));
    define(n, 0, out);
  }

  void importSoftmax(const onnx::NodeProto &n) {
    Value x = input(n, 0);
    if (failed)
      return;
    auto t = typeOf(x);
    int64_t axis = intAttr(n, "axis", -1);
    if (axis < 0)
      axis += t.getRank();
    if (axis < 0 || axis >= t.getRank()) {
      nodeError(n) << "axis " << intAttr(n, "axis", -1) << " is out of range";
      return;
    }
    Location loc = nodeLoc(n);
    Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, x),
                                         t.getElementType());
    define(n, 0, linalg::SoftmaxOp::create(b, loc, TypeRange{t}, x, init, axis)
                     .getResult()[0]);
  }

  // ----- Attention (opset 23-25) ---------------------------------------------

  void importAttention(const onnx::NodeProto &n) {
    Location loc = nodeLoc(n);
    Value q = input(n, 0), k = input(n, 1), v = input(n, 2);
    Value mask = input(n, 3);
    if (failed)
      return;
    if (!q || !k || !v) {
      nodeError(n) << "needs Q, K and V";
      return;
    }
    Value pastK = input(n, 4), pastV = input(n, 5);
    if (failed)
      return;
    if (!!pastK != !!pastV ||
        ((wantsOutput(n, 1) || wantsOutput(n, 2)) && !pastK)) {
      nodeError(n) << "past_key and past_value (and the present outputs) go "
                      "together";
      return;
    }
    Value nonpad = input(n, 6);
    if (failed)
      return;
    if (nonpad && pastK) {
      nodeError(n) << "nonpad_kv_seqlen together with past_key/past_value is "
                      "not supported yet";
      return;
    }
    auto qt = cast<RankedTensorType>(q.getType());
    auto kt = cast<RankedTensorType>(k.getType());
    auto vt = cast<RankedTensorType>(v.getType());
    if (qt.getRank() != kt.getRank() || qt.getRank() != vt.getRank() ||
        (qt.getRank() != 3 && qt.getRank() != 4)) {
      nodeError(n) << "Q, K and V must all be 3-D or all 4-D, got ranks "
                   << qt.getRank() << ", " << kt.getRank() << ", " << vt.getRank();
      return;
    }
    HeadLayout layout = HeadLayout::heads_major;
    bool transposedOut = false;
    if (qt.getRank() == 3) {
      // [B, S, H*D] viewed as [B, S, H, D]: the seq_major layout, no copy.
      int64_t hq = intAttr(n, "q_num_heads", 0), hkv = intAttr(n, "kv_num_heads", 0);
      if (hq <= 0 || hkv <= 0) {
        nodeError(n) << "3-D Q/K/V need q_num_heads and kv_num_heads";
        return;
      }
      q = splitHeads(n, q, hq);
      k = splitHeads(n, k, hkv);
      v = splitHeads(n, v, hkv);
      if (failed)
        return;
      layout = HeadLayout::seq_major;
    }
    if (pastK) {
      // KV cache: present = concat(past, new) along the sequence, in the
      // heads-major layout the cache uses ([B, Hkv, S, D]).
      auto pk = cast<RankedTensorType>(pastK.getType());
      if (pk.getRank() != 4 ||
          cast<RankedTensorType>(pastV.getType()).getRank() != 4) {
        nodeError(n) << "past_key/past_value must be 4-D [B, kv_heads, past, head]";
        return;
      }
      if (layout == HeadLayout::seq_major) {
        q = swapHeadsAndTokens(loc, q);
        k = swapHeadsAndTokens(loc, k);
        v = swapHeadsAndTokens(loc, v);
        layout = HeadLayout::heads_major;
        transposedOut = true;
      }
      k = tensor::ConcatOp::create(b, loc, /*dim=*/2, ValueRange{pastK, k});
      v = tensor::ConcatOp::create(b, loc, /*dim=*/2, ValueRange{pastV, v});
      define(n, 1, k);
      define(n, 2, v);
    }
    auto q4 = cast<RankedTensorType>(q.getType());
    auto v4 = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> outShape(q4.getShape());
    outShape.back() = v4.getShape().back();
    auto outType = RankedTensorType::get(outShape, q4.getElementType());

    MaskKind maskKind = MaskKind::masked_where_true;
    if (mask) {
      auto mt = cast<RankedTensorType>(mask.getType());
      maskKind = mt.getElementType().isInteger(1) ? MaskKind::attend_where_true
                                                  : MaskKind::additive;
      if (maskKind == MaskKind::additive &&
          mt.getElementType() != q4.getElementType()) {
        nodeError(n) << "float attn_mask type " << mt.getElementType()
                     << " differs from Q's " << q4.getElementType();
        return;
      }
    }
    FloatAttr scale, softcap;
    if (auto s = floatAttr(n, "scale"))
      scale = b.getF32FloatAttr(*s);
    if (auto c = floatAttr(n, "softcap"); c && *c != 0.0f)
      softcap = b.getF32FloatAttr(*c);
    // ONNX's band: query i sees key j when d = j - (i + past) satisfies
    // d <= 0 (is_causal), d <= right and d >= -left (opset 25 windows),
    // where past is the KV cache length. Without a cache that is causal
    // top-left plus windows; with one, the same band shifted by the (static)
    // past length, expressed as a window around the top-left diagonal.
    bool isCausal = intAttr(n, "is_causal", 0) != 0;
    int64_t l = opset >= 25 ? intAttr(n, "left_window_size", -1) : -1;
    int64_t r = opset >= 25 ? intAttr(n, "right_window_size", -1) : -1;
    CausalKind causal = isCausal ? CausalKind::top_left : CausalKind::none;
    if (pastK && (isCausal || l >= 0 || r >= 0)) {
      int64_t past = cast<RankedTensorType>(pastK.getType()).getDimSize(2);
      if (ShapedType::isDynamic(past)) {
        nodeError(n) << "a causal or windowed mask with a dynamic KV cache "
                        "length is not supported yet";
        return;
      }
      int64_t upper = isCausal ? (r >= 0 ? std::min<int64_t>(r, 0) : 0) : r;
      if (upper >= 0 || isCausal)
        upper += past;
      causal = CausalKind::none;
      if (l >= 0 && l - past < 0) {
        // The window ends before the cache does: the band no longer touches
        // the top-left diagonal, so it becomes an explicit mask.
        mask = buildBandMask(loc, q, k, /*len=*/Value(), past, mask, maskKind,
                             isCausal, l, r);
        if (cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1))
          maskKind = MaskKind::attend_where_true;
        l = r = -1;
      } else {
        r = upper;
        l = l >= 0 ? l - past : -1;
      }
    }
    if (nonpad) {
      // Per-batch key lengths: keys j >= len[b] are padding, and the causal
      // diagonal / windows sit at offset len[b] - Sq. Both vary per batch, so
      // they become one explicit mask, combined with attn_mask.
      if (layout == HeadLayout::seq_major) {
        nodeError(n) << "nonpad_kv_seqlen with 3-D inputs is not supported yet";
        return;
      }
      mask = buildBandMask(loc, q, k, nonpad, /*pastLen=*/0, mask, maskKind,
                           isCausal, l, r);
      if (!mask)
        return;
      if (cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1))
        maskKind = MaskKind::attend_where_true;
      causal = CausalKind::none;
      l = r = -1;
    }
    IntegerAttr left, right;
    if (l >= 0)
      left = b.getI64IntegerAttr(l);
    if (r >= 0)
      right = b.getI64IntegerAttr(r);
    Value o = SdpaOp::create(
        b, loc, outType, q, k, v, mask, CausalKindAttr::get(ctx, causal),
        MaskKindAttr::get(ctx, maskKind), HeadLayoutAttr::get(ctx, layout),
        left, right, softcap, scale, b.getF32FloatAttr(0.0f),
        b.getI64IntegerAttr(0));
    if (verify(o.getDefiningOp()).failed()) {
      failed = true;
      return;
    }
    if (wantsOutput(n, 3)) {
      int64_t mode = intAttr(n, "qk_matmul_output_mode", 0);
      if (mode < 0 || mode > 3) {
        nodeError(n) << "qk_matmul_output_mode must be 0..3, got " << mode;
        return;
      }
      Value qh = q, kh = k;
      if (layout == HeadLayout::seq_major) {
        qh = swapHeadsAndTokens(loc, q);
        kh = swapHeadsAndTokens(loc, k);
      }
      double sc = scale ? scale.getValueAsDouble()
                        : 1.0 / std::sqrt(double(q4.getShape().back()));
      double cap = softcap ? softcap.getValueAsDouble() : 0.0;
      define(n, 3, buildScores(loc, qh, kh, mask, maskKind, causal,
                               left ? left.getInt() : -1,
                               right ? right.getInt() : -1, sc, cap, mode,
                               q4.getElementType()));
    }
    if (transposedOut)
      o = swapHeadsAndTokens(loc, o);
    if (layout == HeadLayout::seq_major || transposedOut)
      o = tensor::CollapseShapeOp::create(
          b, loc, o, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    define(n, 0, o);
  }

  /// The ONNX qk_matmul_output tensor [B, Hq, Sq, Sk] for `mode`:
  /// 0 scaled Q K^T, 1 after softcap, 2 after softcap and bias (mask,
  /// causal, window: -inf where masked), 3 softmax probabilities (0 on
  /// fully masked rows). Computed in f32, cast to Q's element type.
  Value buildScores(Location loc, Value q, Value k, Value mask, MaskKind kind,
                    CausalKind causal, int64_t left, int64_t right,
                    double scale, double softcap, int64_t mode, Type elem) {
    using utils::IteratorType;
    auto f32 = b.getF32Type();
    auto cst = [&](OpBuilder &nb, Location l, double v) -> Value {
      return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(float(v)));
    };
    auto ext = [&](OpBuilder &nb, Location l, Value v) -> Value {
      return v.getType() == f32 ? v : arith::ExtFOp::create(nb, l, f32, v);
    };
    auto qt = cast<RankedTensorType>(q.getType());
    auto kt = cast<RankedTensorType>(k.getType());
    int64_t hq = qt.getDimSize(1), hkv = kt.getDimSize(1);
    int64_t group = hq == hkv ? 1 : hq / hkv;
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, q);
    sizes[3] = tensor::getMixedSize(b, loc, k, 2);
    Value zero = tensor::EmptyOp::create(b, loc, sizes, f32);
    zero = linalg::FillOp::create(b, loc, ValueRange{cst(b, loc, 0.0)},
                                  ValueRange{zero})
               .getResult(0);
    auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
    AffineExpr hk = group == 1 ? d(1) : d(1).floorDiv(group);
    SmallVector<AffineMap> qkMaps{
        AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx),
        AffineMap::get(5, 0, {d(0), hk, d(3), d(4)}, ctx),
        AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)};
    SmallVector<IteratorType> qkIters(4, IteratorType::parallel);
    qkIters.push_back(IteratorType::reduction);
    Value s = linalg::GenericOp::create(
                  b, loc, TypeRange{zero.getType()}, ValueRange{q, k},
                  ValueRange{zero}, qkMaps, qkIters,
                  [&](OpBuilder &nb, Location l, ValueRange a) {
                    Value p = arith::MulFOp::create(nb, l, ext(nb, l, a[0]),
                                                    ext(nb, l, a[1]));
                    linalg::YieldOp::create(
                        nb, l, ValueRange{arith::AddFOp::create(nb, l, a[2], p)});
                  })
                  .getResult(0);
    // Elementwise: scale, softcap, bias.
    AffineMap id = b.getMultiDimIdentityMap(4);
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    if (mask && mode >= 2) {
      auto mt = cast<RankedTensorType>(mask.getType());
      SmallVector<AffineExpr> e;
      for (int64_t a = 0; a < mt.getRank(); ++a)
        e.push_back(mt.getDimSize(a) == 1
                        ? b.getAffineConstantExpr(0)
                        : d(static_cast<unsigned>(4 - mt.getRank() + a)));
      ins.push_back(mask);
      maps.push_back(AffineMap::get(4, 0, e, ctx));
    }
    maps.push_back(id);
    Value off;
    if (causal == CausalKind::bottom_right)
      off = arith::SubIOp::create(b, loc, tensor::DimOp::create(b, loc, k, 2),
                                  tensor::DimOp::create(b, loc, q, 2));
    const double ninf = -std::numeric_limits<double>::infinity();
    s = linalg::GenericOp::create(
            b, loc, TypeRange{s.getType()}, ins, ValueRange{s}, maps,
            SmallVector<IteratorType>(4, IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value x = arith::MulFOp::create(nb, l, a.back(), cst(nb, l, scale));
              if (mode >= 1 && softcap > 0.0) {
                Value t = math::TanhOp::create(
                    nb, l, arith::MulFOp::create(nb, l, x, cst(nb, l, 1.0 / softcap)));
                x = arith::MulFOp::create(nb, l, t, cst(nb, l, softcap));
              }
              if (mode >= 2) {
                if (mask) {
                  if (kind == MaskKind::additive)
                    x = arith::AddFOp::create(nb, l, x, ext(nb, l, a[0]));
                  else
                    x = arith::SelectOp::create(nb, l, a[0], x, cst(nb, l, ninf));
                }
                if (causal != CausalKind::none || left >= 0 || right >= 0) {
                  Value i = linalg::IndexOp::create(nb, l, 2);
                  Value j = linalg::IndexOp::create(nb, l, 3);
                  if (off)
                    i = arith::AddIOp::create(nb, l, i, off);
                  Value dd = arith::SubIOp::create(nb, l, j, i);
                  auto idx = [&](int64_t v) -> Value {
                    return arith::ConstantIndexOp::create(nb, l, v);
                  };
                  Value out = arith::ConstantIntOp::create(nb, l, 0, 1);
                  int64_t r = right;
                  if (causal != CausalKind::none)
                    r = r < 0 ? 0 : std::min<int64_t>(r, 0);
                  if (r >= 0)
                    out = arith::OrIOp::create(
                        nb, l, out,
                        arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt, dd, idx(r)));
                  if (left >= 0)
                    out = arith::OrIOp::create(
                        nb, l, out,
                        arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, dd, idx(-left)));
                  x = arith::SelectOp::create(nb, l, out, cst(nb, l, ninf), x);
                }
              }
              linalg::YieldOp::create(nb, l, ValueRange{x});
            })
            .getResult(0);
    if (mode == 3) {
      // Softmax over keys; rows with no visible key are 0, not NaN.
      SmallVector<OpFoldResult> rowSizes(sizes.begin(), sizes.end() - 1);
      AffineMap row = AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx);
      SmallVector<IteratorType> red(3, IteratorType::parallel);
      red.push_back(IteratorType::reduction);
      auto reduce = [&](Value init, bool isMax, Value in) {
        return linalg::GenericOp::create(
                   b, loc, TypeRange{init.getType()}, ValueRange{in},
                   ValueRange{init}, SmallVector<AffineMap>{id, row}, red,
                   [&](OpBuilder &nb, Location l, ValueRange a) {
                     Value r = isMax ? Value(arith::MaximumFOp::create(nb, l, a[0], a[1]))
                                     : Value(arith::AddFOp::create(nb, l, a[0], a[1]));
                     linalg::YieldOp::create(nb, l, ValueRange{r});
                   })
            .getResult(0);
      };
      auto rowInit = [&](double v) {
        Value e = tensor::EmptyOp::create(b, loc, rowSizes, f32);
        return linalg::FillOp::create(b, loc, ValueRange{cst(b, loc, v)},
                                      ValueRange{e})
            .getResult(0);
      };
      Value mx = reduce(rowInit(ninf), true, s);
      Value e = linalg::GenericOp::create(
                    b, loc, TypeRange{s.getType()}, ValueRange{mx}, ValueRange{s},
                    SmallVector<AffineMap>{row, id},
                    SmallVector<IteratorType>(4, IteratorType::parallel),
                    [&](OpBuilder &nb, Location l, ValueRange a) {
                      Value dead = arith::CmpFOp::create(
                          nb, l, arith::CmpFPredicate::OEQ, a[0], cst(nb, l, ninf));
                      Value x = math::ExpOp::create(
                          nb, l, arith::SubFOp::create(nb, l, a[1], a[0]));
                      linalg::YieldOp::create(
                          nb, l, ValueRange{arith::SelectOp::create(nb, l, dead, cst(nb, l, 0.0), x)});
                    })
                    .getResult(0);
      Value sum = reduce(rowInit(0.0), false, e);
      s = linalg::GenericOp::create(
              b, loc, TypeRange{s.getType()}, ValueRange{sum}, ValueRange{e},
              SmallVector<AffineMap>{row, id},
              SmallVector<IteratorType>(4, IteratorType::parallel),
              [&](OpBuilder &nb, Location l, ValueRange a) {
                Value z = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                                a[0], cst(nb, l, 0.0));
                Value x = arith::DivFOp::create(nb, l, a[1], a[0]);
                linalg::YieldOp::create(
                    nb, l, ValueRange{arith::SelectOp::create(nb, l, z, cst(nb, l, 0.0), x)});
              })
              .getResult(0);
    }
    if (elem != f32) {
      Value out = tensor::EmptyOp::create(b, loc, sizes, elem);
      s = linalg::GenericOp::create(
              b, loc, TypeRange{out.getType()}, ValueRange{s}, ValueRange{out},
              SmallVector<AffineMap>{id, id},
              SmallVector<IteratorType>(4, IteratorType::parallel),
              [&](OpBuilder &nb, Location l, ValueRange a) {
                linalg::YieldOp::create(
                    nb, l, ValueRange{arith::TruncFOp::create(nb, l, elem, a[0])});
              })
              .getResult(0);
    }
    return s;
  }

  /// The explicit mask [B, Hq, Sq, Sk] of an Attention node whose band the
  /// attributes cannot express. With `len` (nonpad_kv_seqlen): key j is
  /// visible to query i of batch b iff j < len[b] and, when causal /
  /// windowed, -left <= j - (i + len[b] - Sq) <= right (0 for causal).
  /// Without it the diagonal sits at i + pastLen. Combined with `userMask`:
  /// bool masks are and-ed, float masks keep their values where visible and
  /// -inf elsewhere. A user mask shorter than Sk (opset 24) counts its
  /// missing columns as masked.
  Value buildBandMask(Location loc, Value q, Value k, Value len, int64_t pastLen,
                      Value userMask, MaskKind kind, bool causal, int64_t left,
                      int64_t right) {
    using utils::IteratorType;
    auto qt = cast<RankedTensorType>(q.getType());
    auto kt = cast<RankedTensorType>(k.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, q);
    sizes[3] = tensor::getMixedSize(b, loc, k, 2);
    bool additive = userMask && kind == MaskKind::additive;
    Type elem = additive ? cast<RankedTensorType>(userMask.getType()).getElementType()
                         : b.getI1Type();
    if (userMask) {
      auto mt = cast<RankedTensorType>(userMask.getType());
      int64_t have = mt.getShape().back(), want = kt.getDimSize(2);
      if (!ShapedType::isDynamic(have) && !ShapedType::isDynamic(want) &&
          have != 1 && have < want) {
        // Pad the short mask with masked columns.
        SmallVector<OpFoldResult> lo(mt.getRank(), b.getIndexAttr(0)),
            hi(mt.getRank(), b.getIndexAttr(0));
        hi.back() = b.getIndexAttr(want - have);
        Attribute fill = additive
                             ? Attribute(b.getFloatAttr(
                                   elem, -std::numeric_limits<double>::infinity()))
                             : Attribute(b.getBoolAttr(false));
        Value pad = arith::ConstantOp::create(b, loc, cast<TypedAttr>(fill));
        SmallVector<int64_t> shape(mt.getShape());
        shape.back() = want;
        userMask = tensor::PadOp::create(
            b, loc, RankedTensorType::get(shape, mt.getElementType()), userMask,
            lo, hi, pad);
      }
    }
    Value init = tensor::EmptyOp::create(b, loc, sizes, elem);
    auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    if (len) {
      ins.push_back(len);
      maps.push_back(AffineMap::get(4, 0, {d(0)}, ctx));
    }
    if (userMask) {
      auto mt = cast<RankedTensorType>(userMask.getType());
      SmallVector<AffineExpr> e;
      for (int64_t a = 0; a < mt.getRank(); ++a)
        e.push_back(mt.getDimSize(a) == 1
                        ? b.getAffineConstantExpr(0)
                        : d(static_cast<unsigned>(4 - mt.getRank() + a)));
      ins.push_back(userMask);
      maps.push_back(AffineMap::get(4, 0, e, ctx));
    }
    maps.push_back(b.getMultiDimIdentityMap(4));
    Value sq = tensor::DimOp::create(b, loc, q, 2);
    (void)qt;
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
               SmallVector<IteratorType>(4, IteratorType::parallel),
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 auto idx = [&](int64_t v) -> Value {
                   return arith::ConstantIndexOp::create(nb, l, v);
                 };
                 Value i = linalg::IndexOp::create(nb, l, 2);
                 Value j = linalg::IndexOp::create(nb, l, 3);
                 Value ok, off;
                 if (len) {
                   Value L = arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
                   ok = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, j, L);
                   off = arith::SubIOp::create(nb, l, L, sq);
                 } else {
                   ok = arith::ConstantIntOp::create(nb, l, 1, 1);
                   off = idx(pastLen);
                 }
                 Value user = userMask ? a[len ? 1 : 0] : Value();
                 Value dd = arith::SubIOp::create(
                     nb, l, j, arith::AddIOp::create(nb, l, i, off));
                 int64_t r = causal ? (right >= 0 ? std::min<int64_t>(right, 0) : 0) : right;
                 if (r >= 0)
                   ok = arith::AndIOp::create(
                       nb, l, ok,
                       arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, dd, idx(r)));
                 if (left >= 0)
                   ok = arith::AndIOp::create(
                       nb, l, ok,
                       arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, dd, idx(-left)));
                 Value out = ok;
                 if (userMask && !additive)
                   out = arith::AndIOp::create(nb, l, ok, user);
                 if (additive) {
                   Value ninf = arith::ConstantOp::create(
                       nb, l, nb.getFloatAttr(elem, -std::numeric_limits<double>::infinity()));
                   out = arith::SelectOp::create(nb, l, ok, user, ninf);
                 }
                 linalg::YieldOp::create(nb, l, ValueRange{out});
               })
        .getResult(0);
  }

  /// [B, X, Y, D] -> [B, Y, X, D] (a copy).
  Value swapHeadsAndTokens(Location loc, Value x) {
    auto t = cast<RankedTensorType>(x.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
    std::swap(sizes[1], sizes[2]);
    Value init = tensor::EmptyOp::create(b, loc, sizes, t.getElementType());
    return linalg::TransposeOp::create(b, loc, x, init,
                                       ArrayRef<int64_t>{0, 2, 1, 3})
        .getResult()[0];
  }

  /// [B, S, H*D] -> [B, S, H, D] (a view).
  Value splitHeads(const onnx::NodeProto &n, Value x, int64_t heads) {
    auto t = cast<RankedTensorType>(x.getType());
    int64_t width = t.getShape().back();
    if (ShapedType::isDynamic(width) || width % heads != 0) {
      nodeError(n) << "hidden size " << width << " is not a multiple of "
                   << heads << " heads";
      return x;
    }
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, nodeLoc(n), x);
    sizes.back() = b.getIndexAttr(heads);
    sizes.push_back(b.getIndexAttr(width / heads));
    return tensor::ExpandShapeOp::create(
        b, nodeLoc(n),
        RankedTensorType::get({t.getDimSize(0), t.getDimSize(1), heads, width / heads},
                              t.getElementType()),
        x, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}, sizes);
  }

  MLIRContext *ctx;
  OpBuilder b;
  OnnxImportOptions options;
  Location fileLoc;
  int64_t opset = 0;
  int nodeIndex = 0;
  bool failed = false;
  std::map<std::string, Value> values;
};

} // namespace

OwningOpRef<ModuleOp> importOnnxModel(StringRef bytes, StringRef fileName,
                                      MLIRContext *context,
                                      const OnnxImportOptions &options) {
  context->loadDialect<AttnDialect, arith::ArithDialect, func::FuncDialect,
                       linalg::LinalgDialect, math::MathDialect,
                       tensor::TensorDialect>();
  return Importer(context, fileName, options).run(bytes);
}

void registerOnnxImportDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
}

} // namespace mlir::attn
