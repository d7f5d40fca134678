//===- OnnxImporter.cpp - ONNX models to MLIR -----------------------------===//
//
// Reads a ModelProto, turns graph inputs into @main's arguments,
// initializers into constants and nodes, in their (topological) order, into
// ops. The standard `Attention` operator becomes one attn.sdpa; the ops
// around attention in exported graphs are imported to linalg/tensor/arith.
// Anything else is an error naming the op type, the node and the opset.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "WeightSpans.h"

#include "mlir/IR/AsmState.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <cstring>
#include <set>

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::attn::onnx_import {

OwningOpRef<ModuleOp> Importer::run(StringRef bytes,
                                    std::shared_ptr<const void> keepAlive) {
  keepModel = std::move(keepAlive);
  // Protobuf parses the model without its weights' bytes, which are used
  // where they are (see WeightSpans.h).
  std::optional<StrippedModel> stripped = stripWeightBytes(bytes, kWeightBytes);
  StringRef parsed = stripped ? StringRef(stripped->bytes) : bytes;
  onnx::ModelProto model;
  // (Protobuf's limit applies to the file, as where it parses all of it.)
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(parsed.data(), static_cast<int>(parsed.size()))) {
    emitError(fileLoc) << "not an ONNX model: the protobuf does not parse "
                          "(truncated or corrupt file?)";
    return nullptr;
  }
  if (!model.has_graph()) {
    emitError(fileLoc) << "ONNX model has no graph";
    return nullptr;
  }
  for (const auto &op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      // Two versions of the default domain: which one the nodes mean is
      // anyone's guess (their semantics differ between opsets).
      if (opset && opset != op.version()) {
        emitError(fileLoc) << "the model imports the default ONNX domain "
                              "twice, at opsets "
                           << opset << " and " << op.version();
        return nullptr;
      }
      opset = op.version();
    }
  if (opset < 9) {
    emitError(fileLoc) << "unsupported ONNX opset " << opset
                       << " (the importer reads opsets 9 to 25)";
    return nullptr;
  }
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());
  if (options.raise)
    einsumsAsMatMuls(*model.mutable_graph());
  takeWeightBytes(*model.mutable_graph(),
                  stripped ? &stripped->rawData : nullptr);
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

std::optional<EinsumGroups> einsumGroups(StringRef a, StringRef w,
                                         StringRef out) {
  auto distinctLetters = [](StringRef t) {
    std::set<char> seen;
    return llvm::all_of(t, [&](char c) {
      return std::isalpha(static_cast<unsigned char>(c)) &&
             seen.insert(c).second;
    });
  };
  if (!distinctLetters(a) || !distinctLetters(w) || !distinctLetters(out))
    return std::nullopt;
  EinsumGroups g;
  for (char c : out) {
    if (a.contains(c) && w.contains(c))
      g.batch += c;
    else if (a.contains(c))
      g.rows += c;
    else if (w.contains(c))
      g.cols += c;
    else
      return std::nullopt; // in no operand: the Einsum import reports it
  }
  for (char c : (a + w).str())
    if (!out.contains(c) && !(a.contains(c) && w.contains(c)))
      return std::nullopt; // summed within one operand
  for (char c : a)
    if (w.contains(c) && !out.contains(c))
      g.summed += c;
  return g;
}

namespace {
/// A two-operand Einsum that is one matrix product up to the order of the
/// dims: the operands' terms and the permutations (ONNX Transpose perms,
/// empty where the order already fits) that bring the first operand to
/// [batch..., rows, summed], the second to [batch..., summed, columns] and
/// MatMul's [batch..., rows, columns] to the output's order. Batch letters
/// are in both operands and the output (in the output's order); there is
/// exactly one rows, one columns and one summed letter, and no letter
/// repeats within a term (no diagonals) or is summed within one operand.
struct MatMulForm {
  std::string a, w, product;
  SmallVector<int64_t> permA, permW, permOut;
};

std::optional<MatMulForm> matMulForm(StringRef equation) {
  std::string text;
  for (char c : equation)
    if (c != ' ')
      text += c;
  size_t arrow = text.find("->");
  std::string lhs = text.substr(0, arrow);
  size_t comma = lhs.find(',');
  if (comma == std::string::npos ||
      lhs.find(',', comma + 1) != std::string::npos)
    return std::nullopt;
  MatMulForm f;
  f.a = lhs.substr(0, comma);
  f.w = lhs.substr(comma + 1);
  std::string o;
  if (arrow != std::string::npos) {
    o = text.substr(arrow + 2);
  } else {
    // NumPy's implicit output: the letters used once, in order.
    std::map<char, int> uses;
    for (char c : f.a + f.w)
      ++uses[c];
    for (auto [c, k] : uses)
      if (k == 1)
        o += c;
  }
  std::optional<EinsumGroups> groups = einsumGroups(f.a, f.w, o);
  if (!groups || groups->rows.size() != 1 || groups->cols.size() != 1 ||
      groups->summed.size() != 1)
    return std::nullopt;
  const std::string &batch = groups->batch, &rows = groups->rows,
                    &cols = groups->cols, &summed = groups->summed;
  // Transpose's perm: output dim i is input dim perm[i].
  auto perm = [](const std::string &from, const std::string &to) {
    SmallVector<int64_t> p;
    bool identity = true;
    for (size_t i = 0; i < to.size(); ++i) {
      p.push_back(static_cast<int64_t>(from.find(to[i])));
      identity &= p.back() == static_cast<int64_t>(i);
    }
    if (identity)
      p.clear();
    return p;
  };
  f.permA = perm(f.a, batch + rows + summed);
  f.permW = perm(f.w, batch + summed + cols);
  f.product = batch + rows + cols;
  f.permOut = perm(f.product, o);
  return f;
}
} // namespace

void Importer::takeWeightBytes(
    onnx::GraphProto &g, const std::vector<std::optional<StringRef>> *inModel) {
  // (One entry per initializer by construction. Were it not, the weights
  // cut out would be missing: an error naming them, not wrong values.)
  if (inModel && inModel->size() != static_cast<size_t>(g.initializer_size()))
    inModel = nullptr;
  for (int i = 0; i < g.initializer_size(); ++i) {
    onnx::TensorProto &t = *g.mutable_initializer(i);
    bool isFloat = t.data_type() == onnx::TensorProto::FLOAT ||
                   t.data_type() == onnx::TensorProto::FLOAT16 ||
                   t.data_type() == onnx::TensorProto::BFLOAT16 ||
                   t.data_type() == onnx::TensorProto::DOUBLE;
    bool inline_ = t.data_location() != onnx::TensorProto::EXTERNAL;
    if (inModel && (*inModel)[i]) {
      // What protobuf made of the rest must agree with what the cut
      // assumed; else the bytes go back, and the tensor is read as
      // protobuf alone would have read it.
      if (isFloat && inline_ && !t.has_raw_data()) {
        weightBytes[&t].inModel = (*inModel)[i];
        continue;
      }
      t.set_raw_data((*inModel)[i]->str());
    }
    if (isFloat && inline_ && t.raw_data().size() >= kWeightBytes)
      weightBytes[&t].owned.swap(*t.mutable_raw_data());
  }
}

