//===- ImportShapeOps.cpp - shapes and data movement ----------------------===//
//
// Shape, Gather, Unsqueeze, Squeeze, Concat, Slice, Split, Expand and
// ConstantOfShape. On the small integer tensors of shape arithmetic they
// compute KnownInts (see Importer.h), so dynamic sizes stay SSA sizes; on
// data they become tensor views (expand/collapse/extract_slice), tensor.concat
// or linalg ops.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mlir::attn::onnx_import {

Value indexOutside(OpBuilder &b, Location l, Value i, Value size) {
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value below = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                      arith::SubIOp::create(b, l, zero, size));
  Value above = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i, size);
  return arith::OrIOp::create(b, l, below, above);
}

Value wrapIndex(OpBuilder &b, Location l, Value i, Value size) {
  Value negative =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                            arith::ConstantIndexOp::create(b, l, 0));
  return arith::SelectOp::create(b, l, negative,
                                 arith::AddIOp::create(b, l, i, size), i);
}

void Importer::importShape(const onnx::NodeProto &n) {
  Value x = input(n, 0);
  if (failed)
    return;
  int64_t rank = typeOf(x).getRank();
  int64_t start = intAttr(n, "start", 0), end = intAttr(n, "end", rank);
  // Shape clamps start and end (after adding rank to negatives).
  auto clampAxis = [&](int64_t a) {
    return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank);
  };
  start = clampAxis(start);
  end = clampAxis(end);
  KnownInts k;
  k.elemType = b.getI64Type();
  for (int64_t i = start; i < end; ++i)
    k.elems.push_back(dimOf(x, i));
  defineKnown(n, 0, k);
}

void Importer::importGather(const onnx::NodeProto &n) {
  auto indices = knownInput(n, 1);
  std::optional<SmallVector<int64_t>> idx;
  if (indices)
    idx = indices->constants();
  // Shape arithmetic: picking elements of a known 1-D integer tensor.
  if (auto data = knownInput(n, 0); data && !data->scalar && idx) {
    KnownInts k;
    k.elemType = data->elemType;
    k.scalar = indices->scalar;
    int64_t size = data->elems.size();
    for (int64_t i : *idx) {
      if (i < -size || i >= size) {
        nodeError(n) << "index " << i << " is out of range for " << size
                     << " elements";
        return;
      }
      k.elems.push_back(data->elems[i < 0 ? i + size : i]);
    }
    return defineKnown(n, 0, k);
  }
  Value data = input(n, 0), ids = input(n, 1);
  if (failed)
    return;
  auto dt = typeOf(data), it = typeOf(ids);
  auto axis = normalizeAxis(intAttr(n, "axis", 0), dt.getRank());
  if (!axis) {
    nodeError(n) << "axis " << intAttr(n, "axis", 0) << " is out of range";
    return;
  }
  if (!isa<IntegerType>(it.getElementType()) ||
      it.getElementType().isInteger(1)) {
    nodeError(n) << "indices must be integers, got " << it.getElementType();
    return;
  }
  // out[pre..., idx..., post...] = data[pre..., indices[idx...], post...];
  // indices are wrapped (negative) and clamped, so no read is out of bounds.
  // Indices that are graph inputs (token ids into an embedding), directly
  // or reshaped, broadcast or cast on the way, are also checked by the
  // runtime, so an id past the table is an error, not a silently clamped
  // row.
  // Position ids arange(T) (T a graph input's size) stay below N rows when
  // T <= N: the runtime refuses longer inputs, as for a sliced mask buffer.
  // Constant indices are checked here. Any other indices (computed in the
  // graph: a Slice of token ids, ids plus an offset, a table of dynamic
  // size) are checked where they are read: see indexErrorSlot.
  bool checkedBeforeCall = false;
  if (auto arg = idsInputOf(n.input(1)); arg && !dt.isDynamicDim(*axis)) {
    int64_t size = dt.getDimSize(*axis);
    auto [it, fresh] =
        indexRanges.try_emplace(*arg, std::make_pair(-size, size));
    if (!fresh)
      it->second = {std::max(it->second.first, -size),
                    std::min(it->second.second, size)};
    checkedBeforeCall = true;
  } else if (auto r = rangeInputSizeOf(n.input(1));
             r && !dt.isDynamicDim(*axis)) {
    boundInputSize(*r, dt.getDimSize(*axis));
    checkedBeforeCall = true;
  } else if (DenseIntElementsAttr constIdx;
             !dt.isDynamicDim(*axis) &&
             (idx || matchPattern(ids, m_Constant(&constIdx)))) {
    int64_t size = dt.getDimSize(*axis);
    SmallVector<int64_t> values =
        idx ? *idx : llvm::to_vector(constIdx.getValues<int64_t>());
    for (int64_t i : values)
      if (i < -size || i >= size) {
        nodeError(n) << "index " << i << " is out of range for axis " << *axis
                     << " of size " << size;
        return;
      }
    checkedBeforeCall = true;
  }
  std::optional<std::string> errorSlot;
  if (!checkedBeforeCall)
    errorSlot = indexErrorSlot(n);
  Location loc = nodeLoc(n);
  int64_t outRank = dt.getRank() - 1 + it.getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < *axis; ++i)
    sizes.push_back(dimOf(data, i));
  for (int64_t i = 0; i < it.getRank(); ++i)
    sizes.push_back(dimOf(ids, i));
  for (int64_t i = *axis + 1; i < dt.getRank(); ++i)
    sizes.push_back(dimOf(data, i));
  Value init = tensor::EmptyOp::create(b, loc, sizes, dt.getElementType());
  SmallVector<AffineExpr> idxExprs;
  for (int64_t i = 0; i < it.getRank(); ++i)
    idxExprs.push_back(b.getAffineDimExpr(*axis + i));
  SmallVector<AffineMap> maps{AffineMap::get(outRank, 0, idxExprs, ctx),
                              b.getMultiDimIdentityMap(outRank)};
  Value axisSize = indexValue(dimOf(data, *axis));
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{ids}, ValueRange{init},
          maps,
          SmallVector<utils::IteratorType>(outRank,
                                           utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value i =
                arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
            Value zero = arith::ConstantIndexOp::create(nb, l, 0);
            // The other coordinates (linalg.index belongs directly in the
            // body, not in a branch of it).
            SmallVector<Value> coords;
            for (int64_t d = 0; d < *axis; ++d)
              coords.push_back(linalg::IndexOp::create(nb, l, d));
            coords.push_back(nullptr);
            for (int64_t d = *axis + 1; d < dt.getRank(); ++d)
              coords.push_back(
                  linalg::IndexOp::create(nb, l, d - 1 + it.getRank()));
            auto read = [&](OpBuilder &rb, Location rl, Value i) -> Value {
              coords[*axis] = i;
              return tensor::ExtractOp::create(rb, rl, data, coords);
            };
            if (errorSlot) {
              linalg::YieldOp::create(
                  nb, l,
                  checkedRead(
                      nb, l, *errorSlot, i, axisSize, dt.getElementType(),
                      [&](OpBuilder &rb, Location rl) {
                        return read(rb, rl, wrapIndex(rb, rl, i, axisSize));
                      }));
              return;
            }
            // In range by the checks before the call; the clamp keeps even
            // a wrong index inside the table.
            Value one = arith::ConstantIndexOp::create(nb, l, 1);
            i = wrapIndex(nb, l, i, axisSize);
            i = arith::MaxSIOp::create(nb, l, i, zero);
            i = arith::MinSIOp::create(
                nb, l, i, arith::SubIOp::create(nb, l, axisSize, one));
            linalg::YieldOp::create(nb, l, read(nb, l, i));
          })
          .getResult(0);
  define(n, 0, out);
}

