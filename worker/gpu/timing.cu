#include <algorithm>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "worker/gpu/cupti_span.h"
#include "worker/gpu/timing.h"

namespace ptxbench::gpu {

absl::Status CudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err)));
}

namespace {

// Reads n 16-byte words through the L2. The scratch is zero-filled and
// nothing writes it, so the store never happens; the compiler cannot know,
// and keeps every load.
__global__ void ReadScratch(uint4* p, size_t n) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(p + i);
    acc |= v.x | v.y | v.z | v.w;
  }
  if (acc != 0) p->x = acc;
}

}  // namespace

absl::StatusOr<std::unique_ptr<L2Flusher>> L2Flusher::Create() {
  int device = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetDevice(&device), "cudaGetDevice"));
  int l2 = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device),
                                  "cudaDeviceGetAttribute(L2CacheSize)"));
  const size_t bytes = 2 * std::max<size_t>(static_cast<size_t>(l2), size_t{1} << 20);
  // Private memory like every buffer of an evaluation process
  // (workloads/reference/device_memory.h).
  PTXB_ASSIGN_OR_RETURN(reference::DeviceMemory scratch, reference::DeviceMemory::Allocate(bytes));
  int sms = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count"));
  auto flusher = std::unique_ptr<L2Flusher>(new L2Flusher(std::move(scratch), bytes, sms));
  // One launch now loads the kernel (modules load lazily in the runner, and
  // a first launch behind the harness's gate would wait for good). The
  // legacy stream: the caller's streams are not waited for.
  ReadScratch<<<1, 32>>>(static_cast<uint4*>(flusher->scratch_.data()), 0);
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "launching the L2 flush"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(0), "loading the L2 flush"));
  return flusher;
}

absl::Status L2Flusher::FlushAsync(cudaStream_t stream) {
  // Reading, not writing: a memset evicts as well, but leaves the L2 full of
  // dirty lines that the next kernel pays to write back as its own misses
  // evict them (measured on an H100: +9 us on a 29 us GEMM; bench/gpu/NOTES.md,
  // "the flush's dirty lines"). Reads evict written lines too.
  ReadScratch<<<4 * sms_, 256, 0, stream>>>(static_cast<uint4*>(scratch_.data()),
                                            bytes_ / sizeof(uint4));
  return CudaStatus(cudaGetLastError(), "the L2 flush");
}

absl::Status L2Flusher::ResetPersisting() {
  return CudaStatus(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
}

absl::Status L2Flusher::Flush(cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(FlushAsync(stream));
  return ResetPersisting();
}

namespace {

// Measures the span of one call at a time, by one of the methods of timing.h.
// Per call: Open (after the flush), the callable, Close, the caller's device
// synchronize, SpanMs.
class SpanTimer {
 public:
  virtual ~SpanTimer() = default;
  virtual absl::Status Open(cudaStream_t stream) = 0;
  virtual absl::Status Close(cudaStream_t stream) = 0;
  virtual absl::StatusOr<double> SpanMs() = 0;
};

class EventSpanTimer final : public SpanTimer {
 public:
  static absl::StatusOr<std::unique_ptr<SpanTimer>> Create() {
    auto timer = std::unique_ptr<EventSpanTimer>(new EventSpanTimer);
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&timer->start_), "cudaEventCreate"));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&timer->end_), "cudaEventCreate"));
    return timer;
  }
  ~EventSpanTimer() override {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (end_ != nullptr) cudaEventDestroy(end_);
  }
  // No synchronize after the flush: stream order keeps the flush out of the
  // span, and the host enqueues the call while the flush runs (timing.h).
  absl::Status Open(cudaStream_t stream) override {
    return CudaStatus(cudaEventRecord(start_, stream), "cudaEventRecord(start)");
  }
  absl::Status Close(cudaStream_t stream) override {
    return CudaStatus(cudaEventRecord(end_, stream), "cudaEventRecord(end)");
  }
  absl::StatusOr<double> SpanMs() override {
    float ms = 0;
    PTXB_RETURN_IF_ERROR(
        CudaStatus(cudaEventElapsedTime(&ms, start_, end_), "cudaEventElapsedTime"));
    return ms;
  }

 private:
  EventSpanTimer() = default;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t end_ = nullptr;
};