void Importer::einsumsAsMatMuls(onnx::GraphProto &g) {
  // Fresh value names for the transposed operands and the product: none
  // the graph uses (defined or not, so that no reference is captured).
  std::set<std::string> names;
  for (const auto &v : g.input())
    names.insert(v.name());
  for (const auto &v : g.output())
    names.insert(v.name());
  for (const auto &t : g.initializer())
    names.insert(t.name());
  for (const auto &n : g.node()) {
    names.insert(n.input().begin(), n.input().end());
    names.insert(n.output().begin(), n.output().end());
  }
  auto fresh = [&](const std::string &base) {
    std::string name = base;
    for (int i = 1; !names.insert(name).second; ++i)
      name = base + "." + std::to_string(i);
    return name;
  };
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<int> from; // each new node's index in `g`
  for (int index = 0; index < g.node_size(); ++index) {
    const onnx::NodeProto &n = g.node(index);
    llvm::scope_exit recordSources([&] { from.resize(nodes.size(), index); });
    const onnx::AttributeProto *eq = attr(n, "equation");
    std::optional<MatMulForm> form;
    if (n.op_type() == "Einsum" &&
        (n.domain().empty() || n.domain() == "ai.onnx") && opset >= 12 && eq &&
        n.input_size() == 2 && n.output_size() >= 1 && !n.input(0).empty() &&
        !n.input(1).empty() && !n.output(0).empty())
      form = matMulForm(eq->s());
    if (!form) {
      *nodes.Add() = n;
      continue;
    }
    EinsumRewrite rewrite;
    rewrite.equation = eq->s();
    rewrite.inputs[0] = n.input(0);
    rewrite.inputs[1] = n.input(1);
    rewrite.terms[0] = form->a;
    rewrite.terms[1] = form->w;
    std::string doc = kEinsumAsMatMul + eq->s();
    auto transpose = [&](const std::string &in, const std::string &out,
                         ArrayRef<int64_t> perm) {
      onnx::NodeProto *t = nodes.Add();
      t->set_op_type("Transpose");
      t->set_name(n.name()); // errors name the Einsum
      t->set_doc_string(doc);
      t->add_input(in);
      t->add_output(out);
      onnx::AttributeProto *p = t->add_attribute();
      p->set_name("perm");
      p->set_type(onnx::AttributeProto::INTS);
      for (int64_t d : perm)
        p->add_ints(d);
    };
    // Each operand, transposed first where its order differs.
    std::string operands[2];
    for (int i : {0, 1}) {
      ArrayRef<int64_t> perm = i == 0 ? form->permA : form->permW;
      operands[i] = n.input(i);
      if (perm.empty())
        continue;
      operands[i] = fresh(n.output(0) + (i == 0 ? "/lhs" : "/rhs"));
      transpose(n.input(i), operands[i], perm);
      einsumRewrites[operands[i]] = rewrite;
      einsumRewrites[operands[i]].operand = i;
    }
    std::string product =
        form->permOut.empty() ? n.output(0) : fresh(n.output(0) + "/product");
    onnx::NodeProto *m = nodes.Add();
    m->set_op_type("MatMul");
    m->set_name(n.name());
    m->set_doc_string(doc);
    m->add_input(operands[0]);
    m->add_input(operands[1]);
    m->add_output(product);
    rewrite.productTerm = form->product;
    einsumRewrites[product] = rewrite;
    if (!form->permOut.empty())
      transpose(product, n.output(0), form->permOut);
  }
  if (nodes.size() != g.node_size())
    sourceIndex = std::move(from);
  g.mutable_node()->Swap(&nodes);
}

bool Importer::importEinsumRewrite(const onnx::NodeProto &n) {
  if (n.output_size() < 1 ||
      !StringRef(n.doc_string()).starts_with(kEinsumAsMatMul))
    return false;
  auto it = einsumRewrites.find(n.output(0));
  if (it == einsumRewrites.end())
    return false;
  const EinsumRewrite &r = it->second;
  // The Einsum's operands, as it reads them (for messages that name it).
  onnx::NodeProto einsum;
  einsum.set_name(n.name());
  einsum.set_doc_string(n.doc_string());
  einsum.add_input(r.inputs[0]);
  einsum.add_input(r.inputs[1]);
  Value ops[2];
  for (int i : {0, 1}) {
    if (r.operand >= 0 && r.operand != i)
      continue; // a Transpose reads one
    ops[i] = input(einsum, i);
    if (failed)
      return true;
    auto t = typeOf(ops[i]);
    if (t.getRank() != static_cast<int64_t>(r.terms[i].size())) {
      nodeError(n) << "equation '" << r.equation << "': term '" << r.terms[i]
                   << "' does not fit input #" << i << " of type " << t;
      return true;
    }
  }
  if (r.operand >= 0)
    return false;
  // The letters both operands have: equal sizes, or a batch letter's 1
  // that MatMul broadcasts. A summed letter's 1 against another size
  // broadcasts in NumPy but not in MatMul: the generic Einsum, then.
  bool generic = false;
  for (auto [p, c] : llvm::enumerate(r.terms[0])) {
    size_t q = r.terms[1].find(c);
    if (q == std::string::npos)
      continue;
    OpFoldResult a = dimOf(ops[0], p), w = dimOf(ops[1], q);
    if (isEqualConstantIntOrValue(a, w))
      continue;
    bool summed = r.productTerm.find(c) == std::string::npos;
    if (isConstantIntValue(a, 1) || isConstantIntValue(w, 1)) {
      generic |= summed;
      continue;
    }
    einsumSizeMismatch(n, r.equation, c, a, w);
    return true;
  }
  if (!generic)
    return false;
  onnx::NodeProto asEinsum = einsum;
  asEinsum.set_op_type("Einsum");
  asEinsum.clear_doc_string();
  asEinsum.add_output(n.output(0));
  onnx::AttributeProto *eq = asEinsum.add_attribute();
  eq->set_name("equation");
  eq->set_type(onnx::AttributeProto::STRING);
  eq->set_s(r.terms[0] + "," + r.terms[1] + "->" + r.productTerm);
  importEinsum(asEinsum);
  return true;
}

Location Importer::nodeLoc(const onnx::NodeProto &n) {
  return NameLoc::get(
      b.getStringAttr(n.name().empty() ? n.op_type() : n.name()), fileLoc);
}

/// Reports an error on node `n` and marks the import failed.
InFlightDiagnostic Importer::nodeError(const onnx::NodeProto &n) {
  failed = true;
  InFlightDiagnostic d = emitError(nodeLoc(n));
  if (n.name().empty())
    d << "ONNX node #" << nodeIndex;
  else
    d << "ONNX node '" << n.name() << "'";
  StringRef doc(n.doc_string());
  if (doc.consume_front(kEinsumAsMatMul))
    d << " (Einsum '" << doc << "' as MatMul";
  else
    d << " (" << n.op_type();
  return std::move(d << ", opset " << opset << "): ");
}

LogicalResult Importer::verifyNodeOp(const onnx::NodeProto &n, Operation *op) {
  std::string first;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && first.empty())
        first = d.str();
      return success();
    });
    result = verify(op);
  }
  // The verifier's message starts "'<op>' op ".
  StringRef why(first);
  why.consume_front(("'" + op->getName().getStringRef() + "' op ").str());
  if (result.failed())
    nodeError(n) << "its inputs and attributes give an invalid "
                 << op->getName() << ": " << why;
  return result;
}

