//===- ImportTensorOps.cpp - standard ONNX ops ------------------------------===//
//
// The ops that surround attention in exported graphs, imported to
// linalg/tensor/arith so that a graph no pattern recognises still compiles.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace mlir::attn::onnx_import {

/// A constant tensor input as integers (shapes, permutations), if it is one.
std::optional<SmallVector<int64_t>> Importer::constInts(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> r;
  for (const APInt &x : attr.getValues<APInt>())
    r.push_back(x.getSExtValue());
  return r;
}

void Importer::importConstant(const onnx::NodeProto &n) {
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
bool Importer::broadcast(const onnx::NodeProto &n, ArrayRef<Value> ins,
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

void Importer::importElementwise(const onnx::NodeProto &n) {
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
void Importer::importMatMul(const onnx::NodeProto &n) {
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

void Importer::importTranspose(const onnx::NodeProto &n) {
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
void Importer::importReshape(const onnx::NodeProto &n) {
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

void Importer::importSoftmax(const onnx::NodeProto &n) {
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

} // namespace mlir::attn::onnx_import