/// GatherElements (torch.gather): out has the indices' shape, out[i] =
/// data[i with its `axis` coordinate replaced by indices[i]]; the other
/// dims of indices must not exceed data's. Negative indices count from the
/// end; one outside the axis fails the call (checked where it is read).
void Importer::importGatherElements(const onnx::NodeProto &n) {
  Value data = input(n, 0), ids = input(n, 1);
  if (failed)
    return;
  auto dt = typeOf(data), it = typeOf(ids);
  int64_t r = dt.getRank();
  if (it.getRank() != r || r < 1) {
    nodeError(n) << "data and indices must have one rank (at least 1), got "
                 << dt << " and " << it;
    return;
  }
  if (!isa<IntegerType>(it.getElementType()) ||
      it.getElementType().isInteger(1)) {
    nodeError(n) << "indices must be integers, got " << it.getElementType();
    return;
  }
  auto axis = normalizeAxis(intAttr(n, "axis", 0), r);
  if (!axis) {
    nodeError(n) << "axis " << intAttr(n, "axis", 0) << " is out of range";
    return;
  }
  Location loc = nodeLoc(n);
  // The other dims: indices' may be shorter than data's, never longer.
  for (int64_t d = 0; d < r; ++d) {
    if (d == *axis)
      continue;
    auto ic = getConstantIntValue(dimOf(ids, d)),
         dc = getConstantIntValue(dimOf(data, d));
    if (ic && dc) {
      if (*ic > *dc) {
        nodeError(n) << "indices dim " << d << " is " << *ic
                     << ", more than data's " << *dc;
        return;
      }
      continue;
    }
    if (isEqualConstantIntOrValue(dimOf(ids, d), dimOf(data, d)))
      continue;
    std::string slot = indexErrorSlot(n, "indices dim " + std::to_string(d) +
                                             " against data's");
    checkAtMost(b, loc, slot, indexValue(dimOf(ids, d)),
                indexValue(dimOf(data, d)));
  }
  std::string slot = indexErrorSlot(n);
  Value axisSize = indexValue(dimOf(data, *axis));
  SmallVector<Value> dataDims;
  for (int64_t d = 0; d < r; ++d)
    dataDims.push_back(indexValue(dimOf(data, d)));
  Value init =
      tensor::EmptyOp::create(b, loc, sizesOf(ids), dt.getElementType());
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{ids}, ValueRange{init},
          SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(r)),
          SmallVector<utils::IteratorType>(r, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value i =
                arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
            SmallVector<Value> coords;
            for (int64_t d = 0; d < r; ++d)
              coords.push_back(linalg::IndexOp::create(nb, l, d));
            // A position past data's other dims (the check above reports
            // it) reads nothing.
            Value past;
            for (int64_t d = 0; d < r; ++d)
              if (d != *axis) {
                Value beyond = arith::CmpIOp::create(
                    nb, l, arith::CmpIPredicate::sge, coords[d], dataDims[d]);
                past =
                    past ? arith::OrIOp::create(nb, l, past, beyond).getResult()
                         : beyond;
              }
            auto read = [&](OpBuilder &rb, Location rl) -> Value {
              return checkedRead(
                  rb, rl, slot, i, axisSize, dt.getElementType(),
                  [&](OpBuilder &cb, Location cl) -> Value {
                    coords[*axis] = wrapIndex(cb, cl, i, axisSize);
                    return tensor::ExtractOp::create(cb, cl, data, coords);
                  });
            };
            if (!past) {
              linalg::YieldOp::create(nb, l, ValueRange{read(nb, l)});
              return;
            }
            auto guard =
                scf::IfOp::create(nb, l, TypeRange{dt.getElementType()}, past,
                                  /*withElseRegion=*/true);
            OpBuilder tb =
                OpBuilder::atBlockBegin(&guard.getThenRegion().front());
            scf::YieldOp::create(
                tb, l,
                ValueRange{arith::ConstantOp::create(
                    tb, l,
                    cast<TypedAttr>(tb.getZeroAttr(dt.getElementType())))});
            OpBuilder eb =
                OpBuilder::atBlockBegin(&guard.getElseRegion().front());
            scf::YieldOp::create(eb, l, ValueRange{read(eb, l)});
            linalg::YieldOp::create(nb, l, ValueRange{guard.getResult(0)});
          })
          .getResult(0);
  define(n, 0, out);
}

/// ScatterND: a copy of data with the slices that indices name replaced
/// by (or, with `reduction`, combined with) the slices of updates, in the
/// order of the updates (a repeated index: the last one wins). One loop
/// over the index tuples, each writing one slice in place, where
/// PyTorch's slice assignment (`m[:, :, :, :L] = ...`, a Hugging Face
/// mask's padding) exports this op with one tuple per element. An index
/// outside its dim fails the call (ONNX leaves it undefined; nothing is
/// written for it).
void Importer::importScatterND(const onnx::NodeProto &n) {
  Value data = input(n, 0), indices = input(n, 1), updates = input(n, 2);
  if (failed)
    return;
  auto dt = typeOf(data), it = typeOf(indices), ut = typeOf(updates);
  Type elem = dt.getElementType();
  std::string reduction = "none";
  if (const auto *a = attr(n, "reduction")) {
    if (a->type() != onnx::AttributeProto::STRING) {
      nodeError(n) << "reduction must be a string attribute";
      return;
    }
    reduction = a->s();
  }
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min") {
    nodeError(n) << "reduction '" << reduction
                 << "' is not one of none, add, mul, max, min";
    return;
  }
  // The attribute appeared at opset 16 (add, mul); max and min at 18.
  int64_t since = reduction == "none"                        ? 11
                  : reduction == "add" || reduction == "mul" ? 16
                                                             : 18;
  if (opset < since) {
    nodeError(n) << "reduction '" << reduction << "' needs opset " << since
                 << " or later";
    return;
  }
  if (reduction != "none" && !isNumber(elem)) {
    nodeError(n) << "reduction '" << reduction << "' needs numbers, got "
                 << elem;
    return;
  }
  if (!isa<IntegerType>(it.getElementType()) ||
      it.getElementType().isInteger(1)) {
    nodeError(n) << "indices must be integers, got " << it.getElementType();
    return;
  }
  int64_t r = dt.getRank(), q = it.getRank();
  if (r < 1 || q < 1) {
    nodeError(n) << "data and indices need rank >= 1, got " << dt << " and "
                 << it;
    return;
  }
  if (it.isDynamicDim(q - 1)) {
    nodeError(n) << "the last dim of indices (the index length) must be "
                    "static, got "
                 << it;
    return;
  }
  int64_t k = it.getDimSize(q - 1);
  if (k < 1 || k > r) {
    nodeError(n) << "indices of length " << k << " into data of rank " << r
                 << " (expected 1 to " << r << ")";
    return;
  }
  if (ut.getElementType() != elem) {
    nodeError(n) << "updates must have data's element type " << elem << ", got "
                 << ut.getElementType();
    return;
  }
  // updates: indices.shape[:-1] + data.shape[k:].
  SmallVector<OpFoldResult> want;
  for (int64_t i = 0; i + 1 < q; ++i)
    want.push_back(dimOf(indices, i));
  for (int64_t i = k; i < r; ++i)
    want.push_back(dimOf(data, i));
  if (ut.getRank() != static_cast<int64_t>(want.size())) {
    nodeError(n) << "updates must have rank " << want.size()
                 << " (indices' rank - 1 + data's rank - " << k << "), got "
                 << ut;
    return;
  }
  Location loc = nodeLoc(n);
  std::string slot = indexErrorSlot(n);
  Value sizesDiffer;
  for (auto [i, w] : llvm::enumerate(want)) {
    OpFoldResult got = dimOf(updates, i);
    auto gc = getConstantIntValue(got), wc = getConstantIntValue(w);
    if (gc && wc && *gc != *wc) {
      nodeError(n) << "updates dim " << i << " is " << *gc << ", expected "
                   << *wc << " (indices' dims but the last, then data's from "
                   << k << ")";
      return;
    }
    if (isEqualConstantIntOrValue(got, w))
      continue;
    // Known only while running: checked on each call.
    std::string sizeSlot = indexErrorSlot(
        n, "updates dim " + std::to_string(i) + " against " +
               (i + 1 < static_cast<size_t>(q)
                    ? "indices dim " + std::to_string(i)
                    : "data dim " + std::to_string(k + i - (q - 1))));
    Value gv = indexValue(got), wv = indexValue(w);
    Value differs =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, gv, wv);
    checkFailsIf(b, loc, sizeSlot, differs, kHitSizeDiffers, gv, wv);
    sizesDiffer = sizesDiffer
                      ? arith::OrIOp::create(b, loc, sizesDiffer, differs)
                      : differs;
  }
  // A statically empty slice writes nothing (and no offset into it is
  // valid): the result is data.
  for (int64_t i = k; i < r; ++i)
    if (dt.getDimSize(i) == 0)
      return define(n, 0, data);
  auto cIdx = [&](OpBuilder &nb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(nb, loc, v);
  };
  // Every size the loop reads, made before it (b builds the body too: a
  // size first asked for inside would be cached there, out of reach of
  // the code after the loop).
  SmallVector<Value> indexSizes, dataSizes;
  for (int64_t i = 0; i + 1 < q; ++i)
    indexSizes.push_back(indexValue(dimOf(indices, i)));
  SmallVector<OpFoldResult> dataDims = sizesOf(data);
  for (OpFoldResult d : dataDims)
    dataSizes.push_back(indexValue(d));
  Value count = cIdx(b, 1);
  for (Value size : indexSizes)
    count = arith::MulIOp::create(b, loc, count, size);
  // Sizes that differ write nothing (no read past updates; the call fails).
  if (sizesDiffer)
    count = arith::SelectOp::create(b, loc, sizesDiffer, cIdx(b, 0), count);
  auto loop = scf::ForOp::create(
      b, loc, cIdx(b, 0), count, cIdx(b, 1), ValueRange{data},
      [&](OpBuilder &nb, Location l, Value flat, ValueRange iter) {
        Value out = iter[0];
        // The index tuple's position in indices[:-1] (row-major).
        SmallVector<Value> at(q - 1);
        for (int64_t i = q - 2; i >= 0; --i) {
          at[i] = arith::RemUIOp::create(nb, l, flat, indexSizes[i]);
          flat = arith::DivUIOp::create(nb, l, flat, indexSizes[i]);
        }
        // Its k coordinates into data, negative ones from the end.
        SmallVector<Value> coords;
        Value outside;
        for (int64_t j = 0; j < k; ++j) {
          SmallVector<Value> where(at);
          where.push_back(cIdx(nb, j));
          Value c = arith::IndexCastOp::create(
              nb, l, nb.getIndexType(),
              tensor::ExtractOp::create(nb, l, indices, where));
          Value size = dataSizes[j];
          Value bad = indexOutside(nb, l, c, size);
          checkFailsIf(nb, l, slot, bad, kHitOutside, c, size);
          outside = outside ? arith::OrIOp::create(nb, l, outside, bad) : bad;
          coords.push_back(wrapIndex(nb, l, c, size));
        }
        char kind = reduction == "add"   ? '+'
                    : reduction == "mul" ? '*'
                    : reduction == "max" ? 'M'
                                         : 'm';
        auto combine = [&](OpBuilder &cb, Location cl, Value old, Value fresh) {
          return combineNumbers(cb, cl, kind, old, fresh);
        };
        // Nothing is written for an index outside (the call fails).
        auto write = scf::IfOp::create(nb, l, TypeRange{out.getType()}, outside,
                                       /*withElseRegion=*/true);
        OpBuilder tb = OpBuilder::atBlockBegin(&write.getThenRegion().front());
        scf::YieldOp::create(tb, l, ValueRange{out});
        OpBuilder eb = OpBuilder::atBlockBegin(&write.getElseRegion().front());
        Value written;
        if (k == r) {
          Value u = tensor::ExtractOp::create(eb, l, updates, at);
          if (reduction != "none")
            u = combine(eb, l, tensor::ExtractOp::create(eb, l, out, coords),
                        u);
          written = tensor::InsertOp::create(eb, l, u, out, coords);
        } else {
          // The slice data[coords..., :, ...] of rank r - k.
          SmallVector<int64_t> rest;
          SmallVector<OpFoldResult> uOff, uSize, oOff, oSize;
          SmallVector<OpFoldResult> ones(r, eb.getIndexAttr(1));
          for (Value a : at) {
            uOff.push_back(a);
            uSize.push_back(eb.getIndexAttr(1));
          }
          for (Value c : coords) {
            oOff.push_back(c);
            oSize.push_back(eb.getIndexAttr(1));
          }
          for (int64_t i = k; i < r; ++i) {
            rest.push_back(dt.getDimSize(i));
            uOff.push_back(eb.getIndexAttr(0));
            oOff.push_back(eb.getIndexAttr(0));
            uSize.push_back(dataDims[i]);
            oSize.push_back(dataDims[i]);
          }
          auto sliceType = RankedTensorType::get(rest, elem);
          SmallVector<OpFoldResult> uStrides(ut.getRank(), eb.getIndexAttr(1));
          Value u = tensor::ExtractSliceOp::create(eb, l, sliceType, updates,
                                                   uOff, uSize, uStrides);
          if (reduction != "none") {
            Value old = tensor::ExtractSliceOp::create(eb, l, sliceType, out,
                                                       oOff, oSize, ones);
            int64_t sr = sliceType.getRank();
            SmallVector<AffineMap> maps(3, eb.getMultiDimIdentityMap(sr));
            u = linalg::GenericOp::create(
                    eb, l, TypeRange{sliceType}, ValueRange{old, u},
                    ValueRange{old}, maps,
                    SmallVector<utils::IteratorType>(
                        sr, utils::IteratorType::parallel),
                    [&](OpBuilder &gb, Location gl, ValueRange a) {
                      linalg::YieldOp::create(gb, gl,
                                              combine(gb, gl, a[0], a[1]));
                    })
                    .getResult(0);
          }
          written =
              tensor::InsertSliceOp::create(eb, l, u, out, oOff, oSize, ones);
        }
        scf::YieldOp::create(eb, l, ValueRange{written});
        scf::YieldOp::create(nb, l, ValueRange{write.getResult(0)});
      });
  // The result has data's sizes (dimOf: one SSA value per size).
  reshapeSizes[loop.getResult(0)] = dataDims;
  define(n, 0, loop.getResult(0));
}