std::optional<Type> Importer::elemType(int dt) {
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

std::string Importer::unsupportedTypeText(int dt) {
  std::string name = onnx::TensorProto_DataType_IsValid(dt)
                         ? onnx::TensorProto_DataType_Name(
                               static_cast<onnx::TensorProto_DataType>(dt))
                         : "#" + std::to_string(dt);
  return "unsupported ONNX data type " + name +
         " (supported: FLOAT, FLOAT16, BFLOAT16, BOOL, INT64, INT32)";
}

const onnx::AttributeProto *Importer::attr(const onnx::NodeProto &n,
                                           StringRef name) {
  for (const auto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t Importer::intAttr(const onnx::NodeProto &n, StringRef name,
                          int64_t dflt) {
  const auto *a = attr(n, name);
  return a ? a->i() : dflt;
}

std::optional<float> Importer::floatAttr(const onnx::NodeProto &n,
                                         StringRef name) {
  const auto *a = attr(n, name);
  if (!a)
    return std::nullopt;
  return a->f();
}

/// The value of input `i` of `n`, or null if absent ("" or past the end).
Value Importer::lookup(const std::string &name) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  // Known integers consumed as data: materialized here, once.
  if (auto k = knownInts.find(name); k != knownInts.end())
    return values[name] = materialize(k->second);
  return nullptr;
}

Value Importer::input(const onnx::NodeProto &n, int i) {
  if (i >= n.input_size() || n.input(i).empty())
    return nullptr;
  if (Value v = lookup(n.input(i)))
    return v;
  nodeError(n) << "uses '" << n.input(i)
               << "', which no graph input, initializer or earlier node "
                  "defines (is the graph topologically sorted?)";
  return nullptr;
}

/// Float tensors of 1 KiB and more (weights) are dense resource blobs:
/// kept out of line, elided when printing; masks and shapes stay inline,
/// where folds read them.
static bool isBlobWeight(RankedTensorType type) {
  return isa<FloatType>(type.getElementType()) &&
         type.getNumElements() * type.getElementTypeBitWidth() >= 8 * 1024;
}

/// A blob of `bytes` under a key made of the initializer's name.
static DenseResourceElementsAttr
weightBlob(RankedTensorType type, StringRef name, AsmResourceBlob bytes) {
  std::string key = name.str();
  for (char &c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  if (key.empty() || !std::isalpha(static_cast<unsigned char>(key[0])))
    key = "w_" + key;
  return DenseResourceElementsAttr::get(type, key, std::move(bytes));
}

ElementsAttr Importer::weightAttr(StringRef name, DenseElementsAttr attr) {
  auto type = cast<RankedTensorType>(attr.getType());
  if (!isBlobWeight(type) || attr.isSplat())
    return attr;
  return weightBlob(type, name,
                    HeapAsmResourceBlob::allocateAndCopyWithAlign(
                        attr.getRawData(), alignof(uint64_t)));
}

// ----- sizes and shape arithmetic --------------------------------------------

OpFoldResult Importer::dimOf(Value v, int64_t i) {
  auto t = typeOf(v);
  if (!t.isDynamicDim(i))
    return b.getIndexAttr(t.getDimSize(i));
  // Follow the value to the sizes it was created with, so that one dynamic
  // size (say the sequence length) is one SSA value wherever it flows.
  if (auto it = reshapeSizes.find(v); it != reshapeSizes.end())
    return it->second[i];
  if (auto r = dyn_cast<OpResult>(v)) {
    Operation *op = r.getOwner();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      if (r.getResultNumber() < dps.getNumDpsInits())
        return dimOf(dps.getDpsInits()[r.getResultNumber()], i);
    if (auto e = dyn_cast<tensor::EmptyOp>(op))
      return e.getMixedSizes()[i];
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(op))
      return e.getMixedOutputShape()[i];
    if (auto s = dyn_cast<tensor::ExtractSliceOp>(op))
      if (s.getSourceType().getRank() == t.getRank())
        return s.getMixedSizes()[i];
    if (auto c = dyn_cast<tensor::CastOp>(op))
      return dimOf(c.getSource(), i);
    if (auto c = dyn_cast<tensor::CollapseShapeOp>(op)) {
      OpFoldResult p = b.getIndexAttr(1);
      SmallVector<ReassociationIndices> groups = c.getReassociationIndices();
      for (int64_t d : groups[i])
        p = foldIndex('*', p, dimOf(c.getSrc(), d));
      return p;
    }
    // A concatenation: the sum of its inputs' sizes along its dim (a KV
    // cache's past + new), the first input's elsewhere.
    if (auto c = dyn_cast<tensor::ConcatOp>(op)) {
      if (i != static_cast<int64_t>(c.getDim()))
        return dimOf(c.getInputs().front(), i);
      OpFoldResult sum = b.getIndexAttr(0);
      for (Value in : c.getInputs())
        sum = foldIndex('+', sum, dimOf(in, i));
      return sum;
    }
    // A projected attention block (raised): the input's leading dims, the
    // projection's width last.
    if (isa<MultiHeadAttentionOp, CausalAttentionOp>(op) && i + 1 < t.getRank())
      return dimOf(op->getOperand(0), i);
    // Attention's result: the query's shape with the value's head size.
    if (auto s = dyn_cast<SdpaOp>(op))
      return i + 1 == t.getRank()
                 ? dimOf(s.getValue(), typeOf(s.getValue()).getRank() - 1)
                 : dimOf(s.getQuery(), i);
  }
  // Inputs' dims with one dim_param name are one size.
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto it = namedDims.find({arg.getArgNumber(), i});
    if (it != namedDims.end() &&
        it->second != std::make_pair(arg.getArgNumber(), i))
      return dimOf(arg.getOwner()->getArgument(it->second.first),
                   it->second.second);
  }
  auto key = std::make_pair(v, i);
  auto it = dimCache.find(key);
  if (it != dimCache.end())
    return it->second;
  Value d = tensor::DimOp::create(b, v.getLoc(), v, i);
  dimCache[key] = d;
  return d;
}

SmallVector<OpFoldResult> Importer::sizesOf(Value v) {
  SmallVector<OpFoldResult> r;
  for (int64_t i = 0, e = typeOf(v).getRank(); i < e; ++i)
    r.push_back(dimOf(v, i));
  return r;
}

std::optional<KnownInts> Importer::known(const std::string &name) {
  if (auto it = knownInts.find(name); it != knownInts.end())
    return it->second;
  auto it = values.find(name);
  if (it == values.end())
    return std::nullopt;
  DenseElementsAttr attr;
  auto t = typeOf(it->second);
  if (t.getRank() > 1 || !matchPattern(it->second, m_Constant(&attr)) ||
      !isa<IntegerType>(attr.getElementType()) ||
      attr.getElementType().isInteger(1) || attr.getNumElements() > 64)
    return std::nullopt;
  KnownInts k;
  k.scalar = t.getRank() == 0;
  k.elemType = attr.getElementType();
  for (const APInt &x : attr.getValues<APInt>())
    k.elems.push_back(b.getIndexAttr(x.getSExtValue()));
  return k;
}

std::optional<KnownInts> Importer::knownInput(const onnx::NodeProto &n, int i) {
  if (i >= n.input_size() || n.input(i).empty())
    return std::nullopt;
  return known(n.input(i));
}

void Importer::defineKnown(const onnx::NodeProto &n, int i, KnownInts k) {
  if (i < n.output_size() && !n.output(i).empty()) {
    values.erase(n.output(i));
    knownInts[n.output(i)] = std::move(k);
  }
}

Value Importer::indexValue(OpFoldResult r) {
  if (auto v = dyn_cast<Value>(r))
    return v;
  return arith::ConstantIndexOp::create(b, fileLoc, *getConstantIntValue(r));
}

Value Importer::materialize(const KnownInts &k) {
  SmallVector<Value> elems;
  for (OpFoldResult e : k.elems) {
    if (auto c = getConstantIntValue(e))
      elems.push_back(arith::ConstantOp::create(
          b, fileLoc, b.getIntegerAttr(k.elemType, *c)));
    else
      elems.push_back(
          arith::IndexCastOp::create(b, fileLoc, k.elemType, cast<Value>(e)));
  }
  auto type = k.scalar
                  ? RankedTensorType::get({}, k.elemType)
                  : RankedTensorType::get({int64_t(elems.size())}, k.elemType);
  return tensor::FromElementsOp::create(b, fileLoc, type, elems);
}

std::optional<std::pair<unsigned, int64_t>>
Importer::inputSizeOf(OpFoldResult v) {
  auto value = dyn_cast<Value>(v);
  auto d = value ? value.getDefiningOp<tensor::DimOp>() : nullptr;
  if (!d)
    return std::nullopt;
  auto arg = dyn_cast<BlockArgument>(d.getSource());
  auto index = getConstantIntValue(d.getIndex());
  if (!arg || !index || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return std::nullopt;
  return std::make_pair(arg.getArgNumber(), *index);
}

bool Importer::boundSumOfInputSizes(OpFoldResult v, int64_t most) {
  auto value = dyn_cast<Value>(v);
  if (!value || !value.getDefiningOp<arith::AddIOp>())
    return false;
  SmallVector<int64_t> bound = {most, 0};
  SmallVector<Value> pending = {value};
  while (!pending.empty()) {
    Value x = pending.pop_back_val();
    if (auto c = getConstantIntValue(x)) {
      if (*c < 0 || *c >= (int64_t(1) << 32))
        return false;
      bound[1] += *c;
    } else if (auto input = inputSizeOf(x)) {
      bound.append({int64_t(input->first), input->second});
    } else if (auto add = x.getDefiningOp<arith::AddIOp>();
               add && bound.size() < 34) {
      pending.append({add.getRhs(), add.getLhs()}); // lhs first
    } else {
      return false;
    }
  }
  if (bound[1] > most)
    return false; // never within the axis: ONNX clamps
  if (!llvm::is_contained(sumBounds, bound))
    sumBounds.push_back(bound);
  return true;
}

bool isTermOfSum(OpFoldResult term, OpFoldResult sum) {
  auto value = dyn_cast<Value>(sum);
  auto add = value ? value.getDefiningOp<arith::AddIOp>() : nullptr;
  if (!add || !knownNonNegative(term))
    return false;
  return (isEqualConstantIntOrValue(add.getLhs(), term) &&
          knownNonNegative(add.getRhs())) ||
         (isEqualConstantIntOrValue(add.getRhs(), term) &&
          knownNonNegative(add.getLhs()));
}

bool knownNonNegative(OpFoldResult v, int depth) {
  // Inside a sum or product (depth > 0) a huge constant, such as Slice's
  // INT64_MAX for "to the end", could make the result wrap.
  if (auto c = getConstantIntValue(v))
    return *c >= 0 && (depth == 0 || *c < (int64_t(1) << 32));
  Operation *def = cast<Value>(v).getDefiningOp();
  if (!def || depth > 8)
    return false;
  if (isa<tensor::DimOp>(def))
    return true;
  auto both = [&] {
    return knownNonNegative(def->getOperand(0), depth + 1) &&
           knownNonNegative(def->getOperand(1), depth + 1);
  };
  if (isa<arith::AddIOp, arith::MulIOp, arith::MinSIOp, arith::FloorDivSIOp>(
          def))
    return both();
  if (isa<arith::MaxSIOp>(def))
    return knownNonNegative(def->getOperand(0), depth + 1) ||
           knownNonNegative(def->getOperand(1), depth + 1);
  return false;
}

OpFoldResult Importer::foldIndex(char op, OpFoldResult a, OpFoldResult c) {
  auto x = getConstantIntValue(a), y = getConstantIntValue(c);
  if (x && y) {
    switch (op) {
    case '+':
      return b.getIndexAttr(*x + *y);
    case '-':
      return b.getIndexAttr(*x - *y);
    case '*':
      return b.getIndexAttr(*x * *y);
    case '/':
      if (*y != 0)
        return b.getIndexAttr(llvm::divideFloorSigned(*x, *y));
      break;
    case 'm':
      return b.getIndexAttr(std::min(*x, *y));
    case 'M':
      return b.getIndexAttr(std::max(*x, *y));
    }
  }
  if (op == '-' && isEqualConstantIntOrValue(a, c))
    return b.getIndexAttr(0);
  // min(s, s) and max(s, s) are s (x[:, :n] with n the length of x's dim).
  if ((op == 'm' || op == 'M') && isEqualConstantIntOrValue(a, c))
    return a;
  // (p + t) - p is t (arange(P, P + T) counts T, a KV cache step's
  // positions); (p + t) - t is p.
  if (op == '-')
    if (auto v = dyn_cast<Value>(a))
      if (auto add = v.getDefiningOp<arith::AddIOp>()) {
        if (isEqualConstantIntOrValue(add.getRhs(), c))
          return add.getLhs();
        if (isEqualConstantIntOrValue(add.getLhs(), c))
          return add.getRhs();
      }
  // Clamps at 0 of what is known not to be negative (sizes, max(., 0)).
  if (op == 'M' && x == 0 && knownNonNegative(c))
    return c;
  if (op == 'M' && y == 0 && knownNonNegative(a))
    return a;
  if (op == 'm' &&
      ((x == 0 && knownNonNegative(c)) || (y == 0 && knownNonNegative(a))))
    return b.getIndexAttr(0);
  // One form for a constant offset: x + (-k) is x - k, so that a slice's
  // end -1 (dim + -1) and its start 1 (dim - 1) give one size.
  if (op == '+' && y && *y < 0 && *y != INT64_MIN)
    return foldIndex('-', a, b.getIndexAttr(-*y));
  if (op == '+' && x && *x < 0 && *x != INT64_MIN)
    return foldIndex('-', c, b.getIndexAttr(-*x));
  if ((op == '*' || op == '/') && y == 1)
    return a;
  if (op == '*' && (x == 0 || y == 0))
    return b.getIndexAttr(0);
  if ((op == '+' || op == '-') && y == 0)
    return a;
  if (op == '*' && x == 1)
    return c;
  if (op == '+' && x == 0)
    return c;
  // One SSA value per expression, so that sizes computed twice compare
  // equal (B * T from a reshape and from its inverse).
  auto memoKey = std::make_tuple(op, a.getOpaqueValue(), c.getOpaqueValue());
  if (auto it = indexMemo.find(memoKey); it != indexMemo.end())
    return it->second;
  if (op == '*' || op == '+' || op == 'm' || op == 'M') // commutative
    if (auto it = indexMemo.find(
            std::make_tuple(op, c.getOpaqueValue(), a.getOpaqueValue()));
        it != indexMemo.end())
      return it->second;
  Value l = indexValue(a), r = indexValue(c), result;
  switch (op) {
  case '+':
    result = arith::AddIOp::create(b, fileLoc, l, r);
    break;
  case '-':
    result = arith::SubIOp::create(b, fileLoc, l, r);
    break;
  case '*':
    result = arith::MulIOp::create(b, fileLoc, l, r);
    break;
  case '/':
    result = arith::FloorDivSIOp::create(b, fileLoc, l, r);
    break;
  case 'm':
    result = arith::MinSIOp::create(b, fileLoc, l, r);
    break;
  default:
    result = arith::MaxSIOp::create(b, fileLoc, l, r);
    break;
  }
  indexMemo[memoKey] = result;
  return result;
}

void Importer::define(const onnx::NodeProto &n, int i, Value v) {
  if (i < n.output_size() && !n.output(i).empty())
    values[n.output(i)] = v;
}

bool Importer::wantsOutput(const onnx::NodeProto &n, int i) {
  return i < n.output_size() && !n.output(i).empty();
}

bool Importer::readExternalData(const onnx::TensorProto &t, size_t bytes,
                                StringRef &view,
                                std::shared_ptr<llvm::MemoryBuffer> &file) {
  // The external_data entries: location (relative to the model's
  // directory), offset and length (optional).
  std::string location;
  uint64_t offset = 0, length = bytes;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if ((kv.key() == "offset" || kv.key() == "length") &&
             !llvm::to_integer(kv.value(),
                               kv.key() == "offset" ? offset : length)) {
      emitError(fileLoc) << "initializer '" << t.name() << "': external data "
                         << kv.key() << " '" << kv.value()
                         << "' is not a number";
      return false;
    }
  }
  bool escapes = llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                               llvm::sys::path::end(location)),
                              [](StringRef part) { return part == ".."; });
  if (location.empty() || llvm::sys::path::is_absolute(location) || escapes) {
    emitError(fileLoc)
        << "initializer '" << t.name() << "': external data location '"
        << location << "' must be a relative path below the model's directory";
    return false;
  }
  SmallString<256> path(llvm::sys::path::parent_path(modelPath));
  llvm::sys::path::append(path, location);
  std::shared_ptr<llvm::MemoryBuffer> &mapped = externalFiles[path.str().str()];
  if (!mapped) {
    // A regular file (a FIFO would block the import), below the model's
    // directory also once symbolic links are resolved.
    auto refuse = [&](const Twine &why) {
      emitError(fileLoc) << "initializer '" << t.name()
                         << "': external data file '" << path << "' " << why;
      externalFiles.erase(path.str().str());
      return false;
    };
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(path, status) &&
        !llvm::sys::fs::is_regular_file(status))
      return refuse("is not a regular file");
    SmallString<256> real, realDir;
    SmallString<256> dir(llvm::sys::path::parent_path(modelPath));
    if (dir.empty())
      dir = ".";
    if (!llvm::sys::fs::real_path(path, real) &&
        !llvm::sys::fs::real_path(dir, realDir) &&
        !StringRef(real).starts_with(
            (realDir.str().ends_with("/") ? realDir : realDir + "/").str()))
      return refuse("leads outside the model's directory (through a "
                    "symbolic link)");
    auto opened = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!opened) {
      emitError(fileLoc) << "initializer '" << t.name()
                         << "': cannot read external data file '" << path
                         << "': " << opened.getError().message();
      externalFiles.erase(path.str().str());
      return false;
    }
    mapped = std::move(*opened);
  }
  uint64_t size = mapped->getBufferSize();
  if (offset > size || length > size - offset) {
    emitError(fileLoc) << "initializer '" << t.name()
                       << "': external data file '" << path << "' has " << size
                       << " bytes, the tensor needs " << length << " at offset "
                       << offset;
    return false;
  }
  view = mapped->getBuffer().substr(offset, length);
  file = mapped;
  return true;
}

