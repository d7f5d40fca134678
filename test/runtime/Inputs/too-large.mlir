// @main: x is [n, m] (n = 2^23 with m = 0 holds nothing); it returns n twos
// and their n x n outer sums, 256 TiB at n = 2^23, allocated after the twos
// (test/runtime/checked-allocation.test).
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %v = linalg.fill ins(%two : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %e2 = tensor.empty(%n, %n) : tensor<?x?xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%v, %v : tensor<?xf32>, tensor<?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %v, %sq : tensor<?xf32>, tensor<?x?xf32>
}

// An allocation inside a parallel loop's body: n x n floats per item.
func.func @in_loop(%x: tensor<?x?xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %out = memref.alloc() : memref<4xf32>
  // (min(n, 4) items: a trip count known only while running keeps the loop
  // an OpenMP loop; 4 would make it too small to be worth one.)
  %items = arith.minui %n, %c4 : index
  scf.parallel (%i) = (%c0) to (%items) step (%c1) {
    %t = memref.alloc(%n, %n) : memref<?x?xf32>
    memref.store %one, %t[%c0, %c0] : memref<?x?xf32>
    %l = memref.load %t[%c0, %c0] : memref<?x?xf32>
    memref.store %l, %out[%i] : memref<4xf32>
    scf.reduce
  }
  return %out : memref<4xf32>
}

// A result that is a view into a larger computed block (rows 1 and 2 of
// an n x m block of ones): copied out, and the block freed through the
// runtime (a plain free() of a checked block is what the sanitizer build
// would report).
func.func @slice(%x: tensor<?x?xf32>) -> tensor<2x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%n, %m) : tensor<?x?xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.extract_slice %f[1, 0] [2, %m] [1, 1] : tensor<?x?xf32> to tensor<2x?xf32>
  return %s : tensor<2x?xf32>
}