std::string Importer::indexErrorSlot(const onnx::NodeProto &n,
                                     std::string what) {
  if (what.empty())
    what = "indices '" + n.input(1) + "'";
  return indexErrorSlotAt((n.name().empty()
                               ? "node #" + std::to_string(nodeIndex)
                               : "'" + n.name() + "'") +
                          " (" + n.op_type() + ", " + what + ")");
}

std::string Importer::indexErrorSlotAt(const std::string &what) {
  // The runtime's names (attnrt/Module.h: kIndexErrorSlotPrefix).
  std::string name =
      "__attn_index_error_" + std::to_string(indexCheckSites.size());
  std::string site = (llvm::sys::path::filename(modelPath) + ": " + what).str();
  // One line per site in the runtime's list.
  std::replace(site.begin(), site.end(), '\n', ' ');
  indexCheckSites.push_back(site);
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  OpBuilder gb = OpBuilder::atBlockBegin(module.getBody());
  auto type = MemRefType::get({3}, gb.getI64Type());
  memref::GlobalOp::create(
      gb, fileLoc, gb.getStringAttr(name), /*sym_visibility=*/StringAttr(),
      TypeAttr::get(type),
      DenseElementsAttr::get(RankedTensorType::get({3}, gb.getI64Type()),
                             ArrayRef<int64_t>{0, 0, 0}),
      /*constant=*/UnitAttr(), /*alignment=*/gb.getI64IntegerAttr(8));
  return name;
}

/// Writes (hit, value, bound) into index-check slot `slot` (atomically: the
/// code may run on several threads; any of them names a real failure).
static void writeIndexCheckHit(OpBuilder &tb, Location l,
                               const std::string &slot, int64_t hit,
                               Value value, Value bound) {
  auto type = MemRefType::get({3}, tb.getI64Type());
  Value g = memref::GetGlobalOp::create(
      tb, l, type, FlatSymbolRefAttr::get(tb.getContext(), slot));
  auto i64 = [&](Value v) {
    return arith::IndexCastOp::create(tb, l, tb.getI64Type(), v);
  };
  auto put = [&](int64_t at, Value v) {
    memref::AtomicRMWOp::create(
        tb, l, arith::AtomicRMWKind::assign, v, g,
        ValueRange{arith::ConstantIndexOp::create(tb, l, at)});
  };
  put(1, i64(value));
  put(2, i64(bound));
  put(0, arith::ConstantIntOp::create(tb, l, tb.getI64Type(), hit));
}

void Importer::checkFailsIf(OpBuilder &nb, Location l, const std::string &slot,
                            Value failed, int64_t hit, Value value,
                            Value bound) {
  auto ifOp = scf::IfOp::create(nb, l, TypeRange{}, failed,
                                /*withElseRegion=*/false);
  OpBuilder tb = OpBuilder::atBlockBegin(&ifOp.getThenRegion().front());
  writeIndexCheckHit(tb, l, slot, hit, value, bound);
}

void Importer::checkAtMost(OpBuilder &nb, Location l, const std::string &slot,
                           Value length, Value most) {
  Value tooLong =
      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt, length, most);
  checkFailsIf(nb, l, slot, tooLong, kHitTooLong, length, most);
}

OpFoldResult Importer::nonNegativeTargetSize(const onnx::NodeProto &n,
                                             std::string &slot,
                                             OpFoldResult size,
                                             int64_t position) {
  if (getConstantIntValue(size) || knownNonNegative(size))
    return size;
  Location loc = nodeLoc(n);
  if (slot.empty())
    slot = indexErrorSlot(n, "the target shape");
  Value v = indexValue(size);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v,
                            arith::ConstantIndexOp::create(b, loc, 0));
  checkFailsIf(b, loc, slot, negative, kHitNegativeSize, v,
               arith::ConstantIndexOp::create(b, loc, position));
  // max(s, 0) folds to s itself for a size read off a tensor, so the
  // result keeps the sizes the rest of the graph compares with.
  return foldIndex('M', size, b.getIndexAttr(0));
}

Value Importer::checkedRead(
    OpBuilder &nb, Location l, const std::string &slot, Value i, Value size,
    Type elem, function_ref<Value(OpBuilder &, Location)> readInRange) {
  Value outside = indexOutside(nb, l, i, size);
  auto ifOp = scf::IfOp::create(nb, l, TypeRange{elem}, outside,
                                /*withElseRegion=*/true);
  OpBuilder tb = OpBuilder::atBlockEnd(&ifOp.getThenRegion().front());
  writeIndexCheckHit(tb, l, slot, kHitOutside, i, size);
  // Nothing is read (the table may even be empty); the call fails.
  scf::YieldOp::create(tb, l,
                       ValueRange{arith::ConstantOp::create(
                           tb, l, cast<TypedAttr>(tb.getZeroAttr(elem)))});
  OpBuilder eb = OpBuilder::atBlockEnd(&ifOp.getElseRegion().front());
  scf::YieldOp::create(eb, l, ValueRange{readInRange(eb, l)});
  return ifOp.getResult(0);
}

SmallVector<ReassociationIndices> unitGroups(int64_t bigRank,
                                             ArrayRef<bool> isUnit) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t i = 0; i < bigRank; ++i) {
    pending.push_back(i);
    if (!isUnit[i]) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty()) {
    if (groups.empty())
      return {}; // all unit dims: from/to rank 0
    groups.back().append(pending.begin(), pending.end());
  }
  return groups;
}

