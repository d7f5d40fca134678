//===- RaiseAttention.cpp - raising unfused attention
//-----------------------===//
//
// Exported graphs spell attention out in MatMul/Softmax/... nodes; the
// recognised subgraphs become attn ops so the optimizing pipeline applies.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace mlir::attn::onnx_import {

std::optional<double> Importer::scalarConst(const std::string &name,
                                            int depth) {
  if (depth > 8)
    return std::nullopt;
  // Already imported: a one-element constant or known shape arithmetic.
  if (auto k = knownInts.find(name); k != knownInts.end()) {
    if (k->second.elems.size() == 1)
      if (auto c = getConstantIntValue(k->second.elems[0]))
        return double(*c);
    return std::nullopt;
  }
  if (auto v = values.find(name); v != values.end()) {
    DenseElementsAttr attr;
    if (matchPattern(v->second, m_Constant(&attr)) &&
        attr.getNumElements() == 1) {
      if (isa<FloatType>(attr.getElementType()))
        return (*attr.getValues<APFloat>().begin()).convertToDouble();
      if (isa<IntegerType>(attr.getElementType()) &&
          !attr.getElementType().isInteger(1))
        return double((*attr.getValues<APInt>().begin()).getSExtValue());
    }
  }
  auto fromTensor = [](const onnx::TensorProto &t) -> std::optional<double> {
    int64_t count = 1;
    for (int64_t d : t.dims())
      count *= d;
    if (count != 1)
      return std::nullopt;
    const std::string &raw = t.raw_data();
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (t.float_data_size() == 1)
        return t.float_data(0);
      if (raw.size() == 4) {
        float f;
        std::memcpy(&f, raw.data(), 4);
        return f;
      }
      break;
    case onnx::TensorProto::DOUBLE:
      if (raw.size() == 8) {
        double d;
        std::memcpy(&d, raw.data(), 8);
        return d;
      }
      break;
    case onnx::TensorProto::INT64:
      if (t.int64_data_size() == 1)
        return double(t.int64_data(0));
      if (raw.size() == 8) {
        int64_t i;
        std::memcpy(&i, raw.data(), 8);
        return double(i);
      }
      break;
    default:
      break;
    }
    return std::nullopt;
  };
  if (auto it = initByName.find(name); it != initByName.end())
    return fromTensor(*it->second);
  auto it = producer.find(name);
  if (it == producer.end())
    return std::nullopt;
  const onnx::NodeProto &p = *it->second;
  const std::string &op = p.op_type();
  if (op == "Constant" || op == "ConstantOfShape") {
    if (const auto *a = attr(p, "value"); a && a->has_t())
      return fromTensor(a->t());
    return op == "ConstantOfShape" ? std::optional<double>(0.0) : std::nullopt;
  }
  if ((op == "Cast" || op == "Identity" || op == "Sqrt") &&
      p.input_size() >= 1) {
    auto x = scalarConst(p.input(0), depth + 1);
    if (x && op == "Sqrt")
      return *x >= 0 ? std::optional<double>(std::sqrt(*x)) : std::nullopt;
    return x;
  }
  if ((op == "Pow" || op == "Div" || op == "Mul" || op == "Add" ||
       op == "Sub") &&
      p.input_size() == 2) {
    auto x = scalarConst(p.input(0), depth + 1),
         y = scalarConst(p.input(1), depth + 1);
    if (!x || !y)
      return std::nullopt;
    if (op == "Pow")
      return std::pow(*x, *y);
    if (op == "Div")
      return *y != 0 ? std::optional<double>(*x / *y) : std::nullopt;
    if (op == "Mul")
      return *x * *y;
    return op == "Add" ? *x + *y : *x - *y;
  }
  return std::nullopt;
}

