#ifndef PTXBENCH_WORKER_GPU_TIMING_H_
#define PTXBENCH_WORKER_GPU_TIMING_H_

// The timing method of docs/MEASUREMENT.md ("Timing"): cold L2 before every
// call (warm-up and timed), 10 warm-up calls, 50 timed calls, summary per
// trial. The time of a call is the span of all GPU work it launched, measured
// one of two ways.
//
// CUPTI (primary; cupti_span.h): max(end) - min(start) over the activity
// records of every kernel, memcpy and memset the call launched, on any
// stream and from any host thread. Harness work (the L2 flush, the hooks'
// work) has other correlation ids and does not count. A call that launched
// no GPU work has span 0. Per call: before hook, L2 flush, device
// synchronize, open the call, run the callable, close it, device
// synchronize, collect the span, after hook. The synchronize after the flush
// costs nothing here (the span starts at the call's first GPU work, so the
// host's latency up to its first launch is not in it) and keeps a kernel the
// call puts on another stream from overlapping the flush. Host gaps between
// the call's own launches are in the span, though: the GPU is idle when the
// call starts, so nothing hides them. cuBLAS at M=8192 makes two activities
// per call; on an H200 it measured 0.767-0.770 ms (CV 0.24-0.27%) with CUPTI
// and 0.782-0.803 ms (CV 5-7%) with events back to back, but with a 1 ms
// idle gap 0.7674 ms against 0.7576 ms (not separated from clock drift).
//
// CUDA events (fallback, when CUPTI cannot be set up: library missing, or
// ncu/nsys hold the CUPTI subscription): events on the caller's stream plus
// a device synchronize. Per call: before hook, L2 flush, start event,
// callable, end event, device synchronize, after hook. There is no
// synchronize between the flush and the start event: stream order already
// keeps the flush out of the span, and while the flush runs (~40 us for an
// H200's 120 MiB) the host enqueues the call, so the span does not include
// the host's launch latency. Seen on an H200, cuBLAS GEMM M=8192 against
// ncu's gpu__time_duration (0.7385 ms): with a sync there, median 0.7634 ms
// (+3.4%); without, 0.7411 ms (+0.35%). Limit of this method: both events
// are on the given stream. Work the callable puts on another stream without
// joining it back is waited for by the synchronize but is outside the event
// span (and may even start during the flush).
//
// Clocks: the card is measured as found (no clock locking). Under sustained
// GEMM load an H200 hits its software power cap and drops from 1980 MHz to
// ~1500 MHz, so back-to-back measurements of a heavy kernel drift by 10-20%.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/gpu/sample_stats.h"
#include "workloads/reference/device_memory.h"

namespace ptxbench::gpu {

// One call of the code under test: it launches its work on `stream` (and any
// other streams it likes) and returns without synchronizing, with all its
// launches issued (work launched after it returns, e.g. by a thread it left
// running, is not the call's). `call_index` counts every call, warm-up
// included, from 0, so the callable can rotate among input sets. A non-OK
// status aborts the measurement.
using TimedCallable = absl::FunctionRef<absl::Status(cudaStream_t stream, int call_index)>;

// How the span of a call is measured (see the top of this file).
enum class SpanMethod {
  kAuto,   // CUPTI where it can be set up, else events
  kCupti,  // CUPTI or an error
  kEvents,
};

struct TimingOptions {
  SpanMethod method = SpanMethod::kAuto;
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
  std::vector<double> samples_ms;  // span of each timed call
  SampleStats stats;               // over samples_ms
  std::string method;              // "cupti" or "events"
  std::string fallback_reason;     // why kAuto used events; empty otherwise
};

// Harness work around each call (warm-up and timed), outside the measured
// span with either method. Both optional; a non-OK status aborts the
// measurement.
struct TimingHooks {
  // Enqueued on `stream` before call i's L2 flush, e.g. fresh inputs and
  // poisoned outputs. Its work must go on `stream` (with events, stream
  // order is what keeps it out of the span).
  std::function<absl::Status(cudaStream_t stream, int call_index)> before;
  // Runs after call i's device synchronize, e.g. to check the outputs.
  std::function<absl::Status(int call_index)> after;
};

// Reads a scratch buffer of 2x the L2 size so no input or output of the
// previous call stays cached and the L2 holds only clean lines, and resets
// persisting-L2 lines. One per device; not thread-safe (one timing run per
// GPU at a time).
class L2Flusher {
 public:
  // Allocates 2x the current device's L2 size (at least 2x 1 MiB).
  static absl::StatusOr<std::unique_ptr<L2Flusher>> Create();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  // Enqueues the flush on `stream`. Also resets persisting-L2 lines
  // (ResetPersisting).
  absl::Status Flush(cudaStream_t stream);
  // Only the scratch read: asynchronous, safe while the stream waits on a
  // gate (the harness, worker/runner/measure/bracket.h).
  absl::Status FlushAsync(cudaStream_t stream);
  // Persisting-L2 lines back to normal, so the next flush evicts them (not
  // stream-ordered: call it where the GPU may be waited for).
  static absl::Status ResetPersisting();
  size_t scratch_bytes() const { return bytes_; }

 private:
  L2Flusher(reference::DeviceMemory scratch, size_t bytes, int sms)
      : scratch_(std::move(scratch)), bytes_(bytes), sms_(sms) {}
  reference::DeviceMemory scratch_;
  size_t bytes_;
  int sms_;
};

// Times `call` on the current device. `flusher` may be null only when
// options.cold_l2 is false. Not for concurrent use within one process (CUPTI
// is process-wide). Errors: kInvalidArgument for bad options,
// kFailedPrecondition when kCupti is asked for and CUPTI cannot be set up
// (with the reason), kInternal for a CUDA or CUPTI error (with the call and
// the error name), or the callable's or a hook's own status.
absl::StatusOr<TimingResult> TimeCalls(TimedCallable call, cudaStream_t stream, L2Flusher* flusher,
                                       const TimingOptions& options = {},
                                       const TimingHooks& hooks = {});

// kInternal "<what>: <cudaGetErrorName>: <cudaGetErrorString>" unless success.
absl::Status CudaStatus(cudaError_t err, const char* what);

}  // namespace ptxbench::gpu

#endif  // PTXBENCH_WORKER_GPU_TIMING_H_