void Importer::importUnsqueeze(const onnx::NodeProto &n) {
  auto axesK = knownInput(n, 1);
  std::optional<SmallVector<int64_t>> axes;
  if (axesK)
    axes = axesK->constants();
  if (!axes) {
    nodeError(n) << "axes must be constant";
    return;
  }
  if (auto k = knownInput(n, 0); k && k->scalar && axes->size() == 1 &&
                                 ((*axes)[0] == 0 || (*axes)[0] == -1)) {
    k->scalar = false;
    return defineKnown(n, 0, *k);
  }
  Value x = input(n, 0);
  if (failed)
    return;
  auto t = typeOf(x);
  int64_t outRank = t.getRank() + axes->size();
  SmallVector<bool> isNew(outRank, false);
  for (int64_t a : *axes) {
    auto na = normalizeAxis(a, outRank);
    if (!na || isNew[*na]) {
      nodeError(n) << "axis " << a << " is out of range or repeated";
      return;
    }
    isNew[*na] = true;
  }
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0, j = 0; i < outRank; ++i) {
    if (isNew[i]) {
      shape.push_back(1);
      sizes.push_back(b.getIndexAttr(1));
    } else {
      shape.push_back(t.getDimSize(j));
      sizes.push_back(dimOf(x, j++));
    }
  }
  define(n, 0,
         tensor::ExpandShapeOp::create(
             b, nodeLoc(n), RankedTensorType::get(shape, t.getElementType()), x,
             unitGroups(outRank, isNew), sizes));
}

void Importer::importSqueeze(const onnx::NodeProto &n) {
  std::optional<SmallVector<int64_t>> axes;
  if (n.input_size() > 1 && !n.input(1).empty()) {
    if (auto k = knownInput(n, 1))
      axes = k->constants();
    if (!axes) {
      nodeError(n) << "axes must be constant";
      return;
    }
  }
  if (auto k = knownInput(n, 0); k && !k->scalar && k->elems.size() == 1) {
    k->scalar = true;
    return defineKnown(n, 0, *k);
  }
  Value x = input(n, 0);
  if (failed)
    return;
  auto t = typeOf(x);
  SmallVector<bool> drop(t.getRank(), false);
  Location loc = nodeLoc(n);
  if (axes) {
    for (int64_t a : *axes) {
      auto na = normalizeAxis(a, t.getRank());
      if (!na) {
        nodeError(n) << "axis " << a << " is out of range for rank "
                     << t.getRank();
        return;
      }
      // A dynamic dim is refused: typing it 1 for the rest of the graph
      // (a cast) would let canonicalization hand that size to the ops
      // computing the input, which then write all its rows into one (a
      // check while running would come too late).
      if (t.isDynamicDim(*na)) {
        nodeError(n) << "axis " << a
                     << " is dynamic: Squeeze needs its size to be 1, "
                        "which is known only while running (export it "
                        "with a static size 1)";
        return;
      }
      if (t.getDimSize(*na) != 1) {
        nodeError(n) << "axis " << a << " has size " << t.getDimSize(*na)
                     << ", not 1";
        return;
      }
      drop[*na] = true;
    }
  } else {
    // Without axes every dim of size 1 goes, so a dynamic dim's fate (and
    // the result's rank) would depend on the call: dynamic dims are kept,
    // and checked on each call not to be 1.
    std::string slot;
    for (int64_t i = 0; i < t.getRank(); ++i) {
      drop[i] = t.getDimSize(i) == 1;
      if (!t.isDynamicDim(i))
        continue;
      if (slot.empty())
        slot = indexErrorSlot(
            n, "without axes: dynamic dims are kept, so they must not be 1");
      Value size = tensor::DimOp::create(b, loc, x, i);
      checkFailsIf(
          b, loc, slot,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size,
                                arith::ConstantIndexOp::create(b, loc, 1)),
          kHitUnitSize, arith::ConstantIndexOp::create(b, loc, i),
          arith::ConstantIndexOp::create(b, loc, 0));
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (!drop[i])
      shape.push_back(t.getDimSize(i));
  define(n, 0,
         tensor::CollapseShapeOp::create(
             b, loc, RankedTensorType::get(shape, t.getElementType()), x,
             unitGroups(t.getRank(), drop)));
}

Value Importer::gatherCopy(Location loc, Value x, ArrayRef<OpFoldResult> sizes,
                           AffineMap read) {
  Value init =
      tensor::EmptyOp::create(b, loc, sizes, typeOf(x).getElementType());
  int64_t rank = static_cast<int64_t>(sizes.size());
  SmallVector<AffineMap> maps{read, b.getMultiDimIdentityMap(rank)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
             maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, a[0]);
             })
      .getResult(0);
}

void Importer::importTile(const onnx::NodeProto &n) {
  // x.repeat(r0, r1, ..): each dim repeated r times, out[i] = x[i mod d]
  // (an affine map where the repeated dims are static, a read at computed
  // indices where one is dynamic).
  auto repeatsK = knownInput(n, 1);
  Value x = input(n, 0);
  if (failed)
    return;
  auto t = typeOf(x);
  int64_t rank = t.getRank();
  std::optional<SmallVector<int64_t>> repeats =
      repeatsK ? repeatsK->constants() : std::nullopt;
  if (!repeats || static_cast<int64_t>(repeats->size()) != rank) {
    nodeError(n) << "repeats must be " << rank
                 << " constants, one per dim of the input";
    return;
  }
  SmallVector<OpFoldResult> sizes;
  SmallVector<AffineExpr> in;
  bool repeatsDynamic = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t r = (*repeats)[d];
    if (r < 0) {
      nodeError(n) << "repeat " << r << " on dim " << d << " is negative";
      return;
    }
    if (r == 0) {
      nodeError(n) << "a repeat of 0 (dim " << d
                   << ") makes an empty tensor, which is not supported";
      return;
    }
    // (Sizes stay far from int64's range: a product that wrapped would
    // size the result wrongly.)
    int64_t size = t.isDynamicDim(d) ? 1 : t.getDimSize(d);
    if (r > (int64_t(1) << 31) || (size > 0 && r > (int64_t(1) << 40) / size)) {
      nodeError(n) << "repeat " << r << " of dim " << d
                   << " makes too many elements";
      return;
    }
    AffineExpr e = b.getAffineDimExpr(d);
    if (r != 1) {
      repeatsDynamic |= t.isDynamicDim(d);
      if (!t.isDynamicDim(d))
        e = e % t.getDimSize(d);
    }
    in.push_back(e);
    sizes.push_back(foldIndex('*', dimOf(x, d), b.getIndexAttr(r)));
  }
  Location loc = nodeLoc(n);
  if (!repeatsDynamic)
    return define(n, 0,
                  gatherCopy(loc, x, sizes, AffineMap::get(rank, 0, in, ctx)));
  // A repeated dynamic dim: i mod d is no affine map; the body reads
  // x at the wrapped indices. (Its loop runs only when d > 0.)
  SmallVector<Value> dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back(indexValue(dimOf(x, d)));
  Value init = tensor::EmptyOp::create(b, loc, sizes, t.getElementType());
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange) {
            SmallVector<Value> at;
            for (int64_t d = 0; d < rank; ++d) {
              Value i = linalg::IndexOp::create(nb, l, d);
              at.push_back(
                  (*repeats)[d] == 1
                      ? i
                      : arith::RemUIOp::create(nb, l, i, dims[d]).getResult());
            }
            linalg::YieldOp::create(
                nb, l, ValueRange{tensor::ExtractOp::create(nb, l, x, at)});
          })
          .getResult(0);
  define(n, 0, out);
}

void Importer::importPad(const onnx::NodeProto &n) {
  // Constant padding (F.pad's default) with known pads, as tensor.pad;
  // negative pads crop, as ONNX allows.
  std::string mode = "constant";
  if (const auto *a = attr(n, "mode"))
    mode = a->s();
  if (mode != "constant") {
    nodeError(n) << "mode '" << mode
                 << "' is not supported (only 'constant' padding)";
    return;
  }
  Value x = input(n, 0);
  if (failed)
    return;
  auto t = typeOf(x);
  int64_t rank = t.getRank();
  std::optional<SmallVector<int64_t>> pads;
  if (opset < 11) {
    if (const auto *a = attr(n, "pads"))
      pads.emplace(a->ints().begin(), a->ints().end());
  } else if (auto k = knownInput(n, 1)) {
    pads = k->constants();
  }
  if (!pads) {
    nodeError(n) << "pads must be known while importing";
    return;
  }
  // Opset 18's axes: the pads apply to those dims only.
  SmallVector<int64_t> axes;
  if (opset >= 18 && n.input_size() > 3 && !n.input(3).empty()) {
    auto k = knownInput(n, 3);
    std::optional<SmallVector<int64_t>> given =
        k ? k->constants() : std::nullopt;
    if (!given) {
      nodeError(n) << "axes must be constant";
      return;
    }
    for (int64_t a : *given) {
      auto na = normalizeAxis(a, rank);
      if (!na) {
        nodeError(n) << "axis " << a << " is out of range";
        return;
      }
      axes.push_back(*na);
    }
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  int64_t count = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads->size()) != 2 * count) {
    nodeError(n) << "pads has " << pads->size() << " entries, expected "
                 << 2 * count << " (begin and end per axis)";
    return;
  }
  Type elem = t.getElementType();
  Location loc = nodeLoc(n);
  Value fill;
  if (opset >= 11 && n.input_size() > 2 && !n.input(2).empty()) {
    Value v = input(n, 2);
    if (failed)
      return;
    auto vt = typeOf(v);
    if (vt.getElementType() != elem || !vt.hasStaticShape() ||
        vt.getNumElements() != 1) {
      nodeError(n) << "constant_value must be one " << elem << ", got " << vt;
      return;
    }
    fill = tensor::ExtractOp::create(
        b, loc, v,
        SmallVector<Value>(vt.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0)));
  } else if (opset < 11) {
    fill = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(elem, floatAttr(n, "value").value_or(0.0f)));
  } else {
    fill =
        arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(elem)));
  }
  // Crops first (negative pads), then the padding.
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes = sizesOf(x), strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> lo(rank, b.getIndexAttr(0)),
      hi(rank, b.getIndexAttr(0));
  bool crops = false;
  for (int64_t i = 0; i < count; ++i) {
    int64_t d = axes[i], before = (*pads)[i], after = (*pads)[i + count];
    if ((before < 0 || after < 0) && t.isDynamicDim(d)) {
      nodeError(n) << "negative pads (a crop) on dynamic dim " << d
                   << " are not supported (its size is only known while "
                      "running)";
      return;
    }
    if (before < 0) {
      offsets[d] = b.getIndexAttr(-before);
      sizes[d] = foldIndex('-', sizes[d], b.getIndexAttr(-before));
      crops = true;
    } else {
      lo[d] = b.getIndexAttr(before);
    }
    if (after < 0) {
      sizes[d] = foldIndex('-', sizes[d], b.getIndexAttr(-after));
      crops = true;
    } else {
      hi[d] = b.getIndexAttr(after);
    }
    if (auto c = getConstantIntValue(sizes[d]); c && *c <= 0) {
      nodeError(n) << "pads crop dim " << d << " to nothing";
      return;
    }
  }
  if (crops)
    x = tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    auto s = getConstantIntValue(sizes[d]);
    auto l = getConstantIntValue(lo[d]), h = getConstantIntValue(hi[d]);
    shape.push_back(s ? *s + *l + *h : ShapedType::kDynamic);
  }
  define(n, 0,
         tensor::PadOp::create(b, loc, RankedTensorType::get(shape, elem), x,
                               lo, hi, fill));
}

