// Developer probe (issue 31, item 3): three tables about a short call's
// time, in one process and one context, with cuBLAS's bf16 "TN" GEMM as the
// reference runs it (N = 7168, K = 5120) and CUDA events.
//
// 1. What a host that may batch gains when a bracket holds several calls
//    whose inputs it can all see before the bracket starts: the price of
//    amortizing a bracket's first-call cost over K calls (docs/DECISIONS.md,
//    "Short kernels"). GPU time per call of K calls on K distinct input sets
//    (events around the group, the L2 evicted first, median of the repeats):
//      sequential   one after another in one stream (the honest host)
//      streams      on K streams at once
//      batched      one strided-batched GEMM over the K sets
//      same-B       one strided-batched GEMM over K A's and one B (inputs whose
//                   weights repeat between the calls)
// 2. What precedes one timed call and what it costs that call: a memset
//    flush, the harness's flush (gpu::L2Flusher, a read), idle time, an
//    untimed call of another set.
// 3. Whether a read flush evicts lines written (dirty) or read before it:
//    a read of 24 MiB (fits the L2) timed after each preparation.
// Usage: batch_gain_probe [repeats]; prints markdown tables.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "worker/gpu/timing.h"

namespace {

#define CUDA_OK(x)                                                                      \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,                    \
                   cudaGetErrorString(e_));                                             \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)
#define CUBLAS_OK(x)                                                                \
  do {                                                                              \
    cublasStatus_t s_ = (x);                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
      std::fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

constexpr int kN = 7168, kK = 5120, kMaxCalls = 8;

__global__ void Fill(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    p[i] = __float2bfloat16(static_cast<float>(h % 2001) / 1000.0f - 1.0f);
  }
}

// Reads `n` words (the timed read of table 3).
__global__ void ReadAll(const uint4* p, size_t n, uint4* sink) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint4 v = p[i];
    acc.x ^= v.x;
    acc.y ^= v.y;
  }
  if (acc.x == 0x12345678u && acc.y == 0x9abcdef0u) *sink = acc;
}

