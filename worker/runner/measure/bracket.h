#ifndef PTXBENCH_WORKER_RUNNER_MEASURE_BRACKET_H_
#define PTXBENCH_WORKER_RUNNER_MEASURE_BRACKET_H_

// How the harness times a call made in another process (docs/SECURITY.md,
// "Timing"). Everything that decides the figure happens in the harness's
// CUDA context, which no submitted code can reach:
//
//   harness stream:  [gate] [stage + L2 flush] [start] [write go=g] ...
//                    ... [wait done==g] [end] [checks]
//   host stream:                  [wait go==g] [the call] [write done=g]
//
// The gate (a stream wait on a flag in host memory) holds the harness's
// stream until the host has enqueued its call, so neither process's host
// latency is in the bracket. "go" and "done" are two words of a small
// device allocation the harness shares with the host by file descriptor
// (device_memory.h), written and waited on with CUDA's stream memory
// operations (cuStreamWriteValue32 / cuStreamWaitValue32): they order the
// work of two contexts without interprocess events, which CUDA lets only a
// process of the exporter's uid open, so the candidate host runs as a uid
// of its own. Each call has its own number g; a host that writes the words
// out of turn only fails or stalls its own calls. The bracket end - start is
// the call's GPU time plus the cost of passing the GPU between the two
// contexts twice; that cost is calibrated per host with a kernel of known
// duration (its own %globaltimer span, written into the same allocation)
// run by the host before any submitted code is loaded, and subtracted. The
// output checks follow the end event in the same stream, so work a call
// leaves running past its "done" finds its outputs checked before it
// finished.
//
// A host that does not enqueue within the gate's patience (its run()
// synchronizes on the stream the gate holds, or loads a module) gets the
// gate opened anyway: the call then carries its own host time (logged).
//
// Between Open and the end of Close the harness's stream is held by the
// gate, so no CUDA call made there may wait for that stream: the runner
// loads modules lazily (worker/runner/main.cc), and a kernel's first launch
// there would load its module and wait for good, so every kernel a call
// launches is launched once before the first gate (Bracket::Create,
// L2Flusher::Create, LoadCheckKernels).
//
// Thread-compatible; one call at a time.

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/gpu/stream_memops.h"
#include "workloads/reference/device_memory.h"

namespace ptxbench::runner {

// Where the words are in the shared allocation (bytes): each on its own
// 256-byte line.
struct SyncLayout {
  static constexpr size_t kGo = 0;
  static constexpr size_t kDone = 256;
  static constexpr size_t kStamps = 512;  // two uint64 %globaltimer readings
};

class Bracket {
 public:
  // On the current device; `stream` is the harness's (non-blocking) stream.
  static absl::StatusOr<std::unique_ptr<Bracket>> Create(cudaStream_t stream);
  ~Bracket();
  Bracket(const Bracket&) = delete;
  Bracket& operator=(const Bracket&) = delete;

  // A new descriptor for the shared words (the caller sends and closes
  // it), and their size.
  absl::StatusOr<int> SyncDescriptor() const { return sync_.ExportDescriptor(); }
  int64_t sync_bytes() const { return static_cast<int64_t>(sync_.size()); }

  // Starts a call: gate, `stage` (asynchronous work only), start event, go.
  // The call's number is generation() from here on.
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
  uint32_t generation() const { return generation_; }

 private:
  Bracket() = default;
  absl::Status WaitFor(cudaEvent_t event, absl::Duration timeout);
  void* Word(size_t offset) const { return static_cast<char*>(sync_.data()) + offset; }

  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, end_ = nullptr, marker_ = nullptr;
  gpu::StreamMemOps memops_;
  reference::DeviceMemory sync_;       // go, done, stamps (SyncLayout); shared by descriptor
  unsigned int* gate_host_ = nullptr;  // mapped host memory the gate waits on
  void* gate_device_ = nullptr;
  uint32_t generation_ = 0;
  bool gate_open_ = true;
  // The driver could not wait on the gate's host memory: a spinning
  // one-thread kernel stands in.
  bool gate_kernel_ = false;
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_MEASURE_BRACKET_H_