void Importer::importConcat(const onnx::NodeProto &n) {
  // Shape arithmetic: concatenated known 1-D integer tensors.
  {
    KnownInts all;
    bool allKnown = true;
    for (int i = 0; i < n.input_size() && allKnown; ++i) {
      auto k = knownInput(n, i);
      allKnown = k && !k->scalar;
      if (allKnown) {
        all.elemType = k->elemType;
        all.elems.append(k->elems.begin(), k->elems.end());
      }
    }
    if (allKnown)
      return defineKnown(n, 0, all);
  }
  SmallVector<Value> ins;
  for (int i = 0; i < n.input_size(); ++i)
    if (Value v = input(n, i))
      ins.push_back(v);
  if (failed)
    return;
  auto t = typeOf(ins[0]);
  auto axis = normalizeAxis(intAttr(n, "axis", 0), t.getRank());
  if (!axis) {
    nodeError(n) << "axis " << intAttr(n, "axis", 0) << " is out of range";
    return;
  }
  for (Value v : ins) {
    auto vt = typeOf(v);
    bool ok = vt.getRank() == t.getRank() &&
              vt.getElementType() == t.getElementType();
    for (int64_t d = 0; ok && d < t.getRank(); ++d)
      ok = d == *axis || vt.isDynamicDim(d) || t.isDynamicDim(d) ||
           vt.getDimSize(d) == t.getDimSize(d);
    if (!ok) {
      nodeError(n) << "inputs " << t << " and " << vt
                   << " cannot be concatenated on axis " << *axis;
      return;
    }
  }
  define(n, 0,
         ins.size() == 1
             ? ins[0]
             : Value(tensor::ConcatOp::create(b, nodeLoc(n), *axis, ins)));
}

std::pair<int64_t, int64_t> sliceRange(int64_t start, int64_t end, int64_t step,
                                       int64_t size) {
  auto fromEnd = [&](int64_t c) { return c < 0 ? c + size : c; };
  if (step > 0) {
    step = std::min(step, kSliceHuge);
    int64_t lo = std::clamp<int64_t>(fromEnd(start), 0, size);
    int64_t hi = std::clamp<int64_t>(fromEnd(end), 0, size);
    return {lo, std::max<int64_t>(0, (hi - lo + step - 1) / step)};
  }
  if (size == 0)
    return {0, 0};
  int64_t k = step < -kSliceHuge ? kSliceHuge : -step;
  int64_t first = std::clamp<int64_t>(fromEnd(start), 0, size - 1);
  int64_t last = end == INT64_MAX || end == std::numeric_limits<int32_t>::max()
                     ? -1
                     : std::clamp<int64_t>(fromEnd(end), -1, size - 1);
  return {first, std::max<int64_t>(0, (first - last + k - 1) / k)};
}

