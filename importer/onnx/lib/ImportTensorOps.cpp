//===- ImportTensorOps.cpp - standard ONNX ops ----------------------------===//
//
// The ops that surround attention in exported graphs, imported to
// linalg/tensor/arith so that a graph no pattern recognises still compiles.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>
#include <limits>

namespace mlir::attn::onnx_import {

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
                         SmallVector<OpFoldResult> &sizes,
                         SmallVector<AffineMap> &maps) {
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
      if (known[od] && !ShapedType::isDynamic(d) && cur && *cur != 1 &&
          *cur != d) {
        nodeError(n) << "operand shapes do not broadcast: dim " << od << " is "
                     << *cur << " and " << d;
        return false;
      }
      if (!known[od] || (!ShapedType::isDynamic(d) && !cur)) {
        sizes[od] = dimOf(v, a);
        known[od] = true;
      }
    }
  }
  // A dynamic dim that is not the output's size could be 1 at run time
  // (a broadcast the maps below would not do) or a mismatch: refuse rather
  // than read out of bounds. Dims of one size are one SSA value here
  // (shared dim_param names, sizes flowing through the graph).
  for (auto [k, v] : llvm::enumerate(ins)) {
    auto t = typeOf(v);
    for (int64_t a = 0; a < t.getRank(); ++a) {
      int64_t od = rank - t.getRank() + a;
      if (t.getDimSize(a) == 1 ||
          isEqualConstantIntOrValue(dimOf(v, a), sizes[od]))
        continue;
      nodeError(n)
          << "cannot tell whether dim " << a << " of operand #" << k << " ("
          << t << ") broadcasts against size "
          << (getConstantIntValue(sizes[od])
                  ? std::to_string(*getConstantIntValue(sizes[od]))
                  : std::string("?"))
          << ": give equal dynamic dims one dim_param name, or static sizes";
      return false;
    }
  }
  for (Value v : ins) {
    auto t = typeOf(v);
    SmallVector<AffineExpr> e;
    for (int64_t a = 0; a < t.getRank(); ++a)
      e.push_back(t.getDimSize(a) == 1
                      ? b.getAffineConstantExpr(0)
                      : b.getAffineDimExpr(rank - t.getRank() + a));
    maps.push_back(AffineMap::get(rank, 0, e, ctx));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  return true;
}

Value Importer::broadcastGeneric(
    const onnx::NodeProto &n, ArrayRef<Value> ins, Type resultElem,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<OpFoldResult> sizes;
  SmallVector<AffineMap> maps;
  if (!broadcast(n, ins, sizes, maps))
    return nullptr;
  Location loc = nodeLoc(n);
  Value init = tensor::EmptyOp::create(b, loc, sizes, resultElem);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
             SmallVector<utils::IteratorType>(maps.back().getNumDims(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, body(nb, l, a));
             })
      .getResult(0);
}

Value combineNumbers(OpBuilder &b, Location l, char kind, Value acc, Value x) {
  bool isFloat = isa<FloatType>(acc.getType());
  switch (kind) {
  case '*':
    return isFloat ? Value(arith::MulFOp::create(b, l, acc, x))
                   : Value(arith::MulIOp::create(b, l, acc, x));
  case 'M':
    return isFloat ? Value(arith::MaximumFOp::create(b, l, acc, x))
                   : Value(arith::MaxSIOp::create(b, l, acc, x));
  case 'm':
    return isFloat ? Value(arith::MinimumFOp::create(b, l, acc, x))
                   : Value(arith::MinSIOp::create(b, l, acc, x));
  default:
    return isFloat ? Value(arith::AddFOp::create(b, l, acc, x))
                   : Value(arith::AddIOp::create(b, l, acc, x));
  }
}

/// Integer a / b (truncating, as ONNX's Div) or a % b (the dividend's
/// sign) without the CPU's traps: a divisor of 0 gives 0 (ONNX leaves it
/// undefined), and -1 negates (INT_MIN wraps, as in NumPy) or leaves 0.
static Value divideIntegers(OpBuilder &nb, Location l, Value a, Value b,
                            bool remainder) {
  Type t = a.getType();
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(nb, l, nb.getIntegerAttr(t, v));
  };
  Value byZero =
      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, b, c(0));
  Value byMinusOne =
      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, b, c(-1));
  Value safe = arith::SelectOp::create(
      nb, l, arith::OrIOp::create(nb, l, byZero, byMinusOne), c(1), b);
  Value r = remainder ? Value(arith::RemSIOp::create(nb, l, a, safe))
                      : Value(arith::DivSIOp::create(nb, l, a, safe));
  if (!remainder)
    r = arith::SelectOp::create(nb, l, byMinusOne,
                                arith::SubIOp::create(nb, l, c(0), a), r);
  return arith::SelectOp::create(nb, l, byZero, c(0), r);
}

template <typename OpT>
static Value makeUnary(OpBuilder &b, Location l, Value x) {
  return OpT::create(b, l, x);
}

/// The body of the ONNX activations and math functions that are one
/// expression of their input `x` (PRelu: and its `slope`), or null for
/// other ops. `c` makes a constant of x's type. Parameters as ONNX names
/// them, with its defaults applied by the caller.
static Value activationBody(OpBuilder &b, Location l, StringRef op, Value x,
                            function_ref<Value(double)> c, double alpha,
                            double beta, double gamma, bool detectNegative,
                            bool detectPositive, Value slope) {
  auto mul = [&](Value u, Value v) -> Value {
    return arith::MulFOp::create(b, l, u, v);
  };
  auto add = [&](Value u, Value v) -> Value {
    return arith::AddFOp::create(b, l, u, v);
  };
  auto positive = [&](Value v) -> Value {
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, v, c(0));
  };
  // (NaN propagates through maximumf and minimumf, as through the others.)
  auto max = [&](Value u, Value v) -> Value {
    return arith::MaximumFOp::create(b, l, u, v);
  };
  auto min = [&](Value u, Value v) -> Value {
    return arith::MinimumFOp::create(b, l, u, v);
  };
  // exp(v) - 1, as ONNX Runtime computes Elu (expm1 would be a libm call
  // per element).
  auto expMinusOne = [&](Value v) -> Value {
    return arith::SubFOp::create(b, l, math::ExpOp::create(b, l, v), c(1));
  };
  // max(v, 0) + log1p(exp(-|v|)): log(1 + exp(v)) without overflow.
  auto softplus = [&](Value v) -> Value {
    Value e = math::ExpOp::create(
        b, l, arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, v)));
    return add(max(v, c(0)), math::Log1pOp::create(b, l, e));
  };
  // The math functions that are one op of the math dialect.
  using Make = Value (*)(OpBuilder &, Location, Value);
  static const llvm::StringMap<Make> functions = {
      {"Tan", makeUnary<math::TanOp>},     {"Asin", makeUnary<math::AsinOp>},
      {"Acos", makeUnary<math::AcosOp>},   {"Atan", makeUnary<math::AtanOp>},
      {"Sinh", makeUnary<math::SinhOp>},   {"Cosh", makeUnary<math::CoshOp>},
      {"Asinh", makeUnary<math::AsinhOp>}, {"Acosh", makeUnary<math::AcoshOp>},
      {"Atanh", makeUnary<math::AtanhOp>}};
  if (auto it = functions.find(op); it != functions.end())
    return it->second(b, l, x);
  if (op == "Softplus")
    return softplus(x);
  if (op == "Mish") // x tanh(softplus(x))
    return mul(x, math::TanhOp::create(b, l, softplus(x)));
  if (op == "Softsign") // x / (1 + |x|)
    return arith::DivFOp::create(b, l, x,
                                 add(c(1), math::AbsFOp::create(b, l, x)));
  if (op == "HardSigmoid" || op == "HardSwish") {
    // max(0, min(1, alpha x + beta)); HardSwish: x times that, alpha 1/6.
    Value h = max(c(0), min(add(mul(c(alpha), x), c(beta)), c(1)));
    return op == "HardSwish" ? mul(x, h) : h;
  }
  if (op == "Elu" || op == "Selu") {
    // x > 0 ? x : alpha (exp(x) - 1); Selu: times gamma.
    Value e = arith::SelectOp::create(b, l, positive(x), x,
                                      mul(c(alpha), expMinusOne(x)));
    return op == "Selu" ? mul(c(gamma), e) : e;
  }
  if (op == "Celu") // max(0, x) + min(0, alpha (exp(x / alpha) - 1))
    return add(max(c(0), x),
               min(c(0), mul(c(alpha), expMinusOne(arith::DivFOp::create(
                                           b, l, x, c(alpha))))));
  if (op == "ThresholdedRelu") // x > alpha ? x : 0
    return arith::SelectOp::create(
        b, l,
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, c(alpha)), x,
        c(0));
  if (op == "PRelu") // x < 0 ? slope x : x
    return arith::SelectOp::create(
        b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, c(0)),
        mul(slope, x), x);
  if (op == "IsNaN")
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
  if (op == "IsInf") {
    double inf = std::numeric_limits<double>::infinity();
    auto is = [&](double v) -> Value {
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, c(v));
    };
    if (detectNegative && detectPositive)
      return arith::OrIOp::create(b, l, is(inf), is(-inf));
    if (detectNegative || detectPositive)
      return is(detectPositive ? inf : -inf);
    return arith::ConstantOp::create(b, l, b.getBoolAttr(false));
  }
  return nullptr;
}

void Importer::importElementwise(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  bool arith4 = op == "Add" || op == "Sub" || op == "Mul" || op == "Div";
  // (Min/Max too: min(k, x.size(-1)) as a TopK's K.)
  if ((arith4 || op == "Mod" || op == "Min" || op == "Max") &&
      importKnownArith(n))
    return;
  // -x.shape[1] (pe[-T:]): known too.
  if (op == "Neg" && n.input_size() == 1)
    if (auto x = knownInput(n, 0)) {
      KnownInts r = *x;
      for (OpFoldResult &e : r.elems)
        e = foldIndex('-', b.getIndexAttr(0), e);
      return defineKnown(n, 0, r);
    }
  if (op == "Where" && importKnownWhere(n))
    return;
  SmallVector<Value> ins;
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty())
      ins.push_back(input(n, i));
  if (failed)
    return;
  Value data = op == "Where" ? ins[1] : ins[0];
  Type elem = typeOf(data).getElementType();
  bool isFloat = isa<FloatType>(elem);
  // (Neg, Abs, Max, Min and Clip take integers too.)
  static const std::set<std::string> unaryFloatOps = {
      "Sqrt",       "Tanh",     "Erf",         "Gelu",
      "Relu",       "Sigmoid",  "Exp",         "Log",
      "Reciprocal", "Sin",      "Cos",         "Floor",
      "Ceil",       "Round",    "LeakyRelu",   "Tan",
      "Asin",       "Acos",     "Atan",        "Sinh",
      "Cosh",       "Asinh",    "Acosh",       "Atanh",
      "Softplus",   "Softsign", "HardSigmoid", "HardSwish",
      "Elu",        "Selu",     "Celu",        "ThresholdedRelu",
      "Mish",       "IsNaN",    "IsInf"};
  bool unaryFloat = unaryFloatOps.count(op) != 0;
  // The activations' parameters, with ONNX's defaults.
  double alpha = floatAttr(n, "alpha")
                     .value_or(op == "HardSigmoid" ? 0.2
                               : op == "Selu"      ? 1.67326319217681884765625
                               : op == "HardSwish" ? 1.0 / 6.0
                                                   : 1.0);
  double beta = op == "HardSwish"
                    ? 0.5
                    : floatAttr(n, "beta").value_or(0.5); // HardSigmoid
  double gamma = floatAttr(n, "gamma").value_or(1.05070102214813232421875);
  bool detectNegative = intAttr(n, "detect_negative", 1) != 0,
       detectPositive = intAttr(n, "detect_positive", 1) != 0;
  // IsNaN and IsInf answer in bools.
  bool predicate = op == "IsNaN" || op == "IsInf";
  bool extremum = op == "Max" || op == "Min";
  // Clip: the bounds are optional inputs from opset 11 and attributes
  // before; an absent bound is the type's lowest or largest finite value,
  // as ONNX specifies (so Clip(inf) is FLT_MAX, as in ONNX Runtime).
  bool clipLow = false, clipHigh = false;
  double lowAttr = std::numeric_limits<float>::lowest(),
         highAttr = std::numeric_limits<float>::max();
  if (op == "Clip") {
    if (opset < 11) {
      lowAttr = floatAttr(n, "min").value_or(lowAttr);
      highAttr = floatAttr(n, "max").value_or(highAttr);
    } else {
      clipLow = n.input_size() > 1 && !n.input(1).empty();
      clipHigh = n.input_size() > 2 && !n.input(2).empty();
      // A bound of one element ([1] as some exporters write it) is read
      // as the scalar it holds.
      for (size_t i = 1; i < ins.size(); ++i) {
        auto bt = typeOf(ins[i]);
        if (!bt.hasStaticShape() || bt.getNumElements() != 1) {
          nodeError(n) << "min and max must be scalars, got " << bt;
          return;
        }
        if (bt.getRank() != 0)
          ins[i] = tensor::CollapseShapeOp::create(
              b, nodeLoc(n), RankedTensorType::get({}, bt.getElementType()),
              ins[i], ArrayRef<ReassociationIndices>{});
      }
    }
  }
  // LeakyRelu's slope for negative inputs (default 0.01).
  double leakyAlpha =
      op == "LeakyRelu" ? floatAttr(n, "alpha").value_or(0.01f) : 0.0;
  // Gelu (opset 20, torch.nn.GELU's export from then on): exact (erf) or
  // its tanh approximation.
  std::string approximate = "none";
  if (op == "Gelu") {
    if (const auto *a = attr(n, "approximate"))
      approximate = a->s();
    if (approximate != "none" && approximate != "tanh") {
      nodeError(n) << "approximate must be 'none' or 'tanh', got '"
                   << approximate << "'";
      return;
    }
  }
  // Mod: fmod=0 (the default) is Python's %, the sign of the divisor, for
  // integers only; fmod=1 is C's fmod, the sign of the dividend.
  bool cMod = op == "Mod" && intAttr(n, "fmod", 0) != 0;
  if (op == "Mod" && isFloat && !cMod) {
    nodeError(n) << "float operands need fmod=1 (fmod=0 is for integers)";
    return;
  }
  bool floatOnly = op == "Pow" || op == "PRelu" || unaryFloat ||
                   (op == "Clip" && opset < 12);
  if (!isFloat && (floatOnly || elem.isInteger(1))) {
    nodeError(n) << (floatOnly ? "expects float tensors, got "
                               : "expects float or integer tensors, got ")
                 << elem << (elem.isInteger(1) ? " (bool)" : "");
    return;
  }
  for (size_t i = op == "Where" ? 1 : 0; i < ins.size(); ++i)
    if (typeOf(ins[i]).getElementType() != elem) {
      nodeError(n) << "operand types differ: " << elem << " and "
                   << typeOf(ins[i]).getElementType();
      return;
    }
  if (op == "Where" && !typeOf(ins[0]).getElementType().isInteger(1)) {
    nodeError(n) << "the condition must be bool, got "
                 << typeOf(ins[0]).getElementType();
    return;
  }
  // PRelu's slope broadcasts to X, not X to it (unidirectionally).
  if (op == "PRelu") {
    auto xt = typeOf(ins[0]), st = typeOf(ins[1]);
    bool fits = st.getRank() <= xt.getRank();
    for (int64_t i = 1; fits && i <= st.getRank(); ++i) {
      int64_t s = st.getDimSize(st.getRank() - i),
              x = xt.getDimSize(xt.getRank() - i);
      // (A dynamic slope dim against a 1 of X could widen the output.)
      fits = s == 1 || s == x || (ShapedType::isDynamic(s) && x != 1) ||
             ShapedType::isDynamic(x);
    }
    if (!fits) {
      nodeError(n) << "slope " << st << " does not broadcast to X " << xt;
      return;
    }
  }
  Type resultElem = predicate ? Type(b.getI1Type()) : elem;
  Value r = broadcastGeneric(
      n, ins, resultElem, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value x;
        auto c = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, l, nb.getFloatAttr(elem, v));
        };
        if (Value activation = activationBody(
                nb, l, op, a[0], c, alpha, beta, gamma, detectNegative,
                detectPositive, op == "PRelu" ? a[1] : Value()))
          x = activation;
        else if (op == "Where")
          x = arith::SelectOp::create(nb, l, a[0], a[1], a[2]);
        else if (op == "Mod" && isFloat)
          x = arith::RemFOp::create(nb, l, a[0], a[1]);
        else if (op == "Mod") {
          Value zero = arith::ConstantOp::create(nb, l, nb.getZeroAttr(elem));
          Value rem = divideIntegers(nb, l, a[0], a[1], /*remainder=*/true);
          if (!cMod) {
            // A non-zero remainder whose sign is not the divisor's moves
            // by one divisor.
            Value nonZero = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::ne, rem, zero);
            Value remNeg = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::slt, rem, zero);
            Value divNeg = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::slt, a[1], zero);
            Value differ = arith::XOrIOp::create(nb, l, remNeg, divNeg);
            rem = arith::SelectOp::create(
                nb, l, arith::AndIOp::create(nb, l, nonZero, differ),
                arith::AddIOp::create(nb, l, rem, a[1]), rem);
          }
          x = rem;
        } else if (op == "Sqrt")
          x = math::SqrtOp::create(nb, l, a[0]);
        else if (op == "Tanh")
          x = math::TanhOp::create(nb, l, a[0]);
        else if (op == "Erf")
          x = math::ErfOp::create(nb, l, a[0]);
        else if (op == "Relu") // max(x, 0); NaN stays NaN, as in ONNX Runtime
          x = arith::MaximumFOp::create(
              nb, l, a[0],
              arith::ConstantOp::create(nb, l, nb.getZeroAttr(elem)));
        else if (op == "Sigmoid") { // 1 / (1 + exp(-x))
          Value one =
              arith::ConstantOp::create(nb, l, nb.getFloatAttr(elem, 1.0));
          Value e =
              math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, a[0]));
          x = arith::DivFOp::create(nb, l, one,
                                    arith::AddFOp::create(nb, l, one, e));
        } else if (op == "Neg")
          x = isFloat
                  ? Value(arith::NegFOp::create(nb, l, a[0]))
                  : Value(arith::SubIOp::create(
                        nb, l,
                        arith::ConstantOp::create(nb, l, nb.getZeroAttr(elem)),
                        a[0]));
        else if (op == "Exp")
          x = math::ExpOp::create(nb, l, a[0]);
        else if (op == "Log")
          x = math::LogOp::create(nb, l, a[0]);
        else if (op == "Abs")
          x = isFloat ? Value(math::AbsFOp::create(nb, l, a[0]))
                      : Value(math::AbsIOp::create(nb, l, a[0]));
        else if (op == "Reciprocal")
          x = arith::DivFOp::create(
              nb, l,
              arith::ConstantOp::create(nb, l, nb.getFloatAttr(elem, 1.0)),
              a[0]);
        else if (op == "Sin")
          x = math::SinOp::create(nb, l, a[0]);
        else if (op == "Floor")
          x = math::FloorOp::create(nb, l, a[0]);
        else if (op == "Ceil")
          x = math::CeilOp::create(nb, l, a[0]);
        else if (op == "Round") // halves to even, as ONNX specifies
          x = math::RoundEvenOp::create(nb, l, a[0]);
        else if (op == "LeakyRelu") { // x < 0 ? alpha x : x (NaN stays)
          Value zero = arith::ConstantOp::create(nb, l, nb.getZeroAttr(elem));
          Value neg = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT,
                                            a[0], zero);
          Value scaled = arith::MulFOp::create(
              nb, l, a[0],
              arith::ConstantOp::create(nb, l,
                                        nb.getFloatAttr(elem, leakyAlpha)));
          x = arith::SelectOp::create(nb, l, neg, scaled, a[0]);
        } else if (op == "Sign") {
          // 1 above 0, -1 below; otherwise x itself (0, -0 or NaN for
          // floats; 0 for integers).
          auto c = [&](int64_t v) -> Value {
            return arith::ConstantOp::create(
                nb, l,
                isFloat ? cast<TypedAttr>(nb.getFloatAttr(elem, double(v)))
                        : cast<TypedAttr>(nb.getIntegerAttr(elem, v)));
          };
          auto cmp = [&](bool above) -> Value {
            if (isFloat)
              return arith::CmpFOp::create(nb, l,
                                           above ? arith::CmpFPredicate::OGT
                                                 : arith::CmpFPredicate::OLT,
                                           a[0], c(0));
            return arith::CmpIOp::create(nb, l,
                                         above ? arith::CmpIPredicate::sgt
                                               : arith::CmpIPredicate::slt,
                                         a[0], c(0));
          };
          x = arith::SelectOp::create(
              nb, l, cmp(true), c(1),
              arith::SelectOp::create(nb, l, cmp(false), c(-1),
                                      isFloat ? a[0] : c(0)));
        } else if (op == "Cos")
          x = math::CosOp::create(nb, l, a[0]);
        else if (extremum) {
          // Max/Min of any number of inputs; NaN propagates (NumPy's
          // maximum/minimum, ONNX Runtime's Max/Min).
          x = a[0];
          // (a ends with the output's block argument.)
          for (Value v : a.take_front(ins.size()).drop_front())
            x = !isFloat
                    ? (op == "Max" ? Value(arith::MaxSIOp::create(nb, l, x, v))
                                   : Value(arith::MinSIOp::create(nb, l, x, v)))
                : op == "Max" ? Value(arith::MaximumFOp::create(nb, l, x, v))
                              : Value(arith::MinimumFOp::create(nb, l, x, v));
        } else if (op == "Clip") {
          // min(max(x, lo), hi): hi wherever lo > hi, as ONNX specifies.
          auto limit = [&](bool high) -> Value {
            if (isFloat)
              return arith::ConstantOp::create(
                  nb, l, nb.getFloatAttr(elem, high ? highAttr : lowAttr));
            unsigned w = elem.getIntOrFloatBitWidth();
            return arith::ConstantOp::create(
                nb, l,
                nb.getIntegerAttr(elem, high ? APInt::getSignedMaxValue(w)
                                             : APInt::getSignedMinValue(w)));
          };
          size_t next = 1;
          Value lo = clipLow ? a[next++] : limit(false);
          Value hi = clipHigh ? a[next++] : limit(true);
          x = isFloat
                  ? Value(arith::MinimumFOp::create(
                        nb, l, arith::MaximumFOp::create(nb, l, a[0], lo), hi))
                  : Value(arith::MinSIOp::create(
                        nb, l, arith::MaxSIOp::create(nb, l, a[0], lo), hi));
        } else if (op == "Gelu") {
          auto c = [&](double v) -> Value {
            return arith::ConstantOp::create(nb, l, nb.getFloatAttr(elem, v));
          };
          // 0.5 x (1 + erf(x / sqrt 2)), or with tanh(sqrt(2 / pi) (x +
          // 0.044715 x^3)) in place of the erf.
          Value t;
          if (approximate == "tanh") {
            Value x3 = arith::MulFOp::create(
                nb, l, a[0], arith::MulFOp::create(nb, l, a[0], a[0]));
            Value inner = arith::AddFOp::create(
                nb, l, a[0], arith::MulFOp::create(nb, l, c(0.044715), x3));
            t = math::TanhOp::create(
                nb, l,
                arith::MulFOp::create(nb, l, c(std::sqrt(2.0 / M_PI)), inner));
          } else {
            t = math::ErfOp::create(
                nb, l, arith::MulFOp::create(nb, l, a[0], c(M_SQRT1_2)));
          }
          Value half = arith::MulFOp::create(nb, l, c(0.5), a[0]);
          x = arith::MulFOp::create(nb, l, half,
                                    arith::AddFOp::create(nb, l, c(1.0), t));
        } else if (op == "Pow")
          x = math::PowFOp::create(nb, l, a[0], a[1]);
        else if (isFloat)
          x = op == "Add"   ? Value(arith::AddFOp::create(nb, l, a[0], a[1]))
              : op == "Sub" ? Value(arith::SubFOp::create(nb, l, a[0], a[1]))
              : op == "Mul" ? Value(arith::MulFOp::create(nb, l, a[0], a[1]))
                            : Value(arith::DivFOp::create(nb, l, a[0], a[1]));
        else if (op == "Div")
          x = divideIntegers(nb, l, a[0], a[1], /*remainder=*/false);
        else
          x = op == "Add"   ? Value(arith::AddIOp::create(nb, l, a[0], a[1]))
              : op == "Sub" ? Value(arith::SubIOp::create(nb, l, a[0], a[1]))
                            : Value(arith::MulIOp::create(nb, l, a[0], a[1]));
        return x;
      });
  if (!r)
    return;
  define(n, 0, r);
}

