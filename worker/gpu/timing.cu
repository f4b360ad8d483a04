#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"

namespace ptxbench::gpu {

absl::Status CudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err)));
}

absl::StatusOr<std::unique_ptr<L2Flusher>> L2Flusher::Create() {
  int device = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&device), "cudaGetDevice"));
  int l2 = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device),
                                  "cudaDeviceGetAttribute(L2CacheSize)"));
  const size_t bytes = 2 * std::max<size_t>(static_cast<size_t>(l2), size_t{1} << 20);
  void* scratch = nullptr;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&scratch, bytes), "cudaMalloc(L2 scratch)"));
  return std::unique_ptr<L2Flusher>(new L2Flusher(scratch, bytes));
}

L2Flusher::~L2Flusher() { cudaFree(scratch_); }

absl::Status L2Flusher::Flush(cudaStream_t stream, int salt) {
  // Writing (not reading) evicts every line, dirty ones included; a changing
  // value keeps the driver from treating repeated memsets as no-ops.
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemsetAsync(scratch_, salt & 0xff, bytes_, stream),
                                  "cudaMemsetAsync(L2 scratch)"));
  return CudaStatus(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
}

absl::StatusOr<TimingResult> TimeCalls(TimedCallable call, cudaStream_t stream, L2Flusher* flusher,
                                       const TimingOptions& options) {
  if (options.warmup_calls < 0 || options.timed_calls <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("timing needs warmup_calls >= 0 and timed_calls > 0, got ",
                     options.warmup_calls, " and ", options.timed_calls));
  }
  if (options.cold_l2 && flusher == nullptr) {
    return absl::InvalidArgumentError("cold_l2 timing needs an L2Flusher");
  }
  cudaEvent_t start = nullptr, end = nullptr;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start), "cudaEventCreate"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&end), "cudaEventCreate"));
  struct Events {
    cudaEvent_t a, b;
    ~Events() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } events{start, end};

  TimingResult result;
  result.samples_ms.reserve(options.timed_calls);
  const int total = options.warmup_calls + options.timed_calls;
  for (int i = 0; i < total; ++i) {
    // The previous call ended with a device synchronize, so nothing is in
    // flight; the flush precedes the start event in stream order (timing.h).
    if (options.cold_l2) PTXB_RETURN_IF_ERROR(flusher->Flush(stream, i));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(start, stream), "cudaEventRecord(start)"));
    PTXB_RETURN_IF_ERROR(call(stream, i));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "kernel launch in timed call"));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(end, stream), "cudaEventRecord(end)"));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize(after call)"));
    if (options.idle_between_calls > absl::ZeroDuration()) absl::SleepFor(options.idle_between_calls);
    if (i < options.warmup_calls) continue;
    float ms = 0;
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime"));
    result.samples_ms.push_back(ms);
  }
  result.stats = Summarize(result.samples_ms);
  return result;
}

}  // namespace ptxbench::gpu