void Importer::importSlice(const onnx::NodeProto &n) {
  auto startsK = knownInput(n, 1), endsK = knownInput(n, 2);
  std::optional<KnownInts> axesK, stepsK;
  if (n.input_size() > 3 && !n.input(3).empty())
    axesK = knownInput(n, 3);
  if (n.input_size() > 4 && !n.input(4).empty())
    stepsK = knownInput(n, 4);
  if (!startsK || !endsK ||
      (n.input_size() > 3 && !n.input(3).empty() && !axesK) ||
      (n.input_size() > 4 && !n.input(4).empty() && !stepsK)) {
    nodeError(n)
        << "starts, ends, axes and steps must be known while importing "
           "(constants or shape arithmetic)";
    return;
  }
  size_t count = startsK->elems.size();
  std::optional<SmallVector<int64_t>> axes, steps;
  if (axesK)
    axes = axesK->constants();
  else
    axes = llvm::to_vector(llvm::seq<int64_t>(0, count));
  if (stepsK)
    steps = stepsK->constants();
  else
    steps = SmallVector<int64_t>(count, 1);
  if (!axes || !steps || endsK->elems.size() != count ||
      axes->size() != count || steps->size() != count) {
    nodeError(n) << "axes and steps must be constant, with one entry per start";
    return;
  }
  // Shape arithmetic: a constant slice of a known 1-D integer tensor.
  if (auto data = knownInput(n, 0); data && !data->scalar && count == 1) {
    auto s = getConstantIntValue(startsK->elems[0]);
    auto e = getConstantIntValue(endsK->elems[0]);
    if (s && e && (*steps)[0] != 0) {
      auto [first, taken] =
          sliceRange(*s, *e, (*steps)[0], int64_t(data->elems.size()));
      KnownInts k;
      k.elemType = data->elemType;
      for (int64_t j = 0; j < taken; ++j)
        k.elems.push_back(data->elems[first + j * (*steps)[0]]);
      return defineKnown(n, 0, k);
    }
  }
  Value x = input(n, 0);
  if (failed)
    return;
  auto t = typeOf(x);
  int64_t rank = t.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes = sizesOf(x), strides(rank, b.getIndexAttr(1));
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> reversed; // axes with a negative step
  for (size_t i = 0; i < count; ++i) {
    auto axis = normalizeAxis((*axes)[i], rank);
    if (!axis || seen[*axis]) {
      nodeError(n) << "axis " << (*axes)[i] << " is out of range or repeated";
      return;
    }
    seen[*axis] = true;
    int64_t step = (*steps)[i];
    if (step == 0) {
      nodeError(n) << "step 0 on axis " << (*axes)[i]
                   << " (ONNX steps are non-zero)";
      return;
    }
    OpFoldResult dim = dimOf(x, *axis);
    if (step < 0) {
      // Backwards (torch.flip, x[::-1]): the elements start, start + step,
      // ... down to above end, with start clamped to [0, dim - 1] and end to
      // [-1, dim - 1] after negative values count from the end. They are
      // taken forwards here (from the last one, with stride -step), and the
      // axis is reversed below.
      auto sc = getConstantIntValue(startsK->elems[i]),
           ec = getConstantIntValue(endsK->elems[i]);
      if (!sc || !ec) {
        nodeError(n) << "a negative step (" << step << " on axis " << (*axes)[i]
                     << ") needs constant starts and ends";
        return;
      }
      // (|step| beyond any size takes one element: kept from overflowing.)
      int64_t k = step < -kSliceHuge ? kSliceHuge : -step;
      // ONNX Runtime reads INT32_MAX and INT64_MAX as a backward end as
      // "through the first element".
      bool endIsFirst = *ec <= -kSliceHuge || *ec == INT64_MAX ||
                        *ec == std::numeric_limits<int32_t>::max();
      // The whole axis backwards (torch.flip: -1 to INT64_MIN): no slice,
      // and the axis keeps its size's SSA value.
      auto staticDim = getConstantIntValue(dim);
      bool fromLast = *sc == -1 || *sc >= kSliceHuge ||
                      (staticDim && *sc >= *staticDim - 1);
      bool toFirst = endIsFirst || (staticDim && *ec < -*staticDim);
      if (k == 1 && fromLast && toFirst) {
        reversed.push_back(*axis);
        continue;
      }
      OpFoldResult top = foldIndex('-', dim, b.getIndexAttr(1));
      auto fromEnd = [&](int64_t c) -> OpFoldResult {
        if (c <= -kSliceHuge)
          return b.getIndexAttr(-1);
        if (c >= kSliceHuge)
          return top;
        return c < 0 ? foldIndex('+', dim, b.getIndexAttr(c))
                     : OpFoldResult(b.getIndexAttr(c));
      };
      OpFoldResult start =
          foldIndex('M', b.getIndexAttr(0), foldIndex('m', top, fromEnd(*sc)));
      OpFoldResult end = endIsFirst
                             ? OpFoldResult(b.getIndexAttr(-1))
                             : foldIndex('M', b.getIndexAttr(-1),
                                         foldIndex('m', top, fromEnd(*ec)));
      // max(0, ceil((start - end) / k)), and none of an empty axis.
      OpFoldResult taken = foldIndex(
          'm', dim,
          foldIndex('M', b.getIndexAttr(0),
                    foldIndex('/',
                              foldIndex('+', foldIndex('-', start, end),
                                        b.getIndexAttr(k - 1)),
                              b.getIndexAttr(k))));
      // The last element taken (start itself when there is none).
      OpFoldResult last = foldIndex(
          'm', start,
          foldIndex('-', start,
                    foldIndex('*', foldIndex('-', taken, b.getIndexAttr(1)),
                              b.getIndexAttr(k))));
      offsets[*axis] = last;
      sizes[*axis] = taken;
      strides[*axis] = b.getIndexAttr(k);
      reversed.push_back(*axis);
      continue;
    }
    // ONNX semantics: negative bounds count from the end; both are clamped
    // to [0, dim]. Constant bounds fold; an end computed from sizes only
    // (the seed's mask[:T, :T], T + past, 2 * T: knownNonNegative) needs
    // only min(end, dim).
    auto bound = [&](OpFoldResult v) -> OpFoldResult {
      auto c = getConstantIntValue(v);
      auto d = getConstantIntValue(dim);
      if (c && *c >= 0 && d)
        return b.getIndexAttr(std::min(*c, *d));
      if (c && *c >= 0 && *c >= kSliceHuge)
        return dim; // INT64_MAX: "to the end"
      if (c && *c < 0 && d)
        return b.getIndexAttr(std::max<int64_t>(0, *c + *d));
      // Constants on a dynamic dim: min(c, dim), or max(dim + c, 0) from
      // the end, as index expressions that other slices share.
      if (c && *c >= 0)
        return foldIndex('m', v, dim);
      if (c && *c > -kSliceHuge)
        return foldIndex('M', foldIndex('+', dim, v), b.getIndexAttr(0));
      Value val = indexValue(v);
      if (!knownNonNegative(val)) {
        Value zero = arith::ConstantIndexOp::create(b, fileLoc, 0);
        Value neg = arith::CmpIOp::create(b, fileLoc, arith::CmpIPredicate::slt,
                                          val, zero);
        Value wrapped = arith::AddIOp::create(b, fileLoc, val, indexValue(dim));
        val = arith::SelectOp::create(b, fileLoc, neg, wrapped, val);
        val = arith::MaxSIOp::create(b, fileLoc, val, zero);
      }
      return foldIndex('m', val, dim);
    };
    // The last T rows of a static table (pe[-T:], T a graph input's
    // size): rows D - T .. D, T of them, with T accepted up to D (checked
    // by the runtime), so that the slice keeps T's SSA value.
    if (auto staticDim = getConstantIntValue(dim)) {
      auto sub = dyn_cast_if_present<Value>(startsK->elems[i]);
      auto neg = sub ? sub.getDefiningOp<arith::SubIOp>() : nullptr;
      auto endC = getConstantIntValue(endsK->elems[i]);
      std::optional<std::pair<unsigned, int64_t>> input;
      if (step == 1 && neg && isConstantIntValue(neg.getLhs(), 0) && endC &&
          (*endC >= kSliceHuge || *endC == *staticDim) &&
          (input = inputSizeOf(neg.getRhs()))) {
        boundInputSize(*input, *staticDim);
        offsets[*axis] = foldIndex('-', dim, neg.getRhs());
        sizes[*axis] = neg.getRhs();
        strides[*axis] = b.getIndexAttr(1);
        continue;
      }
    }
    OpFoldResult hi;
    // An end that is a graph input's size (mask[:T] with T = x.shape[1])
    // beyond a static dim would be clamped, and the model would then fail
    // on mismatched shapes; the module instead accepts such inputs only up
    // to that dim (checked by the runtime), and the end stays T itself.
    auto staticDim = getConstantIntValue(dim);
    if (auto input = inputSizeOf(endsK->elems[i]); input && staticDim) {
      boundInputSize(*input, *staticDim);
      hi = endsK->elems[i];
    }
    // The same for a sum of input sizes (a KV step's past + T, as in
    // bias[:, :, Tk - T:Tk, :Tk] of a static table): the signature bounds
    // the sum.
    if (!hi && staticDim && step == 1 &&
        boundSumOfInputSizes(endsK->elems[i], *staticDim))
      hi = endsK->elems[i];
    if (!hi)
      hi = bound(endsK->elems[i]);
    // A start that is one term of such an end (Tk - T of Tk = past + T,
    // folded to past) lies in [0, end]: no clamp, and the length folds to
    // the other term.
    OpFoldResult lo =
        hi == endsK->elems[i] && isTermOfSum(startsK->elems[i], hi)
            ? startsK->elems[i]
            : bound(startsK->elems[i]);
    // From the origin the length is the (non-negative) end itself, so
    // mask[:T] keeps T's SSA value; otherwise max(end - start, 0). A
    // constant start c >= 0 is min(c, dim), and as the end is at most dim,
    // max(end - min(c, dim), 0) is max(end - c, 0): x[:, 1:] and x[:, :-1]
    // of a dynamic axis then have one length, max(dim - 1, 0).
    auto startConst = getConstantIntValue(startsK->elems[i]);
    OpFoldResult from =
        startConst && *startConst >= 0 && *startConst < kSliceHuge
            ? OpFoldResult(b.getIndexAttr(*startConst))
            : lo;
    OpFoldResult len =
        isConstantIntValue(lo, 0)
            ? hi
            : foldIndex('M', foldIndex('-', hi, from), b.getIndexAttr(0));
    offsets[*axis] = lo;
    // ceil(len / step) elements (a step beyond any size takes one).
    step = std::min(step, kSliceHuge);
    sizes[*axis] =
        step == 1
            ? len
            : foldIndex('/', foldIndex('+', len, b.getIndexAttr(step - 1)),
                        b.getIndexAttr(step));
    strides[*axis] = b.getIndexAttr(step);
  }
  Location loc = nodeLoc(n);
  // An empty result reads nothing (an extract_slice at offset == size, as
  // x[..., 64:] of a 64-wide axis is, would not verify).
  if (llvm::any_of(sizes,
                   [](OpFoldResult s) { return isConstantIntValue(s, 0); }))
    return define(n, 0,
                  tensor::EmptyOp::create(b, loc, sizes, t.getElementType()));
  // Reversing one element changes nothing.
  llvm::erase_if(reversed,
                 [&](int64_t a) { return isConstantIntValue(sizes[a], 1); });
  bool whole =
      llvm::all_of(offsets,
                   [](OpFoldResult o) { return isConstantIntValue(o, 0); }) &&
      llvm::all_of(strides,
                   [](OpFoldResult s) { return isConstantIntValue(s, 1); }) &&
      llvm::all_of(llvm::seq<int64_t>(0, rank), [&](int64_t d) {
        return isEqualConstantIntOrValue(sizes[d], dimOf(x, d));
      });
  Value slice = whole && !reversed.empty()
                    ? x
                    : Value(tensor::ExtractSliceOp::create(b, loc, x, offsets,
                                                           sizes, strides));
  if (!reversed.empty())
    slice = reverseAxes(loc, slice, reversed);
  define(n, 0, slice);
}

Value Importer::reverseAxes(Location loc, Value x, ArrayRef<int64_t> axes) {
  auto t = typeOf(x);
  int64_t rank = t.getRank();
  SmallVector<OpFoldResult> sizes = sizesOf(x);
  Value init = tensor::EmptyOp::create(b, loc, sizes, t.getElementType());
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  bool allStatic =
      llvm::all_of(axes, [&](int64_t a) { return !t.isDynamicDim(a); });
  if (allStatic) {
    // out[.., i, ..] = x[.., size - 1 - i, ..]: an affine map.
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(llvm::is_contained(axes, d)
                          ? t.getDimSize(d) - 1 - b.getAffineDimExpr(d)
                          : b.getAffineDimExpr(d));
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, ctx),
                                b.getMultiDimIdentityMap(rank)};
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{x},
               ValueRange{init}, maps, iters,
               [](OpBuilder &nb, Location l, ValueRange v) {
                 linalg::YieldOp::create(nb, l, v[0]);
               })
        .getResult(0);
  }
  // A dynamic size is no affine constant: read each element by index.
  SmallVector<Value> last;
  for (int64_t d = 0; d < rank; ++d)
    last.push_back(llvm::is_contained(axes, d)
                       ? indexValue(foldIndex('-', sizes[d], b.getIndexAttr(1)))
                       : Value());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
             SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)}, iters,
             [&](OpBuilder &nb, Location l, ValueRange) {
               SmallVector<Value> idx;
               for (int64_t d = 0; d < rank; ++d) {
                 Value i = linalg::IndexOp::create(nb, l, d);
                 idx.push_back(
                     last[d] ? arith::SubIOp::create(nb, l, last[d], i) : i);
               }
               linalg::YieldOp::create(
                   nb, l, tensor::ExtractOp::create(nb, l, x, idx).getResult());
             })
      .getResult(0);
}

