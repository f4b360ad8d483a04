#include "worker/runner/host_loop.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"

namespace ptxbench::runner {
namespace {

using gpu::CudaStatus;
using protocol::Op;
using protocol::Request;

// Requests are small but for kWorkload's handles; far below this.
constexpr size_t kMaxRequestBytes = 1 << 20;

__device__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The calibration kernel: busy for `ns` nanoseconds, and says when it ran.
__global__ void SpinKernel(long long ns, unsigned long long* stamps) {
  const unsigned long long start = GlobalTimer();
  unsigned long long now = start;
  while (static_cast<long long>(now - start) < ns) now = GlobalTimer();
  if (threadIdx.x == 0) {
    stamps[0] = start;
    stamps[1] = now;
  }
}

template <typename T>
absl::StatusOr<T> DecodeHandle(const std::string& hex) {
  PTXB_ASSIGN_OR_RETURN(std::string bytes, protocol::HexDecode(hex, sizeof(T)));
  T handle;
  std::memcpy(&handle, bytes.data(), sizeof(T));
  return handle;
}

class Host {
 public:
  Host(int fd, const Loader& loader) : fd_(fd), loader_(loader) {}

  int Run() {
    while (true) {
      absl::StatusOr<std::string> message =
          protocol::ReceiveMessage(fd_, absl::InfiniteDuration(), kMaxRequestBytes);
      if (!message.ok()) return 0;  // the harness is gone
      absl::StatusOr<Request> request = protocol::DecodeRequest(*message);
      if (!request.ok()) {
        if (!Reply(request.status())) return 0;
        continue;
      }
      if (request->op == Op::kQuit) {
        CloseBuffers();
        return 0;
      }
      const absl::Status status = Handle(*request);
      if (!Reply(status)) return 0;
      // A call's second reply, once its work finished: an asynchronous
      // error (an illegal address...) is reported at once instead of
      // leaving the harness waiting for a "done" that will never come.
      if (status.ok() && (request->op == Op::kCall || request->op == Op::kCalibrate ||
                          request->op == Op::kEmpty)) {
        if (!Reply(CudaStatus(cudaStreamSynchronize(stream_), "CUDA error in the call"))) return 0;
      }
    }
  }

 private:
  bool Reply(const absl::Status& status) {
    return protocol::SendMessage(fd_, protocol::EncodeReply(status.ok(), status.message())).ok();
  }

  absl::Status Handle(const Request& r) {
    switch (r.op) {
      case Op::kSetup:
        return Setup(r);
      case Op::kCalibrate:
      case Op::kEmpty:
        return Calibrate(r);
      case Op::kLoad: {
        absl::StatusOr<std::unique_ptr<Candidate>> target = loader_(r);
        if (!target.ok()) return target.status();
        target_ = *std::move(target);
        return absl::OkStatus();
      }
      case Op::kWorkload:
        return Workload(r);
      case Op::kCall:
        return Call(r);
      case Op::kCompute:
        return Compute(r);
      case Op::kQuit:
        break;
    }
    return absl::InvalidArgumentError("unknown request");
  }

  absl::Status Setup(const Request& r) {
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice(0)"));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                                    "cudaStreamCreate"));
    PTXB_ASSIGN_OR_RETURN(cudaIpcEventHandle_t go, DecodeHandle<cudaIpcEventHandle_t>(r.go_event));
    PTXB_ASSIGN_OR_RETURN(cudaIpcEventHandle_t done, DecodeHandle<cudaIpcEventHandle_t>(r.done_event));
    PTXB_ASSIGN_OR_RETURN(cudaIpcMemHandle_t stamps, DecodeHandle<cudaIpcMemHandle_t>(r.stamps));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaIpcOpenEventHandle(&go_, go), "cudaIpcOpenEventHandle(go)"));
    PTXB_RETURN_IF_ERROR(
        CudaStatus(cudaIpcOpenEventHandle(&done_, done), "cudaIpcOpenEventHandle(done)"));
    void* p = nullptr;
    PTXB_RETURN_IF_ERROR(CudaStatus(
        cudaIpcOpenMemHandle(&p, stamps, cudaIpcMemLazyEnablePeerAccess), "open stamps"));
    stamps_ = static_cast<unsigned long long*>(p);
    // The spin kernel loaded now, not inside a call.
    SpinKernel<<<1, 32, 0, stream_>>>(0, stamps_);
    return CudaStatus(cudaStreamSynchronize(stream_), "warming the calibration kernel");
  }