bool Importer::checkAcyclic(const onnx::GraphProto &g) {
  // Node i depends on the producers of its inputs; a back edge in a depth
  // first walk is a cycle, reported with the nodes on it.
  auto name = [&](int i) {
    const auto &n = g.node(i);
    // (The model's op: an Einsum read as MatMul is named as such.)
    std::string op = StringRef(n.doc_string()).starts_with(kEinsumAsMatMul)
                         ? "Einsum"
                         : n.op_type();
    return n.name().empty() ? op + " #" + std::to_string(modelIndex(i))
                            : n.name();
  };
  // Each value is assigned once (ONNX graphs are SSA): a second writer
  // would silently replace the first one's value for later readers.
  std::map<std::string, int> producedBy;
  std::set<std::string> graphInputs;
  for (const auto &v : g.input())
    if (!graphInputs.insert(v.name()).second) {
      // Two arguments of one name: the graph would read only one of them.
      emitError(fileLoc) << "graph input '" << v.name()
                         << "' is declared twice (ONNX graphs assign each "
                            "value once)";
      return false;
    }
  // Initializers are values too: one of a name, not written by a node.
  // One that a graph input declares (an overridable default) must match
  // the declaration.
  std::map<std::string, const onnx::TensorProto *> initializers;
  for (const auto &t : g.initializer())
    if (!initializers.emplace(t.name(), &t).second) {
      emitError(fileLoc) << "initializer '" << t.name()
                         << "' is given twice (ONNX graphs assign each value "
                            "once)";
      return false;
    }
  for (const auto &v : g.input()) {
    auto it = initializers.find(v.name());
    if (it == initializers.end() || !v.type().has_tensor_type())
      continue;
    const onnx::TensorProto &t = *it->second;
    const auto &tt = v.type().tensor_type();
    bool differs = tt.elem_type() != 0 && tt.elem_type() != t.data_type();
    if (tt.has_shape()) {
      const auto &dims = tt.shape().dim();
      differs |= dims.size() != t.dims_size();
      for (int d = 0; !differs && d < dims.size(); ++d)
        differs = dims[d].has_dim_value() && dims[d].dim_value() != t.dims(d);
    }
    if (differs) {
      std::string shape;
      for (int d = 0; d < t.dims_size(); ++d)
        shape += (d ? ", " : "") + std::to_string(t.dims(d));
      emitError(fileLoc) << "graph input '" << v.name()
                         << "' is declared otherwise than its initializer ("
                         << onnx::TensorProto::DataType_Name(
                                static_cast<onnx::TensorProto::DataType>(
                                    t.data_type()))
                         << " [" << shape << "])";
      return false;
    }
  }
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto &o : g.node(i).output()) {
      if (o.empty())
        continue;
      if (initializers.count(o)) {
        emitError(fileLoc) << "value '" << o << "' is an initializer and also "
                           << "written by '" << name(i)
                           << "' (ONNX graphs assign each value once)";
        return false;
      }
      if (graphInputs.count(o)) {
        emitError(fileLoc) << "value '" << o << "' is a graph input and also "
                           << "written by '" << name(i)
                           << "' (ONNX graphs assign each value once)";
        return false;
      }
      auto [it, inserted] = producedBy.emplace(o, i);
      if (!inserted) {
        emitError(fileLoc) << "value '" << o << "' is written by '"
                           << name(it->second) << "' and again by '" << name(i)
                           << "' (ONNX graphs assign each value once)";
        return false;
      }
    }
  std::vector<int> state(g.node_size(), 0); // 0 new, 1 on the path, 2 done
  // Iterative (graphs may be deep): a stack of (node, next input to visit).
  std::vector<std::pair<int, int>> stack;
  for (int root = 0; root < g.node_size(); ++root) {
    if (state[root])
      continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto &[i, next] = stack.back();
      if (next >= g.node(i).input_size()) {
        state[i] = 2;
        stack.pop_back();
        continue;
      }
      auto it = producedBy.find(g.node(i).input(next++));
      if (it == producedBy.end())
        continue;
      int j = it->second;
      if (state[j] == 1) {
        InFlightDiagnostic d = emitError(fileLoc);
        d << "the graph has a cycle: ";
        auto start =
            llvm::find_if(stack, [&](const auto &e) { return e.first == j; });
        for (auto p = start; p != stack.end(); ++p)
          d << "'" << name(p->first) << "' -> ";
        d << "'" << name(j) << "'";
        return false;
      }
      if (state[j] == 0) {
        state[j] = 1;
        stack.push_back({j, 0});
      }
    }
  }
  return true;
}