void Importer::importSplit(const onnx::NodeProto &n) {
  // Split of known integers (torch's repeat_interleave splits its repeat
  // counts this way): known parts, for the Expand or Reshape they size.
  if (auto xk = knownInput(n, 0); xk && !xk->scalar) {
    int64_t size = static_cast<int64_t>(xk->elems.size());
    int64_t parts = n.output_size();
    std::optional<SmallVector<int64_t>> lengths;
    if (n.input_size() > 1 && !n.input(1).empty()) {
      if (auto lk = knownInput(n, 1))
        lengths = lk->constants();
    } else if (parts > 0 && size % parts == 0) {
      lengths = SmallVector<int64_t>(parts, size / parts);
    }
    auto axis = normalizeAxis(intAttr(n, "axis", 0), 1);
    if (axis && lengths && static_cast<int64_t>(lengths->size()) == parts &&
        llvm::all_of(*lengths, [](int64_t l) { return l >= 0; }) &&
        std::accumulate(lengths->begin(), lengths->end(), int64_t(0)) == size) {
      int64_t at = 0;
      for (int64_t i = 0; i < parts; ++i) {
        KnownInts part = *xk;
        part.elems.assign(xk->elems.begin() + at,
                          xk->elems.begin() + at + (*lengths)[i]);
        at += (*lengths)[i];
        defineKnown(n, i, std::move(part));
      }
      return;
    }
  }
  Value x = input(n, 0);
  if (failed)
    return;
  auto t = typeOf(x);
  auto axis = normalizeAxis(intAttr(n, "axis", 0), t.getRank());
  if (!axis) {
    nodeError(n) << "axis " << intAttr(n, "axis", 0) << " is out of range";
    return;
  }
  int64_t parts = n.output_size();
  SmallVector<OpFoldResult> lengths;
  if (n.input_size() > 1 && !n.input(1).empty()) {
    auto k = knownInput(n, 1);
    if (!k || static_cast<int64_t>(k->elems.size()) != parts) {
      nodeError(n) << "split must be known, one length per output";
      return;
    }
    lengths = k->elems;
    // On a dynamic axis nothing would check that the lengths add up.
    if (t.isDynamicDim(*axis)) {
      nodeError(n)
          << "explicit split lengths on a dynamic axis are not supported "
             "(the axis size is only known at run time)";
      return;
    }
  }
  // Equal parts: ceil(size / parts) each, the last one what remains, which
  // some sizes leave negative (5 in 4 parts: 2, 2, 2 and -1): refused
  // while importing for a static axis; for a dynamic one checked by the
  // module on each call, with every read kept inside the axis meanwhile.
  OpFoldResult dim = dimOf(x, *axis), firstParts;
  bool checkedParts = false;
  if (lengths.empty()) {
    OpFoldResult each =
        foldIndex('/', foldIndex('+', dim, b.getIndexAttr(parts - 1)),
                  b.getIndexAttr(parts));
    firstParts = foldIndex('*', each, b.getIndexAttr(parts - 1));
    auto fixed = getConstantIntValue(firstParts);
    auto size = getConstantIntValue(dim);
    if (fixed && size && *fixed > *size) {
      nodeError(n) << parts << " equal parts of " << *size << " elements leave "
                   << *size - *fixed << " for the last (axis " << *axis << ")";
      return;
    }
    // (Up to two parts the first ones always fit: ceil(n / 2) <= n.)
    checkedParts = parts > 2 && (!fixed || !size);
    // Before opset 18 the parts must be equal.
    if (opset < 18 && size && *size % parts != 0) {
      nodeError(n) << *size << " elements do not split into " << parts
                   << " equal parts (axis " << *axis
                   << "; before opset 18 the parts are equal)";
      return;
    }
    if (checkedParts) {
      std::string slot = indexErrorSlot(
          n, std::to_string(parts) + " equal parts of axis " +
                 std::to_string(*axis) + ": the first " +
                 std::to_string(parts - 1) + " against its size");
      checkAtMost(b, fileLoc, slot, indexValue(firstParts), indexValue(dim));
    }
    for (int64_t i = 0; i + 1 < parts; ++i)
      lengths.push_back(each);
    lengths.push_back(
        foldIndex('M', b.getIndexAttr(0), foldIndex('-', dim, firstParts)));
  }
  SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0)),
      sizes = sizesOf(x), strides(t.getRank(), b.getIndexAttr(1));
  OpFoldResult at = b.getIndexAttr(0);
  for (int64_t i = 0; i < parts; ++i) {
    // (Unchecked parts start where they should; checked ones no later than
    // the axis allows, which is where they should once the check passes.)
    offsets[*axis] = checkedParts
                         ? foldIndex('m', at,
                                     foldIndex('M', b.getIndexAttr(0),
                                               foldIndex('-', dim, lengths[i])))
                         : at;
    sizes[*axis] = lengths[i];
    // An empty part (a split length of 0) reads nothing.
    define(n, i,
           isConstantIntValue(lengths[i], 0)
               ? Value(tensor::EmptyOp::create(b, nodeLoc(n), sizes,
                                               t.getElementType()))
               : Value(tensor::ExtractSliceOp::create(b, nodeLoc(n), x, offsets,
                                                      sizes, strides)));
    at = foldIndex('+', at, lengths[i]);
  }
  // A static split that does not cover the axis exactly is malformed.
  auto total = getConstantIntValue(at);
  if (total && !t.isDynamicDim(*axis) && *total != t.getDimSize(*axis))
    nodeError(n) << "split lengths add up to " << *total << ", the axis has "
                 << t.getDimSize(*axis);
}

void Importer::importExpand(const onnx::NodeProto &n) {
  auto shapeK = knownInput(n, 1);
  // Known integers expanded to a known length (torch's repeat_interleave
  // expands its repeat count to [n]): known too.
  if (auto xk = knownInput(n, 0);
      xk && shapeK && !shapeK->scalar && shapeK->elems.size() <= 1) {
    std::optional<SmallVector<int64_t>> target = shapeK->constants();
    int64_t have = static_cast<int64_t>(xk->elems.size());
    int64_t want = target && !target->empty() ? (*target)[0] : 1;
    if (target && want >= 1 && (have == 1 || have == want || want == 1)) {
      KnownInts out = *xk;
      out.scalar = xk->scalar && target->empty();
      if (have == 1 && want > 1)
        out.elems.assign(want, xk->elems[0]);
      return defineKnown(n, 0, std::move(out));
    }
  }
  Value x = input(n, 0);
  if (failed)
    return;
  if (!shapeK || shapeK->scalar) {
    nodeError(n) << "the target shape must be known while importing";
    return;
  }
  auto t = typeOf(x);
  int64_t rank = std::max<int64_t>(t.getRank(), shapeK->elems.size());
  // NumPy broadcasting of x's shape with the target shape.
  SmallVector<OpFoldResult> sizes;
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> inExprs;
  std::string negativeSlot;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t xi = d - (rank - t.getRank());
    int64_t si = d - (rank - static_cast<int64_t>(shapeK->elems.size()));
    OpFoldResult s =
        si >= 0 ? shapeK->elems[si] : OpFoldResult(b.getIndexAttr(1));
    bool xUnit = xi < 0 || t.getDimSize(xi) == 1;
    auto sc = getConstantIntValue(s);
    if (sc && *sc < 0) {
      nodeError(n) << "target size " << *sc << " at position " << si
                   << " is negative";
      return;
    }
    if (xUnit) {
      sizes.push_back(nonNegativeTargetSize(n, negativeSlot, s, si));
    } else if (sc && *sc == 1) {
      sizes.push_back(dimOf(x, xi));
    } else if (t.isDynamicDim(xi) &&
               !isEqualConstantIntOrValue(dimOf(x, xi), s)) {
      // 1 at run time would broadcast, anything else is a mismatch.
      nodeError(n) << "cannot tell whether dynamic dim " << xi
                   << " of the input broadcasts to the target shape";
      return;
    } else {
      if (sc && !t.isDynamicDim(xi) && *sc != t.getDimSize(xi)) {
        nodeError(n) << "cannot expand dim " << xi << " of size "
                     << t.getDimSize(xi) << " to " << *sc;
        return;
      }
      if (!sc && !t.isDynamicDim(xi)) {
        // A target size known only while running against a static dim:
        // it must be 1 (the dim stays) or the dim's size, as numpy
        // refuses other sizes; checked on each call.
        Location loc = nodeLoc(n);
        Value v = indexValue(s);
        Value have = arith::ConstantIndexOp::create(b, loc, t.getDimSize(xi));
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value differs = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, have),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, one));
        checkFailsIf(b, loc,
                     indexErrorSlot(n, "target size at position " +
                                           std::to_string(si) +
                                           ", which must be 1 or input dim " +
                                           std::to_string(xi) + "'s size"),
                     differs, kHitSizeDiffers, v, have);
      }
      sizes.push_back(dimOf(x, xi));
    }
    auto c = getConstantIntValue(sizes.back());
    shape.push_back(c ? *c : ShapedType::kDynamic);
    if (xi >= 0)
      inExprs.push_back(xUnit ? b.getAffineConstantExpr(0)
                              : b.getAffineDimExpr(d));
  }
  define(
      n, 0,
      gatherCopy(nodeLoc(n), x, sizes, AffineMap::get(rank, 0, inExprs, ctx)));
}