bool Importer::importKnownWhere(const onnx::NodeProto &n) {
  // A constant condition over known integers picks elements of either:
  // the branches may be sizes known only as SSA values (a Shape's dims).
  auto x = knownInput(n, 1), y = knownInput(n, 2);
  auto it = values.find(n.input(0));
  DenseElementsAttr cond;
  if (!x || !y || x->elemType != y->elemType || it == values.end() ||
      !matchPattern(it->second, m_Constant(&cond)) ||
      !cond.getElementType().isInteger(1) || typeOf(it->second).getRank() > 1)
    return false;
  SmallVector<bool> c(cond.getValues<bool>());
  size_t nc = c.size(), nx = x->elems.size(), ny = y->elems.size();
  size_t count = std::max({nc, nx, ny});
  for (size_t k : {nc, nx, ny})
    if (k != count && k != 1)
      return false; // the data path reports the shapes
  KnownInts r;
  r.elemType = x->elemType;
  r.scalar = typeOf(it->second).getRank() == 0 && x->scalar && y->scalar;
  for (size_t i = 0; i < count; ++i)
    r.elems.push_back(c[nc == 1 ? 0 : i] ? x->elems[nx == 1 ? 0 : i]
                                         : y->elems[ny == 1 ? 0 : i]);
  defineKnown(n, 0, r);
  return true;
}

bool Importer::importKnownArith(const onnx::NodeProto &n) {
  if (n.input_size() != 2)
    return false;
  auto x = knownInput(n, 0), y = knownInput(n, 1);
  if (!x || !y)
    return false;
  size_t nx = x->elems.size(), ny = y->elems.size();
  if (nx != ny && nx != 1 && ny != 1)
    return false;
  const std::string &op = n.op_type();
  bool mod = op == "Mod";
  char c = op == "Add"   ? '+'
           : op == "Sub" ? '-'
           : op == "Mul" ? '*'
           : op == "Min" ? 'm'
           : op == "Max" ? 'M'
                         : '/';
  if (c == '/') {
    // ONNX's Div truncates and Mod takes a sign, floorDiv floors: the same
    // for a dividend that is no negative (a size: n - n % 4) and a
    // positive constant divisor. (By 0, the data path gives 0.)
    for (OpFoldResult e : x->elems)
      if (!knownNonNegative(e))
        return false;
    for (OpFoldResult e : y->elems)
      if (auto v = getConstantIntValue(e); !v || *v <= 0)
        return false;
  }
  KnownInts r;
  r.elemType = x->elemType;
  r.scalar = x->scalar && y->scalar;
  // (An empty side broadcasts to empty: [0] against [1] is [0].)
  size_t count = nx == 0 || ny == 0 ? 0 : std::max(nx, ny);
  for (size_t i = 0; i < count; ++i) {
    OpFoldResult a = x->elems[nx == 1 ? 0 : i], d = y->elems[ny == 1 ? 0 : i];
    r.elems.push_back(
        mod ? foldIndex('-', a, foldIndex('*', foldIndex('/', a, d), d))
            : foldIndex(c, a, d));
  }
  defineKnown(n, 0, r);
  return true;
}

Value Importer::convertScalar(OpBuilder &nb, Location l, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF) {
    // f16 <-> bf16 (equal widths, neither range holds the other): through
    // f32, rounding once.
    if (fromF.getWidth() == toF.getWidth())
      x = arith::ExtFOp::create(nb, l, nb.getF32Type(), x);
    return cast<FloatType>(x.getType()).getWidth() < toF.getWidth()
               ? Value(arith::ExtFOp::create(nb, l, to, x))
               : Value(arith::TruncFOp::create(nb, l, to, x));
  }
  if (to.isInteger(1)) {
    if (fromF)
      return arith::CmpFOp::create(
          nb, l, arith::CmpFPredicate::UNE, x,
          arith::ConstantOp::create(nb, l, nb.getZeroAttr(from)));
    return arith::CmpIOp::create(
        nb, l, arith::CmpIPredicate::ne, x,
        arith::ConstantOp::create(nb, l, nb.getZeroAttr(from)));
  }
  if (toF)
    return from.isInteger(1) ? Value(arith::UIToFPOp::create(nb, l, to, x))
                             : Value(arith::SIToFPOp::create(nb, l, to, x));
  if (fromF)
    return arith::FPToSIOp::create(nb, l, to, x);
  if (from.isInteger(1))
    return arith::ExtUIOp::create(nb, l, to, x);
  return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
             ? Value(arith::ExtSIOp::create(nb, l, to, x))
             : Value(arith::TruncIOp::create(nb, l, to, x));
}

Type Importer::sumType(Type elem) {
  return elem.isF16() || elem.isBF16() ? Float32Type::get(elem.getContext())
                                       : elem;
}

/// The bytes of constant `attr` when it is a resource blob or non-splat
/// dense values of `bytes` bytes in all (read as bytes: a blob viewing an
/// ONNX file in place has the alignment of the weight's offset there).
static std::optional<ArrayRef<char>> constantBytes(ElementsAttr attr,
                                                   int64_t bytes) {
  ArrayRef<char> raw;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    raw = blob->getData();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(attr);
             dense && !dense.isSplat()) {
    raw = dense.getRawData();
  } else {
    return std::nullopt;
  }
  if (int64_t(raw.size()) != bytes)
    return std::nullopt;
  return raw;
}

/// A constant of `type` holding `blob`'s bytes, of `like`'s kind: a blob
/// named after `like`'s with `suffix` (a weight keeps its name), or inline
/// values.
static Value constantLike(OpBuilder &b, Location loc, ElementsAttr like,
                          RankedTensorType type, AsmResourceBlob blob,
                          StringRef suffix) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(like))
    return arith::ConstantOp::create(
        b, loc,
        DenseResourceElementsAttr::get(
            type, (resource.getRawHandle().getKey() + suffix).str(),
            std::move(blob)));
  int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::getFromRawBuffer(
                                       type, blob.getData().take_front(bytes)));
}

/// An f16 value's bits as f32 (exact: every f16 is an f32).
static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ffu, bits;
  if (exponent == 0x1f) // inf, NaN (payload kept)
    bits = sign | 0x7f800000u | (mantissa << 13);
  else if (exponent) // normal: rebias 15 -> 127
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  else if (!mantissa) // +-0
    bits = sign;
  else { // subnormal (mantissa * 2^-24): normalized for f32
    uint32_t shifts = 0;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      ++shifts;
    }
    bits = sign | ((113 - shifts) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// A 16-bit float constant `x` (a weight) as an f32 constant of the same
/// kind (a blob stays a blob), or null when `x` is no such constant. An f16
/// MatMul weight was otherwise converted on every call: a decode step's
/// [1, 4096] x [4096, 4096] took 2.2x f32's time.
static Value widenedConstant(OpBuilder &b, Location loc, Value x) {
  ElementsAttr attr;
  if (!matchPattern(x, m_Constant(&attr)))
    return Value();
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape() ||
      !(type.getElementType().isF16() || type.getElementType().isBF16()))
    return Value();
  bool half = type.getElementType().isF16();
  auto wideType = type.clone(b.getF32Type());
  auto widen = [&](uint16_t bits) {
    if (half)
      return halfToFloat(bits);
    uint32_t wide = uint32_t(bits) << 16; // bf16: f32's upper half
    float f;
    std::memcpy(&f, &wide, sizeof f);
    return f;
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat())
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            wideType, widen(static_cast<uint16_t>(dense.getSplatValue<APFloat>()
                                                      .bitcastToAPInt()
                                                      .getZExtValue()))));
  int64_t count = type.getNumElements();
  std::optional<ArrayRef<char>> raw = constantBytes(attr, count * 2);
  if (!raw)
    return Value();
  AsmResourceBlob wide = HeapAsmResourceBlob::allocate(
      std::max<size_t>(count * sizeof(float), 1), alignof(uint64_t),
      /*dataIsMutable=*/true);
  auto *out = reinterpret_cast<float *>(wide.getMutableData().data());
  for (int64_t i = 0; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, raw->data() + 2 * i, sizeof bits);
    out[i] = widen(bits);
  }
  return constantLike(b, loc, attr, wideType, std::move(wide), "_f32");
}

Value Importer::convertElements(Location loc, Value x, Type to) {
  auto t = typeOf(x);
  if (t.getElementType() == to)
    return x;
  // A constant is converted once, here, rather than on every call.
  if (to.isF32())
    if (Value wide = widenedConstant(b, loc, x))
      return wide;
  Value init = tensor::EmptyOp::create(b, loc, sizesOf(x), to);
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(t.getRank()));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
             maps,
             SmallVector<utils::IteratorType>(t.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, convertScalar(nb, l, a[0], to));
             })
      .getResult(0);
}

void Importer::importCast(const onnx::NodeProto &n) {
  std::optional<Type> to = elemType(intAttr(n, "to", 0));
  if (!to) {
    nodeError(n) << "casts to an "
                 << unsupportedTypeText(static_cast<int>(intAttr(n, "to", 0)));
    return;
  }
  // Shape arithmetic stays symbolic between integer types; a constant
  // cast to float (Cast(Gather(Shape(k), -1)) for the scale) folds.
  if (auto k = knownInput(n, 0)) {
    if (isa<IntegerType>(*to) && !to->isInteger(1)) {
      k->elemType = *to;
      return defineKnown(n, 0, *k);
    }
    if (auto c = k->constants(); c && isa<FloatType>(*to)) {
      SmallVector<Attribute> fs;
      for (int64_t v : *c)
        fs.push_back(FloatAttr::get(*to, double(v)));
      auto type = k->scalar ? RankedTensorType::get({}, *to)
                            : RankedTensorType::get({int64_t(c->size())}, *to);
      return define(n, 0,
                    arith::ConstantOp::create(
                        b, nodeLoc(n), DenseElementsAttr::get(type, fs)));
    }
  }
  Value x = input(n, 0);
  if (failed)
    return;
  define(n, 0, convertElements(nodeLoc(n), x, *to));
}

/// Equal, Less, Greater, LessOrEqual, GreaterOrEqual: NumPy broadcasting,
/// a bool result; floats compare ordered (NaN is unequal to everything,
/// as in NumPy), integers signed. Equal also compares bools.
void Importer::importCompare(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  auto [fpred, ipred] =
      [&]() -> std::pair<arith::CmpFPredicate, arith::CmpIPredicate> {
    if (op == "Less")
      return {arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt};
    if (op == "Greater")
      return {arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt};
    if (op == "LessOrEqual")
      return {arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle};
    if (op == "GreaterOrEqual")
      return {arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge};
    return {arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq};
  }();
  arith::CmpFPredicate fp = fpred;
  arith::CmpIPredicate ip = ipred;
  // Shape arithmetic: known integers compare to a constant condition
  // (torch's expand(-1, ...) and repeat_kv's expand export their target
  // shape as Where(Equal(shape, -1), 1, shape)), which a known Where then
  // reads. Sizes known only as values still compare where the answer does
  // not depend on them: a size against a negative constant, a value
  // against itself.
  if (auto x = knownInput(n, 0), y = knownInput(n, 1); x && y) {
    size_t nx = x->elems.size(), ny = y->elems.size();
    auto decide = [&](OpFoldResult a, OpFoldResult c) -> std::optional<bool> {
      auto ca = getConstantIntValue(a), cc = getConstantIntValue(c);
      if (ca && cc)
        return arith::applyCmpPredicate(ip, APInt(64, *ca, /*isSigned=*/true),
                                        APInt(64, *cc, /*isSigned=*/true));
      if (isEqualConstantIntOrValue(a, c))
        return ip == arith::CmpIPredicate::eq ||
               ip == arith::CmpIPredicate::sle ||
               ip == arith::CmpIPredicate::sge;
      // One side a constant below 0, the other a size (>= 0).
      bool aBelow = ca && *ca < 0 && knownNonNegative(c),
           cBelow = cc && *cc < 0 && knownNonNegative(a);
      if (!aBelow && !cBelow)
        return std::nullopt;
      switch (ip) {
      case arith::CmpIPredicate::eq:
        return false;
      case arith::CmpIPredicate::slt:
      case arith::CmpIPredicate::sle:
        return aBelow;
      default: // sgt, sge
        return cBelow;
      }
    };
    // (An empty side broadcasts to empty: left to the data path.)
    SmallVector<bool> holds;
    if (nx && ny && (nx == ny || nx == 1 || ny == 1) &&
        x->elemType == y->elemType)
      for (size_t i = 0; i < std::max(nx, ny); ++i) {
        std::optional<bool> d =
            decide(x->elems[nx == 1 ? 0 : i], y->elems[ny == 1 ? 0 : i]);
        if (!d) {
          holds.clear();
          break;
        }
        holds.push_back(*d);
      }
    if (!holds.empty()) {
      SmallVector<int64_t> shape;
      if (!(x->scalar && y->scalar))
        shape.push_back(static_cast<int64_t>(holds.size()));
      auto type = RankedTensorType::get(shape, b.getI1Type());
      return define(n, 0,
                    arith::ConstantOp::create(
                        b, nodeLoc(n), DenseElementsAttr::get(type, holds)));
    }
  }
  SmallVector<Value> ins{input(n, 0), input(n, 1)};
  if (failed)
    return;
  Type elem = typeOf(ins[0]).getElementType();
  if (typeOf(ins[1]).getElementType() != elem) {
    nodeError(n) << "operand types differ: " << elem << " and "
                 << typeOf(ins[1]).getElementType();
    return;
  }
  if (op != "Equal" && elem.isInteger(1)) {
    nodeError(n) << "expects numbers, got bool operands";
    return;
  }
  Value r =
      broadcastGeneric(n, ins, b.getI1Type(),
                       [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         if (isa<FloatType>(elem))
                           return arith::CmpFOp::create(nb, l, fp, a[0], a[1]);
                         return arith::CmpIOp::create(nb, l, ip, a[0], a[1]);
                       });
  if (r)
    define(n, 0, r);
}

/// Not, And, Or, Xor on bools (NumPy broadcasting).
void Importer::importLogical(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  SmallVector<Value> ins{input(n, 0)};
  if (op != "Not")
    ins.push_back(input(n, 1));
  if (failed)
    return;
  for (Value v : ins)
    if (!typeOf(v).getElementType().isInteger(1)) {
      nodeError(n) << "expects bool tensors, got " << typeOf(v);
      return;
    }
  Value r = broadcastGeneric(
      n, ins, b.getI1Type(),
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        if (op == "And")
          return arith::AndIOp::create(nb, l, a[0], a[1]);
        if (op == "Or")
          return arith::OrIOp::create(nb, l, a[0], a[1]);
        Value other =
            op == "Xor"
                ? a[1]
                : Value(arith::ConstantOp::create(nb, l, nb.getBoolAttr(true)));
        return arith::XOrIOp::create(nb, l, a[0], other);
      });
  if (r)
    define(n, 0, r);
}