std::optional<DenseElementsAttr>
Importer::tensorAttr(const onnx::TensorProto &t) {
  std::optional<ElementsAttr> attr = tensorOrWeightAttr(t, "");
  if (!attr)
    return std::nullopt;
  return cast<DenseElementsAttr>(*attr);
}

std::optional<ElementsAttr>
Importer::initializerAttr(const onnx::TensorProto &t, StringRef name) {
  std::optional<ElementsAttr> attr = tensorOrWeightAttr(t, name);
  if (auto dense =
          dyn_cast_if_present<DenseElementsAttr>(attr.value_or(ElementsAttr())))
    return weightAttr(name, dense);
  return attr;
}

std::optional<ElementsAttr>
Importer::tensorOrWeightAttr(const onnx::TensorProto &t, StringRef weightName) {
  std::optional<Type> elem = elemType(t.data_type());
  if (!elem) {
    emitError(fileLoc) << "initializer '" << t.name() << "' has "
                       << unsupportedTypeText(t.data_type());
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
  // The bytes: a view of the model's (takeWeightBytes) or of an external
  // data file's (with the owner that keeps it), a string this function may
  // move into a blob (taken out of the parsed model), or the parsed
  // model's raw_data.
  std::string *owned = nullptr;
  std::optional<StringRef> view;
  std::shared_ptr<const void> viewOwner = keepModel;
  if (auto it = weightBytes.find(&t); it != weightBytes.end()) {
    view = it->second.inModel;
    if (!view)
      owned = &it->second.owned;
  } else if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    StringRef bytes;
    std::shared_ptr<llvm::MemoryBuffer> file;
    if (!readExternalData(t, static_cast<size_t>(count) * width, bytes, file))
      return std::nullopt;
    view = bytes;
    viewOwner = std::move(file);
  }
  if (view || owned || t.has_raw_data()) {
    StringRef raw = view ? *view : owned ? *owned : t.raw_data();
    if (raw.size() != static_cast<size_t>(count) * width) {
      emitError(fileLoc) << "initializer '" << t.name() << "' holds "
                         << raw.size() << " bytes, its shape needs "
                         << count * width;
      return std::nullopt;
    }
    if (elem->isInteger(1)) {
      SmallVector<bool> v(raw.begin(), raw.end());
      return DenseElementsAttr::get(type, ArrayRef<bool>(v));
    }
    // A weight's bytes go straight into its blob: through a dense
    // attribute first they would be copied (and kept in the context) twice.
    // Uniform values (LayerNorm's ones and zeros) stay splats, which folds
    // turn into scalars.
    auto uniform = [&] {
      for (size_t i = width; i < raw.size(); i += width)
        if (std::memcmp(raw.data(), raw.data() + i, width) != 0)
          return false;
      return true;
    };
    if (!weightName.empty() && isBlobWeight(type) && !uniform()) {
      // (Views only where the caller lets the module keep its input alive;
      // the external files' mappings are the importer's own either way.)
      if (view && keepModel) {
        // In place: the blob keeps the bytes alive, and states their
        // alignment as it is (their offset in the file decides it; the
        // passes read blobs as bytes).
        auto address = reinterpret_cast<uintptr_t>(raw.data());
        size_t alignment = alignof(uint64_t);
        while (address % alignment)
          alignment /= 2;
        return weightBlob(
            type, weightName,
            AsmResourceBlob(
                ArrayRef<char>(raw.data(), raw.size()), alignment,
                [keep = std::move(viewOwner)](void *, size_t, size_t) mutable {
                  keep.reset();
                },
                /*dataIsMutable=*/false));
      }
      if (!owned)
        return weightBlob(
            type, weightName,
            HeapAsmResourceBlob::allocateAndCopyWithAlign(
                ArrayRef<char>(raw.data(), raw.size()), alignof(uint64_t)));
      // Moved, not copied (a string's buffer of 1 KiB and more is
      // malloc'ed: aligned for any scalar).
      auto *kept = new std::string(std::move(*owned));
      return weightBlob(type, weightName,
                        AsmResourceBlob(
                            ArrayRef<char>(kept->data(), kept->size()),
                            alignof(uint64_t),
                            [kept](void *, size_t, size_t) { delete kept; },
                            /*dataIsMutable=*/false));
    }
    return DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(raw.data(), raw.size()));
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
  // float16 and bfloat16 in the typed field: each value's 16 bits in an
  // int32 (what onnx.helper.make_tensor writes without raw=True).
  if ((elem->isF16() || elem->isBF16()) && t.int32_data_size() == count) {
    SmallVector<uint16_t> bits;
    bits.reserve(count);
    for (int32_t v : t.int32_data()) {
      if (v < 0 || v > 0xFFFF) {
        emitError(fileLoc) << "initializer '" << t.name() << "': int32_data "
                           << "holds " << v << ", not the 16 bits of a "
                           << (elem->isF16() ? "float16" : "bfloat16")
                           << " value";
        return std::nullopt;
      }
      bits.push_back(static_cast<uint16_t>(v));
    }
    return DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()),
                             bits.size() * sizeof(uint16_t)));
  }
  emitError(fileLoc) << "initializer '" << t.name()
                     << "' has no data matching its shape and type";
  return std::nullopt;
}