void Importer::importConstantOfShape(const onnx::NodeProto &n) {
  auto shapeK = knownInput(n, 0);
  if (!shapeK || shapeK->scalar) {
    nodeError(n) << "the shape must be known while importing";
    return;
  }
  TypedAttr fill = b.getF32FloatAttr(0.0f);
  if (const auto *a = attr(n, "value"); a && a->has_t()) {
    auto v = tensorAttr(a->t());
    if (!v || v->getNumElements() != 1) {
      nodeError(n) << "value must be a one-element tensor";
      return;
    }
    fill = cast<TypedAttr>(v->getValues<Attribute>()[0]);
  }
  for (OpFoldResult s : shapeK->elems)
    if (auto c = getConstantIntValue(s); c && *c < 0) {
      nodeError(n) << "negative dimension " << *c;
      return;
    }
  Location loc = nodeLoc(n);
  // A static shape gives a splat constant (cheap whatever its size).
  if (auto c = shapeK->constants()) {
    auto type = RankedTensorType::get(*c, fill.getType());
    return define(
        n, 0,
        arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, fill)));
  }
  std::string negativeSlot;
  SmallVector<OpFoldResult> sizes;
  for (auto [i, s] : llvm::enumerate(shapeK->elems))
    sizes.push_back(nonNegativeTargetSize(n, negativeSlot, s, i));
  Value init = tensor::EmptyOp::create(b, loc, sizes, fill.getType());
  Value c = arith::ConstantOp::create(b, loc, fill);
  define(n, 0,
         linalg::FillOp::create(b, loc, ValueRange{c}, ValueRange{init})
             .getResult(0));
}

/// Range (opset 11): [start, start + delta, ...) up to `limit`, of
/// max(ceil((limit - start) / delta), 0) elements, as `torch.arange(T)`
/// exports position ids. Integer bounds may be sizes known symbolically (a
/// dynamic sequence length) with a constant step; the result is then a
/// tensor of that size, the same SSA size as the sequence wherever it flows.
/// Short constant integer ranges stay known integers (shape arithmetic).
/// Float ranges need constant bounds.
/// The most elements of a Range with constant bounds (a constant or a
/// static tensor): 2^24.
constexpr int64_t kMaxConstantRange = int64_t(1) << 24;

void Importer::importRange(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  Value startV = input(n, 0);
  if (failed)
    return;
  Type elem = typeOf(startV).getElementType();
  for (int i = 0; i < 3; ++i)
    if (Value v = input(n, i); v && typeOf(v).getRank() != 0) {
      nodeError(n) << "input #" << i << " must be a scalar, got "
                   << v.getType();
      return;
    }
  if (failed)
    return;
  // A float range of a size (torch.arange(T, dtype=torch.float32): limit
  // Cast(T), whole start and step) is the integer range converted.
  OpFoldResult first, last;
  int64_t d = 0;
  FloatType floatElem;
  if (auto ft = dyn_cast<FloatType>(elem)) {
    auto start = scalarConst(n.input(0)), limit = scalarConst(n.input(1)),
         delta = scalarConst(n.input(2));
    const onnx::NodeProto *cast = producedBy(n.input(1), "Cast");
    std::optional<KnownInts> size;
    if (cast && cast->input_size() > 0)
      size = known(cast->input(0));
    auto whole = [](std::optional<double> v) {
      return v && std::fabs(*v) < 1e15 && *v == std::trunc(*v);
    };
    // f32 and f64, where ONNX's count ceil((limit - start) / delta) is the
    // integer one for any size a tensor has (not so for f16 or bf16).
    bool exact = (ft.isF32() || ft.isF64()) &&
                 typeOf(input(n, 1)).getElementType() == elem;
    if (delta && *delta == 0) {
      nodeError(n) << "delta is 0";
      return;
    }
    if (!limit && size && size->elems.size() == 1 && whole(start) &&
        whole(delta) && exact) {
      first = b.getIndexAttr(static_cast<int64_t>(*start));
      last = size->elems[0];
      d = static_cast<int64_t>(*delta);
      floatElem = ft;
    } else if (!start || !limit || !delta) {
      nodeError(n) << "a " << elem
                   << " range needs constant start, limit and delta, or (f32 "
                      "and f64) a limit that is a size cast to "
                   << elem << " with whole constant start and delta";
      return;
    }
  }
  if (auto ft = dyn_cast<FloatType>(elem); ft && !floatElem) {
    auto start = scalarConst(n.input(0)), limit = scalarConst(n.input(1)),
         delta = scalarConst(n.input(2));
    // (Checked as a double: a NaN or huge count must not reach the cast.)
    double elements = std::ceil((*limit - *start) / *delta);
    if (!(elements >= 1 && elements <= double(kMaxConstantRange))) {
      nodeError(n) << "the range (start " << *start << ", limit " << *limit
                   << ", delta " << *delta << ") has " << elements
                   << " elements; expected 1 to " << kMaxConstantRange;
      return;
    }
    auto count = static_cast<int64_t>(elements);
    SmallVector<APFloat> elems;
    for (int64_t i = 0; i < count; ++i) {
      APFloat f(*start + static_cast<double>(i) * *delta);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      elems.push_back(f);
    }
    return define(n, 0,
                  arith::ConstantOp::create(
                      b, loc,
                      DenseElementsAttr::get(
                          RankedTensorType::get({count}, elem), elems)));
  }
  if (!floatElem) {
    auto start = knownInput(n, 0), limit = knownInput(n, 1),
         delta = knownInput(n, 2);
    auto step = delta ? delta->constants() : std::nullopt;
    if (!start || !limit || !step) {
      nodeError(n) << "start and limit must be known sizes and delta a "
                      "constant";
      return;
    }
    if ((*step)[0] == 0) {
      nodeError(n) << "delta is 0";
      return;
    }
    d = (*step)[0];
    first = start->elems[0];
    last = limit->elems[0];
  }
  auto firstC = getConstantIntValue(first), lastC = getConstantIntValue(last);
  // Constant bounds: the count without overflow, and at most
  // kMaxConstantRange elements (a static tensor of them).
  if (firstC && lastC) {
    int64_t span;
    if (d == std::numeric_limits<int64_t>::min() ||
        __builtin_sub_overflow(*lastC, *firstC, &span)) {
      nodeError(n) << "the range (start " << *firstC << ", limit " << *lastC
                   << ", delta " << d << ") overflows";
      return;
    }
    int64_t c = span / d + (span % d != 0 && (span < 0) == (d < 0) ? 1 : 0);
    if (c < 1 || c > kMaxConstantRange) {
      nodeError(n) << "the range (start " << *firstC << ", limit " << *lastC
                   << ", delta " << d << ") has " << std::max<int64_t>(c, 0)
                   << " elements; expected 1 to " << kMaxConstantRange;
      return;
    }
  }
  // count = ceil((limit - start) / d), floor division with the step's sign
  // folded in; negative counts are empty ranges, which the runtime refuses
  // anyway (no empty tensors), so the count is clamped only where it might
  // be negative: not for a limit computed from sizes only
  // (knownNonNegative) minus a non-positive constant start, stepping up.
  OpFoldResult span =
      d > 0 ? foldIndex('-', last, first) : foldIndex('-', first, last);
  int64_t ad = d > 0 ? d : -d;
  OpFoldResult count = foldIndex(
      '/', foldIndex('+', span, b.getIndexAttr(ad - 1)), b.getIndexAttr(ad));
  bool nonNegative = d > 0 && firstC && *firstC <= 0 && knownNonNegative(last);
  if (!nonNegative)
    count = foldIndex('M', count, b.getIndexAttr(0));
  if (auto c = getConstantIntValue(count)) {
    // (Symbolic bounds whose difference folds: Range(T, T, 1).)
    if (*c <= 0) {
      nodeError(n) << "the range is empty (its limit is its start)";
      return;
    }
    if (*c <= 64 && firstC && !floatElem) {
      KnownInts k;
      k.elemType = elem;
      for (int64_t i = 0; i < *c; ++i)
        k.elems.push_back(b.getIndexAttr(*firstC + i * d));
      return defineKnown(n, 0, k);
    }
  }
  Value init =
      tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{count}, elem);
  Value startIdx = indexValue(first);
  AffineMap id = b.getMultiDimIdentityMap(1);
  Value range =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
          ArrayRef<AffineMap>{id},
          SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange) {
            Value i = linalg::IndexOp::create(nb, l, 0);
            Value step = arith::ConstantIndexOp::create(nb, l, d);
            Value v = arith::AddIOp::create(
                nb, l, startIdx, arith::MulIOp::create(nb, l, i, step));
            if (floatElem)
              v = arith::SIToFPOp::create(
                  nb, l, elem,
                  arith::IndexCastOp::create(nb, l, nb.getI64Type(), v));
            else
              v = arith::IndexCastOp::create(nb, l, elem, v);
            linalg::YieldOp::create(nb, l, ValueRange{v});
          })
          .getResult(0);
  // Every element is in [start, limit) when start >= 0 steps up.
  if (auto input = inputSizeOf(last);
      input && d > 0 && firstC && *firstC >= 0 && !floatElem)
    rangeOfInputSize[range] = *input;
  define(n, 0, range);
}

} // namespace mlir::attn::onnx_import