void Importer::importTrilu(const onnx::NodeProto &n) {
  int64_t k = 0;
  // A diagonal computed from shapes (tril(diagonal=Tk - Tq) over a KV
  // cache of dynamic length): its index value, compared per element below.
  Value kDynamic;
  if (n.input_size() > 1 && !n.input(1).empty()) {
    auto kk = knownInput(n, 1);
    if (!kk || kk->elems.size() != 1) {
      nodeError(n) << "k must be a constant or computed from shapes";
      return;
    }
    if (auto c = getConstantIntValue(kk->elems[0]))
      k = *c;
    else
      kDynamic = cast<Value>(kk->elems[0]);
  }
  bool upper = intAttr(n, "upper", 1) != 0;
  Value x = input(n, 0);
  if (failed)
    return;
  auto t = typeOf(x);
  int64_t r = t.getRank();
  if (r < 2) {
    nodeError(n) << "input must have rank >= 2, got " << r;
    return;
  }
  // On a constant (tril(ones(T, T)) in exports), the result is a constant:
  // masks stay recognisable as such.
  DenseElementsAttr cst;
  if (auto c = constantElements(x))
    cst = *c;
  if (cst && !kDynamic && t.hasStaticShape() &&
      t.getNumElements() <= (int64_t(1) << 24)) {
    int64_t rows = t.getDimSize(r - 2), cols = t.getDimSize(r - 1);
    SmallVector<Attribute> out;
    Attribute zero = b.getZeroAttr(t.getElementType());
    int64_t idx = 0;
    for (Attribute a : cst.getValues<Attribute>()) {
      int64_t i = (idx / cols) % rows, j = idx % cols;
      out.push_back((upper ? j - i >= k : j - i <= k) ? a : zero);
      ++idx;
    }
    define(n, 0,
           arith::ConstantOp::create(b, nodeLoc(n),
                                     DenseElementsAttr::get(t, out)));
    return;
  }
  // Keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower): an
  // index comparison attn-fold-mask can evaluate when it feeds a mask.
  Location loc = nodeLoc(n);
  Value init = tensor::EmptyOp::create(b, loc, sizesOf(x), t.getElementType());
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(r));
  define(
      n, 0,
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
          maps,
          SmallVector<utils::IteratorType>(r, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value i = linalg::IndexOp::create(nb, l, r - 2);
            Value j = linalg::IndexOp::create(nb, l, r - 1);
            Value diff = arith::SubIOp::create(nb, l, j, i);
            Value kv =
                kDynamic ? kDynamic : arith::ConstantIndexOp::create(nb, l, k);
            Value keep = arith::CmpIOp::create(
                nb, l,
                upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
                diff, kv);
            Value zero = arith::ConstantOp::create(
                nb, l, nb.getZeroAttr(t.getElementType()));
            linalg::YieldOp::create(
                nb, l, Value(arith::SelectOp::create(nb, l, keep, a[0], zero)));
          })
          .getResult(0));
}

void Importer::importGemm(const onnx::NodeProto &n) {
  Value a = input(n, 0), w = input(n, 1), c = input(n, 2);
  if (failed)
    return;
  auto at = typeOf(a), wt = typeOf(w);
  if (at.getRank() != 2 || wt.getRank() != 2 ||
      !isa<FloatType>(at.getElementType()) ||
      wt.getElementType() != at.getElementType()) {
    nodeError(n) << "expects 2-D float operands of one element type, got " << at
                 << " and " << wt;
    return;
  }
  bool ta = intAttr(n, "transA", 0), tb = intAttr(n, "transB", 0);
  float alpha = floatAttr(n, "alpha").value_or(1.0f);
  float beta = floatAttr(n, "beta").value_or(1.0f);
  Location loc = nodeLoc(n);
  Type elem = at.getElementType();
  // Loops (i, j, k): A[i, k] (or A[k, i]), B[k, j] (or B[j, k]).
  AffineExpr i = b.getAffineDimExpr(0), j = b.getAffineDimExpr(1),
             k = b.getAffineDimExpr(2);
  SmallVector<AffineMap> maps{
      AffineMap::get(
          3, 0, ta ? ArrayRef<AffineExpr>{k, i} : ArrayRef<AffineExpr>{i, k},
          ctx),
      AffineMap::get(
          3, 0, tb ? ArrayRef<AffineExpr>{j, k} : ArrayRef<AffineExpr>{k, j},
          ctx),
      AffineMap::get(3, 0, {i, j}, ctx)};
  OpFoldResult m = dimOf(a, ta ? 1 : 0), nn = dimOf(w, tb ? 0 : 1);
  auto ka = typeOf(a).getDimSize(ta ? 0 : 1),
       kb = typeOf(w).getDimSize(tb ? 1 : 0);
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb) {
    nodeError(n) << "inner dimensions differ: " << ka << " and " << kb;
    return;
  }
  if (!isEqualConstantIntOrValue(dimOf(a, ta ? 0 : 1), dimOf(w, tb ? 1 : 0))) {
    nodeError(n) << "cannot tell whether the inner dims of " << at << " and "
                 << wt << " are equal: give equal dynamic dims one dim_param "
                 << "name, or static sizes";
    return;
  }
  // The accumulator starts as beta * C (broadcast), or 0; 16-bit floats
  // sum in f32, their operands converted first (as MatMul's).
  Type acc = sumType(elem);
  a = convertElements(loc, a, acc);
  w = convertElements(loc, w, acc);
  Value init =
      tensor::EmptyOp::create(b, loc, SmallVector<OpFoldResult>{m, nn}, acc);
  if (c) {
    auto ct = typeOf(c);
    if (ct.getElementType() != elem) {
      nodeError(n) << "C " << ct << " must have A's element type " << elem;
      return;
    }
    bool ok = ct.getRank() <= 2;
    for (int64_t d = 0; ok && d < ct.getRank(); ++d) {
      int64_t cd = ct.getDimSize(d);
      OpFoldResult od = (2 - ct.getRank() + d) == 0 ? m : nn;
      ok = cd == 1 || isEqualConstantIntOrValue(dimOf(c, d), od);
    }
    if (!ok) {
      nodeError(n) << "C " << ct << " does not broadcast to the [M, N] result";
      return;
    }
  }
  // C as read by the [M, N] result (broadcast).
  AffineMap cMap;
  if (c) {
    auto ct = typeOf(c);
    SmallVector<AffineExpr> ce;
    for (int64_t d = 0; d < ct.getRank(); ++d) {
      int64_t od = 2 - ct.getRank() + d;
      ce.push_back(ct.getDimSize(d) == 1 ? b.getAffineConstantExpr(0)
                                         : b.getAffineDimExpr(od));
    }
    cMap = AffineMap::get(2, 0, ce, ctx);
  }
  auto scaled = [&](OpBuilder &nb, Location l, Value x, float by) -> Value {
    if (by == 1.0f)
      return x;
    return arith::MulFOp::create(
        nb, l, x, arith::ConstantOp::create(nb, l, nb.getFloatAttr(acc, by)));
  };
  // The product is a plain contraction (the kernels take no scale inside
  // it): with alpha = 1 it adds onto beta * C; otherwise it starts from 0
  // and alpha * AB + beta * C follows, elementwise. alpha = 0 leaves beta *
  // C (as BLAS does: no product is computed).
  bool scaleAfter = alpha != 1.0f;
  if (c && beta != 0.0f && !scaleAfter) {
    SmallVector<AffineMap> cm{cMap, b.getMultiDimIdentityMap(2)};
    init =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{c}, ValueRange{init},
            cm,
            SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange v) {
              linalg::YieldOp::create(
                  nb, l, scaled(nb, l, convertScalar(nb, l, v[0], acc), beta));
            })
            .getResult(0);
  } else {
    init = zeroFilled(loc, init);
  }
  SmallVector<utils::IteratorType> iters{utils::IteratorType::parallel,
                                         utils::IteratorType::parallel,
                                         utils::IteratorType::reduction};
  Value out = init;
  if (alpha != 0.0f)
    out = linalg::GenericOp::create(
              b, loc, TypeRange{init.getType()}, ValueRange{a, w},
              ValueRange{init}, maps, iters,
              [&](OpBuilder &nb, Location l, ValueRange v) {
                Value p = arith::MulFOp::create(nb, l, v[0], v[1]);
                linalg::YieldOp::create(
                    nb, l, ValueRange{arith::AddFOp::create(nb, l, v[2], p)});
              })
              .getResult(0);
  if (scaleAfter) {
    bool addC = c && beta != 0.0f;
    SmallVector<Value> ins{out};
    SmallVector<AffineMap> ms{b.getMultiDimIdentityMap(2)};
    if (addC) {
      ins.push_back(c);
      ms.push_back(cMap);
    }
    ms.push_back(b.getMultiDimIdentityMap(2));
    Value dest = tensor::EmptyOp::create(b, loc, sizesOf(out), acc);
    out =
        linalg::GenericOp::create(
            b, loc, TypeRange{dest.getType()}, ins, ValueRange{dest}, ms,
            SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange v) {
              Value y = scaled(nb, l, v[0], alpha);
              if (addC)
                y = arith::AddFOp::create(
                    nb, l, y,
                    scaled(nb, l, convertScalar(nb, l, v[1], acc), beta));
              linalg::YieldOp::create(nb, l, y);
            })
            .getResult(0);
  }
  define(n, 0, convertElements(loc, out, elem));
}

Importer::ReductionLoops Importer::reductionLoops(ArrayRef<bool> reduced,
                                                  bool keep,
                                                  ArrayRef<int64_t> shape) {
  int64_t r = reduced.size();
  ReductionLoops loops;
  loops.loopOf.resize(r);
  // The kept dims before the first reduced one: the parallel loop nest.
  int64_t lead = 0;
  while (lead < r && !reduced[lead])
    ++lead;
  bool leadRuns = lead > 0 && llvm::any_of(shape.take_front(lead),
                                           [](int64_t s) { return s != 1; });
  unsigned next = 0;
  auto place = [&](int64_t d) {
    loops.loopOf[d] = next++;
    loops.iters.push_back(reduced[d] ? utils::IteratorType::reduction
                                     : utils::IteratorType::parallel);
  };
  if (leadRuns && lead < r && !reduced.back()) {
    // Kept dims after the reduced ones (a mean over the sequence of [B, T,
    // C]): the rest in the input's order, so the innermost loop runs along
    // contiguous C and the reduced dims step over rows. Reduced innermost,
    // each output element summed its column down a stride of C, scalar:
    // 11x ONNX Runtime's time. (Only under a parallel loop nest that does
    // not fold away: the kept dims after the reduced ones would otherwise
    // be a parallel region per reduced element.)
    for (int64_t d = 0; d < r; ++d)
      place(d);
  } else {
    for (bool inner : {false, true})
      for (int64_t d = 0; d < r; ++d)
        if (reduced[d] == inner)
          place(d);
  }
  SmallVector<AffineExpr> in, out;
  for (int64_t d = 0; d < r; ++d) {
    in.push_back(b.getAffineDimExpr(loops.loopOf[d]));
    if (!reduced[d])
      out.push_back(b.getAffineDimExpr(loops.loopOf[d]));
    else if (keep)
      out.push_back(b.getAffineConstantExpr(0));
  }
  loops.in = AffineMap::get(r, 0, in, ctx);
  loops.out = AffineMap::get(r, 0, out, ctx);
  return loops;
}

/// ReduceSum, ReduceMean, ReduceMax and ReduceMin. The axes are an
/// attribute before opset 13 (ReduceSum) or 18 (the others, as torch 1.13
/// exports `x.mean(-1)`) and an input from then on; either form is read.
/// The mean is the sum times 1 / (the product of the reduced sizes), which
/// may be dynamic. Max and min propagate NaN (as NumPy does) and start from
/// -inf / +inf (an empty reduction's value from opset 18) or the integer
/// type's bounds. Sum, max and min take integers too.
void Importer::importReduce(const onnx::NodeProto &n) {
  Value x = input(n, 0);
  if (failed)
    return;
  const std::string &op = n.op_type();
  bool mean = op == "ReduceMean", max = op == "ReduceMax",
       min = op == "ReduceMin", prod = op == "ReduceProd",
       squares = op == "ReduceSumSquare" || op == "ReduceL2",
       abs = op == "ReduceL1", l2 = op == "ReduceL2",
       logSumExp = op == "ReduceLogSumExp", logSum = op == "ReduceLogSum";
  char kind = prod ? '*' : max ? 'M' : min ? 'm' : '+';
  // (L2, LogSum and LogSumExp take floats only, as mean does.)
  bool floatOnly = mean || l2 || logSumExp || logSum;
  auto t = typeOf(x);
  int64_t r = t.getRank();
  SmallVector<bool> reduced(r, false);
  bool any = false;
  std::optional<SmallVector<int64_t>> axes;
  if (const auto *a = attr(n, "axes")) {
    axes.emplace(a->ints().begin(), a->ints().end());
  } else if (n.input_size() > 1 && !n.input(1).empty()) {
    auto k = knownInput(n, 1);
    if (k)
      axes = k->constants();
    if (!axes) {
      nodeError(n) << "axes must be constant";
      return;
    }
  }
  if (axes) {
    for (int64_t a : *axes) {
      if (a < -r || a >= r) {
        nodeError(n) << "axis " << a << " is out of range";
        return;
      }
      reduced[a < 0 ? a + r : a] = any = true;
    }
  }
  Type elem = t.getElementType();
  bool isFloat = isa<FloatType>(elem);
  if (!isNumber(elem) || (floatOnly && !isFloat)) {
    nodeError(n) << "expects a float" << (floatOnly ? "" : " or integer")
                 << " tensor, got " << elem;
    return;
  }
  Location loc = nodeLoc(n);
  if (!any) {
    if (!intAttr(n, "noop_with_empty_axes", 0)) {
      reduced.assign(r, true);
    } else {
      // Nothing is reduced, but each element still takes the op's own
      // step (as ONNX specifies and ONNX Runtime computes): x^2 for
      // ReduceSumSquare, |x| for ReduceL1 and ReduceL2 (sqrt(x^2)), log(x)
      // for ReduceLogSum; the others give x (log(exp(x)) for
      // ReduceLogSumExp).
      if (!squares && !abs && !logSum)
        return define(n, 0, x);
      Value init = tensor::EmptyOp::create(b, loc, sizesOf(x), elem);
      SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(r));
      return define(n, 0,
                    linalg::GenericOp::create(
                        b, loc, TypeRange{init.getType()}, ValueRange{x},
                        ValueRange{init}, maps,
                        SmallVector<utils::IteratorType>(
                            r, utils::IteratorType::parallel),
                        [&](OpBuilder &nb, Location l, ValueRange v) {
                          Value e = v[0];
                          if (logSum)
                            e = math::LogOp::create(nb, l, e);
                          else if (abs || l2)
                            e = isFloat ? Value(math::AbsFOp::create(nb, l, e))
                                        : Value(math::AbsIOp::create(nb, l, e));
                          else
                            e = isFloat
                                    ? Value(arith::MulFOp::create(nb, l, e, e))
                                    : Value(arith::MulIOp::create(nb, l, e, e));
                          linalg::YieldOp::create(nb, l, ValueRange{e});
                        })
                        .getResult(0));
    }
  }
  // 16-bit floats sum in f32 (max and min too: exact in any type, and the
  // f32 reductions are the vectorized ones).
  Type given = elem;
  x = convertElements(loc, x, sumType(elem));
  t = typeOf(x);
  elem = t.getElementType();
  auto finish = [&](Value v) { define(n, 0, convertElements(loc, v, given)); };
  bool keep = intAttr(n, "keepdims", 1) != 0;
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < r; ++d) {
    if (!reduced[d])
      sizes.push_back(dimOf(x, d));
    else if (keep)
      sizes.push_back(b.getIndexAttr(1));
  }
  Value empty = tensor::EmptyOp::create(b, loc, sizes, elem);
  Value init;
  if (max || min || logSumExp) {
    init = extremeFilled(loc, empty, /*lowest=*/max || logSumExp);
  } else if (prod) {
    Value one = arith::ConstantOp::create(
        b, loc,
        isFloat ? cast<TypedAttr>(b.getFloatAttr(elem, 1.0))
                : cast<TypedAttr>(b.getIntegerAttr(elem, 1)));
    init = linalg::FillOp::create(b, loc, one, empty).getResult(0);
  } else {
    init = zeroFilled(loc, empty);
  }
  ReductionLoops loops = reductionLoops(reduced, keep, t.getShape());
  // LogSumExp: the max first, subtracted before exp (a max that is not
  // finite is taken as 0, so that all -inf gives log(0) = -inf and +inf
  // gives +inf, not inf - inf), then log of the sum plus the max.
  Value rowMax;
  if (logSumExp) {
    rowMax =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
            SmallVector<AffineMap>{loops.in, loops.out}, loops.iters,
            [&](OpBuilder &nb, Location l, ValueRange v) {
              linalg::YieldOp::create(
                  nb, l,
                  ValueRange{arith::MaximumFOp::create(nb, l, v[1], v[0])});
            })
            .getResult(0);
    AffineMap id = b.getMultiDimIdentityMap(typeOf(rowMax).getRank());
    rowMax =
        linalg::GenericOp::create(
            b, loc, TypeRange{rowMax.getType()}, ValueRange{rowMax},
            ValueRange{empty}, ArrayRef<AffineMap>{id, id},
            SmallVector<utils::IteratorType>(id.getNumDims(),
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange v) {
              Value inf = arith::ConstantOp::create(
                  nb, l,
                  nb.getFloatAttr(elem,
                                  std::numeric_limits<double>::infinity()));
              Value finite =
                  arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT,
                                        math::AbsFOp::create(nb, l, v[0]), inf);
              Value zero =
                  arith::ConstantOp::create(nb, l, nb.getZeroAttr(elem));
              linalg::YieldOp::create(nb, l,
                                      ValueRange{arith::SelectOp::create(
                                          nb, l, finite, v[0], zero)});
            })
            .getResult(0);
    init = zeroFilled(loc, empty);
  }
  SmallVector<Value> reduceIns{x};
  SmallVector<AffineMap> reduceMaps{loops.in};
  if (rowMax) {
    reduceIns.push_back(rowMax);
    reduceMaps.push_back(loops.out);
  }
  reduceMaps.push_back(loops.out);
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, reduceIns, ValueRange{init},
          reduceMaps, loops.iters,
          [&](OpBuilder &nb, Location l, ValueRange v) {
            Value acc = v.back(), e = v[0];
            if (squares)
              e = isFloat ? Value(arith::MulFOp::create(nb, l, e, e))
                          : Value(arith::MulIOp::create(nb, l, e, e));
            else if (abs)
              e = isFloat ? Value(math::AbsFOp::create(nb, l, e))
                          : Value(math::AbsIOp::create(nb, l, e));
            else if (logSumExp)
              e = math::ExpOp::create(nb, l,
                                      arith::SubFOp::create(nb, l, e, v[1]));
            linalg::YieldOp::create(
                nb, l, ValueRange{combineNumbers(nb, l, kind, acc, e)});
          })
          .getResult(0);
  if (l2 || logSumExp || logSum) {
    // sqrt(sum), log(sum) + max, or log(sum).
    int64_t outRank = typeOf(sum).getRank();
    AffineMap id = b.getMultiDimIdentityMap(outRank);
    SmallVector<Value> ins{sum};
    if (logSumExp)
      ins.push_back(rowMax);
    return finish(
        linalg::GenericOp::create(
            b, loc, TypeRange{sum.getType()}, ins, ValueRange{empty},
            SmallVector<AffineMap>(ins.size() + 1, id),
            SmallVector<utils::IteratorType>(outRank,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange v) {
              Value r =
                  l2 ? Value(math::SqrtOp::create(nb, l, v[0]))
                  : logSum
                      ? Value(math::LogOp::create(nb, l, v[0]))
                      : Value(arith::AddFOp::create(
                            nb, l, math::LogOp::create(nb, l, v[0]), v[1]));
              linalg::YieldOp::create(nb, l, ValueRange{r});
            })
            .getResult(0));
  }
  if (!mean)
    return finish(sum);
  OpFoldResult count = b.getIndexAttr(1);
  for (int64_t d = 0; d < r; ++d)
    if (reduced[d])
      count = foldIndex('*', count, dimOf(x, d));
  Value inv;
  if (std::optional<int64_t> c = getConstantIntValue(count)) {
    inv = arith::ConstantOp::create(b, loc, b.getFloatAttr(elem, 1.0 / *c));
  } else {
    // 1 / count in f32, the type a float mean sums in (16-bit inputs were
    // converted above).
    Value i =
        arith::IndexCastOp::create(b, loc, b.getI64Type(), indexValue(count));
    Value f = arith::SIToFPOp::create(b, loc, elem, i);
    inv = arith::DivFOp::create(
        b, loc, arith::ConstantOp::create(b, loc, b.getFloatAttr(elem, 1.0)),
        f);
  }
  int64_t outRank = typeOf(sum).getRank();
  AffineMap id = b.getMultiDimIdentityMap(outRank);
  finish(linalg::GenericOp::create(
             b, loc, TypeRange{sum.getType()}, ValueRange{sum}, ValueRange{sum},
             ArrayRef<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(outRank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange v) {
               linalg::YieldOp::create(
                   nb, l, ValueRange{arith::MulFOp::create(nb, l, v[0], inv)});
             })
             .getResult(0));
}

