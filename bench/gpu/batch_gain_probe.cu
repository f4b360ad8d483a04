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
//    flush, a read flush, idle time, an untimed call of another set.
// 3. Whether a read flush evicts lines written (dirty) or read before it:
//    a read of 24 MiB (fits the L2) timed after each preparation.
// Usage: batch_gain_probe [repeats]; prints markdown tables.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

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

// Reads `n` words and keeps the L2 clean (a flush that leaves no dirty lines).
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
  // ms per call of `way`, median over the repeats; the L2 evicted first.
  auto time = [&](Way way, int m, int calls) {
    run(way, m, calls);  // warm: cuBLAS picks and loads its kernels
    CUDA_OK(cudaStreamSynchronize(main_stream));
    std::vector<double> per_call;
    for (int r = 0; r < repeats; ++r) {
      CUDA_OK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, main_stream));
      CUDA_OK(cudaEventRecord(start, main_stream));
      run(way, m, calls);
      CUDA_OK(cudaEventRecord(end, main_stream));
      CUDA_OK(cudaEventSynchronize(end));
      float ms_total = 0;
      CUDA_OK(cudaEventElapsedTime(&ms_total, start, end));
      per_call.push_back(ms_total / calls);
    }
    return Median(per_call);
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
  // Each row: [before] start-event call end-event, median over the repeats.
  std::printf("\n| M | before the call | ms |\n|---|---|---|\n");
  const size_t words = flush_bytes / sizeof(uint4);
  uint4* sink;
  CUDA_OK(cudaMalloc(&sink, sizeof(uint4)));
  const char* befores[] = {"memset flush",
                           "read flush",
                           "memset flush, read flush",
                           "memset flush, 300 us idle",
                           "memset flush, a call of set 1",
                           "memset flush, a call of set 1, 300 us idle",
                           "nothing (the previous repeat's call)",
                           "an empty kernel"};
  for (int m : ms) {
    for (int b = 0; b < 8; ++b) {
      std::vector<double> t;
      for (int r = 0; r <= repeats; ++r) {
        if (b == 0 || b == 2 || b == 3 || b == 4 || b == 5)
          CUDA_OK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, main_stream));
        if (b == 1 || b == 2)
          ReadAll<<<prop.multiProcessorCount * 4, 256, 0, main_stream>>>(
              static_cast<const uint4*>(flush), words, sink);
        if (b == 4 || b == 5) gemm(m, 1, main_stream);
        if (b == 3 || b == 5) Idle<<<1, 32, 0, main_stream>>>(300000);
        if (b == 7) Idle<<<1, 32, 0, main_stream>>>(0);
        CUDA_OK(cudaEventRecord(start, main_stream));
        gemm(m, 0, main_stream);
        CUDA_OK(cudaEventRecord(end, main_stream));
        CUDA_OK(cudaEventSynchronize(end));
        float ms_total = 0;
        CUDA_OK(cudaEventElapsedTime(&ms_total, start, end));
        if (r > 0) t.push_back(ms_total);
      }
      std::printf("| %d | %s | %.4f |\n", m, befores[b], Median(t));
    }
  }

  // Does a flush that reads leave lines written before it in the L2? A read
  // of 24 MiB X (it fits the L2) timed after each preparation: fast = X was
  // still cached.
  const size_t x_bytes = 24u << 20;
  uint4* x;
  CUDA_OK(cudaMalloc(&x, x_bytes));
  const size_t x_words = x_bytes / sizeof(uint4);
  const char* preps[] = {"X written (dirty in the L2)", "X written, read flush",
                         "X written, memset flush", "X read (clean in the L2)",
                         "X read, read flush", "X read, memset flush"};
  std::printf("\n| before the read of X | ms |\n|---|---|\n");
  for (int p = 0; p < 6; ++p) {
    std::vector<double> t;
    for (int r = 0; r <= repeats; ++r) {
      if (p < 3) CUDA_OK(cudaMemsetAsync(x, r & 0xff, x_bytes, main_stream));
      if (p >= 3)
        ReadAll<<<prop.multiProcessorCount * 4, 256, 0, main_stream>>>(x, x_words, sink);
      if (p == 1 || p == 4)
        ReadAll<<<prop.multiProcessorCount * 4, 256, 0, main_stream>>>(
            static_cast<const uint4*>(flush), words, sink);
      if (p == 2 || p == 5) CUDA_OK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, main_stream));
      CUDA_OK(cudaEventRecord(start, main_stream));
      ReadAll<<<prop.multiProcessorCount * 4, 256, 0, main_stream>>>(x, x_words, sink);
      CUDA_OK(cudaEventRecord(end, main_stream));
      CUDA_OK(cudaEventSynchronize(end));
      float ms_total = 0;
      CUDA_OK(cudaEventElapsedTime(&ms_total, start, end));
      if (r > 0) t.push_back(ms_total);
    }
    std::printf("| %s | %.4f |\n", preps[p], Median(t));
  }
  return 0;
}
