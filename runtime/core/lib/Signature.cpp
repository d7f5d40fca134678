//===- Signature.cpp - entry point signatures
//------------------------------===//
//
// The compiler embeds each entry point's tensor signature as a string; the
// runtime parses it to validate arguments without any MLIR dependency.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Module.h"

#include <cctype>

namespace attnrt {

std::string TensorSpec::describe() const {
  std::string s = (name.empty() ? std::string() : name + ": ") +
                  std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += (i ? ", " : "") +
         (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
    if (dims[i] < 0 && i < maxDims.size() && maxDims[i] >= 0)
      s += "<=" + std::to_string(maxDims[i]);
  }
  s += "]";
  if (valueRange)
    s += " in [" + std::to_string(valueRange->first) + ", " +
         std::to_string(valueRange->second) + ")";
  return s;
}

std::string FunctionSignature::describe() const {
  std::string s = "(";
  for (size_t i = 0; i < inputs.size(); ++i)
    s += (i ? ", " : "") + inputs[i].describe();
  s += ") -> (";
  for (size_t i = 0; i < outputs.size(); ++i)
    s += (i ? ", " : "") + outputs[i].describe();
  s += ")";
  for (size_t i = 0; i < sumBounds.size(); ++i)
    s += (i ? ", " : " where ") + describeBound(sumBounds[i]);
  return s;
}

std::string FunctionSignature::groupName(int id) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t d = 0; d < inputs[i].sameAs.size(); ++d)
      if (inputs[i].sameAs[d] == id)
        return "input " + std::to_string(i) +
               (inputs[i].name.empty() ? "" : " (" + inputs[i].name + ")") +
               " dim " + std::to_string(d);
  return "?" + std::to_string(id);
}

std::string FunctionSignature::describeBound(const SumBound &bound) const {
  std::string s;
  for (int g : bound.sum.groups)
    s += (s.empty() ? "" : " + ") + groupName(g);
  if (bound.sum.constant > 0)
    s += " + " + std::to_string(bound.sum.constant);
  return s + " <= " + std::to_string(bound.most);
}

namespace {
std::string formatSum(const DimSum &sum) {
  std::string s;
  for (int g : sum.groups)
    s += (s.empty() ? "?" : "+?") + std::to_string(g);
  if (sum.constant > 0)
    s += "+" + std::to_string(sum.constant);
  return s;
}

bool isNumber(const std::string &s, size_t maxDigits) {
  return !s.empty() && s.size() <= maxDigits &&
         s.find_first_not_of("0123456789") == std::string::npos;
}

/// "?1+?2+3": every term a group id ("?N") or a size; at least one group.
bool parseSum(const std::string &tok, DimSum &sum) {
  size_t p = 0;
  while (true) {
    size_t plus = tok.find('+', p);
    std::string term =
        tok.substr(p, plus == std::string::npos ? std::string::npos : plus - p);
    if (term.size() > 1 && term[0] == '?' && isNumber(term.substr(1), 8)) {
      sum.groups.push_back(std::stoi(term.substr(1)));
    } else if (isNumber(term, 18)) {
      int64_t c = std::stoll(term);
      if (__builtin_add_overflow(sum.constant, c, &sum.constant))
        return false;
    } else {
      return false;
    }
    if (plus == std::string::npos)
      break;
    p = plus + 1;
  }
  return !sum.groups.empty();
}
} // namespace

std::string formatSignature(const FunctionSignature &sig) {
  auto list = [](const std::vector<TensorSpec> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
      s += i ? "," : "";
      if (!v[i].name.empty())
        s += v[i].name + ":";
      s += std::string(dtypeName(v[i].dtype)) + "[";
      for (size_t d = 0; d < v[i].dims.size(); ++d) {
        s += d ? "," : "";
        if (v[i].dims[d] >= 0)
          s += std::to_string(v[i].dims[d]);
        else if (d < v[i].sums.size() && !v[i].sums[d].groups.empty())
          s += formatSum(v[i].sums[d]);
        else if (d < v[i].sameAs.size() && v[i].sameAs[d] > 0)
          s += "?" + std::to_string(v[i].sameAs[d]);
        else
          s += "?";
        if (v[i].dims[d] < 0 && d < v[i].maxDims.size() && v[i].maxDims[d] >= 0)
          s += "<=" + std::to_string(v[i].maxDims[d]);
      }
      s += "]";
      if (v[i].valueRange)
        s += "{" + std::to_string(v[i].valueRange->first) + ":" +
             std::to_string(v[i].valueRange->second) + "}";
    }
    return s;
  };
  std::string s = list(sig.inputs) + "->" + list(sig.outputs);
  for (const SumBound &bound : sig.sumBounds)
    s += ";" + formatSum(bound.sum) + "<=" + std::to_string(bound.most);
  return s;
}