/// CumSum along a constant axis (HF exports count positions with
/// attention_mask.cumsum(-1)): out[.., i, ..] = the sum of x[.., j, ..] over
/// j <= i (j < i when exclusive; j >= i, or j > i, when reverse), added
/// in the order of j (a scan, below), so the float result is that of the
/// sequential sum.
Value Importer::numberInput(const onnx::NodeProto &n) {
  Value x = input(n, 0);
  if (failed)
    return nullptr;
  Type elem = typeOf(x).getElementType();
  if (!isNumber(elem)) {
    nodeError(n) << "expects a float or integer tensor, got " << elem;
    return nullptr;
  }
  return x;
}

void Importer::importCumSum(const onnx::NodeProto &n) {
  Value x = numberInput(n);
  if (!x)
    return;
  auto axisK = knownInput(n, 1);
  if (failed)
    return;
  auto t = typeOf(x);
  int64_t r = t.getRank();
  Type elem = t.getElementType();
  std::optional<SmallVector<int64_t>> axisC;
  if (axisK)
    axisC = axisK->constants();
  if (!axisC || axisC->size() != 1) {
    nodeError(n) << "axis must be a constant scalar";
    return;
  }
  auto axis = normalizeAxis((*axisC)[0], r);
  if (!axis) {
    nodeError(n) << "axis " << (*axisC)[0] << " is out of range for rank " << r;
    return;
  }
  bool exclusive = intAttr(n, "exclusive", 0) != 0;
  bool reverse = intAttr(n, "reverse", 0) != 0;
  Location loc = nodeLoc(n);
  // 16-bit floats sum in f32.
  Type given = elem;
  x = convertElements(loc, x, sumType(elem));
  elem = typeOf(x).getElementType();
  // A scan: an scf.forall over the dims before the axis (one item when
  // there are none), and in each item an scf.for along the axis carrying
  // the running sums of the dims after it, element by element in loops
  // over those dims (the innermost, contiguous, is the vector loop), each
  // position written as it goes (the sum before the add, for exclusive).
  // A masked reduction over the whole axis per position, as before, was
  // O(n^2): [4, 512, 768] along axis 1 took 448 ms (ONNX Runtime: 0.34
  // ms). (Rows as linalg ops instead became a parallel region per position
  // once a single item's forall folded away: [1, 4096, 64] took 22-344 ms.)
  int64_t ax = *axis;
  SmallVector<OpFoldResult> sizes = sizesOf(x);
  // Nothing to scan in a static empty tensor.
  if (llvm::is_contained(t.getShape(), 0)) {
    define(n, 0, tensor::EmptyOp::create(b, loc, sizes, given).getResult());
    return;
  }
  SmallVector<OpFoldResult> items(sizes.begin(), sizes.begin() + ax);
  if (items.empty())
    items.push_back(b.getIndexAttr(1));
  SmallVector<OpFoldResult> rowSizes(sizes.begin() + ax + 1, sizes.end());
  SmallVector<int64_t> itemShape(t.getShape().begin() + ax, t.getShape().end());
  auto itemType = RankedTensorType::get(itemShape, elem);
  SmallVector<OpFoldResult> itemSizes(sizes.begin() + ax, sizes.end());
  Value len = indexValue(sizes[ax]);
  Value out = tensor::EmptyOp::create(b, loc, sizes, elem);
  auto forall =
      scf::ForallOp::create(b, loc, items, ValueRange{out}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    // The item: x[i0, .., i(axis-1), :, ...] as [n, row dims].
    SmallVector<OpFoldResult> offsets, itemSlice, ones(r, b.getIndexAttr(1));
    for (int64_t d = 0; d < r; ++d) {
      offsets.push_back(d < ax ? OpFoldResult(forall.getInductionVar(d))
                               : OpFoldResult(b.getIndexAttr(0)));
      itemSlice.push_back(d < ax ? OpFoldResult(b.getIndexAttr(1)) : sizes[d]);
    }
    Value xs = tensor::ExtractSliceOp::create(b, loc, itemType, x, offsets,
                                              itemSlice, ones);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value sumsInit =
        zeroFilled(loc, tensor::EmptyOp::create(b, loc, rowSizes, elem));
    Value itemInit = tensor::EmptyOp::create(b, loc, itemSizes, elem);
    SmallVector<Value> rowLengths;
    for (OpFoldResult size : rowSizes)
      rowLengths.push_back(indexValue(size));
    // Loops over the row dims from idx.size() on, carrying (sums, written).
    std::function<SmallVector<Value>(OpBuilder &, Location, Value,
                                     SmallVector<Value>, ValueRange)>
        rowLoops = [&](OpBuilder &nb, Location l, Value at,
                       SmallVector<Value> idx,
                       ValueRange iter) -> SmallVector<Value> {
      if (idx.size() == rowLengths.size()) {
        SmallVector<Value> xIdx{at};
        xIdx.append(idx);
        Value e = tensor::ExtractOp::create(nb, l, xs, xIdx);
        Value before = tensor::ExtractOp::create(nb, l, iter[0], idx);
        Value after = combineNumbers(nb, l, '+', before, e);
        Value sums = tensor::InsertOp::create(nb, l, after, iter[0], idx);
        Value written = tensor::InsertOp::create(
            nb, l, exclusive ? before : after, iter[1], xIdx);
        return {sums, written};
      }
      auto loop = scf::ForOp::create(
          nb, l, zero, rowLengths[idx.size()], one, iter,
          [&](OpBuilder &lb, Location ll, Value i, ValueRange inner) {
            SmallVector<Value> next = idx;
            next.push_back(i);
            scf::YieldOp::create(lb, ll, rowLoops(lb, ll, at, next, inner));
          });
      return SmallVector<Value>(loop.getResults());
    };
    auto scan = scf::ForOp::create(
        b, loc, zero, len, one, ValueRange{sumsInit, itemInit},
        [&](OpBuilder &nb, Location l, Value j, ValueRange iter) {
          Value at =
              reverse ? Value(arith::SubIOp::create(
                            nb, l, arith::SubIOp::create(nb, l, len, one), j))
                      : j;
          scf::YieldOp::create(nb, l, rowLoops(nb, l, at, {}, iter));
        });
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, scan.getResult(1),
                                          forall.getRegionIterArgs()[0],
                                          offsets, itemSlice, ones);
  }
  Value sums = forall.getResult(0);
  define(n, 0, convertElements(loc, sums, given));
}

/// From this K on, TopK does not keep a sorted buffer of K as it scans a
/// row: with a large K most elements enter the buffer and walk it (N x K
/// steps; a sort of [1, 32000] exported as TopK took 2.7 s). It sorts the
/// row's candidates instead (topKByThreshold), or the whole row.
constexpr int64_t kTopKSortFrom = 256;

std::pair<Value, Value> Importer::sortPairs(
    Location loc, Value vals, Value idxs, Value count,
    function_ref<Value(OpBuilder &, Location, Value, Value)> beats) {
  Type elem = typeOf(vals).getElementType();
  Type i64 = b.getI64Type();
  // Each pass writes new tensors of the input's size (`count` when that
  // is dynamic).
  int64_t cap = typeOf(vals).getDimSize(0);
  auto emptyLike = [&](OpBuilder &eb, Location el, Type type) -> Value {
    if (ShapedType::isDynamic(cap))
      return tensor::EmptyOp::create(eb, el, ArrayRef<int64_t>{cap}, type,
                                     ValueRange{count});
    return tensor::EmptyOp::create(eb, el, ArrayRef<int64_t>{cap}, type);
  };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value n = count;
  // ceil(log2(count)) passes: a constant for a constant count, else
  // 64 - ctlz(count - 1).
  Value passCount;
  if (std::optional<int64_t> known = getConstantIntValue(count)) {
    passCount =
        arith::ConstantIndexOp::create(b, loc, llvm::Log2_64_Ceil(*known));
  } else {
    Value countI64 = arith::IndexCastOp::create(b, loc, i64, count);
    Value lz = math::CountLeadingZerosOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, countI64,
                              arith::ConstantIntOp::create(b, loc, i64, 1)));
    passCount = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        arith::SubIOp::create(
            b, loc, arith::ConstantIntOp::create(b, loc, i64, 64), lz));
  }
  // Bottom-up: runs of 1, 2, 4, ... merged pairwise, each pass into new
  // tensors; a tie takes the left run's element, the lower index (stable).
  auto passes = scf::ForOp::create(
      b, loc, zero, passCount, one, ValueRange{vals, idxs},
      [&](OpBuilder &pb, Location pl, Value p, ValueRange src) {
        Value width = arith::ShLIOp::create(pb, pl, one, p);
        Value step = arith::ShLIOp::create(pb, pl, width, one);
        Value dv0 = emptyLike(pb, pl, elem);
        Value di0 = emptyLike(pb, pl, i64);
        auto merges = scf::ForOp::create(
            pb, pl, zero, n, step, ValueRange{dv0, di0},
            [&](OpBuilder &mb, Location ml, Value start, ValueRange dst) {
              Value mid = arith::MinUIOp::create(
                  mb, ml, arith::AddIOp::create(mb, ml, start, width), n);
              Value end = arith::MinUIOp::create(
                  mb, ml, arith::AddIOp::create(mb, ml, start, step), n);
              auto merge = scf::ForOp::create(
                  mb, ml, start, end, one,
                  ValueRange{dst[0], dst[1], start, mid},
                  [&](OpBuilder &ob, Location ol, Value o, ValueRange c) {
                    Value i = c[2], j = c[3];
                    Value iIn = arith::CmpIOp::create(
                        ob, ol, arith::CmpIPredicate::ult, i, mid);
                    Value jIn = arith::CmpIOp::create(
                        ob, ol, arith::CmpIPredicate::ult, j, end);
                    // (An exhausted run reads element 0, never taken.)
                    Value si = arith::SelectOp::create(ob, ol, iIn, i, zero);
                    Value sj = arith::SelectOp::create(ob, ol, jIn, j, zero);
                    Value vi = tensor::ExtractOp::create(ob, ol, src[0], si);
                    Value vj = tensor::ExtractOp::create(ob, ol, src[0], sj);
                    Value iOut = arith::CmpIOp::create(
                        ob, ol, arith::CmpIPredicate::uge, i, mid);
                    Value right = arith::AndIOp::create(
                        ob, ol, jIn,
                        arith::OrIOp::create(ob, ol, iOut,
                                             beats(ob, ol, vj, vi)));
                    Value at = arith::SelectOp::create(ob, ol, right, sj, si);
                    Value v = arith::SelectOp::create(ob, ol, right, vj, vi);
                    Value x = tensor::ExtractOp::create(ob, ol, src[1], at);
                    Value i1 = arith::AddIOp::create(ob, ol, i, one);
                    Value j1 = arith::AddIOp::create(ob, ol, j, one);
                    scf::YieldOp::create(
                        ob, ol,
                        ValueRange{
                            tensor::InsertOp::create(ob, ol, v, c[0], o),
                            tensor::InsertOp::create(ob, ol, x, c[1], o),
                            arith::SelectOp::create(ob, ol, right, i, i1),
                            arith::SelectOp::create(ob, ol, right, j1, j)});
                  });
              scf::YieldOp::create(
                  mb, ml, ValueRange{merge.getResult(0), merge.getResult(1)});
            });
        scf::YieldOp::create(pb, pl, merges.getResults());
      });
  return {passes.getResult(0), passes.getResult(1)};
}

std::pair<Value, Value> Importer::sortRow(
    Location loc, Value rows, ValueRange row, int64_t len,
    function_ref<Value(OpBuilder &, Location, Value, Value)> beats) {
  Type elem = typeOf(rows).getElementType();
  Type i64 = b.getI64Type();
  int64_t r = typeOf(rows).getRank();
  SmallVector<OpFoldResult> offsets(row.begin(), row.end()),
      sizes(r - 1, b.getIndexAttr(1)), ones(r, b.getIndexAttr(1));
  offsets.push_back(b.getIndexAttr(0));
  sizes.push_back(b.getIndexAttr(len));
  Value vals = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({len}, elem), rows, offsets, sizes, ones);
  Value idxs = tensor::GenerateOp::create(
      b, loc, RankedTensorType::get({len}, i64), ValueRange{},
      [&](OpBuilder &nb, Location l, ValueRange at) {
        tensor::YieldOp::create(nb, l,
                                arith::IndexCastOp::create(nb, l, i64, at[0]));
      });
  return sortPairs(loc, vals, idxs, arith::ConstantIndexOp::create(b, loc, len),
                   beats);
}

Value Importer::blockExtremes(Location loc, Value rows, ValueRange row,
                              int64_t blockLen, int64_t nBlocks, bool largest) {
  auto t = typeOf(rows);
  int64_t r = t.getRank();
  Type elem = t.getElementType();
  SmallVector<OpFoldResult> offsets(row.begin(), row.end()),
      sizes(row.size(), b.getIndexAttr(1)), ones(r, b.getIndexAttr(1));
  offsets.push_back(b.getIndexAttr(0));
  sizes.push_back(b.getIndexAttr(nBlocks * blockLen));
  Value whole = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({nBlocks * blockLen}, elem), rows, offsets,
      sizes, ones);
  Value blocks = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({nBlocks, blockLen}, elem), whole,
      ArrayRef<ReassociationIndices>{{0, 1}});
  // The start is the worst element there is: -inf for largest, NaN (which
  // minnumf passes over) for smallest, so that a block of NaN alone has NaN
  // as its extreme, not +inf, which would beat NaN.
  Value init =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{nBlocks}, elem);
  bool isFloat = isa<FloatType>(elem);
  if (auto ft = dyn_cast<FloatType>(elem); ft && !largest)
    init =
        linalg::FillOp::create(
            b, loc,
            ValueRange{arith::ConstantOp::create(
                b, loc,
                b.getFloatAttr(elem, APFloat::getNaN(ft.getFloatSemantics())))},
            ValueRange{init})
            .getResult(0);
  else
    init = extremeFilled(loc, init, largest);
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{blocks},
             ValueRange{init},
             ArrayRef<AffineMap>{
                 b.getMultiDimIdentityMap(2),
                 AffineMap::get(2, 0, getAffineDimExpr(0, ctx), ctx)},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location l, ValueRange v) {
               Value e = v[0], acc = v[1], best;
               if (!isFloat)
                 best = largest ? Value(arith::MaxSIOp::create(nb, l, acc, e))
                                : Value(arith::MinSIOp::create(nb, l, acc, e));
               else
                 best = largest
                            ? Value(arith::MaximumFOp::create(nb, l, acc, e))
                            : Value(arith::MinNumFOp::create(nb, l, acc, e));
               linalg::YieldOp::create(nb, l, best);
             })
      .getResult(0);
}

/// TopK's threshold path reads a row in blocks of at least this many
/// elements, and takes it only when the row has at least K of them.
constexpr int64_t kTopKThresholdBlock = 16;

