//===- Importer.h - the ONNX importer's state (private) ---------*- C++ -*-===//
//
// The importer walks a ModelProto's graph in topological order and keeps, per
// ONNX value name, the MLIR value that holds it. Its methods are split by
// concern over the files of this directory:
//   OnnxImporter.cpp     the model, the graph, initializers, shared helpers
//   ImportTensorOps.cpp  the standard ops around attention (linalg/tensor)
//   ImportAttention.cpp  the standard Attention op (opset 23-25)
//   RaiseAttention.cpp   unfused attention subgraphs raised to attn ops
//   WeightSpans.cpp      the weights' bytes found in the wire format (no
//                        protobuf types), so that protobuf never copies them
// Protobuf types appear only here and in those files, never in the public
// interface (include/attn/OnnxImporter.h).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_ONNX_IMPORTER_IMPL_H
#define ATTN_ONNX_IMPORTER_IMPL_H

#include "attn/OnnxImporter.h"

#include "attn/AttnOps.h"
#include "attn/ConstantElements.h"
#include "attn/MaskAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "onnx/onnx_pb.h"
#include "llvm/ADT/DenseMap.h"
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

namespace mlir::attn::onnx_import {

/// A float or a (non-bool) integer: what arithmetic ops take.
inline bool isNumber(Type t) {
  return isa<FloatType>(t) || (isa<IntegerType>(t) && !t.isInteger(1));
}

/// Slice bounds at least this large are "to the end" (INT64_MIN/MAX, as
/// exporters write them), and so are steps (which then take one element).
constexpr int64_t kSliceHuge = int64_t(1) << 62;
/// The first index and the count of the elements ONNX Slice takes from
/// `size` with constant `start`, `end` and non-zero `step`: negative bounds
/// count from the end; for a positive step both are clamped to [0, size],
/// for a negative one start to [0, size - 1] and end to [-1, size - 1],
/// INT32_MAX and INT64_MAX as its end meaning before the first element, as
/// in ONNX Runtime.
std::pair<int64_t, int64_t> sliceRange(int64_t start, int64_t end, int64_t step,
                                       int64_t size);

/// `axis` in [-rank, rank) made non-negative, or nullopt.
inline std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

/// Whether a size expression is provably >= 0: a constant >= 0, a
/// tensor's dim, or sums, products, quotients, min and max of such (the
/// arithmetic `Importer::foldIndex` builds). A difference is not, nor any
/// of these with a constant operand of 2^32 or more (a sum or product
/// could wrap).
bool knownNonNegative(OpFoldResult v, int depth = 0);

/// Whether index `i` lies outside [-size, size), ONNX's range for an index
/// into an axis of `size` elements.
Value indexOutside(OpBuilder &b, Location l, Value i, Value size);
/// Index `i` in [-size, size) counted from 0: a negative one from the end.
Value wrapIndex(OpBuilder &b, Location l, Value i, Value size);
/// `acc` combined with `x` by `kind`: '+', '*', 'M' (max; NaN propagates)
/// or 'm' (min), on floats or signed integers (ScatterND's reductions,
/// ReduceSum/Prod/Max/Min).
Value combineNumbers(OpBuilder &b, Location l, char kind, Value acc, Value x);
/// `term` is known to be one addend of `sum` (an arith.addi of it and a
/// value known not to be negative): 0 <= term <= sum when term >= 0.
bool isTermOfSum(OpFoldResult term, OpFoldResult sum);

/// The letters of a two-operand Einsum `a,w->out` by role, each in the
/// output's order (summed ones in `a`'s): in both operands and the output
/// (batch), in `a` and the output (rows), in `w` and the output (cols), in
/// both operands only (summed). None when a term has a character that is
/// not a letter ("..."), a letter twice (a diagonal), or a letter summed
/// within one operand.
struct EinsumGroups {
  std::string batch, rows, cols, summed;
};
std::optional<EinsumGroups> einsumGroups(StringRef a, StringRef w,
                                         StringRef out);

/// A small integer tensor (rank 0 or 1) known element by element while
/// importing: each element a constant or an index value.
struct KnownInts {
  SmallVector<OpFoldResult> elems;
  bool scalar = false; // rank 0 (else rank 1)
  Type elemType;       // i64 or i32
  /// The values, if all are constant.
  std::optional<SmallVector<int64_t>> constants() const {
    SmallVector<int64_t> r;
    for (OpFoldResult e : elems) {
      std::optional<int64_t> c = getConstantIntValue(e);
      if (!c)
        return std::nullopt;
      r.push_back(*c);
    }
    return r;
  }
};

/// Reassociation of a rank-`bigRank` shape with the unit dims `isUnit`
/// to the shape without them (Unsqueeze/Squeeze as expand/collapse): each
/// other dim groups with the unit dims next to it.
SmallVector<ReassociationIndices> unitGroups(int64_t bigRank,
                                             ArrayRef<bool> isUnit);

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef fileName, const OnnxImportOptions &opts)
      : ctx(ctx), b(ctx), options(opts), modelPath(fileName.str()),
        fileLoc(FileLineColLoc::get(ctx, fileName, 0, 0)) {}

  /// Imports the model in `bytes`. With `keepAlive` (the owner of
  /// `bytes`), weight blobs view their bytes in place and keep it alive;
  /// without, they copy them.
  OwningOpRef<ModuleOp> run(StringRef bytes,
                            std::shared_ptr<const void> keepAlive);