std::optional<RankedTensorType>
Importer::valueInfoType(const onnx::ValueInfoProto &vi) {
  if (!vi.type().has_tensor_type()) {
    emitError(fileLoc) << "graph value '" << vi.name() << "' is not a tensor";
    return std::nullopt;
  }
  const auto &tt = vi.type().tensor_type();
  std::optional<Type> elem = elemType(tt.elem_type());
  if (!elem) {
    emitError(fileLoc) << "graph value '" << vi.name() << "' has "
                       << unsupportedTypeText(tt.elem_type());
    return std::nullopt;
  }
  if (!tt.has_shape()) {
    emitError(fileLoc)
        << "graph value '" << vi.name()
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
  // Static dims whose product overflows (or could not be allocated).
  int64_t count = 1;
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d) && d && count > (int64_t(1) << 40) / d) {
      emitError(fileLoc) << "graph value '" << vi.name()
                         << "' has too many elements ("
                         << RankedTensorType::get(shape, *elem) << ")";
      return std::nullopt;
    } else if (!ShapedType::isDynamic(d)) {
      count *= d;
    }
  return RankedTensorType::get(shape, *elem);
}

bool Importer::importGraph(const onnx::GraphProto &g) {
  if (!checkAcyclic(g))
    return false;
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
  // A graph output declared without a shape (hand-built graphs often give
  // only the element type) takes the type it computes: an unranked
  // placeholder until then.
  SmallVector<Type> resultTypes;
  for (const auto &vi : g.output()) {
    if (vi.type().has_tensor_type() && !vi.type().tensor_type().has_shape()) {
      if (std::optional<Type> elem =
              elemType(vi.type().tensor_type().elem_type())) {
        resultTypes.push_back(UnrankedTensorType::get(*elem));
        continue;
      }
    }
    auto t = valueInfoType(vi);
    if (!t)
      return false;
    resultTypes.push_back(*t);
  }
  auto fn = func::FuncOp::create(b, fileLoc, "main",
                                 b.getFunctionType(argTypes, resultTypes));
  Block *entry = fn.addEntryBlock();
  // Named dynamic dims (dim_param), in argument order.
  {
    std::map<std::string, std::pair<unsigned, int64_t>> firstOf;
    unsigned argNo = 0;
    for (const auto &vi : g.input()) {
      if (inits.count(vi.name()))
        continue;
      SmallVector<Attribute> names;
      bool any = false;
      const auto &dims = vi.type().tensor_type().shape().dim();
      for (int64_t d = 0; d < dims.size(); ++d) {
        const auto &dim = dims[d];
        bool named = !dim.has_dim_value() && dim.has_dim_param() &&
                     !dim.dim_param().empty();
        names.push_back(b.getStringAttr(named ? dim.dim_param() : ""));
        if (named) {
          any = true;
          auto [it, fresh] =
              firstOf.emplace(dim.dim_param(), std::make_pair(argNo, d));
          namedDims[{argNo, d}] = it->second;
        }
      }
      if (any)
        fn.setArgAttr(argNo, "onnx.dim_params", b.getArrayAttr(names));
      ++argNo;
    }
  }
  for (auto [i, name] : llvm::enumerate(argNames)) {
    fn.setArgAttr(i, "onnx.name", b.getStringAttr(name));
    values[name] = entry->getArgument(i);
  }
  for (auto [i, vi] : llvm::enumerate(g.output()))
    fn.setResultAttr(i, "onnx.name", b.getStringAttr(vi.name()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  for (const auto &[name, t] : inits) {
    std::optional<ElementsAttr> attr = initializerAttr(*t, name);
    if (!attr)
      return false;
    values[name] = arith::ConstantOp::create(b, fileLoc, *attr);
  }
  {
    // Who produces what (producedBy), raising or not.
    for (const auto &n : g.node())
      for (const auto &o : n.output())
        producer[o] = &n;
    if (options.raise)
      findAttentionChains(g);
    // Every node is imported; where a recognised subgraph ends, the attn op
    // it raises to replaces its result, and what it no longer needs is
    // erased as dead code below.
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto &n = g.node(i);
      nodeIndex = modelIndex(i);
      importNode(n);
      if (!failed) {
        if (auto chain = raiseAt.find(&n); chain != raiseAt.end())
          emitRaisedAttention(n, chain->second);
        if (auto region = raiseRegionAt.find(&n); region != raiseRegionAt.end())
          emitRaisedRegion(region->second);
      }
      if (failed)
        return false;
    }
    SmallVector<Value> results;
    for (auto [i, vi] : llvm::enumerate(g.output())) {
      // (Known integers, e.g. a Shape returned as an output, materialize.)
      lookup(vi.name());
      auto it = values.find(vi.name());
      if (it == values.end()) {
        emitError(fileLoc) << "graph output '" << vi.name()
                           << "' is not produced by any node";
        return false;
      }
      Value v = it->second;
      if (auto unranked = dyn_cast<UnrankedTensorType>(resultTypes[i])) {
        if (typeOf(v).getElementType() != unranked.getElementType()) {
          emitError(fileLoc)
              << "graph output '" << vi.name() << "' is declared " << unranked
              << " but computes " << v.getType();
          return false;
        }
        resultTypes[i] = v.getType();
      }
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
          emitError(fileLoc)
              << "graph output '" << vi.name() << "' is declared " << want
              << " but computes " << got;
          return false;
        }
        // A size the graph declares but computes only while running is
        // checked on each call, and the result keeps the computed type: a
        // cast to the declared size would let canonicalization give that
        // size to the ops computing the result (a buffer of the declared
        // size written with the computed one: a heap overflow before the
        // check could report).
        bool lessStatic = false;
        for (int64_t d = 0; d < want.getRank(); ++d) {
          if (want.isDynamicDim(d) || !got.isDynamicDim(d))
            continue;
          lessStatic = true;
          std::string slot = indexErrorSlotAt("graph output '" + vi.name() +
                                              "' dim " + std::to_string(d) +
                                              " against its declared size");
          Value size = tensor::DimOp::create(b, fileLoc, v, d);
          Value declared =
              arith::ConstantIndexOp::create(b, fileLoc, want.getDimSize(d));
          Value differs = arith::CmpIOp::create(
              b, fileLoc, arith::CmpIPredicate::ne, size, declared);
          checkFailsIf(b, fileLoc, slot, differs, kHitSizeDiffers, size,
                       declared);
        }
        if (lessStatic) {
          resultTypes[i] = got;
          results.push_back(v);
          continue;
        }
        v = tensor::CastOp::create(b, fileLoc, want, v);
      }
      results.push_back(v);
    }
    func::ReturnOp::create(b, fileLoc, results);
    fn.setFunctionType(b.getFunctionType(fn.getArgumentTypes(), resultTypes));
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto t = cast<RankedTensorType>(fn.getArgument(i).getType());
      SmallVector<int64_t> bounds(t.getRank(), -1);
      bool any = false;
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (auto it = inputBounds.find({i, d});
            it != inputBounds.end() && t.isDynamicDim(d)) {
          bounds[d] = it->second;
          any = true;
        }
      if (any)
        fn.setArgAttr(i, "attnrt.dim_max", b.getDenseI64ArrayAttr(bounds));
    }
    if (!sumBounds.empty())
      fn->setAttr("attnrt.sum_max",
                  b.getArrayAttr(llvm::map_to_vector(
                      sumBounds, [&](const SmallVector<int64_t> &bound) {
                        return Attribute(b.getDenseI64ArrayAttr(bound));
                      })));
    for (auto [arg, range] : indexRanges)
      fn.setArgAttr(arg, "attnrt.value_range",
                    b.getDenseI64ArrayAttr({range.first, range.second}));
    // The Gathers that check their indices while running, in slot order.
    if (!indexCheckSites.empty())
      fn->getParentOfType<ModuleOp>()->setAttr(
          "attnrt.index_checks",
          b.getStrArrayAttr(SmallVector<StringRef>(indexCheckSites.begin(),
                                                   indexCheckSites.end())));
    // What raising replaced (and shape arithmetic nothing consumed as data).
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
      if (isOpTriviallyDead(&op))
        op.erase();
  }
  return true;
}

