#ifndef PTXBENCH_WORKER_GPU_TIMING_H_
#define PTXBENCH_WORKER_GPU_TIMING_H_

// The timing method of DESIGN §5, fallback form: CUDA events on the caller's
// stream plus a device synchronize. Cold L2 before every call (warm-up and
// timed), 10 warm-up calls, 50 timed calls, summary per trial.
//
// Per call: enqueue the L2 flush on the stream, record the start event, run
// the callable, record the end event, synchronize the device. There is no
// synchronize between the flush and the start event: stream order already
// keeps the flush out of the span, and while the flush runs (~40 us for an
// H200's 120 MiB) the host enqueues the call, so the span does not include
// the host's launch latency. Seen on an H200, cuBLAS GEMM M=8192 against
// ncu's gpu__time_duration (0.7385 ms): with a sync there, median 0.7634 ms
// (+3.4%); without, 0.7411 ms (+0.35%).
//
// Clocks: the card is measured as found (no clock locking). Under sustained
// GEMM load an H200 hits its software power cap and drops from 1980 MHz to
// ~1500 MHz, so back-to-back measurements of a heavy kernel drift by 10-20%.
//
// Limit of this method: both events are on the given stream. Work the
// callable puts on another stream without joining it back is waited for by
// the synchronize but is outside the event span (and may even start during
// the flush). CUPTI activity records, which span every kernel of the call on
// any stream, are the later step.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/gpu/sample_stats.h"

namespace ptxbench::gpu {

// One call of the code under test: it launches its work on `stream` (and any
// other streams it likes) and returns without synchronizing. `call_index`
// counts every call, warm-up included, from 0, so the callable can rotate
// among input sets. A non-OK status aborts the measurement.
using TimedCallable = absl::FunctionRef<absl::Status(cudaStream_t stream, int call_index)>;

struct TimingOptions {
  int warmup_calls = 10;
  int timed_calls = 50;
  bool cold_l2 = true;  // flush L2 and reset persisting lines before every call
  // Host-side pause after each call. Off by default, on evidence
  // (bench/gpu/NOTES.md, H200): a 1 ms pause keeps a long kernel (M=8192
  // GEMM, 0.75 ms) at the boost clock (10-repeat CV 0.14-0.98% instead of
  // 0.92-1.13%), but short kernels (M=70, 0.03 ms) then start each call from
  // a lower clock and get slower and far noisier (CV of 50 calls 33%).
  absl::Duration idle_between_calls = absl::ZeroDuration();
};

struct TimingResult {
  std::vector<double> samples_ms;  // event span of each timed call
  SampleStats stats;               // over samples_ms
};

// Writes a scratch buffer of 2x the L2 size so no input or output of the
// previous call stays cached, and resets persisting-L2 lines. One per device;
// not thread-safe (one timing run per GPU at a time).
class L2Flusher {
 public:
  // Allocates 2x the current device's L2 size (at least 2x 1 MiB).
  static absl::StatusOr<std::unique_ptr<L2Flusher>> Create();
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  // Enqueues the flush on `stream`; `salt` varies the written value.
  absl::Status Flush(cudaStream_t stream, int salt);
  size_t scratch_bytes() const { return bytes_; }

 private:
  L2Flusher(void* scratch, size_t bytes) : scratch_(scratch), bytes_(bytes) {}
  void* scratch_;
  size_t bytes_;
};

// Times `call` on the current device. `flusher` may be null only when
// options.cold_l2 is false. Errors: kInvalidArgument for bad options,
// kInternal for a CUDA error (with the call and the error name), or the
// callable's own status.
absl::StatusOr<TimingResult> TimeCalls(TimedCallable call, cudaStream_t stream, L2Flusher* flusher,
                                       const TimingOptions& options = {});

// kInternal "<what>: <cudaGetErrorName>: <cudaGetErrorString>" unless success.
absl::Status CudaStatus(cudaError_t err, const char* what);

}  // namespace ptxbench::gpu

#endif  // PTXBENCH_WORKER_GPU_TIMING_H_
