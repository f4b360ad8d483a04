#include "worker/runner/bracket.h"

#include <cuda.h>
#include <sched.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"
#include "worker/runner/progress.h"
#include "worker/runner/protocol.h"

namespace ptxbench::runner {
namespace {

using gpu::CudaStatus;
using WaitValueFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// Stands in for cuStreamWaitValue32 where the driver has no stream memory
// operations: one thread polls the flag.
__global__ void GateKernel(const volatile unsigned int* flag, unsigned int generation) {
  while (*flag < generation) __nanosleep(1000);
}

template <typename T>
std::string Hex(const T& handle) {
  return protocol::HexEncode(absl::string_view(reinterpret_cast<const char*>(&handle), sizeof(handle)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Bracket>> Bracket::Create(cudaStream_t stream) {
  auto b = std::unique_ptr<Bracket>(new Bracket);
  b->stream_ = stream;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&b->start_), "cudaEventCreate(start)"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&b->end_), "cudaEventCreate(end)"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreateWithFlags(&b->marker_, cudaEventDisableTiming),
                                  "cudaEventCreate(marker)"));
  const unsigned ipc = cudaEventInterprocess | cudaEventDisableTiming;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreateWithFlags(&b->go_, ipc), "cudaEventCreate(go)"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventCreateWithFlags(&b->done_, ipc), "cudaEventCreate(done)"));
  cudaIpcEventHandle_t go, done;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaIpcGetEventHandle(&go, b->go_), "cudaIpcGetEventHandle(go)"));
  PTXB_RETURN_IF_ERROR(
      CudaStatus(cudaIpcGetEventHandle(&done, b->done_), "cudaIpcGetEventHandle(done)"));
  b->go_handle_ = Hex(go);
  b->done_handle_ = Hex(done);
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMalloc(&b->stamps_, 2 * sizeof(unsigned long long)),
                                  "cudaMalloc(stamps)"));
  cudaIpcMemHandle_t stamps;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaIpcGetMemHandle(&stamps, b->stamps_), "cudaIpcGetMemHandle"));
  b->stamps_handle_ = Hex(stamps);
  PTXB_RETURN_IF_ERROR(CudaStatus(
      cudaHostAlloc(reinterpret_cast<void**>(&b->gate_host_), sizeof(unsigned int),
                    cudaHostAllocMapped),
      "cudaHostAlloc(gate)"));
  *b->gate_host_ = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaHostGetDevicePointer(&b->gate_device_, b->gate_host_, 0),
                                  "cudaHostGetDevicePointer(gate)"));
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  void* fn = nullptr;
  if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault,
                                       &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess) {
    b->wait_value_ = fn;
  }
  return b;
}

Bracket::~Bracket() {
  ReleaseGate();
  for (cudaEvent_t e : {start_, end_, marker_, go_, done_}) {
    if (e != nullptr) cudaEventDestroy(e);
  }
  if (stamps_ != nullptr) cudaFree(stamps_);
  if (gate_host_ != nullptr) cudaFreeHost(gate_host_);
}

absl::Status Bracket::Open(const std::function<absl::Status(cudaStream_t)>& stage) {
  ++generation_;
  gate_open_ = false;
  bool gated = false;
  if (wait_value_ != nullptr) {
    gated = reinterpret_cast<WaitValueFn>(wait_value_)(
                static_cast<CUstream>(stream_), reinterpret_cast<CUdeviceptr>(gate_device_),
                generation_, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS;
    if (!gated) wait_value_ = nullptr;  // the kernel from now on
  }
  if (!gated) {
    GateKernel<<<1, 1, 0, stream_>>>(static_cast<const unsigned int*>(gate_device_), generation_);
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "gate kernel launch"));
  }
  PTXB_RETURN_IF_ERROR(stage(stream_));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(start_, stream_), "cudaEventRecord(start)"));
  return CudaStatus(cudaEventRecord(go_, stream_), "cudaEventRecord(go)");
}

void Bracket::ReleaseGate() {
  if (gate_open_ || gate_host_ == nullptr) return;
  __atomic_store_n(gate_host_, generation_, __ATOMIC_SEQ_CST);
  gate_open_ = true;
}

absl::Status Bracket::Close(const std::function<absl::Status(cudaStream_t)>& after) {
  const absl::Status status = [&]() -> absl::Status {
    At("call: close: wait for done");
    PTXB_RETURN_IF_ERROR(
        CudaStatus(cudaStreamWaitEvent(stream_, done_, 0), "cudaStreamWaitEvent(done)"));
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
  PTXB_RETURN_IF_ERROR(
      CudaStatus(cudaMemcpy(stamps, stamps_, sizeof(stamps), cudaMemcpyDeviceToHost), "stamps"));
  if (stamps[1] < stamps[0]) return absl::InternalError("calibration stamps out of order");
  return static_cast<double>(stamps[1] - stamps[0]) / 1e6;
}

}  // namespace ptxbench::runner