std::optional<unsigned> Importer::idsInputOf(const std::string &name) {
  if (auto it = idCopies.find(name); it != idCopies.end())
    return it->second;
  auto it = values.find(name);
  auto arg = it == values.end() ? nullptr : dyn_cast<BlockArgument>(it->second);
  if (!arg)
    return std::nullopt;
  Type et = typeOf(arg).getElementType();
  if (!isa<IntegerType>(et) || et.isInteger(1))
    return std::nullopt;
  return arg.getArgNumber();
}

std::optional<std::pair<unsigned, int64_t>>
Importer::rangeInputSizeOf(const std::string &name) {
  // Through ops that only move or cast elements (position ids unsqueezed
  // or expanded over the batch): the values stay those of the range.
  std::string at = name;
  while (true) {
    if (auto v = values.find(at); v != values.end())
      if (auto r = rangeOfInputSize.find(v->second);
          r != rangeOfInputSize.end())
        return r->second;
    auto p = producer.find(at);
    if (p == producer.end() || !movesIntegers(*p->second))
      return std::nullopt;
    at = p->second->input(0);
  }
}

bool Importer::movesIntegers(const onnx::NodeProto &n) {
  // Ops whose output holds every input element and only those. Casts to
  // i32/i64 (the only integer types imported) keep every value in a
  // table's range.
  static const std::set<std::string> moves = {
      "Identity",  "Unsqueeze", "Squeeze", "Reshape",
      "Transpose", "Expand",    "Cast"};
  if (!moves.count(n.op_type()) || n.input_size() < 1 || n.output_size() < 1)
    return false;
  int64_t to = intAttr(n, "to", 0);
  return n.op_type() != "Cast" || to == onnx::TensorProto::INT32 ||
         to == onnx::TensorProto::INT64;
}

void Importer::noteIdCopy(const onnx::NodeProto &n) {
  // The range checked on the input is then exactly the Gather's. Not
  // Slice: two slices of one input may index tables of different sizes
  // (token ids and segment ids), and the input as a whole would then be
  // held to the smaller table.
  if (!movesIntegers(n))
    return;
  if (auto arg = idsInputOf(n.input(0)))
    idCopies[n.output(0)] = *arg;
}

std::optional<onnx::NodeProto> Importer::upgradeNode(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  struct Move {
    const char *attr;
    int input;
    bool required;
  };
  SmallVector<Move> moves;
  if (opset < 13 && (op == "Unsqueeze" || op == "Squeeze"))
    moves = {{"axes", 1, op == "Unsqueeze"}};
  else if (opset < 13 && op == "Split")
    moves = {{"split", 1, false}};
  else if (opset < 10 && op == "Slice")
    moves = {{"starts", 1, true}, {"ends", 2, true}, {"axes", 3, false}};
  if (moves.empty())
    return std::nullopt;
  onnx::NodeProto up = n;
  up.clear_attribute();
  for (const auto &a : n.attribute())
    if (llvm::none_of(moves, [&](const Move &m) { return a.name() == m.attr; }))
      *up.add_attribute() = a;
  for (const Move &m : moves) {
    const onnx::AttributeProto *a = attr(n, m.attr);
    bool hasInput = m.input < n.input_size() && !n.input(m.input).empty();
    if (hasInput || (!a && m.required)) {
      nodeError(n) << (hasInput ? "takes '" : "needs the attribute '") << m.attr
                   << "'"
                   << (hasInput ? " as an attribute, not as input #" +
                                      std::to_string(m.input)
                                : std::string())
                   << " before opset " << (op == "Slice" ? 10 : 13);
      return std::nullopt;
    }
    if (!a)
      continue;
    if (a->type() != onnx::AttributeProto::INTS) {
      nodeError(n) << "the attribute '" << m.attr
                   << "' must be a list of integers";
      return std::nullopt;
    }
    while (up.input_size() <= m.input)
      up.add_input("");
    // The list's own name, readable in diagnostics.
    std::string name = (n.output_size() ? n.output(0) : n.name()) +
                       " (attribute " + m.attr + ")";
    KnownInts k;
    k.elemType = b.getI64Type();
    for (int64_t v : a->ints())
      k.elems.push_back(b.getIndexAttr(v));
    knownInts[name] = std::move(k);
    up.set_input(m.input, name);
  }
  return up;
}