std::pair<Value, Value> Importer::topKByThreshold(
    Location loc, Value rows, ValueRange row, int64_t k, bool largest,
    function_ref<Value(OpBuilder &, Location, Value, Value)> beats) {
  auto t = typeOf(rows);
  int64_t r = t.getRank(), len = t.getDimSize(r - 1);
  Type elem = t.getElementType(), i64 = b.getI64Type();
  // Blocks as long as leaves 2K to 4K of them: fewer extremes to sort, at
  // the price of more candidates from each block that passes.
  int64_t blockLen = kTopKThresholdBlock;
  while (len / (2 * blockLen) >= 2 * k)
    blockLen *= 2;
  int64_t nBlocks = len / blockLen;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // The K-th best block extreme: K blocks hold an element at least as good,
  // so the row's K best are all at least as good as it, the threshold.
  Value extremes = blockExtremes(loc, rows, row, blockLen, nBlocks, largest);
  Value blockIdxs =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{nBlocks}, i64);
  Value sortedExtremes =
      sortPairs(loc, extremes, zeroFilled(loc, blockIdxs),
                arith::ConstantIndexOp::create(b, loc, nBlocks), beats)
          .first;
  Value threshold = tensor::ExtractOp::create(
      b, loc, sortedExtremes,
      ValueRange{arith::ConstantIndexOp::create(b, loc, k - 1)});
  // The candidates, in row order: the elements the threshold does not beat
  // (ties included: the lower index among equal values must stay). A block
  // whose extreme the threshold beats holds none. Each element is written
  // at the count so far, which moves on only for a candidate (no branch).
  auto candidate = [&](OpBuilder &nb, Location l, Value v) -> Value {
    return arith::XOrIOp::create(nb, l, beats(nb, l, threshold, v),
                                 arith::ConstantIntOp::create(nb, l, 1, 1));
  };
  auto collect = [&](OpBuilder &nb, Location l, Value lo, Value hi,
                     ValueRange it) {
    return scf::ForOp::create(
               nb, l, lo, hi, one, it,
               [&](OpBuilder &eb, Location el, Value j, ValueRange c) {
                 SmallVector<Value> at(row.begin(), row.end());
                 at.push_back(j);
                 Value v = tensor::ExtractOp::create(eb, el, rows, at);
                 Value vals = tensor::InsertOp::create(eb, el, v, c[0], c[2]);
                 Value idxs = tensor::InsertOp::create(
                     eb, el, arith::IndexCastOp::create(eb, el, i64, j), c[1],
                     c[2]);
                 Value count = arith::AddIOp::create(
                     eb, el, c[2],
                     arith::IndexCastUIOp::create(eb, el, eb.getIndexType(),
                                                  candidate(eb, el, v)));
                 scf::YieldOp::create(eb, el, ValueRange{vals, idxs, count});
               })
        .getResults();
  };
  Value blockSize = arith::ConstantIndexOp::create(b, loc, blockLen);
  Value nBlocksIdx = arith::ConstantIndexOp::create(b, loc, nBlocks);
  // Room for the elements of the blocks that pass, and of the tail: sized
  // to them rather than to the row (each merge pass writes as much again).
  Value passing =
      scf::ForOp::create(
          b, loc, zero, nBlocksIdx, one, ValueRange{zero},
          [&](OpBuilder &nb, Location l, Value blk, ValueRange it) {
            Value extreme = tensor::ExtractOp::create(nb, l, extremes, blk);
            scf::YieldOp::create(
                nb, l,
                ValueRange{arith::AddIOp::create(
                    nb, l, it[0],
                    arith::IndexCastUIOp::create(nb, l, nb.getIndexType(),
                                                 candidate(nb, l, extreme)))});
          })
          .getResult(0);
  Value room = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, passing, blockSize),
      arith::ConstantIndexOp::create(b, loc, len - nBlocks * blockLen));
  SmallVector<Value> found{
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{ShapedType::kDynamic},
                              elem, ValueRange{room}),
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{ShapedType::kDynamic},
                              i64, ValueRange{room}),
      zero};
  auto blockScan = scf::ForOp::create(
      b, loc, zero, nBlocksIdx, one, found,
      [&](OpBuilder &nb, Location l, Value blk, ValueRange it) {
        Value extreme = tensor::ExtractOp::create(nb, l, extremes, blk);
        auto read = scf::IfOp::create(
            nb, l, candidate(nb, l, extreme),
            [&](OpBuilder &ib, Location il) {
              Value first = arith::MulIOp::create(ib, il, blk, blockSize);
              scf::YieldOp::create(
                  ib, il,
                  collect(ib, il, first,
                          arith::AddIOp::create(ib, il, first, blockSize), it));
            },
            [&](OpBuilder &ib, Location il) {
              scf::YieldOp::create(ib, il, it);
            });
        scf::YieldOp::create(nb, l, read.getResults());
      });
  ValueRange all = collect(
      b, loc, arith::ConstantIndexOp::create(b, loc, nBlocks * blockLen),
      arith::ConstantIndexOp::create(b, loc, len), blockScan.getResults());
  // The candidates sorted (at least K of them), the first K.
  Value count = all[2];
  SmallVector<Value> gathered;
  for (Value v : {all[0], all[1]})
    gathered.push_back(tensor::ExtractSliceOp::create(
        b, loc, v, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{count},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
  auto [vals, idxs] = sortPairs(loc, gathered[0], gathered[1], count, beats);
  SmallVector<Value> best;
  for (Value v : {vals, idxs})
    best.push_back(tensor::ExtractSliceOp::create(
        b, loc, v, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(k)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
  return {best[0], best[1]};
}

/// TopK's buffer scan reads a row in blocks of this many elements, each
/// with its extreme computed beforehand (a vectorized reduction): a block whose
/// extreme does not beat the buffer's last entry, once the buffer is full, is
/// passed over with one comparison. Rows of fewer than kTopKMinBlocks blocks
/// are scanned element by element.
constexpr int64_t kTopKBlock = 16;
constexpr int64_t kTopKMinBlocks = 4;

std::pair<Value, Value> Importer::topKByBuffer(
    Location loc, Value rows, ValueRange row, int64_t k, bool largest,
    function_ref<Value(OpBuilder &, Location, Value, Value)> beats) {
  auto t = typeOf(rows);
  int64_t r = t.getRank(), len = t.getDimSize(r - 1);
  Type elem = t.getElementType(), i64 = b.getI64Type();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value kIdx = arith::ConstantIndexOp::create(b, loc, k);
  Value kLast = arith::ConstantIndexOp::create(b, loc, k - 1);
  // Each block's extreme, per row (the row, read again by the scan, is
  // still in cache): see blockExtremes.
  int64_t nBlocks = len / kTopKBlock;
  Value blockBest;
  if (nBlocks >= kTopKMinBlocks)
    blockBest = blockExtremes(loc, rows, row, kTopKBlock, nBlocks, largest);
  // (Zeros: the scan compares with the last entry before the buffer is
  // full, and discards the answer; it should not read garbage.)
  Value vals0 = zeroFilled(
      loc, tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{k}, elem));
  Value idxs0 = zeroFilled(
      loc, tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{k}, i64));
  // Whether value v enters the buffer (vals, idxs, filled): it is not yet
  // full, or v beats its last entry.
  auto takes = [&](OpBuilder &nb, Location l, Value v, ValueRange buffer) {
    Value notFull = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult,
                                          buffer[2], kIdx);
    Value last = tensor::ExtractOp::create(nb, l, buffer[0], kLast);
    return arith::OrIOp::create(nb, l, notFull, beats(nb, l, v, last));
  };
  // Offers element j of the row to the buffer. One that enters goes after
  // the entries it does not beat (a prefix: the buffer is sorted), the
  // entries from there on move one down (the last one drops out of a full
  // buffer).
  auto offer = [&](OpBuilder &nb, Location l, Value j,
                   ValueRange buffer) -> SmallVector<Value> {
    SmallVector<Value> at = row;
    at.push_back(j);
    Value v = tensor::ExtractOp::create(nb, l, rows, at);
    Value filled = buffer[2];
    auto insert = scf::IfOp::create(
        nb, l, takes(nb, l, v, buffer),
        [&](OpBuilder &ib, Location il) {
          // (Both loops run over all K entries, without branches: LLVM
          // unrolls them for a small K, and a full buffer, the usual case,
          // takes K steps anyway.)
          Value pos =
              scf::ForOp::create(
                  ib, il, zero, kIdx, one, ValueRange{zero},
                  [&](OpBuilder &cb, Location cl, Value q, ValueRange count) {
                    Value entry =
                        tensor::ExtractOp::create(cb, cl, buffer[0], q);
                    Value before = arith::AndIOp::create(
                        cb, cl,
                        arith::CmpIOp::create(cb, cl, arith::CmpIPredicate::ult,
                                              q, filled),
                        arith::XOrIOp::create(
                            cb, cl, beats(cb, cl, v, entry),
                            arith::ConstantIntOp::create(cb, cl, 1, 1)));
                    scf::YieldOp::create(
                        cb, cl,
                        ValueRange{arith::AddIOp::create(
                            cb, cl, count[0],
                            arith::IndexCastUIOp::create(
                                cb, cl, cb.getIndexType(), before))});
                  })
                  .getResult(0);
          // Entry q, from the last to the first: the one before it past
          // pos, the new pair at pos, itself before pos.
          Value jI64 = arith::IndexCastOp::create(ib, il, i64, j);
          auto shift = scf::ForOp::create(
              ib, il, zero, kIdx, one, ValueRange{buffer[0], buffer[1]},
              [&](OpBuilder &sb, Location sl, Value s, ValueRange c) {
                Value q = arith::SubIOp::create(sb, sl, kLast, s);
                Value past = arith::CmpIOp::create(
                    sb, sl, arith::CmpIPredicate::ugt, q, pos);
                Value at = arith::CmpIOp::create(
                    sb, sl, arith::CmpIPredicate::eq, q, pos);
                // (q - 1 only when q > pos >= 0.)
                Value from = arith::SelectOp::create(
                    sb, sl, past, arith::SubIOp::create(sb, sl, q, one), q);
                SmallVector<Value> placed;
                for (auto [i, fresh] : llvm::enumerate(ValueRange{v, jI64})) {
                  Value kept = tensor::ExtractOp::create(sb, sl, c[i], from);
                  placed.push_back(tensor::InsertOp::create(
                      sb, sl, arith::SelectOp::create(sb, sl, at, fresh, kept),
                      c[i], q));
                }
                scf::YieldOp::create(sb, sl, placed);
              });
          scf::YieldOp::create(
              ib, il,
              ValueRange{shift.getResult(0), shift.getResult(1),
                         arith::MinUIOp::create(
                             ib, il, arith::AddIOp::create(ib, il, filled, one),
                             kIdx)});
        },
        [&](OpBuilder &ib, Location il) {
          scf::YieldOp::create(ib, il, buffer);
        });
    return SmallVector<Value>(insert.getResults());
  };
  auto offerRange = [&](OpBuilder &nb, Location l, Value lo, Value hi,
                        ValueRange buffer) {
    return scf::ForOp::create(
               nb, l, lo, hi, one, buffer,
               [&](OpBuilder &eb, Location el, Value j, ValueRange it) {
                 scf::YieldOp::create(eb, el, offer(eb, el, j, it));
               })
        .getResults();
  };
  SmallVector<Value> buffer{vals0, idxs0, zero};
  Value tailFrom = zero;
  if (blockBest) {
    Value blockSize = arith::ConstantIndexOp::create(b, loc, kTopKBlock);
    tailFrom = arith::ConstantIndexOp::create(b, loc, nBlocks * kTopKBlock);
    auto blockScan = scf::ForOp::create(
        b, loc, zero, arith::ConstantIndexOp::create(b, loc, nBlocks), one,
        buffer, [&](OpBuilder &nb, Location l, Value blk, ValueRange it) {
          Value extreme = tensor::ExtractOp::create(nb, l, blockBest, blk);
          auto read = scf::IfOp::create(
              nb, l, takes(nb, l, extreme, it),
              [&](OpBuilder &ib, Location il) {
                Value first = arith::MulIOp::create(ib, il, blk, blockSize);
                scf::YieldOp::create(
                    ib, il,
                    offerRange(ib, il, first,
                               arith::AddIOp::create(ib, il, first, blockSize),
                               it));
              },
              [&](OpBuilder &ib, Location il) {
                scf::YieldOp::create(ib, il, it);
              });
          scf::YieldOp::create(nb, l, read.getResults());
        });
    buffer.assign(blockScan.getResults().begin(), blockScan.getResults().end());
  }
  ValueRange best = offerRange(
      b, loc, tailFrom, arith::ConstantIndexOp::create(b, loc, len), buffer);
  return {best[0], best[1]};
}

/// TopK: the k largest (or smallest) elements along `axis` and their int64
/// indices, sorted best first, equal values by index (ONNX's tiebreak);
/// sorted=0 allows any order, and gets this one. NaN counts as larger than
/// every number, as torch.topk and NumPy's sort take it: first for largest,
/// last for smallest. K is the input (from opset 10) or the attribute k,
/// a constant; the axis a static size of at least K.
///
/// The axis is moved last by a transpose when it is not. Below K =
/// kTopKSortFrom each row keeps a sorted buffer of K (value, index) pairs
/// as it scans its elements in order (topKByBuffer); from there on, a row
/// of at least 16 K elements sorts only the elements that reach its
/// threshold (topKByThreshold), a shorter one is merge-sorted whole
/// (sortRow). The rows are an scf.forall.
void Importer::importTopK(const onnx::NodeProto &n) {
  if (opset >= 10 && (n.input_size() < 2 || n.input(1).empty())) {
    nodeError(n) << "needs input #1 (K), which is missing";
    return;
  }
  Value x = numberInput(n);
  if (!x)
    return;
  std::optional<KnownInts> kKnown;
  if (opset >= 10)
    kKnown = knownInput(n, 1);
  if (failed)
    return;
  auto t = typeOf(x);
  int64_t r = t.getRank();
  Type elem = t.getElementType();
  std::optional<SmallVector<int64_t>> kC;
  if (opset < 10)
    kC = SmallVector<int64_t>{intAttr(n, "k", -1)};
  else if (kKnown)
    kC = kKnown->constants();
  if (!kC || kC->size() != 1 || (*kC)[0] < 0) {
    nodeError(n) << "K must be a constant non-negative scalar";
    return;
  }
  int64_t k = (*kC)[0];
  auto axis = r > 0 ? normalizeAxis(intAttr(n, "axis", -1), r) : std::nullopt;
  if (!axis) {
    nodeError(n) << "axis " << intAttr(n, "axis", -1)
                 << " is out of range for rank " << r;
    return;
  }
  int64_t ax = *axis, len = t.getDimSize(ax);
  if (ShapedType::isDynamic(len) || len < k) {
    nodeError(n) << "the axis must have a static size of at least K = " << k
                 << ", got " << t;
    return;
  }
  bool largest = intAttr(n, "largest", 1) != 0;
  Location loc = nodeLoc(n);
  bool isFloat = isa<FloatType>(elem);
  Type i64 = b.getI64Type();
  // The axis last.
  SmallVector<int64_t> toLast;
  for (int64_t d = 0; d < r; ++d)
    if (d != ax)
      toLast.push_back(d);
  toLast.push_back(ax);
  auto permuted = [&](Value v, ArrayRef<int64_t> perm) -> Value {
    if (llvm::equal(perm, llvm::seq<int64_t>(0, r)))
      return v;
    SmallVector<OpFoldResult> from = sizesOf(v), sizes;
    for (int64_t d : perm)
      sizes.push_back(from[d]);
    Value init =
        tensor::EmptyOp::create(b, loc, sizes, typeOf(v).getElementType());
    return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
  };
  Value rows = permuted(x, toLast);
  SmallVector<OpFoldResult> sizes = sizesOf(rows);
  SmallVector<OpFoldResult> items(sizes.begin(), sizes.end() - 1);
  SmallVector<OpFoldResult> outSizes = items;
  outSizes.push_back(b.getIndexAttr(k));
  Value values, indices;
  if (k == 0 || llvm::is_contained(t.getShape(), 0)) {
    // Nothing to choose from, or nothing to choose: empty results.
    values = tensor::EmptyOp::create(b, loc, outSizes, elem);
    indices = tensor::EmptyOp::create(b, loc, outSizes, i64);
  } else {
    if (items.empty())
      items.push_back(b.getIndexAttr(1));
    // Whether value a beats value b (a later element never beats an equal
    // one: the lower index stays first).
    auto beats = [&](OpBuilder &nb, Location l, Value a, Value bv) -> Value {
      if (!isFloat)
        return arith::CmpIOp::create(nb, l,
                                     largest ? arith::CmpIPredicate::sgt
                                             : arith::CmpIPredicate::slt,
                                     a, bv);
      Value ordered = arith::CmpFOp::create(nb, l,
                                            largest ? arith::CmpFPredicate::OGT
                                                    : arith::CmpFPredicate::OLT,
                                            a, bv);
      // largest: a NaN beats a number; smallest: a number beats a NaN.
      auto is = [&](arith::CmpFPredicate p, Value v) -> Value {
        return arith::CmpFOp::create(nb, l, p, v, v);
      };
      using P = arith::CmpFPredicate;
      Value nanWins =
          arith::AndIOp::create(nb, l, is(largest ? P::UNO : P::ORD, a),
                                is(largest ? P::ORD : P::UNO, bv));
      return arith::OrIOp::create(nb, l, ordered, nanWins);
    };
    auto forall = scf::ForallOp::create(
        b, loc, items,
        ValueRange{tensor::EmptyOp::create(b, loc, outSizes, elem),
                   tensor::EmptyOp::create(b, loc, outSizes, i64)},
        std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    // (A rank-1 input's one row is a forall of 1 without a row index.)
    SmallVector<Value> row;
    for (int64_t d = 0; d + 1 < r; ++d)
      row.push_back(forall.getInductionVar(d));
    Value best[2];
    if (k >= kTopKSortFrom && len / kTopKThresholdBlock >= k) {
      // Large K, long rows: the candidates past a threshold, sorted.
      std::tie(best[0], best[1]) =
          topKByThreshold(loc, rows, row, k, largest, beats);
    } else if (k >= kTopKSortFrom) {
      // Large K: a stable merge sort of the whole row, the first K.
      std::tie(best[0], best[1]) = sortRow(loc, rows, row, len, beats);
      for (Value &v : best)
        v = tensor::ExtractSliceOp::create(
            b, loc, v, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(k)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    } else {
      std::tie(best[0], best[1]) =
          topKByBuffer(loc, rows, row, k, largest, beats);
    }
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> offsets(row.begin(), row.end()),
        slice(row.size(), b.getIndexAttr(1)), ones(r, b.getIndexAttr(1));
    offsets.push_back(b.getIndexAttr(0));
    slice.push_back(b.getIndexAttr(k));
    for (int i : {0, 1})
      tensor::ParallelInsertSliceOp::create(
          b, loc, best[i], forall.getRegionIterArgs()[i], offsets, slice, ones);
    values = forall.getResult(0);
    indices = forall.getResult(1);
  }
  // The axis back in its place.
  SmallVector<int64_t> back(r);
  for (int64_t d = 0; d < r; ++d)
    back[toLast[d]] = d;
  define(n, 0, permuted(values, back));
  define(n, 1, permuted(indices, back));
}

/// ArgMax and ArgMin along `axis` (int64 indices): the extreme, then the
/// index holding it (below). Ties take the first index, or the last
/// with select_last_index; a NaN is the extreme, its first (or last)
/// occurrence taken, as NumPy's argmax/argmin do.
void Importer::importArgExtreme(const onnx::NodeProto &n) {
  Value x = input(n, 0);
  if (failed)
    return;
  bool max = n.op_type() == "ArgMax";
  auto t = typeOf(x);
  int64_t r = t.getRank();
  Type elem = t.getElementType();
  bool isFloat = isa<FloatType>(elem);
  if (!isNumber(elem)) {
    nodeError(n) << "expects a float or integer tensor, got " << elem;
    return;
  }
  auto axis = normalizeAxis(intAttr(n, "axis", 0), r);
  if (!axis) {
    nodeError(n) << "axis " << intAttr(n, "axis", 0) << " is out of range";
    return;
  }
  if (!t.isDynamicDim(*axis) && t.getDimSize(*axis) == 0) {
    nodeError(n) << "axis " << *axis << " of " << t
                 << " is empty: it has no extreme";
    return;
  }
  bool keep = intAttr(n, "keepdims", 1) != 0;
  bool last = intAttr(n, "select_last_index", 0) != 0;
  Location loc = nodeLoc(n);
  if (t.isDynamicDim(*axis)) {
    // Empty while running: the call fails (index 0 would name no element).
    std::string slot = indexErrorSlot(n, "the axis it reduces");
    Value size = indexValue(dimOf(x, *axis));
    checkFailsIf(
        b, loc, slot,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size,
                              arith::ConstantIndexOp::create(b, loc, 0)),
        kHitEmptyAxis, arith::ConstantIndexOp::create(b, loc, *axis), size);
  }
  SmallVector<OpFoldResult> sizes;
  SmallVector<bool> reduced(r, false);
  reduced[*axis] = true;
  for (int64_t d = 0; d < r; ++d) {
    if (d != *axis)
      sizes.push_back(dimOf(x, d));
    else if (keep)
      sizes.push_back(b.getIndexAttr(1));
  }
  // Two passes the vector code takes, instead of one carrying the pair
  // (best, index) through two selects per element, which stayed scalar
  // ([1, 128, 50257] along the last axis: 31 ms; ONNX Runtime: 2.7 ms):
  // the extreme (NaN propagating: a NaN is the extreme), then the first (or
  // last) index that holds it, a min (max) over the indices whose element
  // equals the extreme (is NaN, where the extreme is).
  ReductionLoops loops = reductionLoops(reduced, keep, t.getShape());
  Value best = extremeFilled(loc, tensor::EmptyOp::create(b, loc, sizes, elem),
                             /*lowest=*/max);
  Value extreme =
      linalg::GenericOp::create(
          b, loc, TypeRange{best.getType()}, ValueRange{x}, ValueRange{best},
          SmallVector<AffineMap>{loops.in, loops.out}, loops.iters,
          [&](OpBuilder &nb, Location l, ValueRange v) {
            linalg::YieldOp::create(
                nb, l, combineNumbers(nb, l, max ? 'M' : 'm', v[1], v[0]));
          })
          .getResult(0);
  int64_t none = last ? -1 : std::numeric_limits<int64_t>::max();
  Value index =
      linalg::FillOp::create(
          b, loc,
          ValueRange{
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(none))},
          ValueRange{tensor::EmptyOp::create(b, loc, sizes, b.getI64Type())})
          .getResult(0);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{index.getType()}, ValueRange{x, extreme},
      ValueRange{index}, SmallVector<AffineMap>{loops.in, loops.out, loops.out},
      loops.iters, [&](OpBuilder &nb, Location l, ValueRange v) {
        Value e = v[0], m = v[1], acc = v[2];
        Value hit;
        if (isFloat) {
          Value mNaN =
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, m, m);
          Value eNaN =
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO, e, e);
          hit = arith::SelectOp::create(
              nb, l, mNaN, eNaN,
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, e, m));
        } else {
          hit = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, e, m);
        }
        Value i = arith::IndexCastOp::create(
            nb, l, nb.getI64Type(),
            linalg::IndexOp::create(nb, l, loops.loopOf[*axis]));
        Value candidate = arith::SelectOp::create(
            nb, l, hit, i,
            arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(none)));
        linalg::YieldOp::create(
            nb, l, combineNumbers(nb, l, last ? 'M' : 'm', acc, candidate));
      });
  define(n, 0, op.getResult(0));
}

