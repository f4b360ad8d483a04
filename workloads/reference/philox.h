#ifndef PTXBENCH_WORKLOADS_REFERENCE_PHILOX_H_
#define PTXBENCH_WORKLOADS_REFERENCE_PHILOX_H_

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11), counter-based: the output depends only on (counter, key), so
// the same seed gives the same value for an element on any grid, GPU or host.
// Usable from host C++ and from CUDA device code.

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define PTXB_HD __host__ __device__ __forceinline__
#else
#define PTXB_HD inline
#endif

namespace ptxbench::reference {

struct Philox4 {
  uint32_t v[4];
};

PTXB_HD uint32_t MulHiLo32(uint32_t a, uint32_t b, uint32_t* hi) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  return static_cast<uint32_t>(p);
}

PTXB_HD Philox4 Philox4x32_10(Philox4 ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    const uint32_t lo0 = MulHiLo32(0xD2511F53u, ctr.v[0], &hi0);
    const uint32_t lo1 = MulHiLo32(0xCD9E8D57u, ctr.v[2], &hi1);
    ctr = Philox4{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return ctr;
}

// SplitMix64's finalizer (a bijection that spreads every input bit), and
// SplitMix64 itself: the seeds and choices derived from a fill's seed
// (worker/runner/measure/references.cc, random.cu, input_distribution.cc).
PTXB_HD uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
PTXB_HD uint64_t SplitMix64(uint64_t x) { return Mix64(x + 0x9E3779B97F4A7C15ull); }

// Four standard normals for group `group` (elements 4*group .. 4*group+3) of
// the stream named by `seed`: Philox on counter (group, 0) and key (seed),
// then two Box-Muller pairs. u1 lies in (0, 1], so the log is finite.
PTXB_HD void StandardNormal4(uint64_t seed, uint64_t group, float out[4]) {
  const Philox4 r = Philox4x32_10(
      Philox4{{static_cast<uint32_t>(group), static_cast<uint32_t>(group >> 32), 0u, 0u}},
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  constexpr float kInv24 = 1.0f / 16777216.0f;
  constexpr float kTwoPi = 6.2831853071795864769f;
  for (int p = 0; p < 2; ++p) {
    const float u1 = static_cast<float>((r.v[2 * p] >> 8) + 1u) * kInv24;
    const float u2 = static_cast<float>(r.v[2 * p + 1] >> 8) * kInv24;
    const float radius = sqrtf(-2.0f * logf(u1));
    out[2 * p] = radius * cosf(kTwoPi * u2);
    out[2 * p + 1] = radius * sinf(kTwoPi * u2);
  }
}

// Four integers uniform in [lo, lo + span) for group `group` of the stream
// named by `seed` (span >= 1, at most 2^32; the modulo bias is below 2^-24
// for the spans the harness uses).
PTXB_HD void UniformInt4(uint64_t seed, uint64_t group, int64_t lo, uint64_t span,
                         int64_t out[4]) {
  const Philox4 r = Philox4x32_10(
      Philox4{{static_cast<uint32_t>(group), static_cast<uint32_t>(group >> 32), 1u, 0u}},
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  for (int j = 0; j < 4; ++j) out[j] = lo + static_cast<int64_t>(r.v[j] % span);
}

}  // namespace ptxbench::reference

#undef PTXB_HD

#endif  // PTXBENCH_WORKLOADS_REFERENCE_PHILOX_H_
