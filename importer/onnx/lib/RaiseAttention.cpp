//===- RaiseAttention.cpp - raising unfused attention -----------------------===//
//
// Exported graphs spell attention out in MatMul/Softmax/... nodes; the
// recognised subgraphs become attn ops so the optimizing pipeline applies.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace mlir::attn::onnx_import {

/// A scalar constant (initializer, Constant node, or Pow of two).
std::optional<double> Importer::scalarConst(const std::string &name) {
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

bool Importer::isBoolTensor(const std::string &name) {
  if (auto it = initByName.find(name); it != initByName.end())
    return it->second->data_type() == onnx::TensorProto::BOOL;
  auto v = values.find(name);
  return v != values.end() &&
         cast<RankedTensorType>(v->second.getType()).getElementType().isInteger(1);
}

void Importer::findAttentionChains(const onnx::GraphProto &g) {
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
void Importer::emitRaisedAttention(const onnx::NodeProto &pv, const AttentionChain &c) {
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
std::vector<const onnx::NodeProto *> Importer::chainNodes(const onnx::NodeProto &pv,
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

} // namespace mlir::attn::onnx_import