/// LayerNormalization (opset 17): Y = (X - mean) / sqrt(var + epsilon) *
/// Scale + B over the dims from `axis` on, the statistics in f32 whatever
/// X's float type (stash_type 1, ONNX's default). Two reductions (the sum,
/// then the sum of squared deviations: no cancellation of E[x^2] - mean^2),
/// the mean and 1 / sqrt(var + epsilon) once per row, and one elementwise
/// pass; Scale and B broadcast along the trailing dims.
/// The Mean and InvStdDev outputs (training) are refused.
void Importer::importLayerNormalization(const onnx::NodeProto &n) {
  Value x = input(n, 0), scale = input(n, 1);
  Value bias =
      n.input_size() > 2 && !n.input(2).empty() ? input(n, 2) : Value();
  if (failed)
    return;
  if (wantsOutput(n, 1) || wantsOutput(n, 2)) {
    nodeError(n) << "the Mean and InvStdDev outputs are not supported "
                    "(inference uses Y only)";
    return;
  }
  auto xt = typeOf(x);
  Type elem = xt.getElementType();
  int64_t r = xt.getRank();
  if (!isa<FloatType>(elem)) {
    nodeError(n) << "expects a float tensor, got " << elem;
    return;
  }
  int64_t axis = intAttr(n, "axis", -1);
  if (axis < -r || axis >= r) {
    nodeError(n) << "axis " << axis << " is out of range for rank " << r;
    return;
  }
  if (axis < 0)
    axis += r;
  if (intAttr(n, "stash_type", 1) != 1) {
    nodeError(n) << "stash_type " << intAttr(n, "stash_type", 1)
                 << " is not supported (1: statistics in f32)";
    return;
  }
  float epsilon = floatAttr(n, "epsilon").value_or(1e-5f);
  // Scale and B: at most the normalized dims, aligned at the end; a static
  // 1 broadcasts.
  SmallVector<AffineMap> paramMaps;
  for (Value p : {scale, bias}) {
    if (!p)
      continue;
    auto pt = typeOf(p);
    if (pt.getElementType() != elem || pt.getRank() > r - axis) {
      nodeError(n) << "Scale and B must be " << elem << " tensors of at most "
                   << r - axis << " dims (the normalized ones), got " << pt;
      return;
    }
    SmallVector<AffineExpr> exprs;
    for (int64_t j = 0, rp = pt.getRank(); j < rp; ++j) {
      int64_t d = r - rp + j;
      if (pt.getDimSize(j) == 1 && xt.getDimSize(d) != 1) {
        exprs.push_back(b.getAffineConstantExpr(0));
      } else if (!ShapedType::isDynamic(pt.getDimSize(j)) &&
                 ShapedType::isDynamic(xt.getDimSize(d))) {
        // Nothing would check at run time that X's size matches.
        nodeError(n) << "X's dim " << d
                     << " is dynamic but Scale/B give it the size "
                     << pt.getDimSize(j)
                     << ": the normalized dims must be static";
        return;
      } else if (!ShapedType::isDynamic(pt.getDimSize(j)) &&
                 pt.getDimSize(j) != xt.getDimSize(d)) {
        nodeError(n) << "Scale/B dim " << j << " is " << pt.getDimSize(j)
                     << " but X's dim " << d << " is " << xt.getDimSize(d);
        return;
      } else {
        exprs.push_back(b.getAffineDimExpr(d));
      }
    }
    paramMaps.push_back(AffineMap::get(r, 0, exprs, ctx));
  }
  Location loc = nodeLoc(n);
  Type f32 = b.getF32Type();
  auto widen = [&](OpBuilder &nb, Location l, Value v) {
    return v.getType() == f32 ? v : arith::ExtFOp::create(nb, l, f32, v);
  };
  // A 16-bit X is converted once, up front: the statistics' reductions
  // then read f32 (widened element by element inside them, they were
  // scalar code).
  x = convertElements(loc, x, f32);
  // The statistics: one f32 per row of the leading dims.
  SmallVector<OpFoldResult> rowSizes;
  SmallVector<AffineExpr> rowExprs;
  for (int64_t d = 0; d < axis; ++d) {
    rowSizes.push_back(dimOf(x, d));
    rowExprs.push_back(b.getAffineDimExpr(d));
  }
  AffineMap identity = b.getMultiDimIdentityMap(r);
  AffineMap rowMap = AffineMap::get(r, 0, rowExprs, ctx);
  SmallVector<utils::IteratorType> reduceIters;
  for (int64_t d = 0; d < r; ++d)
    reduceIters.push_back(d < axis ? utils::IteratorType::parallel
                                   : utils::IteratorType::reduction);
  auto zeros = [&]() {
    Value init = tensor::EmptyOp::create(b, loc, rowSizes, f32);
    return linalg::FillOp::create(b, loc,
                                  ValueRange{arith::ConstantOp::create(
                                      b, loc, b.getF32FloatAttr(0))},
                                  ValueRange{init})
        .getResult(0);
  };
  // The element count of a row, as f32.
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = axis; d < r; ++d)
    count = arith::MulIOp::create(b, loc, count, indexValue(dimOf(x, d)));
  Value countF = arith::SIToFPOp::create(
      b, loc, f32, arith::IndexCastOp::create(b, loc, b.getI64Type(), count));
  Value sumInit = zeros();
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{sumInit.getType()}, ValueRange{x},
          ValueRange{sumInit}, ArrayRef<AffineMap>{identity, rowMap},
          reduceIters,
          [&](OpBuilder &nb, Location l, ValueRange v) {
            linalg::YieldOp::create(nb, l,
                                    ValueRange{arith::AddFOp::create(
                                        nb, l, v[1], widen(nb, l, v[0]))});
          })
          .getResult(0);
  // Per row: mean = sum / count, then inv = 1 / sqrt(var + epsilon), each
  // computed once per row rather than for every element.
  SmallVector<utils::IteratorType> rowIters(axis,
                                            utils::IteratorType::parallel);
  AffineMap rowIdentity = b.getMultiDimIdentityMap(axis);
  auto perRow = [&](Value in,
                    function_ref<Value(OpBuilder &, Location, Value)> fn) {
    Value init = tensor::EmptyOp::create(b, loc, rowSizes, f32);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, ValueRange{in},
               ValueRange{init}, ArrayRef<AffineMap>{rowIdentity, rowIdentity},
               rowIters,
               [&](OpBuilder &nb, Location l, ValueRange v) {
                 linalg::YieldOp::create(nb, l, ValueRange{fn(nb, l, v[0])});
               })
        .getResult(0);
  };
  Value mean = perRow(sum, [&](OpBuilder &nb, Location l, Value s) -> Value {
    return arith::DivFOp::create(nb, l, s, countF);
  });
  Value squares =
      linalg::GenericOp::create(
          b, loc, TypeRange{sum.getType()}, ValueRange{x, mean},
          ValueRange{zeros()}, ArrayRef<AffineMap>{identity, rowMap, rowMap},
          reduceIters,
          [&](OpBuilder &nb, Location l, ValueRange v) {
            Value dev = arith::SubFOp::create(nb, l, widen(nb, l, v[0]), v[1]);
            linalg::YieldOp::create(
                nb, l,
                ValueRange{arith::AddFOp::create(
                    nb, l, v[2], arith::MulFOp::create(nb, l, dev, dev))});
          })
          .getResult(0);
  Value eps = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(epsilon));
  Value inv =
      perRow(squares, [&](OpBuilder &nb, Location l, Value sq) -> Value {
        Value var = arith::DivFOp::create(nb, l, sq, countF);
        return math::RsqrtOp::create(nb, l,
                                     arith::AddFOp::create(nb, l, var, eps));
      });
  SmallVector<Value> ins{x, mean, inv, scale};
  SmallVector<AffineMap> maps{identity, rowMap, rowMap, paramMaps[0]};
  if (bias) {
    ins.push_back(bias);
    maps.push_back(paramMaps[1]);
  }
  maps.push_back(identity);
  Value init = tensor::EmptyOp::create(b, loc, sizesOf(x), elem);
  SmallVector<utils::IteratorType> parallel(r, utils::IteratorType::parallel);
  Value y =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
          parallel,
          [&](OpBuilder &nb, Location l, ValueRange v) {
            Value normed = arith::MulFOp::create(
                nb, l, arith::SubFOp::create(nb, l, widen(nb, l, v[0]), v[1]),
                v[2]);
            Value out =
                arith::MulFOp::create(nb, l, normed, widen(nb, l, v[3]));
            if (bias)
              out = arith::AddFOp::create(nb, l, out, widen(nb, l, v[4]));
            if (elem != f32)
              out = arith::TruncFOp::create(nb, l, elem, out);
            linalg::YieldOp::create(nb, l, ValueRange{out});
          })
          .getResult(0);
  define(n, 0, y);
}

/// NumPy matmul: [..., M, K] x [..., K, N] with broadcast batch dims (a
/// 2-D right operand is shared by every batch).
Value Importer::zeroFilled(Location loc, Value init) {
  Type elem = typeOf(init).getElementType();
  return linalg::FillOp::create(
             b, loc,
             ValueRange{arith::ConstantOp::create(b, loc, b.getZeroAttr(elem))},
             ValueRange{init})
      .getResult(0);
}

Value Importer::extremeFilled(Location loc, Value init, bool lowest) {
  Type elem = typeOf(init).getElementType();
  TypedAttr start;
  if (auto ft = dyn_cast<FloatType>(elem))
    start = b.getFloatAttr(
        elem, APFloat::getInf(ft.getFloatSemantics(), /*Negative=*/lowest));
  else
    start = b.getIntegerAttr(
        elem, lowest ? APInt::getSignedMinValue(elem.getIntOrFloatBitWidth())
                     : APInt::getSignedMaxValue(elem.getIntOrFloatBitWidth()));
  return linalg::FillOp::create(
             b, loc, ValueRange{arith::ConstantOp::create(b, loc, start)},
             ValueRange{init})
      .getResult(0);
}

void Importer::importMatMul(const onnx::NodeProto &n) {
  Value a = input(n, 0), w = input(n, 1);
  if (failed)
    return;
  auto at = typeOf(a), wt = typeOf(w);
  if (at.getRank() < 1 || wt.getRank() < 1) {
    nodeError(n) << "operands must have rank 1 or more, got " << at << " and "
                 << wt;
    return;
  }
  Type elem = at.getElementType();
  if (wt.getElementType() != elem || !isNumber(elem)) {
    nodeError(n) << "operands must be of one float or (non-bool) integer "
                    "element type, got "
                 << at << " and " << wt;
    return;
  }
  bool isFloat = isa<FloatType>(elem);
  // The inner sizes, taken before a vector operand gets its unit dim.
  OpFoldResult innerA = dimOf(a, at.getRank() - 1),
               innerW = dimOf(w, wt.getRank() == 1 ? 0 : wt.getRank() - 2);
  // A 1-D operand is a row (a) or a column (w) for the product, and that
  // unit dim is removed from the result, as numpy.matmul does.
  bool aVector = at.getRank() == 1, wVector = wt.getRank() == 1;
  RankedTensorType givenA = at, givenW = wt; // for messages
  auto withUnitDim = [&](Value v, bool front) -> Value {
    auto t = typeOf(v);
    SmallVector<int64_t> shape{t.getDimSize(0)};
    SmallVector<OpFoldResult> sizes{dimOf(v, 0)};
    shape.insert(front ? shape.begin() : shape.end(), 1);
    sizes.insert(front ? sizes.begin() : sizes.end(), b.getIndexAttr(1));
    SmallVector<bool> isUnit{front, !front};
    return tensor::ExpandShapeOp::create(
        b, nodeLoc(n), RankedTensorType::get(shape, t.getElementType()), v,
        unitGroups(2, isUnit), sizes);
  };
  if (aVector)
    at = typeOf(a = withUnitDim(a, /*front=*/true));
  if (wVector)
    wt = typeOf(w = withUnitDim(w, /*front=*/false));
  int64_t ka = at.getDimSize(at.getRank() - 1),
          kb = wt.getDimSize(wt.getRank() - 2);
  bool batchOk = true;
  for (int64_t i = 3; i <= std::min(at.getRank(), wt.getRank()); ++i) {
    int64_t x = at.getDimSize(at.getRank() - i),
            y = wt.getDimSize(wt.getRank() - i);
    batchOk &= x == y || x == 1 || y == 1 || ShapedType::isDynamic(x) ||
               ShapedType::isDynamic(y);
  }
  if ((!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb) ||
      !batchOk) {
    InFlightDiagnostic d = nodeError(n);
    d << "operand shapes " << givenA << " and " << givenW
      << " do not multiply: ";
    if (batchOk)
      d << "inner dims " << ka << " and " << kb << " differ";
    else
      d << "batch dims do not broadcast";
    return;
  }
  // Sizes that may differ at run time would read past an operand's end.
  if (!isEqualConstantIntOrValue(innerA, innerW)) {
    nodeError(n) << "cannot tell whether the inner dims of " << givenA
                 << " and " << givenW << " are equal: give equal dynamic "
                 << "dims one dim_param name, or static sizes";
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
      sizes.push_back(dimOf(a, ai));
    else if (wi >= 0)
      sizes.push_back(dimOf(w, wi));
    else
      sizes.push_back(b.getIndexAttr(1));
    // The other operand's batch dim must be 1 or this size (a dynamic one
    // that is neither provably could broadcast at run time).
    for (auto [v, vt, vi] :
         {std::make_tuple(a, at, ai), std::make_tuple(w, wt, wi)})
      if (vi >= 0 && vt.getDimSize(vi) != 1 &&
          !isEqualConstantIntOrValue(dimOf(v, vi), sizes.back())) {
        nodeError(n) << "cannot tell whether batch dim " << x << " of "
                     << givenA << " and " << givenW
                     << " broadcasts: give equal dynamic dims one dim_param "
                     << "name, or static sizes";
        return;
      }
  }
  sizes.push_back(dimOf(a, at.getRank() - 2));
  sizes.push_back(dimOf(w, wt.getRank() - 1));
  // 16-bit floats sum in f32 (a 16-bit running sum stops growing: past
  // 2048 an f16 sum no longer adds values below 1): the operands are
  // converted first, so the product is an f32 one, which the CPU
  // pipeline's contraction kernels take (O(m k + k n) conversions for
  // O(m n k) products; for one row, a decode step, converting a constant
  // weight on each call dominates: [1, 4096] x [4096, 4096] in f16 takes
  // about 2.2x the f32 product's time).
  Type acc = sumType(elem);
  a = convertElements(loc, a, acc);
  w = convertElements(loc, w, acc);
  Value init = tensor::EmptyOp::create(b, loc, sizes, acc);
  init = zeroFilled(loc, init);
  SmallVector<utils::IteratorType> iters(nl, utils::IteratorType::parallel);
  iters[kd] = utils::IteratorType::reduction;
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{a, w}, ValueRange{init},
          SmallVector<AffineMap>{operandMap(at, true), operandMap(wt, false),
                                 AffineMap::get(
                                     nl, 0,
                                     [&] {
                                       SmallVector<AffineExpr> e;
                                       for (int64_t x = 0; x < r; ++x)
                                         e.push_back(b.getAffineDimExpr(x));
                                       return e;
                                     }(),
                                     ctx)},
          iters,
          [&](OpBuilder &nb, Location l, ValueRange v) {
            Value sum = isFloat
                            ? Value(arith::AddFOp::create(
                                  nb, l, v[2],
                                  arith::MulFOp::create(nb, l, v[0], v[1])))
                            : Value(arith::AddIOp::create(
                                  nb, l, v[2],
                                  arith::MulIOp::create(nb, l, v[0], v[1])));
            linalg::YieldOp::create(nb, l, ValueRange{sum});
          })
          .getResult(0);
  out = convertElements(loc, out, elem);
  if (aVector || wVector) {
    auto ot = typeOf(out);
    SmallVector<bool> drop(r, false);
    drop[r - 2] = aVector;
    drop[r - 1] = wVector;
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < r; ++i)
      if (!drop[i])
        shape.push_back(ot.getDimSize(i));
    out = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get(shape, elem), out, unitGroups(r, drop));
  }
  define(n, 0, out);
}

void Importer::einsumSizeMismatch(const onnx::NodeProto &n, StringRef equation,
                                  char letter, OpFoldResult x, OpFoldResult y) {
  auto a = getConstantIntValue(x), c = getConstantIntValue(y);
  InFlightDiagnostic diag = nodeError(n);
  diag << "equation '" << equation << "': ";
  if (letter == '.')
    diag << "the '...' dims have";
  else
    diag << "letter '" << letter << "' has";
  auto show = [](std::optional<int64_t> v) {
    return v ? std::to_string(*v) : std::string("dynamic");
  };
  if (a && c)
    diag << " sizes " << *a << " and " << *c;
  else
    diag << " sizes that may differ (" << show(a) << " and " << show(c)
         << "): give equal dynamic dims one dim_param name, or static sizes";
}

