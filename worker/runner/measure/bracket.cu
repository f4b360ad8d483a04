#include <sched.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"
#include "worker/runner/measure/bracket.h"
#include "worker/runner/measure/progress.h"

namespace ptxbench::runner {
namespace {

using gpu::CudaStatus;

// Stands in for a stream wait on the gate where the driver cannot wait on
// host memory: one thread polls the flag.
__global__ void GateKernel(const volatile unsigned int* flag, unsigned int generation) {
  while (*flag < generation) __nanosleep(1000);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Bracket>> Bracket::Create(cudaStream_t stream) {
  auto b = std::unique_ptr<Bracket>(new Bracket);
  b->stream_ = stream;
  // Loaded now: the runner's modules load lazily (worker/runner/main.cc).
  cudaFuncAttributes gate{};
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaFuncGetAttributes(&gate, GateKernel), "loading the gate"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&b->start_), "cudaEventCreate(start)"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&b->end_), "cudaEventCreate(end)"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreateWithFlags(&b->marker_, cudaEventDisableTiming),
                                  "cudaEventCreate(marker)"));
  PTXB_ASSIGN_OR_RETURN(b->memops_, gpu::StreamMemOps::Load());
  PTXB_ASSIGN_OR_RETURN(
      b->sync_, reference::DeviceMemory::Allocate(SyncLayout::kStamps + 64,
                                                  reference::DeviceMemory::Sharing::kByDescriptor));
  PTXB_RETURN_IF_ERROR(CudaStatus(
      cudaHostAlloc(reinterpret_cast<void**>(&b->gate_host_), sizeof(unsigned int),
                    cudaHostAllocMapped),
      "cudaHostAlloc(gate)"));
  *b->gate_host_ = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaHostGetDevicePointer(&b->gate_device_, b->gate_host_, 0),
                                  "cudaHostGetDevicePointer(gate)"));
  return b;
}

Bracket::~Bracket() {
  ReleaseGate();
  for (cudaEvent_t e : {start_, end_, marker_}) {
    if (e != nullptr) cudaEventDestroy(e);
  }
  if (gate_host_ != nullptr) cudaFreeHost(gate_host_);
}

absl::Status Bracket::Open(const std::function<absl::Status(cudaStream_t)>& stage) {
  ++generation_;
  gate_open_ = false;
  if (!gate_kernel_ && !memops_.WaitAtLeast(stream_, gate_device_, generation_).ok()) {
    gate_kernel_ = true;  // the kernel from now on
  }
  if (gate_kernel_) {
    GateKernel<<<1, 1, 0, stream_>>>(static_cast<const unsigned int*>(gate_device_), generation_);
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "gate kernel launch"));
  }
  PTXB_RETURN_IF_ERROR(stage(stream_));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(start_, stream_), "cudaEventRecord(start)"));
  return memops_.Write(stream_, Word(SyncLayout::kGo), generation_);
}

void Bracket::ReleaseGate() {
  if (gate_open_ || gate_host_ == nullptr) return;
  __atomic_store_n(gate_host_, generation_, __ATOMIC_SEQ_CST);
  gate_open_ = true;
}

absl::Status Bracket::Close(const std::function<absl::Status(cudaStream_t)>& after) {
  const absl::Status status = [&]() -> absl::Status {
    At("call: close: wait for done");
    PTXB_RETURN_IF_ERROR(memops_.WaitEqual(stream_, Word(SyncLayout::kDone), generation_));
    At("call: close: end event");
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(end_, stream_), "cudaEventRecord(end)"));
    At("call: close: checks");
    PTXB_RETURN_IF_ERROR(after(stream_));
    At("call: close: marker");
    return CudaStatus(cudaEventRecord(marker_, stream_), "cudaEventRecord(marker)");
  }();
  ReleaseGate();
  return status;
}

absl::Status Bracket::WaitFor(cudaEvent_t event, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (int spins = 0;; ++spins) {
    const cudaError_t r = cudaEventQuery(event);
    if (r == cudaSuccess) return absl::OkStatus();
    if (r != cudaErrorNotReady) return CudaStatus(r, "waiting for the call");
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the call's GPU work did not finish within ", absl::FormatDuration(timeout)));
    }
    // Short calls are waited for briskly; long ones without burning a core.
    if (spins < 2000) {
      sched_yield();
    } else {
      usleep(200);
    }
  }
}

absl::StatusOr<double> Bracket::Finish(absl::Duration timeout) {
  PTXB_RETURN_IF_ERROR(WaitFor(marker_, timeout));
  float ms = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventElapsedTime(&ms, start_, end_), "cudaEventElapsedTime"));
  return static_cast<double>(ms);
}

absl::Status Bracket::Abandon(absl::Duration timeout) {
  ReleaseGate();
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(marker_, stream_), "cudaEventRecord(marker)"));
  return WaitFor(marker_, timeout);
}

absl::StatusOr<double> Bracket::StampSpanMs() {
  unsigned long long stamps[2] = {0, 0};
  PTXB_RETURN_IF_ERROR(CudaStatus(
      cudaMemcpy(stamps, Word(SyncLayout::kStamps), sizeof(stamps), cudaMemcpyDeviceToHost),
      "stamps"));
  if (stamps[1] < stamps[0]) return absl::InternalError("calibration stamps out of order");
  return static_cast<double>(stamps[1] - stamps[0]) / 1e6;
}

}  // namespace ptxbench::runner