void Importer::findAttentionChains(const onnx::GraphProto &g) {
  for (const auto &t : g.initializer())
    initByName[t.name()] = &t;
  for (const auto &n : g.node()) {
    nodeOrder[&n] = nodeOrder.size();
    for (const auto &o : n.output())
      producer[o] = &n;
    for (const auto &i : n.input())
      ++uses[i];
  }
  for (const auto &o : g.output())
    ++uses[o.name()];
  for (const auto &pv : g.node()) {
    if (pv.op_type() != "MatMul" || pv.input_size() != 2 ||
        uses[pv.input(0)] != 1)
      continue;
    auto sm = producer.find(pv.input(0));
    if (sm == producer.end() || sm->second->op_type() != "Softmax" ||
        sm->second->input_size() != 1)
      continue;
    const onnx::NodeProto *softmax = sm->second;
    // Softmax over the last axis (the opset-13 default is -1).
    if (intAttr(*softmax, "axis", -1) != -1)
      continue;
    AttentionChain chain;
    chain.nodes.push_back(softmax);
    if (!matchScores(softmax->input(0), chain, 0))
      continue;
    llvm::sort(chain.nodes,
               [&](const onnx::NodeProto *a, const onnx::NodeProto *b) {
                 return nodeOrder[a] < nodeOrder[b];
               });
    raiseAt[&pv] = chain;
    for (const auto *s : chain.nodes)
      raisedAway.insert(s);
  }
}

bool Importer::matchScores(const std::string &x, AttentionChain &chain,
                           int depth) {
  auto p = producer.find(x);
  if (depth > 6 || p == producer.end() || uses[x] != 1)
    return false;
  const onnx::NodeProto &node = *p->second;
  const std::string &op = node.op_type();
  // Tries `attempt` on a copy of the chain; keeps it only if it matched.
  auto tryWith = [&](auto attempt) {
    AttentionChain copy = chain;
    if (!attempt(copy))
      return false;
    chain = std::move(copy);
    return true;
  };
  // A scalar operand: constants and the arithmetic that computes scales.
  auto scalarLike = [&](const std::string &name) {
    if (initByName.count(name))
      return true;
    auto q = producer.find(name);
    static const std::set<std::string> ops = {
        "Constant", "ConstantOfShape", "Sqrt", "Pow", "Cast", "Div"};
    return q != producer.end() && ops.count(q->second->op_type());
  };
  if (op == "MatMul" && node.input_size() == 2) {
    chain.qk = &node;
    chain.nodes.push_back(&node);
    // PyTorch's SDPA export scales Q and K^T by sqrt(scale) each.
    for (int i = 0; i < 2; ++i) {
      std::string in = node.input(i);
      auto m = producer.find(in);
      if (m != producer.end() && m->second->op_type() == "Mul" &&
          uses[in] == 1 && m->second->input_size() == 2) {
        int f = scalarLike(m->second->input(1))   ? 1
                : scalarLike(m->second->input(0)) ? 0
                                                  : -1;
        if (f >= 0) {
          chain.scaleFactors.push_back({m->second->input(f), false});
          chain.nodes.push_back(m->second);
          in = m->second->input(1 - f);
        }
      }
      (i == 0 ? chain.q : chain.kT) = in;
    }
    return true;
  }
  if ((op == "Div" || op == "Mul") && node.input_size() == 2) {
    for (int f : {1, 0}) {
      if (op == "Div" && f == 0)
        break;
      if (tryWith([&](AttentionChain &c) {
            c.scaleFactors.push_back({node.input(f), op == "Div"});
            c.nodes.push_back(&node);
            return matchScores(node.input(1 - f), c, depth + 1);
          }))
        return true;
    }
    return false;
  }
  if (op == "Where" && node.input_size() == 3 && chain.mask.empty()) {
    // Where(m, fill, s): m marks masked scores (the seed's masked_fill);
    // Where(m, s, fill): m marks kept ones (GPT-2's causal bias).
    for (int dataIdx : {2, 1})
      if (tryWith([&](AttentionChain &c) {
            c.mask = node.input(0);
            c.fill = node.input(dataIdx == 2 ? 1 : 2);
            c.maskKind = dataIdx == 2 ? MaskKind::masked_where_true
                                      : MaskKind::attend_where_true;
            c.nodes.push_back(&node);
            return matchScores(node.input(dataIdx), c, depth + 1);
          }))
        return true;
    return false;
  }
  if (op == "Add" && node.input_size() == 2 && chain.mask.empty()) {
    for (int dataIdx : {0, 1})
      if (tryWith([&](AttentionChain &c) {
            c.mask = node.input(1 - dataIdx);
            c.maskKind = MaskKind::additive;
            c.nodes.push_back(&node);
            return matchScores(node.input(dataIdx), c, depth + 1);
          }))
        return true;
    return false;
  }
  if (op == "Cast" && node.input_size() == 1) {
    chain.casts.push_back(node.output(0));
    chain.nodes.push_back(&node);
    return matchScores(node.input(0), chain, depth + 1);
  }
  return false;
}