class CuptiSpanTimer final : public SpanTimer {
 public:
  explicit CuptiSpanTimer(CuptiSpanRecorder* recorder) : recorder_(recorder) {}
  // An aborted measurement leaves no call open.
  ~CuptiSpanTimer() override { recorder_->EndCall(); }
  // The span is GPU time only, so this synchronize adds nothing to it; it
  // keeps work the call puts on another stream from overlapping the flush.
  absl::Status Open(cudaStream_t) override {
    PTXB_RETURN_IF_ERROR(
        CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize(after L2 flush)"));
    recorder_->BeginCall();
    return absl::OkStatus();
  }
  absl::Status Close(cudaStream_t) override {
    recorder_->EndCall();
    return absl::OkStatus();
  }
  absl::StatusOr<double> SpanMs() override {
    PTXB_ASSIGN_OR_RETURN(CallSpan span, recorder_->CollectSpan());
    return absl::ToDoubleMilliseconds(span.span);
  }

 private:
  CuptiSpanRecorder* const recorder_;
};

// The timer for options.method; sets result->method and fallback_reason.
absl::StatusOr<std::unique_ptr<SpanTimer>> MakeSpanTimer(SpanMethod method, TimingResult* result) {
  if (method != SpanMethod::kEvents) {
    absl::StatusOr<CuptiSpanRecorder*> recorder = CuptiSpanRecorder::Get();
    if (recorder.ok()) {
      result->method = "cupti";
      return std::unique_ptr<SpanTimer>(new CuptiSpanTimer(*recorder));
    }
    if (method == SpanMethod::kCupti) return recorder.status();
    result->fallback_reason = std::string(recorder.status().message());
  }
  result->method = "events";
  return EventSpanTimer::Create();
}

}  // namespace

absl::StatusOr<TimingResult> TimeCalls(TimedCallable call, cudaStream_t stream, L2Flusher* flusher,
                                       const TimingOptions& options, const TimingHooks& hooks) {
  if (options.warmup_calls < 0 || options.timed_calls <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("timing needs warmup_calls >= 0 and timed_calls > 0, got ",
                     options.warmup_calls, " and ", options.timed_calls));
  }
  if (options.cold_l2 && flusher == nullptr) {
    return absl::InvalidArgumentError("cold_l2 timing needs an L2Flusher");
  }
  TimingResult result;
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<SpanTimer> timer, MakeSpanTimer(options.method, &result));

  result.samples_ms.reserve(options.timed_calls);
  const int total = options.warmup_calls + options.timed_calls;
  for (int i = 0; i < total; ++i) {
    // The previous call ended with a device synchronize, so nothing is in
    // flight.
    if (hooks.before) PTXB_RETURN_IF_ERROR(hooks.before(stream, i));
    if (options.cold_l2) PTXB_RETURN_IF_ERROR(flusher->Flush(stream));
    PTXB_RETURN_IF_ERROR(timer->Open(stream));
    const absl::Status call_status = call(stream, i);
    const absl::Status close_status = timer->Close(stream);
    PTXB_RETURN_IF_ERROR(call_status);
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "kernel launch in timed call"));
    PTXB_RETURN_IF_ERROR(close_status);
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize(after call)"));
    PTXB_ASSIGN_OR_RETURN(const double ms, timer->SpanMs());
    if (hooks.after) PTXB_RETURN_IF_ERROR(hooks.after(i));
    if (options.idle_between_calls > absl::ZeroDuration()) absl::SleepFor(options.idle_between_calls);
    if (i >= options.warmup_calls) result.samples_ms.push_back(ms);
  }
  result.stats = Summarize(result.samples_ms);
  return result;
}

}  // namespace ptxbench::gpu