void Importer::importNode(const onnx::NodeProto &n, bool upgraded) {
  if (n.domain() == "com.microsoft" && n.op_type() == "MultiHeadAttention")
    return importMsMultiHeadAttention(n);
  if (!n.domain().empty() && n.domain() != "ai.onnx") {
    nodeError(n) << "op domain '" << n.domain() << "' is not supported";
    return;
  }
  const std::string &op = n.op_type();
  // Ops newer than the model's opset do not exist for it (ONNX Runtime
  // refuses such a model too). Not LayerNormalization: standard from opset
  // 17, but ONNX Runtime has long registered it in the default domain, and
  // its transformer optimizer writes it into models of older opsets.
  // clang-format off
  static const std::map<std::string, int> since = {
      {"Range", 11},       {"CumSum", 11},         {"Einsum", 12},
      {"LessOrEqual", 12}, {"GreaterOrEqual", 12}, {"Trilu", 14},
      {"Gelu", 20},        {"Attention", 23},      {"Sign", 9},
      {"Round", 11},       {"Mod", 10},            {"GatherElements", 11},
      {"ScatterND", 11},   {"HardSwish", 14},      {"Celu", 12},
      {"Mish", 18},        {"Sinh", 9},            {"Cosh", 9},
      {"Asinh", 9},        {"Acosh", 9},           {"Atanh", 9},
      {"IsNaN", 9},        {"IsInf", 10},          {"ThresholdedRelu", 10},
      {"Tan", 7},          {"Asin", 7},            {"Acos", 7},
      {"Atan", 7}};
  // clang-format on
  if (auto it = since.find(op); it != since.end() && opset < it->second) {
    nodeError(n) << op << " exists from opset " << it->second
                 << "; the model imports opset " << opset;
    return;
  }
  if (!upgraded) {
    if (std::optional<onnx::NodeProto> up = upgradeNode(n))
      return importNode(*up, /*upgraded=*/true);
    if (failed)
      return;
  }
  // Inputs every op needs present (optional ones are checked where used).
  // clang-format off
  static const std::map<std::string, int> required = {
      {"Attention", 3}, {"Identity", 1}, {"Dropout", 1}, {"Add", 2},
      {"Sub", 2}, {"Mul", 2}, {"Div", 2}, {"Pow", 2}, {"Where", 3},
      {"Sqrt", 1}, {"MatMul", 2}, {"Transpose", 1}, {"Reshape", 2},
      {"Softmax", 1}, {"Constant", 0}, {"Shape", 1}, {"Gather", 2},
      {"Unsqueeze", 2}, {"Squeeze", 1}, {"Concat", 1}, {"Slice", 3},
      {"Split", 1}, {"Expand", 2}, {"ConstantOfShape", 1}, {"Cast", 1},
      {"Equal", 2}, {"Trilu", 1}, {"Gemm", 2}, {"ReduceSum", 1}, {"Not", 1},
      {"Tanh", 1}, {"Erf", 1}, {"LayerNormalization", 2}, {"ReduceMean", 1},
      {"Range", 3}, {"Gelu", 1}, {"Relu", 1}, {"Sigmoid", 1}, {"Neg", 1},
      {"Exp", 1}, {"Log", 1}, {"Abs", 1}, {"Reciprocal", 1}, {"Sin", 1},
      {"Cos", 1}, {"Max", 1}, {"Min", 1}, {"Clip", 1}, {"Einsum", 1},
      {"Floor", 1}, {"Ceil", 1}, {"Round", 1}, {"Sign", 1}, {"LeakyRelu", 1},
      {"Flatten", 1}, {"ReduceProd", 1}, {"ReduceSumSquare", 1},
      {"ReduceL1", 1}, {"ReduceL2", 1}, {"ReduceLogSumExp", 1},
      {"ReduceLogSum", 1},
      {"LogSoftmax", 1}, {"Tile", 2}, {"Pad", 1},
      {"Less", 2}, {"Greater", 2}, {"LessOrEqual", 2}, {"GreaterOrEqual", 2},
      {"And", 2}, {"Or", 2}, {"Xor", 2}, {"ReduceMax", 1}, {"ReduceMin", 1},
      {"ArgMax", 1}, {"ArgMin", 1}, {"CumSum", 2}, {"ScatterND", 3},
      {"Mod", 2}, {"GatherElements", 2}, {"Tan", 1}, {"Asin", 1},
      {"Acos", 1}, {"Atan", 1}, {"Sinh", 1}, {"Cosh", 1}, {"Asinh", 1},
      {"Acosh", 1}, {"Atanh", 1}, {"Softplus", 1}, {"Softsign", 1},
      {"HardSigmoid", 1}, {"HardSwish", 1}, {"Elu", 1}, {"Selu", 1},
      {"Celu", 1}, {"ThresholdedRelu", 1}, {"Mish", 1}, {"IsNaN", 1},
      {"IsInf", 1}, {"PRelu", 2}, {"TopK", 1}};
  // clang-format on
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
  if (importEinsumRewrite(n))
    return;
  noteIdCopy(n);
  if (op == "Attention")
    return importAttention(n);
  if (op == "Dropout" && !wantsOutput(n, 1)) {
    // Inference passes the data through. With training_mode true (opset
    // 12 on) ONNX drops random elements; a model exported for training
    // would otherwise run here as if in eval mode, silently.
    if (n.input_size() > 2 && !n.input(2).empty()) {
      Value mode = input(n, 2);
      if (failed)
        return;
      std::optional<DenseElementsAttr> c = constantElements(mode);
      bool isFlag =
          c && c->getNumElements() == 1 && c->getElementType().isInteger(1);
      bool off = isFlag && !*c->getValues<bool>().begin();
      std::optional<double> ratio = n.input_size() > 1 && !n.input(1).empty()
                                        ? scalarConst(n.input(1))
                                        : std::optional<double>(0.5);
      if (!off && !(ratio && *ratio == 0.0)) {
        nodeError(n) << "training_mode is "
                     << (isFlag ? "true" : "not a constant bool")
                     << ": random dropout of a tensor is not supported "
                        "(export the model in eval mode)";
        return;
      }
    }
    return define(n, 0, input(n, 0));
  }
  if (op == "Dropout") {
    nodeError(n) << "the mask output is not supported (inference uses the "
                    "data output only)";
    return;
  }
  if (op == "Identity")
    return define(n, 0, input(n, 0));
  if (op == "Flatten")
    return importFlatten(n);
  if (op == "Constant")
    return importConstant(n);
  static const std::set<std::string> elementwise = {
      "Add",       "Sub",        "Mul",      "Div",      "Pow",
      "Where",     "Sqrt",       "Tanh",     "Erf",      "Gelu",
      "Relu",      "Sigmoid",    "Neg",      "Exp",      "Log",
      "Abs",       "Reciprocal", "Sin",      "Cos",      "Max",
      "Min",       "Clip",       "Floor",    "Ceil",     "Round",
      "Sign",      "LeakyRelu",  "Mod",      "Tan",      "Asin",
      "Acos",      "Atan",       "Sinh",     "Cosh",     "Asinh",
      "Acosh",     "Atanh",      "Softplus", "Softsign", "HardSigmoid",
      "HardSwish", "Elu",        "Selu",     "Celu",     "ThresholdedRelu",
      "Mish",      "IsNaN",      "IsInf",    "PRelu"};
  if (elementwise.count(op))
    return importElementwise(n);
  if (op == "MatMul")
    return importMatMul(n);
  if (op == "Einsum")
    return importEinsum(n);
  if (op == "Transpose")
    return importTranspose(n);
  if (op == "Reshape")
    return importReshape(n);
  if (op == "Softmax" || op == "LogSoftmax")
    return importSoftmax(n);
  static const std::map<std::string,
                        void (Importer::*)(const onnx::NodeProto &)>
      tensorOps = {{"Shape", &Importer::importShape},
                   {"Gather", &Importer::importGather},
                   {"ScatterND", &Importer::importScatterND},
                   {"GatherElements", &Importer::importGatherElements},
                   {"Unsqueeze", &Importer::importUnsqueeze},
                   {"Squeeze", &Importer::importSqueeze},
                   {"Concat", &Importer::importConcat},
                   {"Tile", &Importer::importTile},
                   {"Pad", &Importer::importPad},
                   {"Slice", &Importer::importSlice},
                   {"Split", &Importer::importSplit},
                   {"Expand", &Importer::importExpand},
                   {"ConstantOfShape", &Importer::importConstantOfShape},
                   {"Cast", &Importer::importCast},
                   {"Equal", &Importer::importCompare},
                   {"Less", &Importer::importCompare},
                   {"Greater", &Importer::importCompare},
                   {"LessOrEqual", &Importer::importCompare},
                   {"GreaterOrEqual", &Importer::importCompare},
                   {"Not", &Importer::importLogical},
                   {"And", &Importer::importLogical},
                   {"Or", &Importer::importLogical},
                   {"Xor", &Importer::importLogical},
                   {"Trilu", &Importer::importTrilu},
                   {"Gemm", &Importer::importGemm},
                   {"ReduceSum", &Importer::importReduce},
                   {"ReduceMean", &Importer::importReduce},
                   {"ReduceMax", &Importer::importReduce},
                   {"ReduceMin", &Importer::importReduce},
                   {"ReduceProd", &Importer::importReduce},
                   {"ReduceSumSquare", &Importer::importReduce},
                   {"ReduceL1", &Importer::importReduce},
                   {"ReduceL2", &Importer::importReduce},
                   {"ReduceLogSumExp", &Importer::importReduce},
                   {"ReduceLogSum", &Importer::importReduce},
                   {"ArgMax", &Importer::importArgExtreme},
                   {"ArgMin", &Importer::importArgExtreme},
                   {"CumSum", &Importer::importCumSum},
                   {"TopK", &Importer::importTopK},
                   {"Range", &Importer::importRange},
                   {"LayerNormalization", &Importer::importLayerNormalization}};
  if (auto it = tensorOps.find(op); it != tensorOps.end())
    return (this->*it->second)(n);
  nodeError(n) << "unsupported ONNX op '" << op << "'";
}

} // namespace mlir::attn::onnx_import

namespace mlir::attn {
static OwningOpRef<ModuleOp> importModel(StringRef bytes,
                                         std::shared_ptr<const void> keepAlive,
                                         StringRef fileName,
                                         MLIRContext *context,
                                         const OnnxImportOptions &options) {
  context->loadDialect<AttnDialect, arith::ArithDialect, func::FuncDialect,
                       linalg::LinalgDialect, math::MathDialect,
                       memref::MemRefDialect, scf::SCFDialect,
                       tensor::TensorDialect>();
  return onnx_import::Importer(context, fileName, options)
      .run(bytes, std::move(keepAlive));
}

OwningOpRef<ModuleOp> importOnnxModel(StringRef bytes, StringRef fileName,
                                      MLIRContext *context,
                                      const OnnxImportOptions &options) {
  return importModel(bytes, nullptr, fileName, context, options);
}

OwningOpRef<ModuleOp> importOnnxModel(std::shared_ptr<llvm::MemoryBuffer> file,
                                      StringRef fileName, MLIRContext *context,
                                      const OnnxImportOptions &options) {
  StringRef bytes = file->getBuffer();
  return importModel(bytes, std::move(file), fileName, context, options);
}

std::vector<std::string> onnxExternalDataFiles(StringRef modelPath) {
  auto buffer = llvm::MemoryBuffer::getFile(modelPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return {};
  StringRef bytes = (*buffer)->getBuffer();
  // (Only the weights' locations are needed: parse without their bytes.)
  std::optional<onnx_import::StrippedModel> stripped =
      onnx_import::stripWeightBytes(bytes, /*minBytes=*/64);
  StringRef parsed = stripped ? StringRef(stripped->bytes) : bytes;
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(parsed.data(), static_cast<int>(parsed.size())))
    return {};
  std::set<std::string> files;
  auto add = [&](const onnx::TensorProto &t) {
    for (const auto &kv : t.external_data())
      if (kv.key() == "location") {
        SmallString<256> path(llvm::sys::path::parent_path(modelPath));
        llvm::sys::path::append(path, kv.value());
        files.insert(path.str().str());
      }
  };
  for (const auto &t : model.graph().initializer())
    add(t);
  for (const auto &n : model.graph().node())
    for (const auto &a : n.attribute())
      if (a.has_t())
        add(a.t());
  return {files.begin(), files.end()};
}

void registerOnnxImportDialects(DialectRegistry &registry) {
  registry
      .insert<AttnDialect, arith::ArithDialect, func::FuncDialect,
              linalg::LinalgDialect, math::MathDialect, memref::MemRefDialect,
              scf::SCFDialect, tensor::TensorDialect>();
}

} // namespace mlir::attn