void Importer::emitRaisedAttention(const onnx::NodeProto &pv,
                                   const AttentionChain &c) {
  Location loc = nodeLoc(pv);
  auto importOneByOne = [&] {
    for (const onnx::NodeProto *node : c.nodes)
      if (!failed)
        importNode(*node);
    if (!failed)
      importNode(pv);
  };
  auto value = [&](const std::string &name) -> Value {
    if (values.count(name) || knownInts.count(name)) {
      onnx::NodeProto use;
      use.add_input(name);
      return input(use, 0);
    }
    return nullptr;
  };
  Value q = value(c.q), kT = value(c.kT), v = input(pv, 1);
  Value mask = c.mask.empty() ? Value() : value(c.mask);
  if (failed)
    return;
  if (!q || !kT || !v || (!c.mask.empty() && !mask))
    return importOneByOne();
  // The checks structure alone could not make.
  double scale = 1.0;
  for (const auto &[name, divides] : c.scaleFactors) {
    auto f = scalarConst(name);
    if (!f || *f == 0.0 || !std::isfinite(*f))
      return importOneByOne();
    scale = divides ? scale / *f : scale * *f;
  }
  if (!c.fill.empty()) {
    auto fill = scalarConst(c.fill);
    if (!fill || *fill > -1.0e4)
      return importOneByOne();
  }
  auto qt = typeOf(q), kt = typeOf(kT), vt = typeOf(v);
  int64_t r = qt.getRank();
  bool shapesOk = r >= 2 && kt.getRank() == r && vt.getRank() == r &&
                  isa<FloatType>(qt.getElementType()) &&
                  kt.getElementType() == qt.getElementType() &&
                  vt.getElementType() == qt.getElementType();
  if (mask) {
    Type me = typeOf(mask).getElementType();
    shapesOk &= c.maskKind == MaskKind::additive ? me == qt.getElementType()
                                                 : me.isInteger(1);
    shapesOk &= typeOf(mask).getRank() <= r;
  }
  // Casts inside the chain must not change the element type.
  for (const onnx::NodeProto *node : c.nodes)
    if (node->op_type() == "Cast")
      shapesOk &= elemType(intAttr(*node, "to", 0)) == qt.getElementType();
  if (!shapesOk)
    return importOneByOne();
  // K^T [.., d, Tk] -> K [.., Tk, d].
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i)
    perm.push_back(i);
  std::swap(perm[r - 1], perm[r - 2]);
  SmallVector<OpFoldResult> ks = sizesOf(kT);
  std::swap(ks[r - 1], ks[r - 2]);
  Value kInit = tensor::EmptyOp::create(b, loc, ks, kt.getElementType());
  Value k = linalg::TransposeOp::create(b, loc, kT, kInit, perm).getResult()[0];
  SmallVector<int64_t> outShape(qt.getShape());
  outShape.back() = vt.getShape().back();
  auto sdpa = SdpaOp::create(
      b, loc, RankedTensorType::get(outShape, qt.getElementType()), q, k, v,
      mask, CausalKindAttr::get(ctx, CausalKind::none),
      MaskKindAttr::get(ctx, c.maskKind),
      HeadLayoutAttr::get(ctx, HeadLayout::heads_major), IntegerAttr(),
      IntegerAttr(), FloatAttr(), b.getF32FloatAttr(float(scale)),
      b.getF32FloatAttr(0.0f), b.getI64IntegerAttr(0));
  {
    // Shapes that do not fit attention (say, a mask that does not
    // broadcast): no raising, no diagnostic from the trial.
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    if (verify(sdpa).failed()) {
      sdpa->erase();
      return importOneByOne();
    }
  }
  InFlightDiagnostic remark = emitRemark(loc);
  remark << "raised " << c.nodes.size() + 1 << " ONNX nodes to attn.sdpa:";
  for (const onnx::NodeProto *node : c.nodes)
    remark << " " << node->op_type() << " '" << node->name() << "',";
  remark << " " << pv.op_type() << " '" << pv.name() << "'";
  define(pv, 0, sdpa);
}

} // namespace mlir::attn::onnx_import