private:
  // ----- helpers -------------------------------------------------------------

  Location nodeLoc(const onnx::NodeProto &n);

  /// Reports an error on node `n` and marks the import failed.
  InFlightDiagnostic nodeError(const onnx::NodeProto &n);
  /// Verifies `op`, built for node `n`; a failure is reported as an error
  /// of the node that names the attribute or shape at fault (the op
  /// verifier's message, without its dump of the op).
  LogicalResult verifyNodeOp(const onnx::NodeProto &n, Operation *op);

  std::optional<Type> elemType(int dt);

  const onnx::AttributeProto *attr(const onnx::NodeProto &n, StringRef name);
  /// "unsupported ONNX data type DOUBLE (supported: ...)" for `dt`.
  static std::string unsupportedTypeText(int dt);
  int64_t intAttr(const onnx::NodeProto &n, StringRef name, int64_t dflt);
  std::optional<float> floatAttr(const onnx::NodeProto &n, StringRef name);

  /// The value of input `i` of `n`, or null if absent ("" or past the end).
  Value input(const onnx::NodeProto &n, int i);
  /// The value named `name` (known integers materialized), or null.
  Value lookup(const std::string &name);

  void define(const onnx::NodeProto &n, int i, Value v);

  bool wantsOutput(const onnx::NodeProto &n, int i);

  /// A TensorProto's contents as an elements attribute.
  std::optional<DenseElementsAttr> tensorAttr(const onnx::TensorProto &t);
  /// An initializer's value: large float ones (weights) as blobs named
  /// after `name`, the others as tensorAttr gives them.
  std::optional<ElementsAttr> initializerAttr(const onnx::TensorProto &t,
                                              StringRef name);
  /// tensorAttr, or with a `weightName` a blob for a large float tensor of
  /// raw bytes, made from them without a dense attribute in between.
  std::optional<ElementsAttr> tensorOrWeightAttr(const onnx::TensorProto &t,
                                                 StringRef weightName);
  /// An initializer's bytes in its external data file, mapped once per
  /// file (externalFiles), which `file` receives to keep the view alive.
  bool readExternalData(const onnx::TensorProto &t, size_t bytes,
                        StringRef &view,
                        std::shared_ptr<llvm::MemoryBuffer> &file);
  /// Errors (naming the nodes) if the graph has a cycle.
  bool checkAcyclic(const onnx::GraphProto &g);
  /// An initializer's value as an attribute: large float ones as blobs.
  ElementsAttr weightAttr(StringRef name, DenseElementsAttr attr);

  std::optional<RankedTensorType> valueInfoType(const onnx::ValueInfoProto &vi);

  // ----- the graph -----------------------------------------------------------

  bool importGraph(const onnx::GraphProto &g);

  /// `upgraded`: `n` already comes from upgradeNode.
  void importNode(const onnx::NodeProto &n, bool upgraded = false);

  /// Before opset 13 (Slice: 10) some integer lists are attributes that
  /// later opsets take as inputs: Unsqueeze/Squeeze `axes`, Split `split`,
  /// Slice `starts`/`ends`/`axes`. Such a node comes back in its newer form,
  /// each list a known input; nullopt when `n` needs no change (or is
  /// malformed, with the error reported).
  std::optional<onnx::NodeProto> upgradeNode(const onnx::NodeProto &n);

  // ----- raising unfused attention -------------------------------------------
  //
  // Exports spell attention as MatMul(Q, K^T) -> any of [Where(mask, fill,
  // .) | Where(mask, ., fill) | Add(., mask) | Div or Mul by a scalar | a
  // no-op Cast] -> Softmax -> MatMul(., V), with the scale possibly applied
  // to Q and K^T before the first MatMul (PyTorch's SDPA export). Such a
  // chain is found before import (structure only) and, when its last MatMul
  // is reached, checked on the imported values (constant scale, fill value
  // <= -1e4, shapes) and emitted as one attn.sdpa; if a check fails its nodes
  // are imported one by one instead. Constant masks are then folded into
  // `causal` by attn-fold-mask like any other.

  struct AttentionChain {
    const onnx::NodeProto *qk = nullptr;
    std::string q, kT; // the first MatMul's operands, before any scaling
    struct Mask {
      std::string name;
      MaskKind kind;
      std::string fill;          // Where's fill value
      bool renormalized = false; // softmax * t / rowsum(softmax * t)
      int64_t renormAxis = -1;
      /// Scale factors applied after this mask (walk order): the mask is
      /// scaled with the scores, softmax((s + m) / c) == softmax(s / c + m /
      /// c).
      size_t scalesAfter = 0;
    };
    std::vector<Mask> masks; // at most two (GPT-2: causal Where + padding Add)
    std::vector<std::pair<std::string, bool>> scaleFactors; // (name, divides)
    std::vector<std::string> casts; // Cast outputs the chain passes through
    std::vector<const onnx::NodeProto *> nodes; // every node it replaces
    int64_t softmaxAxis = -1; // as written; must be the scores' last dim
  };

  std::map<const onnx::NodeProto *, AttentionChain> raiseAt;
  std::map<std::string, const onnx::NodeProto *> producer;
  std::map<const onnx::NodeProto *, int> nodeOrder;
  std::map<std::string, int> uses;
  std::map<std::string, const onnx::TensorProto *> initByName;
  /// The raw bytes of the graph's float initializers of 1 KiB and more
  /// (kWeightBytes), which the parsed model does not hold (their raw_data
  /// is absent or empty): where stripWeightBytes found them, a view of the
  /// model's bytes (`inModel`; protobuf never copied them), else swapped
  /// out of the parsed model (`owned`). initializerAttr gives them to the
  /// weight's blob: a view where the model's owner is kept alive
  /// (`keepModel`), else a copy; an owned string is moved.
  struct WeightBytes {
    std::optional<StringRef> inModel;
    std::string owned;
  };
  std::map<const onnx::TensorProto *, WeightBytes> weightBytes;
  std::shared_ptr<const void> keepModel;
  static constexpr size_t kWeightBytes = 1024;
  /// The external data files read so far, by path: mapped, not read, and
  /// once each (exports put all weights in one file).
  std::map<std::string, std::shared_ptr<llvm::MemoryBuffer>> externalFiles;

  /// A scalar constant: an initializer, a Constant, known shape arithmetic,
  /// or Pow/Sqrt/Div/Mul/Add/Cast of those (the exports' 1/sqrt(d)).
  std::optional<double> scalarConst(const std::string &name, int depth = 0);
  struct Scalar {
    double value;
    bool isInt;
  };
  std::optional<Scalar> scalarValue(const std::string &name, int depth);

  void findAttentionChains(const onnx::GraphProto &g);
  /// Walks from the softmax input `x` up to the Q.K^T MatMul.
  bool matchScores(const std::string &x, AttentionChain &chain, int depth);

  // Around a chain, the projections: x -> MatMul(W) [-> Add(b)] for Q, K
  // and V, from one input x. The seed's MultiHeadAttention (and GPT-style
  // exports) then split heads (Reshape [.., T, H, hd] -> Transpose, K's
  // straight to [.., H, hd, T]) and merge them back (Transpose -> Reshape)
  // before an optional output projection: one attn.multi_head_attention.
  // Single heads (x -> MatMul, K^T by Transpose) become attn.causal_attention
  // (or a one-head multi_head_attention without a mask).
  struct Projection {
    const onnx::NodeProto *matmul = nullptr, *bias = nullptr;
    std::string x, w, b; // b empty without bias
  };
  struct RaisedRegion {
    bool multiHead = false;
    Projection q, k, v, out; // out.matmul null without output projection
    const onnx::NodeProto *pv = nullptr;
    AttentionChain chain;
    std::vector<const onnx::NodeProto *> nodes; // all but the chain's and pv
    std::vector<std::string> reshapeTargets;    // q, k, v, merge (multiHead)
    const onnx::NodeProto *anchor = nullptr;    // the last node, in order
  };
  std::map<const onnx::NodeProto *, RaisedRegion> raiseRegionAt;
  /// Chains whose attn.sdpa passed every check (their regions may raise).
  std::set<const onnx::NodeProto *> raisedChains;

  std::optional<Projection> matchProjection(const std::string &name);
  /// The projections and head split/merge around a chain ending at `pv`.
  std::optional<RaisedRegion> matchRegion(const onnx::NodeProto &pv,
                                          const AttentionChain &chain);
  void emitRaisedRegion(const RaisedRegion &r);
  /// "raised N ONNX nodes to OP: Type 'name', ...".
  std::string describeRaise(ArrayRef<const onnx::NodeProto *> nodes,
                            StringRef opName);
  std::map<const onnx::NodeProto *, std::pair<Location, std::string>>
      deferredRemarks;
  /// Whether `mask` (as the chain applies it) is exactly a top-left causal
  /// triangle: a constant, possibly sliced at the origin.
  /// `post` scales additive values (a scale applied after the mask).
  bool isCausalTriangle(Value mask, MaskKind kind, double post = 1.0);
  /// Whether `mask` is the rows Tk - Tq .. Tk and the first Tk keys of a
  /// constant top-left triangle (Hugging Face GPT-2's
  /// bias[:, :, Tk - T:Tk, :Tk] with a KV cache), or that slice folded to a
  /// constant by a static export: the bottom-right triangle, for
  /// q [.., Tq, d] and kT [.., d, Tk].
  bool isSlicedBottomRightTriangle(Value mask, MaskKind kind, double post,
                                   Value q, Value kT);

  /// A chain's scale and masks on the imported values: a causal triangle
  /// becomes `causal`, at most one other mask stays an operand.
  struct ResolvedChain {
    double scale = 1.0;
    CausalKind causal = CausalKind::none;
    Value mask;
    MaskKind kind = MaskKind::masked_where_true;
  };
  std::optional<ResolvedChain> resolveChain(const AttentionChain &c, Value q,
                                            Value kT);
  /// PyTorch's SDPA export builds its causal mask from the sizes:
  /// Where(Equal(Trilu(ones [Tq, Tk], upper=0), 0), -inf, 0); Meta's Llama
  /// as Trilu(full([Tq, Tk], -inf), 1, upper=1).
  std::optional<CausalKind> shapeCausalMask(const std::string &name, Value q,
                                            Value kT, double post = 1.0);
  /// A bool mask built from the sizes, as PyTorch code writes a cached
  /// step's: Trilu(ones [Tq, Tk], upper=0) where true attends, its Not
  /// where true hides (Casts to bool peeled).
  std::optional<CausalKind> shapeCausalBoolMask(const std::string &name,
                                                MaskKind kind, Value q,
                                                Value kT);
  /// `name` as Trilu(ones [Tq, Tk], k, upper=0): top_left for k = 0,
  /// bottom_right for k = Tk - Tq (the sizes of q [.., Tq, d] and
  /// kT [.., d, Tk]). With `hideFill` (a check of the fill value) instead
  /// Trilu(full [Tq, Tk], k, upper=1), the additive mask Meta's Llama code
  /// writes as torch.full((T, T), -inf).triu(1): k = 1 is top_left, a
  /// constant k = Tk - Tq + 1 bottom_right.
  std::optional<CausalKind>
  triluCausal(const std::string &name, Value q, Value kT,
              llvm::function_ref<bool(double)> hideFill = nullptr);

  /// attn.sdpa for a raised chain ending at `pv` (MatMul(P, V)).
  void emitRaisedAttention(const onnx::NodeProto &pv, const AttentionChain &c);

  // ----- the ops around attention in exported graphs -------------------------

  RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }

  /// A constant tensor input as integers (shapes, permutations), if it is one.

  void importConstant(const onnx::NodeProto &n);

  /// NumPy broadcasting of `ins` to one shape; returns the output sizes and
  /// each input's indexing map, or fails on incompatible static dims.
  bool broadcast(const onnx::NodeProto &n, ArrayRef<Value> ins,
                 SmallVector<OpFoldResult> &sizes,
                 SmallVector<AffineMap> &maps);

  /// A linalg.generic over the NumPy broadcast of `ins` computing `body`
  /// per element; null (and an error) if the shapes do not broadcast.
  Value
  broadcastGeneric(const onnx::NodeProto &n, ArrayRef<Value> ins,
                   Type resultElem,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body);
  void importElementwise(const onnx::NodeProto &n);

  /// NumPy matmul: [..., M, K] x [..., K, N] with broadcast batch dims (a
  /// 2-D right operand is shared by every batch).
  /// `init` filled with zeros (the start of a sum).
  Value zeroFilled(Location loc, Value init);
  /// A tensor of `sizes` whose element at index i is x's at read(i) (an
  /// affine map: Expand's broadcasts, Tile's repeats).
  Value gatherCopy(Location loc, Value x, ArrayRef<OpFoldResult> sizes,
                   AffineMap read);
  /// `init` filled with -inf (`lowest`) or +inf, or an integer type's
  /// bounds: the start of a max (min).
  Value extremeFilled(Location loc, Value init, bool lowest);
  void importMatMul(const onnx::NodeProto &n);
  /// Rewrites `g`'s two-operand Einsum nodes that are one matrix product up
  /// to the order of their dims (batch letters, one row letter, one column
  /// letter, one summed letter: "bij,bjk->bik", "bqhd,bkhd->bhqk", ...) as
  /// MatMul with a Transpose of each operand and of the result where their
  /// order differs, so that attention written with einsum is raised as
  /// torch's matmul form is (and the transposes fold into the SDPA's layout).
  void einsumsAsMatMuls(onnx::GraphProto &g);
  /// Fills weightBytes from `g`'s initializers; `inModel` (one entry per
  /// initializer, or null) holds the bytes stripWeightBytes cut out.
  void takeWeightBytes(onnx::GraphProto &g,
                       const std::vector<std::optional<StringRef>> *inModel);
  /// The doc_string prefix that marks the nodes of such a rewrite (then the
  /// equation): their errors name the Einsum.
  static constexpr const char *kEinsumAsMatMul = "attn: Einsum as MatMul: ";
  /// What the rewrite's nodes keep of their Einsum, by their output name:
  /// MatMul and Transpose check none of the Einsum's rules, so the operands
  /// are checked against the equation (ranks, letter sizes) before them,
  /// with the Einsum's own messages.
  struct EinsumRewrite {
    std::string equation;
    std::string inputs[2], terms[2];
    /// The MatMul's: the order of its result (batch, rows, columns).
    std::string productTerm;
    /// A Transpose's: which operand it reads (-1: the MatMul).
    int operand = -1;
  };
  std::map<std::string, EinsumRewrite> einsumRewrites;
  /// For a node of the rewrite: checks its Einsum's operands and returns
  /// true when it has been dealt with here (an error, or the MatMul that
  /// cannot express NumPy's broadcast of a size-1 summed letter imported as
  /// the generic Einsum instead); false to import the node as it is.
  bool importEinsumRewrite(const onnx::NodeProto &n);
  /// The error for a letter ('.': the "..." dims) of two sizes.
  void einsumSizeMismatch(const onnx::NodeProto &n, StringRef equation,
                          char letter, OpFoldResult a, OpFoldResult b);
  /// Einsum: one linalg.generic, a loop per letter (and per dim of "..."),
  /// summing the letters not in the output.
  void importEinsum(const onnx::NodeProto &n);

  void importTranspose(const onnx::NodeProto &n);
  /// `x` with the order of its elements reversed along `axes` (a Slice's
  /// negative steps).
  Value reverseAxes(Location loc, Value x, ArrayRef<int64_t> axes);

  /// Reshape to a constant shape (0 copies a dim, -1 is inferred), as a
  /// collapse to 1-D and an expand: views, no copy.
  void importReshape(const onnx::NodeProto &n);
  void importFlatten(const onnx::NodeProto &n);

  void importSoftmax(const onnx::NodeProto &n);
  /// LogSoftmax of `x` along `axis` into `init`'s shape.
  Value logSoftmax(Location loc, Value x, Value init, int64_t axis);

  // ----- Attention (opset 23-25) ---------------------------------------------

  void importAttention(const onnx::NodeProto &n);
  void importMsMultiHeadAttention(const onnx::NodeProto &n);

  /// The ONNX qk_matmul_output tensor [B, Hq, Sq, Sk] for `mode`:
  /// 0 scaled Q K^T, 1 after softcap, 2 after softcap and bias (mask,
  /// causal, window: -inf where masked), 3 softmax probabilities (0 on
  /// fully masked rows). Computed in f32, cast to Q's element type.
  Value buildScores(Location loc, Value q, Value k, Value mask, MaskKind kind,
                    CausalKind causal, int64_t left, int64_t right,
                    double scale, double softcap, int64_t mode, Type elem);

  /// The explicit mask [B, Hq, Sq, Sk] of an Attention node whose band the
  /// attributes cannot express. With `len` (nonpad_kv_seqlen): key j is
  /// visible to query i of batch b iff j < len[b] and, when causal /
  /// windowed, -left <= j - (i + len[b] - Sq) <= right (0 for causal).
  /// Without it the diagonal sits at i + pastLen. Combined with `userMask`:
  /// bool masks are and-ed, float masks keep their values where visible and
  /// -inf elsewhere. A user mask shorter than Sk (opset 24) counts its
  /// missing columns as masked.
  Value buildBandMask(Location loc, Value q, Value k, Value len,
                      int64_t pastLen, Value userMask, MaskKind kind,
                      bool causal, int64_t left, int64_t right);

  /// [B, X, Y, D] -> [B, Y, X, D] (a copy).
  Value swapHeadsAndTokens(Location loc, Value x);
  /// Attention's attn_mask with its last dim made the key count of `k`
  /// (dim `keyDim`, past and new keys): shorter masks (opset 24) padded with
  /// masked columns, at compile time or, for dynamic lengths, while
  /// running, where a mask longer than the keys is a run-time error (so no
  /// read leaves the mask). Null after an error.
  Value fitMaskToKeys(const onnx::NodeProto &n, Value mask, Value k,
                      int64_t keyDim, bool additive);

  /// [B, S, H*D] -> [B, S, H, D] (a view).
  Value splitHeads(const onnx::NodeProto &n, Value x, int64_t heads);

  MLIRContext *ctx;
  OpBuilder b;
  OnnxImportOptions options;
  std::string modelPath;
  Location fileLoc;
  int64_t opset = 0;
  int nodeIndex = 0; // as the model numbers it (see modelIndex)
  /// Each node's position in the model as read, where the Einsum rewrite
  /// inserted nodes (empty: none did); messages number unnamed nodes so.
  std::vector<int> sourceIndex;
  int modelIndex(int i) const {
    return sourceIndex.empty() ? i : sourceIndex[i];
  }
  bool failed = false;
  std::map<std::string, Value> values;

  // ----- sizes and shape arithmetic ------------------------------------------
  //
  // Exports with dynamic axes compute shapes in the graph (Shape -> Gather ->
  // Unsqueeze -> Concat -> Reshape, Slice bounds from Shape). Those small
  // integer tensors are kept symbolically, element by element, as constants
  // or index values (KnownInts), so dynamic sizes reach the ops that need
  // them as SSA sizes and equal sizes are the same SSA value. They become
  // real tensors only if an op consumes them as data.

  using KnownInts = onnx_import::KnownInts;
  std::map<std::string, KnownInts> knownInts;
  /// One tensor.dim per (value, dim) not traceable to an op's sizes.
  llvm::DenseMap<std::pair<Value, int64_t>, Value> dimCache;
  /// foldIndex's results, by (op, lhs, rhs): equal expressions, one value.
  std::map<std::tuple<char, void *, void *>, Value> indexMemo;
  /// The sizes each general tensor.reshape was created with.
  llvm::DenseMap<Value, SmallVector<OpFoldResult>> reshapeSizes;
  /// (argument, dim) -> the largest size the graph accepts there.
  std::map<std::pair<unsigned, int64_t>, int64_t> inputBounds;
  /// Argument -> [lo, hi) its values must lie in: graph inputs used as
  /// Gather indices (token ids), checked by the runtime before running.
  std::map<unsigned, std::pair<int64_t, int64_t>> indexRanges;
  /// Names whose elements are exactly a graph input's (token ids reshaped,
  /// transposed, broadcast or cast between integer types on their way to a
  /// Gather): the input's argument number. A Gather indexing with
  /// one checks its range on that input.
  std::map<std::string, unsigned> idCopies;
  /// The graph input whose integer elements `name` holds, if any.
  std::optional<unsigned> idsInputOf(const std::string &name);
  /// Whether `n` only moves its input's elements, or casts integers to i32
  /// or i64 (Identity, Unsqueeze, Squeeze, Reshape, Transpose, Expand, Cast).
  bool movesIntegers(const onnx::NodeProto &n);
  /// Records `n`'s output in idCopies if `n` only moves its input's elements.
  void noteIdCopy(const onnx::NodeProto &n);
  /// Ranges [start, limit) stepping up from start >= 0 whose limit is a
  /// graph input's size (arange(T) position ids): the (argument, dim) of
  /// that size. Gathering a table of N rows with one bounds that size by N.
  llvm::DenseMap<Value, std::pair<unsigned, int64_t>> rangeOfInputSize;
  /// The (argument, dim) of the size that bounds `name`'s values: a range
  /// in rangeOfInputSize, or one moved or cast on its way (Unsqueeze,
  /// Expand, ...).
  std::optional<std::pair<unsigned, int64_t>>
  rangeInputSizeOf(const std::string &name);
  /// The (argument, dim) whose size `v` is, if it is a graph input's
  /// dynamic size.
  std::optional<std::pair<unsigned, int64_t>> inputSizeOf(OpFoldResult v);
  /// If `v` adds two or more graph input sizes and non-negative constants
  /// (past + T): records that the module accepts inputs only where it is at
  /// most `most` (a bound on a sum in the signature) and returns true.
  bool boundSumOfInputSizes(OpFoldResult v, int64_t most);
  /// The bounds boundSumOfInputSizes recorded, as the entry point's
  /// attnrt.sum_max: [most, constant, argument, dim, ...] each.
  std::vector<SmallVector<int64_t>> sumBounds;
  /// Descriptions of the sites checked while running (Gather indices,
  /// Attention mask lengths; indexErrorSlot), in slot order: the module's
  /// `attnrt.index_checks`.
  std::vector<std::string> indexCheckSites;
  /// A new slot for Gather `n`'s index check: a public global of three i64
  /// (hit, index, size) that the runtime clears before each call and reads
  /// after it (attnrt/Module.h); its symbol name.
  /// `what` names the checked index in the runtime's message (default: the
  /// Gather's indices input).
  std::string indexErrorSlot(const onnx::NodeProto &n, std::string what = "");
  /// A new slot for a check at `site` (after the model's file name in the
  /// runtime's message), one not tied to a node.
  std::string indexErrorSlotAt(const std::string &site);
  /// In a Gather's body: the element `readInRange` reads if index `i` lies
  /// in [-size, size); otherwise writes (1, i, size) to `slot` and reads
  /// nothing (0 of type `elem`).
  Value checkedRead(OpBuilder &nb, Location l, const std::string &slot, Value i,
                    Value size, Type elem,
                    function_ref<Value(OpBuilder &, Location)> readInRange);
  /// Target size `size` at `position` of node `n`'s shape input (Expand,
  /// ConstantOfShape): a constant as it is; one known only while running
  /// is checked on each call not to be negative (the call fails with "size
  /// S at position P of the target", through `slot`, made on first use)
  /// and counts as max(size, 0), so nothing is allocated or read with it.
  OpFoldResult nonNegativeTargetSize(const onnx::NodeProto &n,
                                     std::string &slot, OpFoldResult size,
                                     int64_t position);
  /// Writes (2, length, most) to `slot` if `length` > `most`: the runtime
  /// then fails the call with "<site>: <length>, more than <most>".
  void checkAtMost(OpBuilder &nb, Location l, const std::string &slot,
                   Value length, Value most);
  /// The runtime's hit words (attnrt/Module.h, kIndexCheck*): an index
  /// outside its axis, a length above its bound, an element count that is
  /// no multiple of a reshape's known sizes, one that differs from its
  /// target's, an empty axis that an ArgMax or ArgMin reduces, a size that
  /// differs from the one an op needs, a negative size in a reshape's
  /// target, a dynamic dim of size 1 that an op assumed is not.
  static constexpr int64_t kHitOutside = 1, kHitTooLong = 2,
                           kHitNotMultiple = 3, kHitCountDiffers = 4,
                           kHitEmptyAxis = 5, kHitSizeDiffers = 6,
                           kHitNegativeSize = 7, kHitUnitSize = 8;
  /// Writes (`hit`, value, bound) to `slot` if `failed` holds: for the
  /// runtime's other kinds of failure (attnrt/Module.h, kIndexCheck*).
  void checkFailsIf(OpBuilder &nb, Location l, const std::string &slot,
                    Value failed, int64_t hit, Value value, Value bound);
  /// Records that graph input size `input` may be at most `most`.
  void boundInputSize(std::pair<unsigned, int64_t> input, int64_t most) {
    int64_t &bound = inputBounds[input];
    bound = bound > 0 ? std::min(bound, most) : most;
  }
  /// Graph inputs' named dynamic dims (dim_param): every (arg, dim) with a
  /// name maps to the first (arg, dim) of that name; one SSA size for all,
  /// and the runtime checks they agree (onnx.dim_params).
  std::map<std::pair<unsigned, int64_t>, std::pair<unsigned, int64_t>>
      namedDims;

  /// Size `i` of `v`: static, or the SSA size it was created with.
  OpFoldResult dimOf(Value v, int64_t i);
  SmallVector<OpFoldResult> sizesOf(Value v);
  /// `name` as known integers, if it is one (KnownInts or a small constant).
  std::optional<KnownInts> known(const std::string &name);
  /// The node that produces `name` if its op type is `op`, else null.
  const onnx::NodeProto *producedBy(const std::string &name, StringRef op);
  std::optional<KnownInts> knownInput(const onnx::NodeProto &n, int i);
  void defineKnown(const onnx::NodeProto &n, int i, KnownInts k);
  /// The tensor holding known integers (materialized on first use as data).
  Value materialize(const KnownInts &k);
  Value indexValue(OpFoldResult r);
  /// a (op) b on sizes, folded when both are constant.
  OpFoldResult foldIndex(char op, OpFoldResult a, OpFoldResult c);

  void importShape(const onnx::NodeProto &n);
  void importGather(const onnx::NodeProto &n);
  void importScatterND(const onnx::NodeProto &n);
  void importGatherElements(const onnx::NodeProto &n);
  void importUnsqueeze(const onnx::NodeProto &n);
  void importSqueeze(const onnx::NodeProto &n);
  void importConcat(const onnx::NodeProto &n);
  void importTile(const onnx::NodeProto &n);
  void importPad(const onnx::NodeProto &n);
  void importSlice(const onnx::NodeProto &n);
  void importSplit(const onnx::NodeProto &n);
  void importExpand(const onnx::NodeProto &n);
  void importConstantOfShape(const onnx::NodeProto &n);
  void importCast(const onnx::NodeProto &n);
  void importCompare(const onnx::NodeProto &n);
  void importLogical(const onnx::NodeProto &n);
  void importTrilu(const onnx::NodeProto &n);
  void importGemm(const onnx::NodeProto &n);
  /// The loops of a reduction over the `reduced` dims of a tensor of
  /// `shape`: the kept dims outer (in order) and the reduced ones
  /// innermost, so that a reduction over a leading axis runs its rows in one
  /// parallel loop nest (not a parallel region per reduced element); but
  /// in the input's order when kept dims (not all of size 1) lead and
  /// others follow the reduced ones, so the innermost loop is contiguous.
  /// The input's map, the
  /// output's (a reduced dim kept as 0 with keepdims), the iterator types
  /// and each dim's loop.
  struct ReductionLoops {
    AffineMap in, out;
    SmallVector<utils::IteratorType> iters;
    SmallVector<unsigned> loopOf;
  };
  ReductionLoops reductionLoops(ArrayRef<bool> reduced, bool keep,
                                ArrayRef<int64_t> shape);
  void importReduce(const onnx::NodeProto &n);
  void importArgExtreme(const onnx::NodeProto &n);
  /// Input #0, a float or integer tensor; null (after the error) if not.
  Value numberInput(const onnx::NodeProto &n);
  void importCumSum(const onnx::NodeProto &n);
  void importTopK(const onnx::NodeProto &n);
  /// The first `count` (at least 1) (value, int64 index) pairs of the 1-D
  /// tensors `vals` and `idxs` merge-sorted best first by `beats`, stably,
  /// in ceil(log2(count)) passes; entries from `count` on are undefined.
  std::pair<Value, Value>
  sortPairs(Location loc, Value vals, Value idxs, Value count,
            function_ref<Value(OpBuilder &, Location, Value, Value)> beats);
  /// Row `row` of `rows` (its last dim, static `len`) sorted best first by
  /// `beats`, stably: the values and their int64 positions in the row.
  std::pair<Value, Value>
  sortRow(Location loc, Value rows, ValueRange row, int64_t len,
          function_ref<Value(OpBuilder &, Location, Value, Value)> beats);
  /// The best element of each of the first `nBlocks` blocks of `blockLen`
  /// elements of row `row` of `rows`, a vectorizable reduction: the max
  /// for largest (NaN-propagating, as NaN beats every number there), the
  /// min ignoring NaN for smallest (a number beats NaN there; NaN for a
  /// block of NaN only). Exactly the block's best element by TopK's order.
  Value blockExtremes(Location loc, Value rows, ValueRange row,
                      int64_t blockLen, int64_t nBlocks, bool largest);
  /// Row `row` of `rows` (its last dim, static, of at least 16 k
  /// elements): its k best by `beats`, best first, ties to the earlier
  /// element. The k-th best block extreme is a threshold that the k best
  /// all reach; the elements that reach it are gathered in row order and
  /// merge-sorted. The values and their int64 positions in the row.
  std::pair<Value, Value> topKByThreshold(
      Location loc, Value rows, ValueRange row, int64_t k, bool largest,
      function_ref<Value(OpBuilder &, Location, Value, Value)> beats);
  /// Row `row` of `rows` (its last dim, static, of at least k): its k
  /// best by `beats`, best first, ties to the earlier element, kept in a
  /// sorted buffer of k as the row is scanned; the values and their int64
  /// positions in the row.
  std::pair<Value, Value>
  topKByBuffer(Location loc, Value rows, ValueRange row, int64_t k,
               bool largest,
               function_ref<Value(OpBuilder &, Location, Value, Value)> beats);
  void importRange(const onnx::NodeProto &n);
  void importLayerNormalization(const onnx::NodeProto &n);
  /// Elementwise ops on known integers (shape arithmetic); false if the
  /// inputs are not all known.
  bool importKnownArith(const onnx::NodeProto &n);
  /// Where with a constant condition over known integers (shape
  /// arithmetic); false otherwise.
  bool importKnownWhere(const onnx::NodeProto &n);
  /// One element converted between scalar types (ONNX Cast semantics).
  Value convertScalar(OpBuilder &nb, Location l, Value x, Type to);
  /// `x` with its elements converted to `to` (convertScalar each; `x`
  /// itself when they already are).
  Value convertElements(Location loc, Value x, Type to);
  /// A two-operand Einsum whose letters group into batch (both operands
  /// and the output), rows (first operand and output), columns (second
  /// and output) and summed (both operands only), with several letters in
  /// a group: the operands transposed to [batch, rows, summed] and [batch,
  /// summed, columns], the groups collapsed, one matrix product, expanded
  /// and transposed to the output. Null where it does not apply.
  Value einsumAsMatrixProduct(Location loc, ArrayRef<Value> ops,
                              ArrayRef<std::string> subs,
                              const std::string &outSub,
                              const std::map<char, unsigned> &loopOf,
                              ArrayRef<OpFoldResult> loopSize);
  /// The type sums of `elem` run in: f32 for f16 and bf16 (a 16-bit
  /// running sum stops growing once large: past 2048 an f16 sum no longer
  /// adds values below 1), else `elem`.
  static Type sumType(Type elem);
};

} // namespace mlir::attn::onnx_import

#endif // ATTN_ONNX_IMPORTER_IMPL_H
