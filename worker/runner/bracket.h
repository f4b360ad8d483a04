#ifndef PTXBENCH_WORKER_RUNNER_BRACKET_H_
#define PTXBENCH_WORKER_RUNNER_BRACKET_H_

// How the harness times a call made in another process (docs/SECURITY.md,
// "Timing"). Everything that decides the figure happens in the harness's
// CUDA context, which no submitted code can reach:
//
//   harness stream:  [gate] [stage + L2 flush] [start] [record go] ...
//                    ... [wait done] [end] [checks]
//   host stream:                  [wait go] [the call] [record done]
//
// The gate (a stream wait on a flag in host memory) holds the harness's
// stream until the host has enqueued its call, so neither process's host
// latency is in the bracket; "go" and "done" are interprocess events (the
// only way to order work of two contexts). The bracket end - start is the
// call's GPU time plus the cost of passing the GPU between the two contexts
// twice; that cost is calibrated per host with a kernel of known duration
// (its own %globaltimer span) run by the host before any submitted code is
// loaded, and subtracted. The output checks follow the end event in the
// same stream, so work a call leaves running past its "done" finds its
// outputs checked before it finished.
//
// A host that does not enqueue within the gate's patience (its run()
// synchronizes on the stream the gate holds, or loads a module) gets the
// gate opened anyway: the call then carries its own host time (logged).
//
// Between Open and the end of Close the harness's stream is held by the
// gate, so no CUDA call made there may wait for that stream: the runner
// loads its modules eagerly (worker/runner/main.cc), as a kernel's first
// launch would otherwise load its module there and wait for good.
//
// Thread-compatible; one call at a time.

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ptxbench::runner {

class Bracket {
 public:
  // On the current device; `stream` is the harness's (non-blocking) stream.
  static absl::StatusOr<std::unique_ptr<Bracket>> Create(cudaStream_t stream);
  ~Bracket();
  Bracket(const Bracket&) = delete;
  Bracket& operator=(const Bracket&) = delete;

  // IPC handles (hex) a host opens: the two events and the calibration
  // stamps (two uint64 %globaltimer readings written by the host's spin).
  const std::string& go_handle() const { return go_handle_; }
  const std::string& done_handle() const { return done_handle_; }
  const std::string& stamps_handle() const { return stamps_handle_; }

  // Starts a call: gate, `stage` (asynchronous work only), start event, go.
  absl::Status Open(const std::function<absl::Status(cudaStream_t)>& stage);
  // Lets the harness's stream run (idempotent within a call).
  void ReleaseGate();
  // After the host replied that its call is enqueued: wait for done, end
  // event, `after` (asynchronous: the checks), a marker; releases the gate.
  absl::Status Close(const std::function<absl::Status(cudaStream_t)>& after);
  // Waits (at most `timeout`) for everything Close enqueued; the bracket in
  // ms. kDeadlineExceeded when the GPU work did not finish in time (the
  // stream is then unusable).
  absl::StatusOr<double> Finish(absl::Duration timeout);
  // A call abandoned before Close (the host failed or vanished): releases
  // the gate and waits for what was enqueued. 
  absl::Status Abandon(absl::Duration timeout);
  // The host's spin span from the stamps of the last calibration call (ms).
  absl::StatusOr<double> StampSpanMs();

  cudaStream_t stream() const { return stream_; }

 private:
  Bracket() = default;
  absl::Status WaitFor(cudaEvent_t event, absl::Duration timeout);

  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, end_ = nullptr, marker_ = nullptr;
  cudaEvent_t go_ = nullptr, done_ = nullptr;  // interprocess
  unsigned int* gate_host_ = nullptr;  // mapped host memory the gate waits on
  void* gate_device_ = nullptr;
  unsigned int generation_ = 0;
  bool gate_open_ = true;
  unsigned long long* stamps_ = nullptr;  // device, exported
  std::string go_handle_, done_handle_, stamps_handle_;
  // cuStreamWaitValue32 through the runtime's driver entry point; null: a
  // spinning one-thread kernel stands in.
  void* wait_value_ = nullptr;
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_BRACKET_H_
