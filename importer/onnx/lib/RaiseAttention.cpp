//===- RaiseAttention.cpp - raising unfused attention ---------------------===//
//
// Exported graphs spell attention out in MatMul/Softmax/... nodes; the
// recognised subgraphs become attn ops so the optimizing pipeline applies.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/ScopeExit.h"

namespace mlir::attn::onnx_import {

namespace {

/// Whether `mask`, a bool mask of kind `kind`, keeps at least one key
/// (last axis) in every row: a constant (or its Not) that does, or a
/// square top-left corner of one ([:T, :T], as an export slices a
/// model-sized band to the sequence while running) whose every row i keeps
/// a key j <= i, which the corner holds whatever T is. False for any other
/// value.
bool keepsAKeyInEveryRow(Value mask, MaskKind kind) {
  bool keptValue = kind == MaskKind::attend_where_true;
  // Not (an elementwise xor with true) flips which value keeps a key.
  while (auto g = mask.getDefiningOp<linalg::GenericOp>()) {
    auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
    auto x = yield.getNumOperands() == 1
                 ? yield.getOperand(0).getDefiningOp<arith::XOrIOp>()
                 : nullptr;
    if (g.getNumDpsInputs() != 1 || !x ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return false;
    Value in = g.getBody()->getArgument(0);
    Value other = x.getLhs() == in ? x.getRhs() : x.getLhs();
    if ((x.getLhs() != in && x.getRhs() != in) || !matchPattern(other, m_One()))
      return false;
    keptValue = !keptValue;
    mask = g.getDpsInputs()[0];
  }
  // Top-left corners: rank-keeping, unit strides, no offset on the last
  // two dims (leading dims may be sliced anyhow: every row is checked).
  bool corner = false;
  while (auto slice = mask.getDefiningOp<tensor::ExtractSliceOp>()) {
    int64_t rank = slice.getSourceType().getRank();
    if (rank < 2 || slice.getResultType().getRank() != rank ||
        !llvm::all_of(slice.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return false;
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    if (!isConstantIntValue(offsets[rank - 2], 0) ||
        !isConstantIntValue(offsets[rank - 1], 0))
      return false;
    // The outermost slice fixes the corner's shape: square.
    if (!corner) {
      SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
      if (!isEqualConstantIntOrValue(sizes[rank - 2], sizes[rank - 1]))
        return false;
    }
    corner = true;
    mask = slice.getSource();
  }
  std::optional<DenseElementsAttr> attr = constantElements(mask);
  if (!attr || !attr->getElementType().isInteger(1))
    return false;
  auto shape = attr->getType().getShape();
  int64_t keys = shape.empty() ? 1 : shape.back();
  int64_t rows = shape.size() < 2 ? 1 : shape[shape.size() - 2];
  if (keys == 0)
    return false;
  SmallVector<bool> values(attr->getValues<bool>());
  for (size_t row = 0; row < values.size(); row += keys) {
    // In a corner, row i sees keys up to i at least.
    int64_t seen =
        corner ? std::min<int64_t>(keys, (row / keys) % rows + 1) : keys;
    bool any = false;
    for (int64_t j = 0; j < seen && !any; ++j)
      any = values[row + j] == keptValue;
    if (!any)
      return false;
  }
  return true;
}

// Fuzzed models have nodes with fewer inputs or outputs than their op
// needs; the matchers read names through these, which give "" instead.
const std::string &inputName(const onnx::NodeProto &n, int i) {
  static const std::string none;
  return i < n.input_size() ? n.input(i) : none;
}
const std::string &outputName(const onnx::NodeProto &n, int i) {
  static const std::string none;
  return i < n.output_size() ? n.output(i) : none;
}
} // namespace

std::optional<double> Importer::scalarConst(const std::string &name,
                                            int depth) {
  if (auto v = scalarValue(name, depth))
    return v->value;
  return std::nullopt;
}

std::optional<Importer::Scalar> Importer::scalarValue(const std::string &name,
                                                      int depth) {
  if (depth > 8)
    return std::nullopt;
  // Already imported: a one-element constant or known shape arithmetic.
  if (auto k = knownInts.find(name); k != knownInts.end()) {
    if (k->second.elems.size() == 1)
      if (auto c = getConstantIntValue(k->second.elems[0]))
        return Scalar{double(*c), true};
    return std::nullopt;
  }
  if (auto v = values.find(name); v != values.end()) {
    DenseElementsAttr attr;
    if (auto c = constantElements(v->second))
      attr = *c;
    if (attr && attr.getNumElements() == 1) {
      if (isa<FloatType>(attr.getElementType()))
        return Scalar{(*attr.getValues<APFloat>().begin()).convertToDouble(),
                      false};
      if (isa<IntegerType>(attr.getElementType()) &&
          !attr.getElementType().isInteger(1))
        return Scalar{double((*attr.getValues<APInt>().begin()).getSExtValue()),
                      true};
    }
  }
  auto fromTensor = [](const onnx::TensorProto &t) -> std::optional<Scalar> {
    int64_t count = 1;
    for (int64_t d : t.dims())
      count *= d;
    if (count != 1)
      return std::nullopt;
    const std::string &raw = t.raw_data();
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (t.float_data_size() == 1)
        return Scalar{t.float_data(0), false};
      if (raw.size() == 4) {
        float f;
        std::memcpy(&f, raw.data(), 4);
        return Scalar{f, false};
      }
      break;
    case onnx::TensorProto::DOUBLE:
      if (raw.size() == 8) {
        double d;
        std::memcpy(&d, raw.data(), 8);
        return Scalar{d, false};
      }
      break;
    case onnx::TensorProto::INT64:
      if (t.int64_data_size() == 1)
        return Scalar{double(t.int64_data(0)), true};
      if (raw.size() == 8) {
        int64_t i;
        std::memcpy(&i, raw.data(), 8);
        return Scalar{double(i), true};
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
    return op == "ConstantOfShape" ? std::optional<Scalar>(Scalar{0.0, false})
                                   : std::nullopt;
  }
  if ((op == "Cast" || op == "Identity" || op == "Sqrt") &&
      p.input_size() >= 1) {
    auto x = scalarValue(inputName(p, 0), depth + 1);
    if (!x)
      return std::nullopt;
    if (op == "Sqrt")
      return !x->isInt && x->value >= 0
                 ? std::optional<Scalar>(Scalar{std::sqrt(x->value), false})
                 : std::nullopt;
    if (op == "Cast") {
      // What the Cast does to the value: integers truncate, bool is != 0,
      // float32 rounds.
      std::optional<Type> to = elemType(intAttr(p, "to", 0));
      if (!to)
        return std::nullopt;
      if (to->isInteger(1))
        return Scalar{x->value != 0.0 ? 1.0 : 0.0, true};
      if (isa<IntegerType>(*to))
        return std::isfinite(x->value)
                   ? std::optional<Scalar>(Scalar{std::trunc(x->value), true})
                   : std::nullopt;
      if (to->isF32())
        return Scalar{double(float(x->value)), false};
      return Scalar{x->value, false};
    }
    return x;
  }
  if ((op == "Pow" || op == "Div" || op == "Mul" || op == "Add" ||
       op == "Sub") &&
      p.input_size() == 2) {
    auto x = scalarValue(inputName(p, 0), depth + 1),
         y = scalarValue(inputName(p, 1), depth + 1);
    if (!x || !y || x->isInt != y->isInt)
      return std::nullopt;
    bool isInt = x->isInt;
    double r;
    if (op == "Pow")
      r = std::pow(x->value, y->value);
    else if (op == "Div") {
      if (y->value == 0)
        return std::nullopt;
      r = isInt ? std::trunc(x->value / y->value) : x->value / y->value;
    } else if (op == "Mul")
      r = x->value * y->value;
    else
      r = op == "Add" ? x->value + y->value : x->value - y->value;
    if (isInt)
      r = std::trunc(r);
    return Scalar{r, isInt};
  }
  return std::nullopt;
}

void Importer::findAttentionChains(const onnx::GraphProto &g) {
  for (const auto &t : g.initializer())
    initByName[t.name()] = &t;
  for (const auto &n : g.node())
    nodeOrder[&n] = nodeOrder.size();
  // Uses that read the data: Shape reads only sizes, and so does a node
  // whose outputs only reach Shape (the seed's keys.transpose(1, 2) whose
  // shape gives the scale). Graph order is topological, so a reverse walk
  // sees every consumer before its producer.
  std::map<std::string, int> allUses;
  for (const auto &n : g.node())
    for (const auto &i : n.input())
      ++allUses[i];
  for (const auto &o : g.output()) {
    ++allUses[o.name()];
    ++uses[o.name()];
  }
  for (int i = g.node_size() - 1; i >= 0; --i) {
    const onnx::NodeProto &n = g.node(i);
    bool readsData = n.op_type() != "Shape";
    if (readsData && n.op_type() != "Identity" &&
        llvm::all_of(n.output(), [&](const std::string &o) {
          return allUses[o] > 0 && uses[o] == 0;
        }))
      readsData = false; // everything it computes only feeds Shape
    if (readsData)
      for (const auto &in : n.input())
        ++uses[in];
  }
  for (const auto &pv : g.node()) {
    if (pv.op_type() != "MatMul" || pv.input_size() != 2 ||
        uses[inputName(pv, 0)] != 1)
      continue;
    AttentionChain chain;
    std::string weights = inputName(pv, 0);
    // Identity nodes (hand-built graphs, some exporters) pass values on.
    while (const auto *id = producedBy(weights, "Identity")) {
      if (id->input_size() != 1 || uses[inputName(*id, 0)] != 1)
        break;
      chain.nodes.push_back(id);
      weights = inputName(*id, 0);
    }
    // A no-op Cast of the weights (GPT-2: attn_weights.type(value.dtype)).
    if (const auto *cast = producedBy(weights, "Cast");
        cast && uses[inputName(*cast, 0)] == 1) {
      chain.nodes.push_back(cast);
      weights = inputName(*cast, 0);
    }
    // The seed's first method of causal attention: the softmax weights
    // masked by a 0/1 matrix t and renormalised,
    //   softmax(s) * t / rowsum(softmax(s) * t) == softmax(t ? s : -inf).
    if (const auto *div = producedBy(weights, "Div");
        div && div->input_size() == 2) {
      const auto *mul = producedBy(inputName(*div, 0), "Mul");
      const auto *sum = producedBy(inputName(*div, 1), "ReduceSum");
      if (mul && sum && inputName(*sum, 0) == inputName(*div, 0) &&
          uses[inputName(*div, 0)] == 2 && uses[inputName(*div, 1)] == 1 &&
          intAttr(*sum, "keepdims", 1) == 1 && mul->input_size() == 2) {
        // Axes: an input from opset 13, an attribute before.
        std::optional<double> axes;
        if (const auto *a = attr(*sum, "axes"); a && a->ints_size() == 1)
          axes = double(a->ints(0));
        else if (sum->input_size() > 1)
          axes = scalarConst(inputName(*sum, 1));
        for (int t : {1, 0}) {
          if (!axes || !producedBy(inputName(*mul, 1 - t), "Softmax") ||
              uses[inputName(*mul, 1 - t)] != 1)
            continue;
          chain.masks.push_back({inputName(*mul, t),
                                 MaskKind::attend_where_true, "", true,
                                 int64_t(*axes)});
          chain.nodes.insert(chain.nodes.end(), {div, mul, sum});
          weights = inputName(*mul, 1 - t);
          break;
        }
      }
    }
    auto sm = producer.find(weights);
    if (sm == producer.end() || sm->second->op_type() != "Softmax" ||
        sm->second->input_size() != 1)
      continue;
    const onnx::NodeProto *softmax = sm->second;
    // Softmax over the last axis: -1 (opset 13's default) or the scores'
    // rank - 1, checked once the rank is known (opsets 9-12 flatten the
    // dims from `axis` on, the same thing for the last one; their default
    // is 1).
    chain.softmaxAxis = intAttr(*softmax, "axis", opset < 13 ? 1 : -1);
    if (chain.softmaxAxis < -1)
      continue;
    chain.nodes.push_back(softmax);
    if (!matchScores(inputName(*softmax, 0), chain, 0))
      continue;
    llvm::sort(chain.nodes,
               [&](const onnx::NodeProto *a, const onnx::NodeProto *b) {
                 return nodeOrder[a] < nodeOrder[b];
               });
    raiseAt[&pv] = chain;
    if (auto region = matchRegion(pv, chain))
      raiseRegionAt[region->anchor] = std::move(*region);
  }
}

std::optional<Importer::Projection>
Importer::matchProjection(const std::string &name) {
  auto single = [&](const std::string &v) { return uses[v] == 1; };
  auto p = producer.find(name);
  if (p == producer.end() || !single(name))
    return std::nullopt;
  Projection proj;
  const onnx::NodeProto *node = p->second;
  if (node->op_type() == "Add" && node->input_size() == 2) {
    // Add(MatMul(x, W), b) in either order, b an initializer.
    for (int bi : {1, 0}) {
      auto m = producer.find(inputName(*node, 1 - bi));
      if (initByName.count(inputName(*node, bi)) && m != producer.end() &&
          m->second->op_type() == "MatMul" &&
          single(inputName(*node, 1 - bi))) {
        proj.bias = node;
        proj.b = inputName(*node, bi);
        node = m->second;
        break;
      }
    }
    if (!proj.bias)
      return std::nullopt;
  }
  if (node->op_type() != "MatMul" || node->input_size() != 2 ||
      !initByName.count(inputName(*node, 1)))
    return std::nullopt;
  proj.matmul = node;
  proj.x = inputName(*node, 0);
  proj.w = inputName(*node, 1);
  return proj;
}

std::optional<Importer::RaisedRegion>
Importer::matchRegion(const onnx::NodeProto &pv, const AttentionChain &chain) {
  auto single = [&](const std::string &v) { return uses[v] == 1; };
  auto producedBy = [&](const std::string &v,
                        StringRef op) -> const onnx::NodeProto * {
    auto p = producer.find(v);
    if (p == producer.end() || p->second->op_type() != op || !single(v))
      return nullptr;
    return p->second;
  };
  auto perm = [&](const onnx::NodeProto *t) {
    SmallVector<int64_t> r;
    if (const auto *a = attr(*t, "perm"))
      r.assign(a->ints().begin(), a->ints().end());
    return r;
  };
  auto onlyUser = [&](const std::string &v) -> const onnx::NodeProto * {
    if (!single(v))
      return nullptr;
    for (const auto &[node, order] : nodeOrder)
      for (const auto &in : node->input())
        if (in == v)
          return node;
    return nullptr;
  };
  RaisedRegion r;
  r.pv = &pv;
  r.chain = chain;
  // Multi-head: Transpose(Reshape(projection)) for Q and V, K straight to
  // [.., H, hd, T].
  auto headPath = [&](const std::string &v, ArrayRef<int64_t> want,
                      Projection &proj) {
    const onnx::NodeProto *t = producedBy(v, "Transpose");
    if (!t || perm(t) != SmallVector<int64_t>(want))
      return false;
    const onnx::NodeProto *reshape = producedBy(inputName(*t, 0), "Reshape");
    if (!reshape || reshape->input_size() != 2)
      return false;
    auto p = matchProjection(inputName(*reshape, 0));
    if (!p)
      return false;
    proj = *p;
    r.nodes.insert(r.nodes.end(), {t, reshape});
    r.reshapeTargets.push_back(inputName(*reshape, 1));
    return true;
  };
  auto addProjection = [&](const Projection &p) {
    r.nodes.push_back(p.matmul);
    if (p.bias)
      r.nodes.push_back(p.bias);
  };
  std::string result;
  if (headPath(chain.q, {0, 2, 1, 3}, r.q) &&
      headPath(chain.kT, {0, 2, 3, 1}, r.k) &&
      headPath(inputName(pv, 1), {0, 2, 1, 3}, r.v)) {
    r.multiHead = true;
    // Merge: Transpose(0, 2, 1, 3) -> Reshape [.., T, H*hd].
    const onnx::NodeProto *t = onlyUser(outputName(pv, 0));
    if (!t || t->op_type() != "Transpose" ||
        perm(t) != SmallVector<int64_t>{0, 2, 1, 3})
      return std::nullopt;
    const onnx::NodeProto *reshape = onlyUser(outputName(*t, 0));
    if (!reshape || reshape->op_type() != "Reshape" ||
        inputName(*reshape, 0) != outputName(*t, 0))
      return std::nullopt;
    r.nodes.insert(r.nodes.end(), {t, reshape});
    r.reshapeTargets.push_back(inputName(*reshape, 1));
    result = outputName(*reshape, 0);
  } else {
    // One head: Q = x W_q, K^T = Transpose(x W_k), V = x W_v.
    r.nodes.clear();
    r.reshapeTargets.clear();
    auto q = matchProjection(chain.q);
    const onnx::NodeProto *kt = producedBy(chain.kT, "Transpose");
    auto v = matchProjection(inputName(pv, 1));
    if (!q || !kt || !v)
      return std::nullopt;
    auto k = matchProjection(inputName(*kt, 0));
    SmallVector<int64_t> kp = perm(kt);
    bool swapsLastTwo = kp.size() >= 2 &&
                        kp[kp.size() - 1] == int64_t(kp.size()) - 2 &&
                        kp[kp.size() - 2] == int64_t(kp.size()) - 1;
    for (size_t i = 0; swapsLastTwo && i + 2 < kp.size(); ++i)
      swapsLastTwo = kp[i] == int64_t(i);
    if (!k || !swapsLastTwo)
      return std::nullopt;
    r.q = *q;
    r.k = *k;
    r.v = *v;
    r.nodes.push_back(kt);
    result = outputName(pv, 0);
  }
  if (r.q.x != r.k.x || r.q.x != r.v.x)
    return std::nullopt;
  addProjection(r.q);
  addProjection(r.k);
  addProjection(r.v);
  // An output projection: MatMul(merged, W_o) [+ b_o].
  if (r.multiHead) {
    if (const onnx::NodeProto *m = onlyUser(result);
        m && m->op_type() == "MatMul" && inputName(*m, 0) == result &&
        initByName.count(inputName(*m, 1))) {
      r.out.matmul = m;
      r.out.w = inputName(*m, 1);
      result = outputName(*m, 0);
      if (const onnx::NodeProto *a = onlyUser(result);
          a && a->op_type() == "Add") {
        std::string other =
            inputName(*a, 0) == result ? inputName(*a, 1) : inputName(*a, 0);
        if (initByName.count(other)) {
          r.out.bias = a;
          r.out.b = other;
        }
      }
      addProjection(r.out);
    }
  }
  std::vector<const onnx::NodeProto *> all = r.nodes;
  all.insert(all.end(), chain.nodes.begin(), chain.nodes.end());
  all.push_back(&pv);
  r.anchor = *llvm::max_element(
      all, [&](const onnx::NodeProto *a, const onnx::NodeProto *b) {
        return nodeOrder[a] < nodeOrder[b];
      });
  llvm::sort(r.nodes, [&](const onnx::NodeProto *a, const onnx::NodeProto *b) {
    return nodeOrder[a] < nodeOrder[b];
  });
  return r;
}

const onnx::NodeProto *Importer::producedBy(const std::string &name,
                                            StringRef op) {
  auto p = producer.find(name);
  return p == producer.end() || p->second->op_type() != op ? nullptr
                                                           : p->second;
}

bool Importer::isCausalTriangle(Value mask, MaskKind kind, double post) {
  // The analysis attn-fold-mask uses: a constant top-left triangle, possibly
  // sliced at the origin, identical across leading dims. Masked additive
  // entries must stay masked after the scale applied with the scores.
  bool sliced = false;
  Type slicedType = mask.getType();
  mask = peelOriginSlices(mask, sliced);
  std::optional<DenseElementsAttr> attr = constantElements(mask);
  // A uniform mask is no triangle (and may be huge: do not walk it).
  if (!attr || attr->isSplat())
    return false;
  std::optional<MaskGrid> grid = readMask(*attr, kind, post);
  if (grid)
    clipToSlice(*grid, slicedType);
  return grid && grid->rows >= 2 && grid->cols >= 2 && isTriangle(*grid, 0);
}

bool Importer::isSlicedBottomRightTriangle(Value mask, MaskKind kind,
                                           double post, Value q, Value kT) {
  int64_t r = typeOf(q).getRank();
  auto mt = dyn_cast<RankedTensorType>(mask.getType());
  if (!mt || mt.getRank() < 2)
    return false;
  // The slice the op reads has Tq rows and Tk keys (no broadcast).
  OpFoldResult tq = dimOf(q, r - 2), tk = dimOf(kT, r - 1);
  if (!isEqualConstantIntOrValue(dimOf(mask, mt.getRank() - 2), tq) ||
      !isEqualConstantIntOrValue(dimOf(mask, mt.getRank() - 1), tk))
    return false;
  // Rank-keeping unit-stride slices, offset only along the rows: their
  // row offsets add up.
  OpFoldResult rowOffset = b.getIndexAttr(0);
  while (auto slice = mask.getDefiningOp<tensor::ExtractSliceOp>()) {
    int64_t rank = slice.getSourceType().getRank();
    if (slice.getResultType().getRank() != rank ||
        !llvm::all_of(slice.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return false;
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    for (int64_t d = 0; d < rank; ++d)
      if (d != rank - 2 && !isConstantIntValue(offsets[d], 0))
        return false;
    rowOffset = foldIndex('+', rowOffset, offsets[rank - 2]);
    mask = slice.getSource();
  }
  std::optional<DenseElementsAttr> attr = constantElements(mask);
  if (!attr || attr->isSplat())
    return false;
  std::optional<MaskGrid> grid = readMask(*attr, kind, post);
  if (!grid || grid->rows < 2 || grid->cols < 2)
    return false;
  // With Tq > Tk the top rows see no key: softmax(s) under a finite fill,
  // zeros under the attribute (as attn-fold-mask).
  if (grid->finiteMasked && grid->hasFullyMaskedRow())
    return false;
  // A static export folds the slice: the constant is the triangle itself.
  auto ctq = getConstantIntValue(tq), ctk = getConstantIntValue(tk);
  // (Tq < Tk only: with more queries than keys the top rows see no key,
  // which a bool mask's finite fill would turn into softmax(s).)
  if (isConstantIntValue(rowOffset, 0) && ctq && ctk && *ctq < *ctk &&
      grid->rows == *ctq && grid->cols == *ctk)
    return isTriangle(*grid, *ctk - *ctq);
  // Row Tk - Tq + i of the triangle shows keys j <= Tk - Tq + i.
  return isTriangle(*grid, 0) &&
         isEqualConstantIntOrValue(rowOffset, foldIndex('-', tk, tq));
}

std::string Importer::describeRaise(ArrayRef<const onnx::NodeProto *> nodes,
                                    StringRef opName) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "raised " << nodes.size() << " ONNX nodes to " << opName << ":";
  for (auto [i, node] : llvm::enumerate(nodes)) {
    // (The model's op: an Einsum read as MatMul is named as such.)
    bool einsum = StringRef(node->doc_string()).starts_with(kEinsumAsMatMul);
    os << (i ? ", " : " ") << (einsum ? "Einsum" : node->op_type()) << " ";
    if (node->name().empty())
      os << "#" << modelIndex(nodeOrder[node]);
    else
      os << "'" << node->name() << "'";
  }
  return text;
}

void Importer::emitRaisedRegion(const RaisedRegion &r) {
  // If the region does not raise, the core's own remark stands.
  llvm::scope_exit flush([&] {
    auto it = deferredRemarks.find(r.anchor);
    if (it != deferredRemarks.end()) {
      emitRemark(it->second.first) << it->second.second;
      deferredRemarks.erase(it);
    }
  });
  // The core passed every check of its own (types, ranks, casts, masks).
  if (!raisedChains.count(r.pv))
    return;
  Value x = lookup(r.q.x), wq = lookup(r.q.w), wk = lookup(r.k.w),
        wv = lookup(r.v.w);
  Value bq = lookup(r.q.b), bk = lookup(r.k.b), bv = lookup(r.v.b);
  Value wo = r.out.matmul ? lookup(r.out.w) : Value();
  Value bo = r.out.bias ? lookup(r.out.b) : Value();

  if (!x || !wq || !wk || !wv || (r.q.bias && !bq) || (r.k.bias && !bk) ||
      (r.v.bias && !bv) || (r.out.matmul && !wo) || (r.out.bias && !bo))
    return;
  auto xt = typeOf(x), wt = typeOf(wq);
  bool ok = xt.getRank() >= 2 && wt.getRank() == 2 && typeOf(wk) == wt &&
            typeOf(wv) == wt && xt.getElementType() == wt.getElementType() &&
            isa<FloatType>(xt.getElementType());
  if (!ok)
    return;
  // Biases only on all three or none (the op's form).
  if ((bool)bq != (bool)bk || (bool)bq != (bool)bv)
    return;
  int64_t dOut = wt.getDimSize(1);
  int64_t heads = 1, headDim = dOut;
  if (r.multiHead) {
    if (xt.getRank() != 3)
      return;
    // Split targets [B, T, H, hd] (B and T as x's or 0/-1), merge [B, T, H*hd].
    for (size_t i = 0; i < r.reshapeTargets.size(); ++i) {
      auto k = known(r.reshapeTargets[i]);
      bool merge = i == 3;
      if (!k || k->elems.size() != (merge ? 3u : 4u))
        return;
      for (int64_t d = 0; d < 2; ++d) {
        auto c = getConstantIntValue(k->elems[d]);
        if (!(c && (*c == 0 || *c == -1)) &&
            !isEqualConstantIntOrValue(k->elems[d], dimOf(x, d)))
          return;
      }
      if (merge) {
        auto c = getConstantIntValue(k->elems[2]);
        if (!c || (*c != dOut && *c != -1))
          return;
        continue;
      }
      auto h = getConstantIntValue(k->elems[2]),
           hd = getConstantIntValue(k->elems[3]);
      if (!h || !hd || *h <= 0 || *h * *hd != dOut || (i > 0 && *h != heads))
        return;
      heads = *h;
      headDim = *hd;
    }
  }
  // The attn ops here take no mask operand: causal or nothing.
  std::optional<ResolvedChain> rc =
      resolveChain(r.chain, lookup(r.chain.q), lookup(r.chain.kT));
  if (!rc || rc->mask)
    return;
  double scale = rc->scale;
  // The ops here are causal top-left or not at all.
  if (rc->causal == CausalKind::bottom_right)
    return;
  bool causal = rc->causal == CausalKind::top_left;
  Location loc = nodeLoc(*r.anchor);
  FloatAttr scaleAttr;
  if (std::abs(scale * std::sqrt(double(headDim)) - 1.0) > 1e-6)
    scaleAttr = b.getF32FloatAttr(float(scale));
  SmallVector<int64_t> shape(xt.getShape());
  shape.back() = wo ? typeOf(wo).getDimSize(1) : dOut;
  auto resultType = RankedTensorType::get(shape, xt.getElementType());
  Operation *op;
  if (!r.multiHead && causal)
    op = CausalAttentionOp::create(b, loc, resultType, x, wq, wk, wv, bq, bk,
                                   bv, scaleAttr, b.getF32FloatAttr(0.0f),
                                   b.getI64IntegerAttr(0));
  else
    op = MultiHeadAttentionOp::create(
        b, loc, resultType, x, wq, wk, wv, bq, bk, bv, wo, bo,
        b.getI64IntegerAttr(heads), causal ? b.getUnitAttr() : UnitAttr(),
        scaleAttr, b.getF32FloatAttr(0.0f), b.getI64IntegerAttr(0));
  {
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    if (verify(op).failed()) {
      op->erase();
      return;
    }
  }
  std::vector<const onnx::NodeProto *> all = r.nodes;
  all.insert(all.end(), r.chain.nodes.begin(), r.chain.nodes.end());
  all.push_back(r.pv);
  llvm::sort(all, [&](const onnx::NodeProto *a, const onnx::NodeProto *b) {
    return nodeOrder[a] < nodeOrder[b];
  });
  deferredRemarks.erase(r.anchor);
  emitRemark(loc) << describeRaise(all, op->getName().getStringRef());
  define(*r.anchor, 0, op->getResult(0));
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
      std::string in = inputName(node, i);
      auto m = producer.find(in);
      if (m != producer.end() && m->second->op_type() == "Mul" &&
          uses[in] == 1 && m->second->input_size() == 2) {
        int f = scalarLike(inputName(*m->second, 1))   ? 1
                : scalarLike(inputName(*m->second, 0)) ? 0
                                                       : -1;
        if (f >= 0) {
          chain.scaleFactors.push_back({inputName(*m->second, f), false});
          chain.nodes.push_back(m->second);
          in = inputName(*m->second, 1 - f);
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
            c.scaleFactors.push_back({inputName(node, f), op == "Div"});
            c.nodes.push_back(&node);
            return matchScores(inputName(node, 1 - f), c, depth + 1);
          }))
        return true;
    }
    return false;
  }
  if (op == "Where" && node.input_size() == 3 && chain.masks.size() < 2) {
    // Where(m, fill, s): m marks masked scores (the seed's masked_fill);
    // Where(m, s, fill): m marks kept ones (GPT-2's causal bias).
    for (int dataIdx : {2, 1})
      if (tryWith([&](AttentionChain &c) {
            c.masks.push_back({inputName(node, 0),
                               dataIdx == 2 ? MaskKind::masked_where_true
                                            : MaskKind::attend_where_true,
                               inputName(node, dataIdx == 2 ? 1 : 2)});
            c.masks.back().scalesAfter = c.scaleFactors.size();
            c.nodes.push_back(&node);
            return matchScores(inputName(node, dataIdx), c, depth + 1);
          }))
        return true;
    return false;
  }
  if (op == "Add" && node.input_size() == 2 && chain.masks.size() < 2) {
    for (int dataIdx : {0, 1})
      if (tryWith([&](AttentionChain &c) {
            c.masks.push_back(
                {inputName(node, 1 - dataIdx), MaskKind::additive, ""});
            c.masks.back().scalesAfter = c.scaleFactors.size();
            c.nodes.push_back(&node);
            return matchScores(inputName(node, dataIdx), c, depth + 1);
          }))
        return true;
    return false;
  }
  if (op == "Identity" && node.input_size() == 1) {
    chain.nodes.push_back(&node);
    return matchScores(inputName(node, 0), chain, depth + 1);
  }
  if (op == "Cast" && node.input_size() == 1) {
    chain.casts.push_back(outputName(node, 0));
    chain.nodes.push_back(&node);
    return matchScores(inputName(node, 0), chain, depth + 1);
  }
  return false;
}

std::optional<Importer::ResolvedChain>
Importer::resolveChain(const AttentionChain &c, Value q, Value kT) {
  if (!q || !kT)
    return std::nullopt;
  ResolvedChain rc;
  // Masks, fills and scale tensors of a higher rank than Q broadcast the
  // scores (and the result) to that rank, which attn.sdpa, of Q's rank,
  // would not: nanoGPT's [1, 1, T, T] buffer on [H, T, d] heads.
  int64_t rank = typeOf(q).getRank();
  auto rankOf = [&](const std::string &name) -> int64_t {
    if (auto v = values.find(name); v != values.end())
      return typeOf(v->second).getRank();
    if (auto k = knownInts.find(name); k != knownInts.end())
      return k->second.scalar ? 0 : 1;
    return 0;
  };
  for (const auto &[name, divides] : c.scaleFactors)
    if (rankOf(name) > rank)
      return std::nullopt;
  for (const AttentionChain::Mask &m : c.masks)
    if (rankOf(m.name) > rank || (!m.fill.empty() && rankOf(m.fill) > rank))
      return std::nullopt;
  // Factors in walk order: the first ones found are applied last. Only
  // positive scales: a negative one would turn masked scores into maxima.
  SmallVector<double> factors;
  for (const auto &[name, divides] : c.scaleFactors) {
    auto f = scalarConst(name);
    if (!f || *f <= 0.0 || !std::isfinite(*f))
      return std::nullopt;
    factors.push_back(divides ? 1.0 / *f : *f);
    rc.scale *= factors.back();
  }
  for (const AttentionChain::Mask &m : c.masks) {
    Value mv = lookup(m.name);
    if (!mv)
      return std::nullopt;
    double post = 1.0; // scaling applied to the mask with the scores
    for (size_t i = 0; i < m.scalesAfter && i < factors.size(); ++i)
      post *= factors[i];
    if (!m.fill.empty()) {
      auto fill = scalarConst(m.fill);
      if (!fill || *fill * post > -1.0e4)
        return std::nullopt;
    }
    MaskKind kind = m.kind;
    if (m.renormalized) {
      // Exact only for a 0/1 t over the last axis: a constant.
      DenseElementsAttr t;
      int64_t r = typeOf(q).getRank();
      if ((m.renormAxis != -1 && m.renormAxis != r - 1) ||
          !(t = constantElements(mv).value_or(DenseElementsAttr())) ||
          !isa<FloatType>(t.getElementType()) ||
          llvm::any_of(t.getValues<APFloat>(), [](const APFloat &x) {
            return !x.isZero() && !x.isExactlyValue(1.0);
          }))
        return std::nullopt;
      SmallVector<bool> keep;
      for (const APFloat &x : t.getValues<APFloat>())
        keep.push_back(!x.isZero());
      auto bt = RankedTensorType::get(t.getType().getShape(), b.getI1Type());
      mv = arith::ConstantOp::create(
          b, fileLoc, DenseElementsAttr::get(bt, ArrayRef<bool>(keep)));
    }
    std::optional<CausalKind> causal;
    if (isCausalTriangle(mv, kind, post))
      causal = CausalKind::top_left;
    else if (isSlicedBottomRightTriangle(mv, kind, post, q, kT))
      causal = CausalKind::bottom_right;
    else if (kind == MaskKind::additive)
      causal = shapeCausalMask(m.name, q, kT, post);
    else
      causal = shapeCausalBoolMask(m.name, kind, q, kT);
    if (causal) {
      // Two triangles of different alignments hide more than either.
      if (rc.causal != CausalKind::none && rc.causal != *causal)
        return std::nullopt;
      rc.causal = *causal;
      continue;
    }
    if (rc.mask)
      return std::nullopt; // two masks neither of which is causal
    // A finite fill replaces the masked scores, so a row whose keys are
    // all masked averages V (a softmax of equal scores), where the op's
    // mask gives 0: only a constant mask that keeps a key in every row is
    // raised (a mask known only while running, DistilBERT's
    // masked_fill(pad, finfo.min), stays op by op).
    if (!m.fill.empty() && std::isfinite(*scalarConst(m.fill)) &&
        !keepsAKeyInEveryRow(mv, kind))
      return std::nullopt;
    if (kind == MaskKind::additive && post != 1.0) {
      // Added before the scale: the bias is scaled with the scores.
      auto mt = typeOf(mv);
      Value init =
          tensor::EmptyOp::create(b, fileLoc, sizesOf(mv), mt.getElementType());
      SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(mt.getRank()));
      mv = linalg::GenericOp::create(
               b, fileLoc, TypeRange{init.getType()}, ValueRange{mv},
               ValueRange{init}, maps,
               SmallVector<utils::IteratorType>(mt.getRank(),
                                                utils::IteratorType::parallel),
               [&](OpBuilder &nb, Location l, ValueRange a) {
                 Value c = arith::ConstantOp::create(
                     nb, l, nb.getFloatAttr(mt.getElementType(), post));
                 linalg::YieldOp::create(
                     nb, l, Value(arith::MulFOp::create(nb, l, a[0], c)));
               })
               .getResult(0);
    }
    rc.mask = mv;
    rc.kind = kind;
  }
  return rc;
}

std::optional<CausalKind> Importer::shapeCausalMask(const std::string &name,
                                                    Value q, Value kT,
                                                    double post) {
  auto is = [&](const std::string &v, double x) {
    auto c = scalarConst(v);
    return c && *c == x;
  };
  if (producedBy(name, "Trilu"))
    return triluCausal(name, q, kT,
                       [&](double fill) { return fill * post <= -1.0e4; });
  const onnx::NodeProto *where = producedBy(name, "Where");
  if (!where || where->input_size() != 3 || !is(inputName(*where, 2), 0.0))
    return std::nullopt;
  auto fill = scalarConst(inputName(*where, 1));
  const onnx::NodeProto *eq = producedBy(inputName(*where, 0), "Equal");
  if (!fill || *fill * post > -1.0e4 || !eq || !is(inputName(*eq, 1), 0.0))
    return std::nullopt;
  return triluCausal(inputName(*eq, 0), q, kT);
}

std::optional<CausalKind> Importer::shapeCausalBoolMask(const std::string &name,
                                                        MaskKind kind, Value q,
                                                        Value kT) {
  // Casts to bool of the 0/1 values change nothing; Not flips which
  // entries the triangle marks.
  std::string v = name;
  bool negated = false;
  for (int depth = 0; depth < 8; ++depth) {
    auto p = producer.find(v);
    if (p == producer.end())
      return std::nullopt;
    const onnx::NodeProto &n = *p->second;
    if (n.op_type() == "Cast" && n.input_size() == 1 &&
        intAttr(n, "to", 0) == ::onnx::TensorProto::BOOL) {
      v = inputName(n, 0);
    } else if (n.op_type() == "Not" && n.input_size() == 1) {
      negated = !negated;
      v = inputName(n, 0);
    } else {
      break;
    }
  }
  // The triangle (tril: key j <= row i + k) is what attends.
  bool hidesTriangle = kind == MaskKind::masked_where_true;
  if (negated != hidesTriangle)
    return std::nullopt;
  return triluCausal(v, q, kT);
}

std::optional<CausalKind>
Importer::triluCausal(const std::string &name, Value q, Value kT,
                      llvm::function_ref<bool(double)> hideFill) {
  const onnx::NodeProto *tril = producedBy(name, "Trilu");
  bool upper = static_cast<bool>(hideFill);
  if (!tril || intAttr(*tril, "upper", 1) != (upper ? 1 : 0))
    return std::nullopt;
  // A fill of shape [Tq, Tk]: ConstantOfShape(value), Expand(value, shape)
  // or a constant (static exports). Ones for tril, in any element type
  // (bool true for torch.ones(..., dtype=torch.bool)); for triu a float
  // that hides what it is added to.
  auto isOne = [&](DenseElementsAttr v) {
    if (isa<FloatType>(v.getElementType())) {
      APFloat x = *v.getValues<APFloat>().begin();
      return upper ? hideFill(x.convertToDouble()) : x.isExactlyValue(1.0);
    }
    return !upper && v.getElementType().isIntOrIndex() &&
           (*v.getValues<APInt>().begin()).isOne();
  };
  int64_t r = typeOf(q).getRank();
  OpFoldResult tq = dimOf(q, r - 2), tk = dimOf(kT, r - 1);
  std::optional<KnownInts> k;
  if (const auto *cos = producedBy(inputName(*tril, 0), "ConstantOfShape")) {
    const auto *a = attr(*cos, "value");
    auto v = a && a->has_t() ? tensorAttr(a->t()) : std::nullopt;
    if (!v || v->getNumElements() != 1 || !isOne(*v))
      return std::nullopt;
    k = known(inputName(*cos, 0));
  } else if (const auto *ex = producedBy(inputName(*tril, 0), "Expand")) {
    auto c = scalarValue(inputName(*ex, 0), 0);
    if (!c || (upper ? c->isInt || !hideFill(c->value) : c->value != 1.0))
      return std::nullopt;
    k = known(inputName(*ex, 1));
  } else if (Value ones = lookup(inputName(*tril, 0))) {
    std::optional<DenseElementsAttr> v = constantElements(ones);
    if (!v || !v->isSplat() || v->getType().getRank() != 2 || !isOne(*v))
      return std::nullopt;
    k.emplace();
    for (int64_t size : v->getType().getShape())
      k->elems.push_back(b.getIndexAttr(size));
  }
  if (!k || k->elems.size() != 2 ||
      !isEqualConstantIntOrValue(k->elems[0], tq) ||
      !isEqualConstantIntOrValue(k->elems[1], tk))
    return std::nullopt;
  // The diagonal: absent or 0 is top-left; Tk - Tq (a constant, or the
  // subtraction of those two sizes) bottom-right, and top-left as well
  // where the two are equal.
  OpFoldResult diag = b.getIndexAttr(0);
  if (tril->input_size() > 1 && !inputName(*tril, 1).empty()) {
    auto d = known(inputName(*tril, 1));
    if (!d || d->elems.size() != 1)
      return std::nullopt;
    diag = d->elems[0];
  }
  // triu(k) hides j - i >= k: it shows what tril(k - 1) shows.
  if (upper) {
    auto triuDiag = getConstantIntValue(diag);
    if (!triuDiag)
      return std::nullopt;
    diag = b.getIndexAttr(*triuDiag - 1);
  }
  if (isConstantIntValue(diag, 0))
    return CausalKind::top_left;
  auto ctq = getConstantIntValue(tq), ctk = getConstantIntValue(tk),
       cdiag = getConstantIntValue(diag);
  if (ctq && ctk && cdiag)
    return *cdiag == *ctk - *ctq ? std::optional(CausalKind::bottom_right)
                                 : std::nullopt;
  auto dv = dyn_cast<Value>(diag);
  auto sub = dv ? dv.getDefiningOp<arith::SubIOp>() : arith::SubIOp();
  if (sub && isEqualConstantIntOrValue(sub.getLhs(), tk) &&
      isEqualConstantIntOrValue(sub.getRhs(), tq))
    return CausalKind::bottom_right;
  // Tk - Tq in the importer's simplified form (Tk = P + Tq: the past
  // length P itself).
  if (isEqualConstantIntOrValue(diag, foldIndex('-', tk, tq)))
    return CausalKind::bottom_right;
  return std::nullopt;
}

void Importer::emitRaisedAttention(const onnx::NodeProto &pv,
                                   const AttentionChain &c) {
  Location loc = nodeLoc(pv);
  Value q = lookup(c.q), kT = lookup(c.kT), v = input(pv, 1);
  if (failed || !q || !kT || !v)
    return;
  std::optional<ResolvedChain> rc = resolveChain(c, q, kT);
  if (!rc)
    return;
  Value mask = rc->mask;
  auto qt = typeOf(q), kt = typeOf(kT), vt = typeOf(v);
  int64_t r = qt.getRank();
  bool shapesOk = (c.softmaxAxis == -1 || c.softmaxAxis == r - 1) && r >= 2 &&
                  kt.getRank() == r && vt.getRank() == r &&
                  isa<FloatType>(qt.getElementType()) &&
                  kt.getElementType() == qt.getElementType() &&
                  vt.getElementType() == qt.getElementType();
  // The MatMuls broadcast their batch dims; attn.sdpa does not. Raise only
  // when Q, K^T and V agree exactly (equal static or the same SSA size), and
  // Q's head size is K^T's rows, K^T's columns V's rows. The one exception
  // is multi-query attention: one K/V head (dim r - 3 of size 1) that the
  // MatMuls broadcast to all of Q's heads, which attn.sdpa reads as GQA.
  auto same = [&](Value a, int64_t i, Value c, int64_t j) {
    return isEqualConstantIntOrValue(dimOf(a, i), dimOf(c, j));
  };
  bool oneKvHead = r >= 3 && !qt.isDynamicDim(r - 3) &&
                   kt.getDimSize(r - 3) == 1 && vt.getDimSize(r - 3) == 1;
  for (int64_t i = 0; shapesOk && i + 2 < r; ++i)
    shapesOk =
        (oneKvHead && i == r - 3) || (same(q, i, kT, i) && same(q, i, v, i));
  shapesOk = shapesOk && same(q, r - 1, kT, r - 2) && same(kT, r - 1, v, r - 2);
  if (mask) {
    Type me = typeOf(mask).getElementType();
    shapesOk &= rc->kind == MaskKind::additive ? me == qt.getElementType()
                                               : me.isInteger(1);
    shapesOk &= typeOf(mask).getRank() <= r;
  }
  // Casts inside the chain must not change the element type.
  for (const onnx::NodeProto *node : c.nodes)
    if (node->op_type() == "Cast")
      shapesOk &= elemType(intAttr(*node, "to", 0)) == qt.getElementType();
  if (!shapesOk)
    return;
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
      mask, CausalKindAttr::get(ctx, rc->causal),
      MaskKindAttr::get(ctx, rc->kind),
      HeadLayoutAttr::get(ctx, HeadLayout::heads_major), IntegerAttr(),
      IntegerAttr(), FloatAttr(), b.getF32FloatAttr(float(rc->scale)),
      b.getF32FloatAttr(0.0f), b.getI64IntegerAttr(0));
  {
    // Shapes that do not fit attention (say, a mask that does not
    // broadcast): no raising, no diagnostic from the trial.
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    if (verify(sdpa).failed()) {
      sdpa->erase();
      return;
    }
  }
  std::vector<const onnx::NodeProto *> all = c.nodes;
  all.push_back(&pv);
  std::string text = describeRaise(all, "attn.sdpa");
  define(pv, 0, sdpa);
  raisedChains.insert(&pv);
  // Projections around this core may yet raise to a bigger op: then that
  // op's remark is the one that tells what happened.
  for (const auto &[anchor, region] : raiseRegionAt)
    if (region.pv == &pv) {
      deferredRemarks.insert_or_assign(anchor, std::make_pair(loc, text));
      return;
    }
  emitRemark(loc) << text;
}

} // namespace mlir::attn::onnx_import
