// Developer probe (issue 31, item 3): can one context's stream work make
// progress while another context holds the compute engine, and can it hand a
// call over in the middle of a bracket without the GPU switching contexts?
//
// Two contexts in one process stand for the harness (H) and a host (C); the
// GPU time-slices them on its compute engine as it does two processes. Flags
// live in pinned host memory that both contexts map. Spin kernels write
// %globaltimer at their start and end, so gaps are read on the GPU's clock.
//   1. C spins 2 ms; H then enqueues (a) a 4-byte flag write, (b) a 1 MiB
//      device-to-device copy and a flag write, (c) a 4-byte device-to-host
//      copy. When each of H's flags lands (host clock, from C's start) says
//      whether H's work waited for C's kernel.
//   2. C: spin 50 us, "done", wait "go", spin 50 us. H: wait "done", (a) flag
//      write "go", (b) 1 MiB copy then "go", (c) 64 MiB copy then "go". The gap
//      between C's two spins against C's spins back to back with no wait.
// Usage: ctx_handover_probe [repeats]; prints one line per case.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define CHECK(x)                                                                   \
  do {                                                                             \
    CUresult r_ = (x);                                                             \
    if (r_ != CUDA_SUCCESS) {                                                      \
      const char* s_ = nullptr;                                                    \
      cuGetErrorString(r_, &s_);                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

__device__ __forceinline__ uint64_t GlobalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins for `ns`, writing its start and end into stamps[0..1] (thread 0).
__global__ void Spin(uint64_t ns, uint64_t* stamps) {
  const uint64_t start = GlobalTimer();
  while (GlobalTimer() - start < ns) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    stamps[0] = start;
    stamps[1] = GlobalTimer();
  }
}

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Ctx {
  CUcontext ctx;
  CUstream stream;
  CUdeviceptr a = 0, b = 0;  // copy source and destination
};

Ctx MakeCtx(CUdevice dev, size_t copy_bytes) {
  Ctx c;
  CUctxCreateParams params = {};
  CHECK(cuCtxCreate(&c.ctx, &params, 0, dev));
  CHECK(cuStreamCreate(&c.stream, CU_STREAM_NON_BLOCKING));
  CHECK(cuMemAlloc(&c.a, copy_bytes));
  CHECK(cuMemAlloc(&c.b, copy_bytes));
  CHECK(cuMemsetD8(c.a, 1, copy_bytes));
  return c;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  const size_t big = 64u << 20;
  Ctx h = MakeCtx(dev, big);
  Ctx c = MakeCtx(dev, big);
  // Pinned flags and stamps, mapped in both contexts (portable).
  volatile uint32_t* flags = nullptr;
  uint64_t* stamps = nullptr;
  CHECK(cuCtxSetCurrent(c.ctx));
  CHECK(cuMemHostAlloc((void**)&flags, 4096,
                       CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
  CHECK(cuMemHostAlloc((void**)&stamps, 4096,
                       CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
  CUdeviceptr dflags, dstamps;
  CHECK(cuMemHostGetDevicePointer(&dflags, (void*)flags, 0));
  CHECK(cuMemHostGetDevicePointer(&dstamps, (void*)stamps, 0));
  auto flag = [&](int i) { return dflags + 4 * i; };

  auto spin = [&](Ctx& x, uint64_t ns, int slot) {
    CHECK(cuCtxSetCurrent(x.ctx));
    uint64_t* s = reinterpret_cast<uint64_t*>(dstamps) + 2 * slot;
    // The runtime launches into the context that is current.
    Spin<<<1, 32, 0, x.stream>>>(ns, s);
    if (cudaGetLastError() != cudaSuccess) std::exit(1);
  };
  auto sync_both = [&]() {
    CHECK(cuCtxSetCurrent(h.ctx));
    CHECK(cuStreamSynchronize(h.stream));
    CHECK(cuCtxSetCurrent(c.ctx));
    CHECK(cuStreamSynchronize(c.stream));
  };
  // Warm both contexts' modules and streams.
  spin(c, 1000, 0);
  spin(h, 1000, 0);
  sync_both();

  // 1. Does H's work wait for C's kernel?
  const char* names1[] = {"flag write", "1 MiB D2D copy + flag", "4 B D2H copy"};
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<double> landed;
    for (int r = 0; r < repeats; ++r) {
      for (int i = 0; i < 8; ++i) flags[i] = 0;
      spin(c, 2000000, 0);
      CHECK(cuCtxSetCurrent(c.ctx));
      CHECK(cuStreamWriteValue32(c.stream, flag(1), 1, 0));
      const double t0 = NowUs();
      CHECK(cuCtxSetCurrent(h.ctx));
      if (kind == 1) CHECK(cuMemcpyDtoDAsync(h.b, h.a, 1 << 20, h.stream));
      if (kind == 2) {
        CHECK(cuMemcpyDtoHAsync((void*)(flags + 2), h.a, 4, h.stream));
      } else {
        CHECK(cuStreamWriteValue32(h.stream, flag(2), 1, 0));
      }
      while (flags[2] == 0) {
      }
      const double th = NowUs() - t0;
      while (flags[1] == 0) {
      }
      const double tc = NowUs() - t0;
      landed.push_back(th / tc);
      if (r == 0) std::printf("  case 1 %s: H's landed %.0f us, C's kernel ended %.0f us\n",
                              names1[kind], th, tc);
      sync_both();
    }
    std::printf("case 1 %s: H's work landed at %.2f of C's 2 ms kernel (median of %d)\n",
                names1[kind], Median(landed), repeats);
  }

  // 2. A hand-over in the middle: the gap between C's two spins.
  const char* names2[] = {"back to back (no hand-over)", "H writes go", "H copies 1 MiB, writes go",
                          "H copies 64 MiB, writes go"};
  for (int kind = 0; kind < 4; ++kind) {
    std::vector<double> gaps, firsts, seconds;
    for (int r = 0; r < repeats; ++r) {
      for (int i = 0; i < 8; ++i) flags[i] = 0;
      if (kind > 0) {
        CHECK(cuCtxSetCurrent(h.ctx));
        CHECK(cuStreamWaitValue32(h.stream, flag(3), 1, CU_STREAM_WAIT_VALUE_GEQ));
        if (kind == 2) CHECK(cuMemcpyDtoDAsync(h.b, h.a, 1 << 20, h.stream));
        if (kind == 3) CHECK(cuMemcpyDtoDAsync(h.b, h.a, big, h.stream));
        CHECK(cuStreamWriteValue32(h.stream, flag(4), 1, 0));
      }
      spin(c, 50000, 1);
      CHECK(cuCtxSetCurrent(c.ctx));
      if (kind > 0) {
        CHECK(cuStreamWriteValue32(c.stream, flag(3), 1, 0));
        CHECK(cuStreamWaitValue32(c.stream, flag(4), 1, CU_STREAM_WAIT_VALUE_GEQ));
      }
      spin(c, 50000, 2);
      sync_both();
      const uint64_t* s = stamps;
      gaps.push_back((s[4] - s[3]) / 1000.0);
      firsts.push_back((s[3] - s[2]) / 1000.0);
      seconds.push_back((s[5] - s[4]) / 1000.0);
    }
    std::printf("case 2 %s: gap between C's spins median %.2f us (min %.2f, max %.2f); "
                "spins %.2f / %.2f us\n",
                names2[kind], Median(gaps), *std::min_element(gaps.begin(), gaps.end()),
                *std::max_element(gaps.begin(), gaps.end()), Median(firsts), Median(seconds));
  }
  return 0;
}
