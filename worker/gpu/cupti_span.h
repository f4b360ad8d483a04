#ifndef PTXBENCH_WORKER_GPU_CUPTI_SPAN_H_
#define PTXBENCH_WORKER_GPU_CUPTI_SPAN_H_

// A span method of docs/MEASUREMENT.md's first design, kept for the GPU
// benchmarks: CUPTI activity records. The span of a call is max(end) -
// min(start) over every kernel, memcpy and memset that the call launched, from
// any host thread and on any stream; GPU work that was launched outside the
// call (the harness's L2 flush, input preparation, output checks) does not
// count.
//
// How: while a call is open, a CUPTI callback on every runtime and driver API
// entry notes the API call's correlation id; CUPTI's activity records
// (CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET; not KIND_KERNEL, which
// serializes kernels) carry the correlation id of the API call that launched
// them, so after the device has finished, a flush of CUPTI's buffers yields
// exactly the call's records.
//
// libcupti is loaded at run time (dlopen "libcupti.so.13", then
// "libcupti.so"), so binaries start where it is missing; Get() then says why
// and the caller falls back to CUDA events (timing.h).

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ptxbench::gpu {

// What CUPTI saw of one call.
struct CallSpan {
  // max(end) - min(start) over the call's activities; zero when the call
  // launched no GPU work.
  absl::Duration span = absl::ZeroDuration();
  int activities = 0;  // kernels, memcpys and memsets the call launched
};

// Process-wide: CUPTI admits one subscriber per process, and once set up the
// activity tracing stays on for the life of the process (every kernel of the
// process then produces a record; those outside a call are dropped at the
// next flush). Never destroyed.
//
// Thread safety: CUPTI's callbacks may run on any thread and are handled
// under a mutex. BeginCall / EndCall / CollectSpan form one sequence that
// only one caller at a time may run (one timing run per process, as the
// worker's one-evaluation-per-process isolation gives).
class CuptiSpanRecorder {
 public:
  // The process's recorder, set up on first use. When CUPTI cannot be used
  // (library missing or too old, another CUPTI client such as ncu or nsys
  // holds the subscription, ...) kFailedPrecondition says why, on this and
  // every later call.
  static absl::StatusOr<CuptiSpanRecorder*> Get();

  CuptiSpanRecorder(const CuptiSpanRecorder&) = delete;
  CuptiSpanRecorder& operator=(const CuptiSpanRecorder&) = delete;

  // Opens a call: GPU work launched from now until EndCall(), by any host
  // thread, belongs to it. Discards whatever a previous call left.
  void BeginCall();
  // Closes the call; later launches are not the call's. Idempotent.
  void EndCall();
  // After EndCall() and once the device has finished the call's work (a
  // cudaDeviceSynchronize): flushes CUPTI's buffers and returns the span.
  // kFailedPrecondition outside that sequence; kInternal if CUPTI fails to
  // flush, dropped records, or delivered a record of the call without
  // timestamps.
  absl::StatusOr<CallSpan> CollectSpan();

 private:
  struct Api;                   // the libcupti entry points (cupti_span.cc)
  friend struct CuptiHandlers;  // CUPTI's callbacks (cupti_span.cc)

  explicit CuptiSpanRecorder(const Api* api) : api_(api) {}
  static absl::StatusOr<CuptiSpanRecorder*> Create();

  // From the API callback: the calling thread is entering a CUDA API call.
  void NoteApiCall(uint32_t correlation_id);
  // From the buffer-completed callback: one kernel, memcpy or memset.
  struct Activity {
    uint32_t correlation_id;
    uint64_t start_ns, end_ns;
  };
  void NoteActivities(const Activity* activities, size_t count, size_t dropped);

  const Api* const api_;
  // Fast check for the API callback, which runs on every CUDA API call of the
  // process; call_open_ under mu_ is the authority.
  std::atomic<bool> open_hint_{false};

  absl::Mutex mu_;
  bool call_open_ ABSL_GUARDED_BY(mu_) = false;
  bool call_closed_ ABSL_GUARDED_BY(mu_) = false;  // EndCall since BeginCall
  absl::flat_hash_set<uint32_t> call_ids_ ABSL_GUARDED_BY(mu_);
  int activities_ ABSL_GUARDED_BY(mu_) = 0;
  int without_timestamps_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t min_start_ns_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t max_end_ns_ ABSL_GUARDED_BY(mu_) = 0;
  size_t dropped_ ABSL_GUARDED_BY(mu_) = 0;  // since BeginCall
};

}  // namespace ptxbench::gpu

#endif  // PTXBENCH_WORKER_GPU_CUPTI_SPAN_H_