namespace {
Status parseList(const std::string &text, std::vector<TensorSpec> &out) {
  size_t p = 0;
  while (p < text.size()) {
    size_t lb = text.find('[', p);
    size_t rb = text.find(']', p);
    if (lb == std::string::npos || rb == std::string::npos || rb < lb)
      return Status::error("malformed signature '" + text + "'");
    TensorSpec spec;
    std::string head = text.substr(p, lb - p);
    size_t colon = head.rfind(':');
    if (colon != std::string::npos) {
      spec.name = head.substr(0, colon);
      head = head.substr(colon + 1);
    }
    if (!parseDType(head, spec.dtype))
      return Status::error("unknown element type '" + head + "' in signature");
    std::string dims = text.substr(lb + 1, rb - lb - 1);
    size_t q = 0;
    while (q < dims.size()) {
      size_t c = dims.find(',', q);
      std::string tok =
          dims.substr(q, c == std::string::npos ? std::string::npos : c - q);
      int64_t maxDim = -1;
      if (size_t le = tok.find("<=");
          le != std::string::npos && tok[0] == '?') {
        std::string m = tok.substr(le + 2);
        if (m.empty() || m.size() > 18 ||
            m.find_first_not_of("0123456789") != std::string::npos)
          return Status::error("bad dimension bound '" + tok +
                               "' in signature");
        maxDim = std::stoll(m);
        tok = tok.substr(0, le);
      }
      spec.maxDims.push_back(maxDim);
      spec.sums.emplace_back();
      if (tok.find('+') != std::string::npos) {
        if (!parseSum(tok, spec.sums.back()))
          return Status::error("bad dimension sum '" + tok + "' in signature");
        spec.dims.push_back(-1);
        spec.sameAs.push_back(0);
        if (c == std::string::npos)
          break;
        q = c + 1;
        continue;
      }
      bool digits = tok.size() > 1 && tok.size() < 9 &&
                    tok.find_first_not_of("0123456789", 1) == std::string::npos;
      if (tok == "?") {
        spec.dims.push_back(-1);
        spec.sameAs.push_back(0);
      } else if (tok[0] == '?' && digits) {
        spec.dims.push_back(-1);
        spec.sameAs.push_back(std::stoi(tok.substr(1)));
      } else if (!tok.empty() && tok.size() < 19 &&
                 tok.find_first_not_of("0123456789") == std::string::npos) {
        spec.dims.push_back(std::stoll(tok));
        spec.sameAs.push_back(0);
      } else {
        return Status::error("bad dimension '" + tok + "' in signature");
      }
      if (c == std::string::npos)
        break;
      q = c + 1;
    }
    p = rb + 1;
    // "{L:H}": the values' range.
    if (p < text.size() && text[p] == '{') {
      size_t close = text.find('}', p);
      size_t colon = text.find(':', p);
      auto isInt = [](const std::string &t) {
        size_t start = !t.empty() && t[0] == '-' ? 1 : 0;
        return t.size() > start && t.size() - start <= 18 &&
               t.find_first_not_of("0123456789", start) == std::string::npos;
      };
      std::string lo, hi;
      if (close != std::string::npos && colon != std::string::npos &&
          colon < close) {
        lo = text.substr(p + 1, colon - p - 1);
        hi = text.substr(colon + 1, close - colon - 1);
      }
      if (!isInt(lo) || !isInt(hi) || std::stoll(lo) >= std::stoll(hi))
        return Status::error("bad value range in signature '" + text + "'");
      spec.valueRange = std::make_pair(std::stoll(lo), std::stoll(hi));
      p = close + 1;
    }
    out.push_back(spec);
    if (p < text.size() && text[p] == ',')
      ++p;
  }
  return Status::ok();
}
} // namespace

Status parseSignature(const std::string &text, FunctionSignature &out) {
  size_t arrow = text.find("->");
  if (arrow == std::string::npos)
    return Status::error("malformed signature '" + text + "'");
  out = FunctionSignature();
  if (Status s = parseList(text.substr(0, arrow), out.inputs); !s)
    return s;
  // Bounds on sums follow the last tensor (input names may hold ';').
  size_t last = text.find_last_of("]}");
  size_t semi =
      text.find(';', last == std::string::npos || last < arrow ? arrow : last);
  if (Status s = parseList(text.substr(arrow + 2, semi == std::string::npos
                                                      ? std::string::npos
                                                      : semi - arrow - 2),
                           out.outputs);
      !s)
    return s;
  while (semi != std::string::npos) {
    size_t next = text.find(';', semi + 1);
    std::string tok =
        text.substr(semi + 1, next == std::string::npos ? std::string::npos
                                                        : next - semi - 1);
    size_t le = tok.find("<=");
    SumBound bound;
    if (le == std::string::npos || !isNumber(tok.substr(le + 2), 18) ||
        !parseSum(tok.substr(0, le), bound.sum))
      return Status::error("bad bound '" + tok + "' in signature");
    bound.most = std::stoll(tok.substr(le + 2));
    out.sumBounds.push_back(bound);
    semi = next;
  }
  return Status::ok();
}

std::string signatureSymbol(const std::string &entry) {
  return "__attn_signature_" + entry;
}
std::string packedEntrySymbol(const std::string &entry) {
  return "_mlir__mlir_ciface_" + entry;
}

} // namespace attnrt
