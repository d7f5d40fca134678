//===- RegisterTranspose.cpp - square transposes in vector registers ------===//

#include "RegisterTranspose.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::attn::detail {

void transposeInRegisters(OpBuilder &b, Location loc,
                          SmallVectorImpl<Value> &m) {
  int64_t n = m.size();
  assert(llvm::isPowerOf2_64(n) && "a power-of-2 square block");
  // Stage h swaps bit h of the row index with bit h of the column index:
  // for rows a = i (bit h clear) and b = i | h,
  //   a'[j] = j & h ? b[j & ~h] : a[j],   b'[j] = j & h ? b[j] : a[j | h].
  // After h = n / 2, ..., 2, 1 element (i, j) holds the input's (j, i).
  for (int64_t h = n / 2; h >= 1; h /= 2) {
    SmallVector<int64_t> maskA, maskB;
    for (int64_t j = 0; j < n; ++j) {
      maskA.push_back(j & h ? n + (j & ~h) : j);
      maskB.push_back(j & h ? n + j : (j | h));
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i & h)
        continue;
      Value a = m[i], bRow = m[i | h];
      m[i] = vector::ShuffleOp::create(b, loc, a, bRow, maskA);
      m[i | h] = vector::ShuffleOp::create(b, loc, a, bRow, maskB);
    }
  }
}

} // namespace mlir::attn::detail
