//===- fma_peak.cpp - the machine's measured fp32 FMA peak -----------------===//
//
// Every thread runs 12 independent chains of fused multiply-adds on full
// vector registers (AVX-512 if the CPU has it, else AVX2): enough chains to
// hide the FMA latency on both pipes. The best of several runs is the peak
// the benchmarks report their GFLOP/s against.
// usage: fma_peak [THREADS [avx2|avx512]]
//   prints "peak_gflops=<x> threads=<n> isa=<isa>" (ISA: the widest this CPU
//   has unless given)
//
//===----------------------------------------------------------------------===//

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kIters = 20'000'000;

__attribute__((target("avx512f"))) float chainsAvx512(float seed) {
  __m512 a[12];
  for (int i = 0; i < 12; ++i)
    a[i] = _mm512_set1_ps(seed + i);
  const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < kIters; ++it)
    for (int i = 0; i < 12; ++i)
      a[i] = _mm512_fmadd_ps(a[i], m, c);
  __m512 s = a[0];
  for (int i = 1; i < 12; ++i)
    s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) float chainsAvx2(float seed) {
  __m256 a[12];
  for (int i = 0; i < 12; ++i)
    a[i] = _mm256_set1_ps(seed + i);
  const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < kIters; ++it)
    for (int i = 0; i < 12; ++i)
      a[i] = _mm256_fmadd_ps(a[i], m, c);
  float out[8];
  __m256 s = a[0];
  for (int i = 1; i < 12; ++i)
    s = _mm256_add_ps(s, a[i]);
  _mm256_storeu_ps(out, s);
  return out[0];
}

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  if (threads < 1)
    threads = 1;
  bool avx512 = __builtin_cpu_supports("avx512f");
  // The peak of the code under test: AVX2 code on an AVX-512 host (compiled
  // with --target-cpu=x86-64-v3) is held to the AVX2 rate.
  if (argc > 2) {
    std::string isa = argv[2];
    if (isa == "avx2") {
      avx512 = false;
    } else if (isa != "avx512" || !avx512) {
      std::fprintf(stderr, "fma_peak: ISA '%s' is not one this CPU runs "
                   "(avx2, avx512 where it has AVX-512F)\n", argv[2]);
      return 1;
    }
  }
  int lanes = avx512 ? 16 : 8;
  double best = 0;
  std::atomic<float> sink{0};
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<std::thread> pool;
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        float r = avx512 ? chainsAvx512(1.0f + t) : chainsAvx2(1.0f + t);
        sink.store(sink.load() + r);
      });
    for (auto &th : pool)
      th.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double flops = double(threads) * kIters * 12 * lanes * 2;
    best = std::max(best, flops / s / 1e9);
  }
  std::printf("peak_gflops=%.1f threads=%d isa=%s (sink %g)\n", best, threads,
              avx512 ? "avx512" : "avx2", double(sink.load()) * 0);
  return 0;
}
