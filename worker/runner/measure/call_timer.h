#ifndef PTXBENCH_WORKER_RUNNER_MEASURE_CALL_TIMER_H_
#define PTXBENCH_WORKER_RUNNER_MEASURE_CALL_TIMER_H_

// Calls made in a host process (host_loop.h) and timed by the harness
// (bracket.h): the channel to a host, one bracketed call with its outcome
// in the harness's terms, and a host's setup and calibration. Used by the
// harness (harness.h) for the reference host and the candidate host alike.

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/gpu/timing.h"
#include "worker/runner/measure/bracket.h"
#include "worker/runner/wire/call_outcome.h"
#include "worker/runner/wire/protocol.h"

namespace ptxbench::runner {

// One end of a host's channel; `gone` says in words why a host vanished.
class HostChannel {
 public:
  HostChannel(int fd, std::function<std::string()> gone) : fd_(fd), gone_(std::move(gone)) {}
  ~HostChannel();
  HostChannel(const HostChannel&) = delete;
  HostChannel& operator=(const HostChannel&) = delete;

  // `descriptors` travel with the request (protocol::DescriptorsOf says how
  // many it carries); they stay open here.
  absl::Status Send(const protocol::Request& r, const std::vector<int>& descriptors = {});
  // kDeadlineExceeded, kUnavailable (gone), kDataLoss (a malformed reply).
  // A reply never brings descriptors: whatever a host attaches is dropped.
  absl::StatusOr<protocol::Reply> Receive(absl::Duration timeout);
  absl::StatusOr<protocol::Reply> Ask(const protocol::Request& r, absl::Duration timeout,
                                      const std::vector<int>& descriptors = {});
  std::string WhyGone() const { return gone_(); }

 private:
  const int fd_;
  std::function<std::string()> gone_;
};

// OK for kOk, else kInternal with the message (for trusted hosts' calls).
absl::Status ToStatus(const CallResult& r);

// The cost of a call in a host, measured before anything untrusted runs.
struct Calibration {
  double overhead_ms = 0;   // median of (bracket - a spin kernel's own span)
  double tolerance_ms = 0;  // p90 - p10 of that, plus 5 us
  std::string log;
};

class CallTimer {
 public:
  // On the current device; `stream` is the harness's non-blocking stream.
  static absl::StatusOr<std::unique_ptr<CallTimer>> Create(cudaStream_t stream,
                                                           absl::Duration call_deadline);

  // One bracketed call. `stage` (before the start event) and `after`
  // (right after the end event) enqueue asynchronous work only.
  CallResult Call(HostChannel& host, const protocol::Request& request,
                  const std::function<absl::Status(cudaStream_t)>& stage,
                  const std::function<absl::Status(cudaStream_t)>& after);
  // kSetup (the events and stamps), then calibration calls.
  absl::StatusOr<Calibration> SetUpHost(HostChannel& host, absl::string_view name);
  // The set-up alone (the shared words): a profile run times nothing, and
  // its profiler would profile every calibration kernel.
  absl::Status SetUpHostWithoutCalibration(HostChannel& host);
  // Benchmarks only (RunnerJob::calibration_survey), after SetUpHost: the
  // call overhead measured with spin kernels of other launch shapes and
  // durations, one log line each, for finding what the hand-over of a real
  // kernel costs beyond the calibration kernel's (bench/gpu/NOTES.md).
  absl::StatusOr<std::string> SurveyCalibration(HostChannel& host, absl::string_view name);
  // After a call whose GPU work never finished the stream is unusable.
  bool stream_stuck() const { return stream_stuck_; }
  // What the last host set up said of itself (its tracer: census.h).
  const std::string& setup_note() const { return setup_note_; }

 private:
  CallTimer() = default;
  // Bracket minus the spin kernel's own span, per measured call.
  absl::StatusOr<std::vector<double>> SpinOffsets(HostChannel& host, const protocol::Request& spin,
                                                  int calls, int* forced);

  std::unique_ptr<Bracket> bracket_;
  std::unique_ptr<gpu::L2Flusher> flusher_;
  absl::Duration call_deadline_;
  bool stream_stuck_ = false;
  std::string setup_note_;
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_MEASURE_CALL_TIMER_H_