  absl::Status Calibrate(const Request& r) {
    if (stream_ == nullptr) return absl::FailedPreconditionError("no setup yet");
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamWaitEvent(stream_, go_, 0), "wait for go"));
    if (r.op == Op::kCalibrate) SpinKernel<<<1, 32, 0, stream_>>>(r.spin_ns, stamps_);
    const cudaError_t launch = cudaGetLastError();
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaEventRecord(done_, stream_), "record done"));
    return CudaStatus(launch, "calibration kernel launch");
  }

  void CloseBuffers() {
    for (void* p : opened_) cudaIpcCloseMemHandle(p);
    opened_.clear();
    for (const auto& [handle, p] : compute_opened_) cudaIpcCloseMemHandle(p);
    compute_opened_.clear();
  }

  // The harness's buffer behind `hex` for kCompute, opened once per workload.
  absl::StatusOr<void*> OpenForCompute(const std::string& hex) {
    std::map<std::string, void*>& cache = compute_opened_;
    if (auto it = cache.find(hex); it != cache.end()) return it->second;
    PTXB_ASSIGN_OR_RETURN(cudaIpcMemHandle_t h, DecodeHandle<cudaIpcMemHandle_t>(hex));
    void* p = nullptr;
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess),
                                    "cudaIpcOpenMemHandle"));
    cache[hex] = p;
    return p;
  }

  static absl::StatusOr<ptxb::Tensor> View(void* data, const protocol::TensorMeta& t) {
    if (t.sizes.size() > PTXB_MAX_DIMS) return absl::InvalidArgumentError("too many dimensions");
    ptxb::Tensor view{};
    view.data = data;
    view.ndim = static_cast<int>(t.sizes.size());
    for (size_t d = 0; d < t.sizes.size(); ++d) view.sizes[d] = t.sizes[d];
    view.dtype = static_cast<ptxb::DType>(t.dtype);
    return view;
  }

  absl::Status Workload(const Request& r) {
    if (target_ == nullptr) return absl::FailedPreconditionError("nothing loaded");
    CloseBuffers();
    for (int s = 0; s < 2; ++s) {
      views_[s].clear();
      pointers_[s].clear();
    }
    for (const protocol::TensorMeta& t : r.tensors) {
      for (int s = 0; s < 2; ++s) {
        PTXB_ASSIGN_OR_RETURN(cudaIpcMemHandle_t h, DecodeHandle<cudaIpcMemHandle_t>(t.handles[s]));
        void* p = nullptr;
        PTXB_RETURN_IF_ERROR(CudaStatus(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess),
                                        "cudaIpcOpenMemHandle"));
        opened_.push_back(p);
        PTXB_ASSIGN_OR_RETURN(ptxb::Tensor view, View(p, t));
        views_[s].push_back(view);
      }
    }
    for (int s = 0; s < 2; ++s) {
      for (const ptxb::Tensor& v : views_[s]) pointers_[s].push_back(&v);
    }
    return target_->SetWorkload(r);
  }

  // Runs the loaded code on the harness's own buffers and waits for it.
  absl::Status Compute(const Request& r) {
    if (target_ == nullptr) return absl::FailedPreconditionError("nothing loaded");
    std::vector<ptxb::Tensor> views;
    for (const protocol::TensorMeta& t : r.tensors) {
      PTXB_ASSIGN_OR_RETURN(void* p, OpenForCompute(t.handles[0]));
      PTXB_ASSIGN_OR_RETURN(ptxb::Tensor view, View(p, t));
      views.push_back(view);
    }
    std::vector<const ptxb::Tensor*> pointers;
    for (const ptxb::Tensor& v : views) pointers.push_back(&v);
    PTXB_RETURN_IF_ERROR(
        target_->Compute(pointers.data(), static_cast<int>(pointers.size()), stream_));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "CUDA error after the reference"));
    return CudaStatus(cudaStreamSynchronize(stream_), "CUDA error in the reference's work");
  }

  absl::Status Call(const Request& r) {
    if (target_ == nullptr || r.set < 0 || r.set > 1) {
      return absl::FailedPreconditionError("no workload for the call");
    }
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamWaitEvent(stream_, go_, 0), "wait for go"));
    const absl::Status call = target_->Call(pointers_[r.set].data(),
                                            static_cast<int>(pointers_[r.set].size()), stream_);
    const cudaError_t launch = cudaGetLastError();
    // "done" is recorded whatever happened, so the harness's stream moves on.
    const cudaError_t record = cudaEventRecord(done_, stream_);
    if (!call.ok()) return call;
    PTXB_RETURN_IF_ERROR(CudaStatus(launch, "CUDA error after run()"));
    return CudaStatus(record, "record done");
  }

  const int fd_;
  const Loader& loader_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t go_ = nullptr, done_ = nullptr;
  unsigned long long* stamps_ = nullptr;
  std::unique_ptr<Candidate> target_;
  std::vector<void*> opened_;
  std::map<std::string, void*> compute_opened_;  // handle (hex) -> mapping
  std::vector<ptxb::Tensor> views_[2];
  std::vector<const ptxb::Tensor*> pointers_[2];
};

}  // namespace

int RunHostLoop(int fd, const Loader& loader) { return Host(fd, loader).Run(); }

}  // namespace ptxbench::runner