void Importer::importEinsum(const onnx::NodeProto &n) {
  const onnx::AttributeProto *eq = attr(n, "equation");
  if (!eq || !eq->has_s()) {
    nodeError(n) << "needs the 'equation' attribute";
    return;
  }
  std::string text;
  for (char c : eq->s())
    if (c != ' ')
      text += c;
  SmallVector<Value> ops;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      nodeError(n) << "input #" << i << " is missing";
      return;
    }
    ops.push_back(input(n, i));
  }
  if (failed)
    return;
  // Subscripts: letters, and "..." for the dims numpy broadcasts (marked
  // '.' here, once per operand).
  size_t arrow = text.find("->");
  std::string lhs = text.substr(0, arrow);
  SmallVector<std::string> terms;
  for (StringRef t : llvm::split(StringRef(lhs), ','))
    terms.push_back(t.str());
  auto parse = [&](std::string t, std::string &out) {
    out.clear();
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 3, "...") == 0 && out.find('.') == std::string::npos) {
        out += '.';
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(t[i]))) {
        out += t[i];
      } else {
        return false;
      }
    }
    return true;
  };
  if (terms.size() != ops.size()) {
    nodeError(n) << "equation '" << eq->s() << "' has " << terms.size()
                 << " operand terms for " << ops.size() << " inputs";
    return;
  }
  Type elem = typeOf(ops[0]).getElementType();
  int64_t ellipsis = 0; // dims the ellipsis stands for (the most of any)
  SmallVector<std::string> subs(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    auto t = typeOf(ops[i]);
    if (!parse(terms[i], subs[i])) {
      nodeError(n) << "equation '" << eq->s() << "': term '" << terms[i]
                   << "' has a character that is not a letter or '...'";
      return;
    }
    if (t.getElementType() != elem) {
      nodeError(n) << "inputs must have one element type, got "
                   << t.getElementType() << " and " << elem;
      return;
    }
    int64_t letters = llvm::count_if(subs[i], [](char c) { return c != '.'; });
    bool hasDots = subs[i].find('.') != std::string::npos;
    if (hasDots ? letters > t.getRank() : letters != t.getRank()) {
      nodeError(n) << "equation '" << eq->s() << "': term '" << terms[i]
                   << "' does not fit input #" << i << " of type " << t;
      return;
    }
    if (hasDots)
      ellipsis = std::max(ellipsis, t.getRank() - letters);
  }
  // The output term: given, or (numpy's implicit form) the ellipsis and the
  // letters used once, in alphabetical order.
  std::string outSub;
  if (arrow != std::string::npos) {
    if (!parse(text.substr(arrow + 2), outSub)) {
      nodeError(n) << "equation '" << eq->s()
                   << "': the output term has a character that is not a "
                      "letter or '...'";
      return;
    }
  } else {
    std::map<char, int> uses;
    bool dots = false;
    for (const std::string &s : subs)
      for (char c : s)
        c == '.' ? void(dots = true) : void(++uses[c]);
    if (dots)
      outSub += '.';
    for (auto [c, k] : uses)
      if (k == 1)
        outSub += c;
  }
  // (NumPy: a '...' of no dims may be left out of the output, or added.)
  if (ellipsis > 0 && outSub.find('.') == std::string::npos) {
    nodeError(n) << "equation '" << eq->s() << "': '...' stands for "
                 << ellipsis << " dim(s) of the inputs, which the output "
                 << "term must keep ('...' in it)";
    return;
  }
  // Loops: the output's (letters and the ellipsis dims), then the summed
  // letters.
  std::map<char, unsigned> loopOf;
  unsigned nl = 0, ellipsisStart = 0;
  SmallVector<unsigned> outLoops;
  for (char c : outSub) {
    if (c == '.') {
      ellipsisStart = nl;
      for (int64_t e = 0; e < ellipsis; ++e)
        outLoops.push_back(nl++);
      continue;
    }
    bool used = llvm::any_of(subs, [&](const std::string &s) {
      return s.find(c) != std::string::npos;
    });
    if (!used || loopOf.count(c)) {
      nodeError(n) << "equation '" << eq->s() << "': output letter '" << c
                   << "' is " << (used ? "repeated" : "in no input");
      return;
    }
    loopOf[c] = nl;
    outLoops.push_back(nl++);
  }
  for (const std::string &s : subs)
    for (char c : s)
      if (c != '.' && !loopOf.count(c))
        loopOf[c] = nl++;
  // Each loop's size: from an operand dim that is not a broadcast 1, and
  // equal wherever else it appears. As in NumPy, an operand's dims of size
  // 1 broadcast against the other operands' (a "..." dim, or a letter all
  // of whose dims in this operand are 1: not a diagonal of 1 by n).
  SmallVector<OpFoldResult> loopSize(nl);
  SmallVector<SmallVector<AffineExpr>> exprs(ops.size());
  Location loc = nodeLoc(n);
  for (size_t i = 0; i < ops.size(); ++i) {
    auto t = typeOf(ops[i]);
    int64_t letters = llvm::count_if(subs[i], [](char c) { return c != '.'; });
    int64_t dots = t.getRank() - letters, dim = 0;
    // Whether every dim of letter `c` in this operand is 1.
    auto unitLetter = [&](char c) {
      int64_t at = 0;
      for (char x : subs[i]) {
        if (x == c && t.getDimSize(at) != 1)
          return false;
        at += x == '.' ? dots : 1;
      }
      return true;
    };
    for (char c : subs[i]) {
      SmallVector<std::pair<int64_t, unsigned>> dimLoops;
      if (c == '.') {
        // Right-aligned against the widest ellipsis, numpy's broadcasting.
        for (int64_t e = 0; e < dots; ++e)
          dimLoops.push_back({dim + e, ellipsisStart + ellipsis - dots + e});
      } else {
        dimLoops.push_back({dim, loopOf[c]});
      }
      for (auto [d, loop] : dimLoops) {
        bool broadcast = t.getDimSize(d) == 1 && (c == '.' || unitLetter(c));
        exprs[i].push_back(broadcast ? b.getAffineConstantExpr(0)
                                     : b.getAffineDimExpr(loop));
        if (broadcast)
          continue;
        OpFoldResult size = dimOf(ops[i], d);
        if (!loopSize[loop]) {
          loopSize[loop] = size;
        } else if (!isEqualConstantIntOrValue(loopSize[loop], size)) {
          einsumSizeMismatch(n, eq->s(), c, loopSize[loop], size);
          return;
        }
      }
      dim += c == '.' ? dots : 1;
    }
  }
  for (unsigned l = 0; l < nl; ++l)
    if (!loopSize[l])
      loopSize[l] = b.getIndexAttr(1); // a dim every operand broadcasts
  SmallVector<AffineMap> maps;
  for (auto &e : exprs)
    maps.push_back(AffineMap::get(nl, 0, e, ctx));
  SmallVector<AffineExpr> outExprs;
  SmallVector<OpFoldResult> outSizes;
  SmallVector<utils::IteratorType> iters(nl, utils::IteratorType::reduction);
  for (unsigned l : outLoops) {
    outExprs.push_back(b.getAffineDimExpr(l));
    outSizes.push_back(loopSize[l]);
    iters[l] = utils::IteratorType::parallel;
  }
  maps.push_back(AffineMap::get(nl, 0, outExprs, ctx));
  bool isFloat = isa<FloatType>(elem);
  if (!isNumber(elem)) {
    nodeError(n) << "unsupported element type " << elem;
    return;
  }
  if (Value product =
          einsumAsMatrixProduct(loc, ops, subs, outSub, loopOf, loopSize)) {
    define(n, 0, product);
    return;
  }
  // Without summed loops (an outer product, a transpose) each output
  // element is one product: no zero fill to add it to.
  bool sums = outLoops.size() < nl;
  // 16-bit floats sum (and multiply) in f32.
  Type acc = sums ? sumType(elem) : elem;
  Value init = tensor::EmptyOp::create(b, loc, outSizes, acc);
  if (sums)
    init = zeroFilled(loc, init);
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ops, ValueRange{init}, maps, iters,
          [&](OpBuilder &nb, Location l, ValueRange v) {
            Value p = convertScalar(nb, l, v[0], acc);
            for (size_t i = 1; i + 1 < v.size(); ++i) {
              Value x = convertScalar(nb, l, v[i], acc);
              p = isFloat ? Value(arith::MulFOp::create(nb, l, p, x))
                          : Value(arith::MulIOp::create(nb, l, p, x));
            }
            if (sums)
              p = isFloat ? Value(arith::AddFOp::create(nb, l, v.back(), p))
                          : Value(arith::AddIOp::create(nb, l, v.back(), p));
            linalg::YieldOp::create(nb, l, ValueRange{p});
          })
          .getResult(0);
  define(n, 0, convertElements(loc, out, elem));
}

static Value transposedConstant(OpBuilder &b, Location loc, Value x,
                                ArrayRef<int64_t> perm);

Value Importer::einsumAsMatrixProduct(Location loc, ArrayRef<Value> ops,
                                      ArrayRef<std::string> subs,
                                      const std::string &outSub,
                                      const std::map<char, unsigned> &loopOf,
                                      ArrayRef<OpFoldResult> loopSize) {
  // (One matrix product with one letter per group is the graph-level
  // rewrite's, einsumsAsMatMuls; this takes the rest: "bthd,hdc->btc",
  // "btc,chd->bthd". As one generic with several summed loops it missed
  // the contraction kernels: 248 ms where ONNX Runtime takes 3.4 ms.)
  if (ops.size() != 2)
    return Value();
  const std::string &a = subs[0], &w = subs[1];
  std::optional<EinsumGroups> groups = einsumGroups(a, w, outSub);
  if (!groups)
    return Value();
  const std::string &batch = groups->batch, &rows = groups->rows,
                    &cols = groups->cols, &summed = groups->summed;
  if (rows.empty() || cols.empty() || summed.empty() ||
      (rows.size() == 1 && cols.size() == 1 && summed.size() == 1))
    return Value();
  auto elemOf = [&](Value v) { return typeOf(v).getElementType(); };
  Type elem = elemOf(ops[0]);
  if (!isa<FloatType>(elem))
    return Value();
  // No dim of size 1 broadcast against a larger one: every dim of a letter
  // has its loop's size.
  for (size_t i = 0; i < 2; ++i)
    for (auto [d, c] : llvm::enumerate(subs[i]))
      if (!isEqualConstantIntOrValue(dimOf(ops[i], d), loopSize[loopOf.at(c)]))
        return Value();
  // `v` (letters `from`) in the order `to`, its groups (sizes of letters)
  // collapsed to one dim each.
  auto arrange = [&](Value v, const std::string &from,
                     ArrayRef<std::string> groups) -> Value {
    std::string to;
    for (const std::string &g : groups)
      to += g;
    SmallVector<int64_t> perm;
    for (char c : to)
      perm.push_back(static_cast<int64_t>(from.find(c)));
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      Value folded = transposedConstant(b, loc, v, perm);
      if (!folded) {
        SmallVector<OpFoldResult> sizes;
        for (char c : to)
          sizes.push_back(loopSize[loopOf.at(c)]);
        Value init = tensor::EmptyOp::create(b, loc, sizes, elemOf(v));
        folded =
            linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
      }
      v = folded;
    }
    SmallVector<ReassociationIndices> reassociation;
    int64_t d = 0;
    for (const std::string &g : groups) {
      if (g.empty())
        continue;
      ReassociationIndices group;
      for (size_t k = 0; k < g.size(); ++k)
        group.push_back(d++);
      reassociation.push_back(group);
    }
    if (reassociation.size() == static_cast<size_t>(typeOf(v).getRank()))
      return v;
    return tensor::CollapseShapeOp::create(b, loc, v, reassociation);
  };
  // The row letters stay dims of their own (the contraction kernels take
  // them as batch dims of A and C): collapsing dynamic ones (b, t) would
  // need an expand of two dynamic sizes back, which the lowering of
  // strided metadata cannot take. Columns are collapsed (at most one of
  // them dynamic) and expanded back.
  int64_t dynamicCols = llvm::count_if(cols, [&](char ch) {
    return !getConstantIntValue(loopSize[loopOf.at(ch)]);
  });
  if (dynamicCols > 1)
    return Value();
  SmallVector<std::string> aGroups, wGroups;
  for (char ch : batch + rows)
    aGroups.push_back(std::string(1, ch));
  for (char ch : batch)
    wGroups.push_back(std::string(1, ch));
  aGroups.push_back(summed);
  wGroups.append({summed, cols});
  Type acc = sumType(elem);
  // (Converted first: a 16-bit constant is widened at import.)
  Value lhs = arrange(convertElements(loc, ops[0], acc), a, aGroups);
  Value rhs = arrange(convertElements(loc, ops[1], acc), w, wGroups);
  // C[batch, rows, n] += A[batch, rows, k] * W[batch, k, n].
  int64_t nb = batch.size(), nr = rows.size();
  unsigned nLoop = nb + nr, kLoop = nb + nr + 1;
  auto dimsOf = [&](int64_t from, int64_t count) {
    SmallVector<AffineExpr> e;
    for (int64_t i = 0; i < count; ++i)
      e.push_back(b.getAffineDimExpr(from + i));
    return e;
  };
  SmallVector<AffineExpr> aExprs = dimsOf(0, nb + nr), wExprs = dimsOf(0, nb),
                          cExprs = dimsOf(0, nb + nr);
  aExprs.push_back(b.getAffineDimExpr(kLoop));
  wExprs.push_back(b.getAffineDimExpr(kLoop));
  wExprs.push_back(b.getAffineDimExpr(nLoop));
  cExprs.push_back(b.getAffineDimExpr(nLoop));
  unsigned loops = nb + nr + 2;
  SmallVector<OpFoldResult> productSizes;
  for (int64_t i = 0; i < nb + nr; ++i)
    productSizes.push_back(dimOf(lhs, i));
  productSizes.push_back(dimOf(rhs, nb + 1));
  SmallVector<utils::IteratorType> iters(loops, utils::IteratorType::parallel);
  iters[kLoop] = utils::IteratorType::reduction;
  Value init =
      zeroFilled(loc, tensor::EmptyOp::create(b, loc, productSizes, acc));
  Value product =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{lhs, rhs},
          ValueRange{init},
          SmallVector<AffineMap>{AffineMap::get(loops, 0, aExprs, ctx),
                                 AffineMap::get(loops, 0, wExprs, ctx),
                                 AffineMap::get(loops, 0, cExprs, ctx)},
          iters,
          [&](OpBuilder &nb2, Location l, ValueRange v) {
            Value p = arith::MulFOp::create(nb2, l, v[0], v[1]);
            linalg::YieldOp::create(
                nb2, l, ValueRange{arith::AddFOp::create(nb2, l, v[2], p)});
          })
          .getResult(0);
  // [batch, rows, cols...], then the output's order.
  std::string productSub = batch + rows + cols;
  if (cols.size() > 1) {
    SmallVector<int64_t> expandedShape;
    SmallVector<OpFoldResult> expandedSizes;
    for (char ch : productSub) {
      OpFoldResult size = loopSize[loopOf.at(ch)];
      expandedSizes.push_back(size);
      std::optional<int64_t> known = getConstantIntValue(size);
      expandedShape.push_back(known ? *known : ShapedType::kDynamic);
    }
    SmallVector<ReassociationIndices> reassociation;
    int64_t d = 0;
    for (int64_t i = 0; i < nb + nr; ++i)
      reassociation.push_back({d++});
    ReassociationIndices g;
    for (size_t i = 0; i < cols.size(); ++i)
      g.push_back(d++);
    reassociation.push_back(g);
    product = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(expandedShape, acc), product,
        reassociation, expandedSizes);
  }
  SmallVector<int64_t> outPerm;
  for (char ch : outSub)
    outPerm.push_back(static_cast<int64_t>(productSub.find(ch)));
  if (!llvm::equal(outPerm, llvm::seq<int64_t>(0, outPerm.size()))) {
    SmallVector<OpFoldResult> outSizes;
    for (char ch : outSub)
      outSizes.push_back(loopSize[loopOf.at(ch)]);
    Value outInit = tensor::EmptyOp::create(b, loc, outSizes, acc);
    product = linalg::TransposeOp::create(b, loc, product, outInit, outPerm)
                  .getResult()[0];
  }
  return convertElements(loc, product, elem);
}

/// A constant `x` (a weight, its bytes at hand) transposed by `perm` into a
/// new constant of the same kind (a blob stays a blob, named after the
/// weight), or null. A Transpose of a weight before a MatMul (torch exports
/// of x @ W.T) otherwise moved the weight on every call: [3072, 768] at a
/// decode step took 2.3 ms (ONNX Runtime folds it: 0.07 ms).
static Value transposedConstant(OpBuilder &b, Location loc, Value x,
                                ArrayRef<int64_t> perm) {
  ElementsAttr attr;
  if (!matchPattern(x, m_Constant(&attr)))
    return Value();
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  Type elem = type ? type.getElementType() : Type();
  if (!type || !type.hasStaticShape() || !elem.isIntOrFloat() ||
      elem.getIntOrFloatBitWidth() % 8 != 0)
    return Value();
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  auto outType = RankedTensorType::get(shape, elem);
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (dense && dense.isSplat())
    return arith::ConstantOp::create(b, loc, dense.reshape(outType));
  size_t width = elem.getIntOrFloatBitWidth() / 8;
  int64_t count = type.getNumElements();
  std::optional<ArrayRef<char>> raw = constantBytes(attr, count * width);
  if (!raw)
    return Value();
  AsmResourceBlob moved = HeapAsmResourceBlob::allocate(
      std::max<size_t>(raw->size(), 1), alignof(uint64_t),
      /*dataIsMutable=*/true);
  char *out = moved.getMutableData().data();
  // The source's row-major strides, read in the output's order.
  SmallVector<int64_t> stride(rank, 1), readStride(rank);
  for (int64_t d = rank - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * type.getDimSize(d + 1);
  for (int64_t d = 0; d < rank; ++d)
    readStride[d] = stride[perm[d]];
  SmallVector<int64_t> idx(rank, 0);
  int64_t from = 0;
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out + i * width, raw->data() + from * width, width);
    // Next output index (row-major), and the source offset along.
    for (int64_t d = rank - 1; d >= 0; --d) {
      from += readStride[d];
      if (++idx[d] < shape[d])
        break;
      from -= readStride[d] * shape[d];
      idx[d] = 0;
    }
  }
  return constantLike(b, loc, attr, outType, std::move(moved), "_t");
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
  SmallVector<OpFoldResult> in = sizesOf(x), sizes;
  SmallVector<bool> seen(t.getRank(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= t.getRank()) {
      nodeError(n) << "perm entry " << p << " is out of range";
      return;
    }
    if (seen[p]) {
      nodeError(n) << "perm names dim " << p
                   << " twice (a permutation names each dim once)";
      return;
    }
    seen[p] = true;
    sizes.push_back(in[p]);
  }
  // The identity (any permutation of a rank-0 or rank-1 tensor) moves
  // nothing; linalg.transpose has no rank-0 form.
  if (llvm::equal(perm, llvm::seq<int64_t>(0, t.getRank())))
    return define(n, 0, x);
  if (Value folded = transposedConstant(b, loc, x, perm))
    return define(n, 0, folded);
  Value init = tensor::EmptyOp::create(b, loc, sizes, t.getElementType());
  define(n, 0,
         linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0]);
}

/// Reshape to a known target shape (0 copies a dim, -1 is inferred). Sizes
/// are matched group by group (equal SSA sizes or equal static products),
/// so exports' head splits and merges with dynamic batch and sequence dims
/// become expand/collapse views; anything else is a tensor.reshape.
void Importer::importFlatten(const onnx::NodeProto &n) {
  // [d0 .. d(axis-1), d(axis) ..] -> [d0 * .. * d(axis-1), d(axis) * ..]: a
  // Reshape to those two sizes (its checks and views).
  Value x = input(n, 0);
  if (failed)
    return;
  int64_t rank = typeOf(x).getRank();
  int64_t axis = intAttr(n, "axis", 1);
  if (axis < -rank || axis > rank) {
    nodeError(n) << "axis " << axis << " is out of range for rank " << rank;
    return;
  }
  if (axis < 0)
    axis += rank;
  SmallVector<OpFoldResult> sizes = sizesOf(x);
  OpFoldResult outer = b.getIndexAttr(1), inner = b.getIndexAttr(1);
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) =
        foldIndex('*', d < axis ? outer : inner, sizes[d]);
  std::string shapeName = n.output(0) + " (Flatten's shape)";
  KnownInts shape;
  shape.elemType = b.getI64Type();
  shape.elems = {outer, inner};
  knownInts[shapeName] = std::move(shape);
  onnx::NodeProto reshape = n;
  reshape.set_op_type("Reshape");
  reshape.clear_attribute();
  reshape.clear_input();
  reshape.add_input(n.input(0));
  reshape.add_input(shapeName);
  // (A size of 0 is a size, not "copy the input's dim".)
  onnx::AttributeProto *allowZero = reshape.add_attribute();
  allowZero->set_name("allowzero");
  allowZero->set_type(onnx::AttributeProto::INT);
  allowZero->set_i(1);
  importReshape(reshape);
}