__device__ __forceinline__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void Idle(unsigned long long ns) {
  const unsigned long long start = GlobalTimer();
  while (GlobalTimer() - start < ns) {
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 30;
  const int ms[] = {70, 232, 972};
  const int max_m = 972;
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  const size_t a_set = static_cast<size_t>(max_m) * kK, b_set = static_cast<size_t>(kN) * kK,
               c_set = static_cast<size_t>(max_m) * kN;
  __nv_bfloat16 *a, *b, *c;
  CUDA_OK(cudaMalloc(&a, a_set * kMaxCalls * sizeof(__nv_bfloat16)));
  CUDA_OK(cudaMalloc(&b, b_set * kMaxCalls * sizeof(__nv_bfloat16)));
  CUDA_OK(cudaMalloc(&c, c_set * kMaxCalls * sizeof(__nv_bfloat16)));
  Fill<<<1024, 256>>>(a, a_set * kMaxCalls, 1);
  Fill<<<1024, 256>>>(b, b_set * kMaxCalls, 2);
  const size_t flush_bytes = 2 * static_cast<size_t>(prop.l2CacheSize);
  void* flush;
  CUDA_OK(cudaMalloc(&flush, flush_bytes));
  // The read flush is the harness's own.
  absl::StatusOr<std::unique_ptr<ptxbench::gpu::L2Flusher>> flusher =
      ptxbench::gpu::L2Flusher::Create();
  if (!flusher.ok()) {
    std::fprintf(stderr, "%s\n", flusher.status().ToString().c_str());
    return 1;
  }
  cudaStream_t main_stream;
  CUDA_OK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
  std::vector<cudaStream_t> side(kMaxCalls);
  std::vector<cudaEvent_t> joined(kMaxCalls);
  for (int i = 0; i < kMaxCalls; ++i) {
    CUDA_OK(cudaStreamCreateWithFlags(&side[i], cudaStreamNonBlocking));
    CUDA_OK(cudaEventCreateWithFlags(&joined[i], cudaEventDisableTiming));
  }
  cudaEvent_t start, end, forked;
  CUDA_OK(cudaEventCreate(&start));
  CUDA_OK(cudaEventCreate(&end));
  CUDA_OK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
  cublasHandle_t handle;
  CUBLAS_OK(cublasCreate(&handle));
  const float alpha = 1.0f, beta = 0.0f;

  // One GEMM of set i on `stream` (row-major C[M,N] = A[M,K] B[N,K]^T).
  auto gemm = [&](int m, int i, cudaStream_t stream) {
    CUBLAS_OK(cublasSetStream(handle, stream));
    CUBLAS_OK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, kN, m, kK, &alpha, b + b_set * i,
                           CUDA_R_16BF, kK, a + a_set * i, CUDA_R_16BF, kK, &beta, c + c_set * i,
                           CUDA_R_16BF, kN, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  auto batched = [&](int m, int calls, long long stride_b) {
    CUBLAS_OK(cublasSetStream(handle, main_stream));
    CUBLAS_OK(cublasGemmStridedBatchedEx(
        handle, CUBLAS_OP_T, CUBLAS_OP_N, kN, m, kK, &alpha, b, CUDA_R_16BF, kK, stride_b, a,
        CUDA_R_16BF, kK, static_cast<long long>(a_set), &beta, c, CUDA_R_16BF, kN,
        static_cast<long long>(c_set), calls, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  enum Way { kSequential, kStreams, kBatched, kSameB };
  auto run = [&](Way way, int m, int calls) {
    switch (way) {
      case kSequential:
        for (int i = 0; i < calls; ++i) gemm(m, i, main_stream);
        break;
      case kStreams:
        CUDA_OK(cudaEventRecord(forked, main_stream));
        for (int i = 0; i < calls; ++i) {
          CUDA_OK(cudaStreamWaitEvent(side[i], forked));
          gemm(m, i, side[i]);
          CUDA_OK(cudaEventRecord(joined[i], side[i]));
          CUDA_OK(cudaStreamWaitEvent(main_stream, joined[i]));
        }
        break;
      case kBatched:
        batched(m, calls, static_cast<long long>(b_set));
        break;
      case kSameB:
        batched(m, calls, 0);
        break;
    }
  };
  // The median over the repeats of the events' span around `timed`, with
  // `before` enqueued ahead of the start event; a first round untimed.
  auto median_ms = [&](const auto& before, const auto& timed) {
    std::vector<double> spans;
    for (int r = 0; r <= repeats; ++r) {
      before(r);
      CUDA_OK(cudaEventRecord(start, main_stream));
      timed();
      CUDA_OK(cudaEventRecord(end, main_stream));
      CUDA_OK(cudaEventSynchronize(end));
      float ms = 0;
      CUDA_OK(cudaEventElapsedTime(&ms, start, end));
      if (r > 0) spans.push_back(ms);
    }
    return Median(spans);
  };
  auto memset_flush = [&](int r) {
    CUDA_OK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, main_stream));
  };
  auto read_flush = [&] {
    if (const absl::Status s = (*flusher)->FlushAsync(main_stream); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::exit(1);
    }
  };
  // ms per call of `way` after a memset flush (the harness's flush when this
  // table was first measured).
  auto time = [&](Way way, int m, int calls) {
    return median_ms(memset_flush, [&] { run(way, m, calls); }) / calls;
  };

  std::printf("%s, %d repeats, ms per call (median); gain = sequential / fastest other\n\n",
              prop.name, repeats);
  std::printf("| M | calls | sequential | streams | batched | same-B | gain |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int m : ms) {
    for (int calls : {1, 2, 4, 8}) {
      const double seq = time(kSequential, m, calls), str = time(kStreams, m, calls),
                   bat = time(kBatched, m, calls), same = time(kSameB, m, calls);
      const double best = std::min({str, bat, same});
      std::printf("| %d | %d | %.4f | %.4f | %.4f | %.4f | %.2fx |\n", m, calls, seq, str, bat,
                  same, seq / best);
    }
  }

  // What precedes one timed call of set 0, and what it costs that call.
  struct Before {
    const char* name;
    bool memset, read, call_of_set_1, idle;
    unsigned long long idle_ns;  // the idle kernel's span (0: an empty kernel)
  };
  const Before befores[] = {
      {"memset flush", true, false, false, false, 0},
      {"read flush", false, true, false, false, 0},
      {"memset flush, read flush", true, true, false, false, 0},
      {"memset flush, 300 us idle", true, false, false, true, 300000},
      {"memset flush, a call of set 1", true, false, true, false, 0},
      {"memset flush, a call of set 1, 300 us idle", true, false, true, true, 300000},
      {"nothing (the previous repeat's call)", false, false, false, false, 0},
      {"an empty kernel", false, false, false, true, 0}};
  std::printf("\n| M | before the call | ms |\n|---|---|---|\n");
  for (int m : ms) {
    for (const Before& b : befores) {
      const double t = median_ms(
          [&](int r) {
            if (b.memset) memset_flush(r);
            if (b.read) read_flush();
            if (b.call_of_set_1) gemm(m, 1, main_stream);
            if (b.idle) Idle<<<1, 32, 0, main_stream>>>(b.idle_ns);
          },
          [&] { gemm(m, 0, main_stream); });
      std::printf("| %d | %s | %.4f |\n", m, b.name, t);
    }
  }

  // Does a flush that reads leave lines written before it in the L2? A read
  // of 24 MiB X (it fits the L2) timed after each preparation: fast = X was
  // still cached.
  const size_t x_bytes = 24u << 20;
  uint4* x;
  CUDA_OK(cudaMalloc(&x, x_bytes));
  uint4* sink;
  CUDA_OK(cudaMalloc(&sink, sizeof(uint4)));
  auto read_x = [&] {
    ReadAll<<<prop.multiProcessorCount * 4, 256, 0, main_stream>>>(x, x_bytes / sizeof(uint4),
                                                                   sink);
  };
  std::printf("\n| before the read of X | ms |\n|---|---|\n");
  for (bool written : {true, false}) {
    for (int flush_kind = 0; flush_kind < 3; ++flush_kind) {  // none, read, memset
      const double t = median_ms(
          [&](int r) {
            if (written) {
              CUDA_OK(cudaMemsetAsync(x, r & 0xff, x_bytes, main_stream));
            } else {
              read_x();
            }
            if (flush_kind == 1) read_flush();
            if (flush_kind == 2) memset_flush(r);
          },
          read_x);
      const char* flushes[] = {"", ", read flush", ", memset flush"};
      std::printf("| X %s%s | %.4f |\n", written ? "written" : "read", flushes[flush_kind], t);
    }
  }
  return 0;
}