void Importer::importReshape(const onnx::NodeProto &n) {
  auto targetK = knownInput(n, 1);
  // Shape arithmetic stays known through a reshape to 1-D (repeat_kv's
  // expand target goes through Reshape(Concat(...), [-1])).
  if (auto k = knownInput(n, 0); k && targetK && targetK->elems.size() == 1) {
    auto c = getConstantIntValue(targetK->elems[0]);
    if (c && (*c == -1 || *c == int64_t(k->elems.size()) ||
              (*c == 0 && !k->scalar && intAttr(n, "allowzero", 0) == 0))) {
      k->scalar = false;
      return defineKnown(n, 0, *k);
    }
  }
  Value x = input(n, 0);
  if (failed)
    return;
  if (!targetK || targetK->scalar) {
    nodeError(n) << "the target shape must be known while importing (a "
                    "constant or shape arithmetic)";
    return;
  }
  auto t = typeOf(x);
  SmallVector<OpFoldResult> in = sizesOf(x), out;
  int64_t infer = -1;
  bool allowZero = intAttr(n, "allowzero", 0) != 0;
  // Sizes checked while running take the general reshape, from a flat view
  // of the input (or an empty stand-in when the check fails).
  bool checkedWhileRunning = false;
  for (auto [i, e] : llvm::enumerate(targetK->elems)) {
    auto c = getConstantIntValue(e);
    if (c && *c == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= t.getRank()) {
        nodeError(n) << "shape entry 0 at " << i << " has no input dim to copy";
        return;
      }
      out.push_back(in[i]);
      continue;
    }
    if (c && *c == -1) {
      if (infer >= 0) {
        nodeError(n) << "more than one -1 in the target shape";
        return;
      }
      infer = i;
      out.push_back(b.getIndexAttr(1));
      continue;
    }
    if (c && *c < 0) {
      nodeError(n) << "negative target dimension " << *c;
      return;
    }
    out.push_back(e);
  }
  // Element counts as (static product, dynamic factors); equal SSA factors
  // cancel, so [B, T, 12, 64] -> [B, T, -1] infers a static 768. A size
  // computed as a product (BART's reshape to [B * H, -1, d]) counts as its
  // factors, so B cancels against the input's B and -1 is T itself.
  bool overflow = false;
  std::function<void(Value, int64_t &, SmallVector<Value> &, int)> addFactor =
      [&](Value v, int64_t &c, SmallVector<Value> &dyn, int depth) {
        if (auto k = getConstantIntValue(v)) {
          overflow |= llvm::MulOverflow(c, *k, c);
          return;
        }
        // (A product with a negative constant is no count: it stays whole,
        // a size checked while running.)
        auto negative = [](Value x) {
          auto k = getConstantIntValue(x);
          return k && *k < 0;
        };
        if (auto mul = v.getDefiningOp<arith::MulIOp>();
            mul && depth < 8 && !negative(mul.getLhs()) &&
            !negative(mul.getRhs())) {
          addFactor(mul.getLhs(), c, dyn, depth + 1);
          addFactor(mul.getRhs(), c, dyn, depth + 1);
          return;
        }
        dyn.push_back(v);
      };
  auto factor = [&](ArrayRef<OpFoldResult> sizes, int64_t skip, int64_t &c,
                    SmallVector<Value> &dyn) {
    c = 1;
    for (auto [i, s] : llvm::enumerate(sizes)) {
      if (static_cast<int64_t>(i) == skip)
        continue;
      if (auto k = getConstantIntValue(s))
        overflow |= llvm::MulOverflow(c, *k, c);
      else
        addFactor(cast<Value>(s), c, dyn, 0);
    }
  };
  int64_t inC, outC;
  SmallVector<Value> inDyn, outDyn;
  factor(in, -1, inC, inDyn);
  factor(out, infer, outC, outDyn);
  // (The whole counts, for a check while running: a cancelled factor may
  // be 0 there, which makes both counts 0.)
  SmallVector<Value> allInDyn = inDyn, allOutDyn = outDyn;
  if (overflow || outC > (int64_t(1) << 40)) {
    nodeError(n) << "the target shape has too many elements";
    return;
  }
  for (auto it = outDyn.begin(); it != outDyn.end();) {
    auto m = llvm::find(inDyn, *it);
    if (m != inDyn.end()) {
      inDyn.erase(m);
      it = outDyn.erase(it);
    } else {
      ++it;
    }
  }
  if (inDyn.empty() && outDyn.empty()) {
    if (infer >= 0) {
      if (outC == 0 || inC % outC != 0) {
        nodeError(n) << "cannot reshape " << inC
                     << " elements into a multiple of " << outC;
        return;
      }
      out[infer] = b.getIndexAttr(inC / outC);
    } else if (inC != outC) {
      nodeError(n) << "cannot reshape " << inC << " elements into " << outC;
      return;
    }
  } else if (infer >= 0 && outDyn.empty() && outC != 0 && inC % outC == 0) {
    // The remaining input sizes times the static quotient (view(-1, nx)).
    OpFoldResult total = b.getIndexAttr(inC / outC);
    for (Value v : inDyn)
      total = foldIndex('*', total, v);
    out[infer] = total;
  } else {
    // Sizes known only while running: the module checks on each call that
    // the target's sizes are not negative and hold the input's count (a
    // -1 divides it exactly; without one the counts are equal) and fails
    // the call otherwise, as numpy refuses such a reshape. (A size common
    // to both sides cancels first: when it is 0 the -1 is taken from the
    // others, an empty result where numpy refuses.) Until the call
    // returns, the code after it runs on: a failed check then reshapes an
    // empty stand-in of the target's count, so nothing reads past the
    // input. The quotient divides by at least 1: a product of 0 does not
    // trap before the check reports it.
    Location loc = nodeLoc(n);
    std::string slot =
        indexErrorSlot(n, "the input's element count against the target shape");
    auto product = [&](int64_t c, ArrayRef<Value> dyn) {
      OpFoldResult p = b.getIndexAttr(c);
      for (Value v : dyn)
        p = foldIndex('*', p, v);
      return indexValue(p);
    };
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value bad;
    auto orBad = [&](Value c) {
      bad = bad ? arith::OrIOp::create(b, loc, bad, c).getResult() : c;
    };
    // (Negative sizes are reported over a count they also spoil: their
    // checks write the slot last.)
    SmallVector<std::tuple<Value, Value, int64_t>> negatives;
    for (auto [i, e] : llvm::enumerate(out)) {
      if (static_cast<int64_t>(i) == infer || getConstantIntValue(e))
        continue;
      Value v = cast<Value>(e);
      Value negative =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero);
      negatives.push_back({negative, v, i});
      orBad(negative);
    }
    Value totalV = product(inC, inDyn), restV = product(outC, outDyn);
    if (infer >= 0) {
      out[infer] =
          foldIndex('/', totalV, foldIndex('M', restV, b.getIndexAttr(1)));
      Value noRows =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, restV, zero);
      Value inexact = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::MulIOp::create(b, loc, indexValue(out[infer]), restV), totalV);
      Value countBad = arith::OrIOp::create(b, loc, noRows, inexact);
      // (Reported with the whole counts, the ones the user sees.)
      checkFailsIf(b, loc, slot, countBad, kHitNotMultiple,
                   product(inC, allInDyn), product(outC, allOutDyn));
      orBad(countBad);
    } else {
      Value allIn = product(inC, allInDyn), allOut = product(outC, allOutDyn);
      Value countBad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             allIn, allOut);
      checkFailsIf(b, loc, slot, countBad, kHitCountDiffers, allIn, allOut);
      orBad(countBad);
    }
    for (auto [negative, v, i] : negatives)
      checkFailsIf(b, loc, slot, negative, kHitNegativeSize, v,
                   arith::ConstantIndexOp::create(b, loc, i));
    // A negative size counts as 0 (max(s, 0) is s itself for a size read
    // off a tensor: the result keeps the sizes the rest of the graph
    // compares with).
    for (auto [i, e] : llvm::enumerate(out))
      if (static_cast<int64_t>(i) != infer && !getConstantIntValue(e))
        e = foldIndex('M', e, b.getIndexAttr(0));
    Value count = product(1, {});
    for (OpFoldResult e : out)
      count = arith::MulIOp::create(b, loc, count, indexValue(e));
    Value inCount = product(1, {});
    for (OpFoldResult e : in)
      inCount = arith::MulIOp::create(b, loc, inCount, indexValue(e));
    auto flatType =
        RankedTensorType::get({ShapedType::kDynamic}, t.getElementType());
    auto flatShape = [&](Value size) {
      return tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({1}, b.getI64Type()),
          ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), size)});
    };
    Value flat =
        tensor::ReshapeOp::create(b, loc, flatType, x, flatShape(inCount));
    // The input in place, or (failed) a stand-in nothing writes, made
    // only then.
    auto choose = scf::IfOp::create(b, loc, TypeRange{flatType}, bad,
                                    /*withElseRegion=*/true);
    OpBuilder tb = OpBuilder::atBlockBegin(&choose.getThenRegion().front());
    scf::YieldOp::create(
        tb, loc,
        ValueRange{tensor::EmptyOp::create(
            tb, loc, ArrayRef<OpFoldResult>{count}, t.getElementType())});
    OpBuilder eb = OpBuilder::atBlockBegin(&choose.getElseRegion().front());
    scf::YieldOp::create(eb, loc, ValueRange{flat});
    x = choose.getResult(0);
    in = {count};
    checkedWhileRunning = true;
  }
  SmallVector<int64_t> shape;
  for (OpFoldResult s : out)
    shape.push_back(getConstantIntValue(s).value_or(ShapedType::kDynamic));
  auto outType = RankedTensorType::get(shape, t.getElementType());
  Location loc = nodeLoc(n);

  // Group dims: equal sizes pair 1:1; static runs pair by equal products.
  SmallVector<ReassociationIndices> inGroups, outGroups;
  size_t i = 0, j = 0;
  bool grouped = !checkedWhileRunning;
  while (grouped && i < in.size() && j < out.size()) {
    if (isEqualConstantIntOrValue(in[i], out[j])) {
      inGroups.push_back({int64_t(i++)});
      outGroups.push_back({int64_t(j++)});
      continue;
    }
    auto a = getConstantIntValue(in[i]), c = getConstantIntValue(out[j]);
    if (!a || !c) {
      // A dynamic size that is a product of the other side's next sizes
      // (B*T <-> B, T), built by foldIndex and so the same SSA value.
      auto span = [&](ArrayRef<OpFoldResult> many, size_t from,
                      OpFoldResult one, ReassociationIndices &group) {
        OpFoldResult p = many[from];
        group = {int64_t(from)};
        for (size_t k = from + 1;
             !isEqualConstantIntOrValue(p, one) && k < many.size(); ++k) {
          p = foldIndex('*', p, many[k]);
          group.push_back(k);
        }
        return isEqualConstantIntOrValue(p, one);
      };
      ReassociationIndices ig, og;
      if (span(out, j, in[i], og)) {
        ig = {int64_t(i)};
      } else if (span(in, i, out[j], ig)) {
        og = {int64_t(j)};
      } else {
        grouped = false;
        break;
      }
      size_t ni = i + ig.size(), nj = j + og.size();
      inGroups.push_back(ig);
      outGroups.push_back(og);
      i = ni;
      j = nj;
      continue;
    }
    ReassociationIndices ig{int64_t(i++)}, og{int64_t(j++)};
    int64_t pa = *a, pc = *c;
    while (grouped && pa != pc) {
      if (pa < pc && i < in.size() && getConstantIntValue(in[i])) {
        pa *= *getConstantIntValue(in[i]);
        ig.push_back(i++);
      } else if (pc < pa && j < out.size() && getConstantIntValue(out[j])) {
        pc *= *getConstantIntValue(out[j]);
        og.push_back(j++);
      } else {
        grouped = false;
      }
    }
    inGroups.push_back(ig);
    outGroups.push_back(og);
  }
  // Trailing unit dims join the last group.
  for (; grouped && i < in.size(); ++i) {
    grouped = isConstantIntValue(in[i], 1) && !inGroups.empty();
    if (grouped)
      inGroups.back().push_back(i);
  }
  for (; grouped && j < out.size(); ++j) {
    grouped = isConstantIntValue(out[j], 1) && !outGroups.empty();
    if (grouped)
      outGroups.back().push_back(j);
  }
  // MLIR 22.1's expand-strided-metadata crashes on reshapes of strided
  // memrefs whose group holds two dynamic dims ([B*T, n] <-> [B, T, n]):
  // those take the general reshape (the sizes stay known, see dimOf).
  auto twoDynamic = [](ArrayRef<ReassociationIndices> groups,
                       ArrayRef<OpFoldResult> sizes) {
    return llvm::any_of(groups, [&](const ReassociationIndices &g) {
      return llvm::count_if(g, [&](int64_t d) {
               return !getConstantIntValue(sizes[d]);
             }) > 1;
    });
  };
  if (grouped && (twoDynamic(inGroups, in) || twoDynamic(outGroups, out)))
    grouped = false;
  if (!grouped || inGroups.empty() || checkedWhileRunning) {
    // No view: a general reshape with the target as a shape tensor.
    SmallVector<Value> dims;
    for (OpFoldResult s : out)
      dims.push_back(
          arith::IndexCastOp::create(b, loc, b.getI64Type(), indexValue(s)));
    Value shapeT = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({int64_t(dims.size())}, b.getI64Type()),
        dims);
    Value r = tensor::ReshapeOp::create(b, loc, outType, x, shapeT);
    reshapeSizes[r] = out;
    define(n, 0, r);
    return;
  }
  Value v = x;
  if (llvm::any_of(inGroups, [](const ReassociationIndices &g) {
        return g.size() > 1;
      })) {
    SmallVector<int64_t> mid;
    for (const auto &g : inGroups) {
      int64_t p = 1;
      for (int64_t d : g)
        p = (ShapedType::isDynamic(p) || t.isDynamicDim(d))
                ? ShapedType::kDynamic
                : p * t.getDimSize(d);
      mid.push_back(p);
    }
    v = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get(mid, t.getElementType()), v, inGroups);
  }
  if (llvm::any_of(outGroups,
                   [](const ReassociationIndices &g) { return g.size() > 1; }))
    v = tensor::ExpandShapeOp::create(b, loc, outType, v, outGroups, out);
  else if (v.getType() != outType)
    v = tensor::CastOp::create(b, loc, outType, v);
  define(n, 0, v);
}

/// Softmax. From opset 13 it normalizes along `axis` (default -1). Before,
/// the input is read as a matrix [prod(dims before axis), prod(dims from
/// axis on)] and each row is normalized (default axis 1): the same thing
/// when axis is the last dim, otherwise one softmax over all the trailing
/// dims together, imported as collapse, softmax, expand.
Value Importer::logSoftmax(Location loc, Value x, Value init, int64_t axis) {
  // x - m - log(sum(exp(x - m))), m the max along the axis: no exp
  // overflows. A row of -inf shifts by 0 instead (as ReduceLogSumExp does)
  // and is NaN, as in torch; a row with +inf shifts by it and is NaN
  // throughout, as ONNX computes it.
  auto t = typeOf(x);
  Type elem = t.getElementType();
  auto shiftOf = [&](OpBuilder &nb, Location l, Value max) -> Value {
    Value ninf = arith::ConstantOp::create(
        nb, l, nb.getFloatAttr(elem, -std::numeric_limits<double>::infinity()));
    Value above =
        arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, max, ninf);
    return arith::SelectOp::create(
        nb, l, above, max,
        arith::ConstantOp::create(nb, l, nb.getZeroAttr(elem)));
  };
  int64_t rank = t.getRank();
  SmallVector<AffineExpr> rowDims;
  SmallVector<OpFoldResult> rowSizes;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) {
      rowDims.push_back(b.getAffineDimExpr(d));
      rowSizes.push_back(dimOf(x, d));
    }
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap row = AffineMap::get(rank, 0, rowDims, ctx);
  SmallVector<utils::IteratorType> reduce(rank, utils::IteratorType::parallel);
  reduce[axis] = utils::IteratorType::reduction;
  SmallVector<utils::IteratorType> parallel(rank,
                                            utils::IteratorType::parallel);
  Value rowEmpty = tensor::EmptyOp::create(b, loc, rowSizes, elem);
  Value m = linalg::GenericOp::create(
                b, loc, TypeRange{rowEmpty.getType()}, ValueRange{x},
                ValueRange{extremeFilled(loc, rowEmpty, /*lowest=*/true)},
                ArrayRef<AffineMap>{id, row}, reduce,
                [&](OpBuilder &nb, Location l, ValueRange v) {
                  linalg::YieldOp::create(
                      nb, l,
                      ValueRange{arith::MaximumFOp::create(nb, l, v[1], v[0])});
                })
                .getResult(0);
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{rowEmpty.getType()}, ValueRange{x, m},
          ValueRange{zeroFilled(loc, rowEmpty)},
          ArrayRef<AffineMap>{id, row, row}, reduce,
          [&](OpBuilder &nb, Location l, ValueRange v) {
            Value e = math::ExpOp::create(
                nb, l,
                arith::SubFOp::create(nb, l, v[0], shiftOf(nb, l, v[1])));
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::AddFOp::create(nb, l, v[2], e)});
          })
          .getResult(0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x, m, sum},
             ValueRange{init}, ArrayRef<AffineMap>{id, row, row, id}, parallel,
             [&](OpBuilder &nb, Location l, ValueRange v) {
               Value r = arith::SubFOp::create(
                   nb, l,
                   arith::SubFOp::create(nb, l, v[0], shiftOf(nb, l, v[1])),
                   math::LogOp::create(nb, l, v[2]));
               linalg::YieldOp::create(nb, l, ValueRange{r});
             })
      .getResult(0);
}

void Importer::importSoftmax(const onnx::NodeProto &n) {
  Value x = input(n, 0);
  if (failed)
    return;
  auto t = typeOf(x);
  int64_t rank = t.getRank();
  int64_t given = intAttr(n, "axis", opset < 13 ? 1 : -1);
  int64_t axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank) {
    nodeError(n) << "axis " << given << " is out of range for " << t;
    return;
  }
  Location loc = nodeLoc(n);
  bool flattened = opset < 13 && axis + 1 < rank;
  Value in = x;
  SmallVector<ReassociationIndices> groups;
  if (flattened) {
    for (int64_t d = 0; d < axis; ++d)
      groups.push_back({d});
    groups.emplace_back(llvm::to_vector(llvm::seq<int64_t>(axis, rank)));
    in = tensor::CollapseShapeOp::create(b, loc, x, groups);
  }
  // 16-bit floats in f32: the row sums.
  Type elem = t.getElementType();
  in = convertElements(loc, in, sumType(elem));
  auto it = typeOf(in);
  Value init =
      tensor::EmptyOp::create(b, loc, sizesOf(in), it.getElementType());
  Value y =
      n.op_type() == "LogSoftmax"
          ? logSoftmax(loc, in, init, axis)
          : linalg::SoftmaxOp::create(b, loc, TypeRange{it}, in, init, axis)
                .getResult()[0];
  y = convertElements(loc, y, elem);
  if (flattened)
    y = tensor::ExpandShapeOp::create(b, loc, t, y, groups, sizesOf(x));
  define(n, 0, y);
}

} // namespace mlir::attn::onnx_import
