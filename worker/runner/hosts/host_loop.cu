#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/gpu/stream_memops.h"
#include "worker/gpu/timing.h"
#include "worker/runner/hosts/host_loop.h"
#include "worker/runner/hosts/kernel_census.h"
#include "worker/runner/hosts/tensor_extents.h"
#include "worker/runner/measure/bracket.h"
#include "workloads/reference/device_memory.h"

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

// The calibration kernel: each block busy for `ns` nanoseconds; says when
// the first block started and the last one ended (%globaltimer only grows,
// so the end of an earlier call never wins the maximum).
__global__ void SpinKernel(long long ns, unsigned long long* stamps) {
  const unsigned long long start = GlobalTimer();
  unsigned long long now = start;
  while (static_cast<long long>(now - start) < ns) now = GlobalTimer();
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) stamps[0] = start;
    atomicMax(&stamps[1], now);
  }
}

// The largest spin shapes a calibration may ask for.
constexpr int kMaxSpinBlocks = 4096;
constexpr int kMaxSpinSmem = 227 * 1024;  // sm_90's per-block maximum
constexpr int kDefaultSmem = 48 * 1024;   // dynamic shared memory without opting in

using reference::DeviceMemory;

// The descriptors of one request, taken in order; those not taken are
// closed with it.
class Descriptors {
 public:
  explicit Descriptors(std::vector<int> fds) : fds_(std::move(fds)) {}
  ~Descriptors() {
    for (size_t i = next_; i < fds_.size(); ++i) close(fds_[i]);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  // The next one, mapped (`size` bytes); the descriptor is used up.
  absl::StatusOr<DeviceMemory> Map(int64_t size) {
    if (next_ >= fds_.size())
      return absl::InvalidArgumentError("a buffer came without its descriptor");
    if (size <= 0) {
      close(fds_[next_++]);
      return absl::InvalidArgumentError("a buffer of no size");
    }
    return DeviceMemory::Import(fds_[next_++], static_cast<size_t>(size));
  }
  size_t size() const { return fds_.size(); }

 private:
  std::vector<int> fds_;
  size_t next_ = 0;
};

class Host {
 public:
  Host(int fd, const Loader& loader) : fd_(fd), loader_(loader) {}

  int Run() {
    while (true) {
      std::vector<int> fds;
      absl::StatusOr<std::string> message =
          protocol::ReceiveMessage(fd_, absl::InfiniteDuration(), kMaxRequestBytes, &fds);
      Descriptors descriptors(std::move(fds));
      if (!message.ok()) return 0;  // the harness is gone
      absl::StatusOr<Request> request = protocol::DecodeRequest(*message);
      if (request.ok() && protocol::DescriptorsOf(*request) != descriptors.size()) {
        request = absl::InvalidArgumentError(absl::StrCat("a request with ", descriptors.size(),
                                                          " descriptors (expected ",
                                                          protocol::DescriptorsOf(*request), ")"));
      }
      if (!request.ok()) {
        if (!Reply(request.status())) return 0;
        continue;
      }
      if (request->op == Op::kQuit) {
        CloseBuffers();
        return 0;
      }
      note_.clear();
      const absl::Status status = Handle(*request, descriptors);
      if (!Reply(status, note_)) return 0;
      // A call's second reply, once its work finished: an asynchronous
      // error (an illegal address...) is reported at once instead of
      // leaving the harness waiting for a "done" that will never come.
      // A candidate's call's says what ran (census.h).
      if (status.ok() && (request->op == Op::kCall || request->op == Op::kCalibrate ||
                          request->op == Op::kEmpty)) {
        const absl::Status finished =
            CudaStatus(cudaStreamSynchronize(stream_), "CUDA error in the call");
        const bool census = request->op == Op::kCall && KernelTracer::running();
        if (!Reply(finished, census ? EncodeCallCensus(KernelTracer::Take()) : "")) return 0;
      }
    }
  }

 private:
  // A failure's reply says why; a success's, `note` (if anything).
  bool Reply(const absl::Status& status, absl::string_view note = "") {
    return protocol::SendMessage(
               fd_, protocol::EncodeReply(status.ok(), status.ok() ? note : status.message()))
        .ok();
  }

  absl::Status Handle(const Request& r, Descriptors& descriptors) {
    switch (r.op) {
      case Op::kSetup:
        return Setup(r, descriptors);
      case Op::kCalibrate:
      case Op::kEmpty:
        return Calibrate(r);
      case Op::kLoad: {
        KernelTracer::MarkSubmission();
        absl::StatusOr<std::unique_ptr<Candidate>> target = loader_(r);
        if (!target.ok()) return target.status();
        target_ = *std::move(target);
        return absl::OkStatus();
      }
      case Op::kWorkload:
        return Workload(r, descriptors);
      case Op::kCall:
        return Call(r);
      case Op::kCompute:
        return Compute(r, descriptors);
      case Op::kQuit:
        break;
    }
    return absl::InvalidArgumentError("unknown request");
  }

  absl::Status Setup(const Request& r, Descriptors& descriptors) {
    if (stream_ != nullptr) return absl::FailedPreconditionError("set up already");
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice(0)"));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                                    "cudaStreamCreate"));
    PTXB_ASSIGN_OR_RETURN(memops_, gpu::StreamMemOps::Load());
    if (r.sync_bytes < static_cast<int64_t>(SyncLayout::kStamps + 2 * sizeof(uint64_t))) {
      return absl::InvalidArgumentError("the bracket's words are too small");
    }
    PTXB_ASSIGN_OR_RETURN(sync_, descriptors.Map(r.sync_bytes));
    // The tracer, before anything submitted can load (the harness reads
    // this reply's note: census.h's CensusRules::off).
    const absl::Status tracer = KernelTracer::Start();
    note_ = tracer.ok() ? "census: on" : absl::StrCat("census: off: ", tracer.message());
    // The spin kernel loaded now, not inside a call.
    SpinKernel<<<1, 32, 0, stream_>>>(0, Stamps());
    return CudaStatus(cudaStreamSynchronize(stream_), "warming the calibration kernel");
  }

  void* Word(size_t offset) const { return static_cast<char*>(sync_.data()) + offset; }
  unsigned long long* Stamps() const {
    return static_cast<unsigned long long*>(Word(SyncLayout::kStamps));
  }

  absl::Status Calibrate(const Request& r) {
    if (stream_ == nullptr) return absl::FailedPreconditionError("no setup yet");
    if (r.op == Op::kCalibrate &&
        (r.spin_blocks < 1 || r.spin_blocks > kMaxSpinBlocks || r.spin_threads < 32 ||
         r.spin_threads > 1024 || r.spin_threads % 32 != 0 || r.spin_smem < 0 ||
         r.spin_smem > kMaxSpinSmem || r.spin_cluster < 1 || r.spin_cluster > 8 ||
         r.spin_blocks % r.spin_cluster != 0)) {
      return absl::InvalidArgumentError("calibration: a spin shape out of range");
    }
    if (r.op == Op::kCalibrate && r.spin_smem > kDefaultSmem) {
      PTXB_RETURN_IF_ERROR(CudaStatus(
          cudaFuncSetAttribute(SpinKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kMaxSpinSmem),
          "calibration: shared memory"));
    }
    PTXB_RETURN_IF_ERROR(memops_.WaitEqual(stream_, Word(SyncLayout::kGo), r.generation));
    if (r.op == Op::kCalibrate) {
      LaunchSpin(r);
    }
    const cudaError_t launch = cudaGetLastError();
    PTXB_RETURN_IF_ERROR(memops_.Write(stream_, Word(SyncLayout::kDone), r.generation));
    return CudaStatus(launch, "calibration kernel launch");
  }

  // A launch error is left for the caller's cudaGetLastError. Clusters of
  // one are a plain launch (no attribute).
  void LaunchSpin(const Request& r) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(r.spin_blocks);
    config.blockDim = dim3(r.spin_threads);
    config.dynamicSmemBytes = r.spin_smem;
    config.stream = stream_;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = r.spin_cluster;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = r.spin_cluster > 1 ? 1 : 0;
    (void)cudaLaunchKernelEx(&config, SpinKernel, static_cast<long long>(r.spin_ns), Stamps());
  }

  void CloseBuffers() {
    extents_.Clear();
    opened_.clear();
    compute_opened_.clear();
  }

  // The harness's buffer `t` for kCompute: mapped from its descriptor the
  // first time, kept for the workload.
  absl::StatusOr<void*> OpenForCompute(const protocol::TensorMeta& t, Descriptors& descriptors) {
    std::map<int64_t, DeviceMemory>& cache = compute_opened_;
    if (t.attached) {
      PTXB_ASSIGN_OR_RETURN(DeviceMemory m, descriptors.Map(t.allocated[0]));
      cache[t.buffer] = std::move(m);
    }
    auto it = cache.find(t.buffer);
    if (it == cache.end()) return absl::InvalidArgumentError("a buffer the host was never given");
    return it->second.data();
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

  absl::Status Workload(const Request& r, Descriptors& descriptors) {
    if (target_ == nullptr) return absl::FailedPreconditionError("nothing loaded");
    for (int s = 0; s < 2; ++s) {
      views_[s].clear();
      pointers_[s].clear();
    }
    CloseBuffers();
    for (const protocol::TensorMeta& t : r.tensors) {
      for (int s = 0; s < 2; ++s) {
        PTXB_ASSIGN_OR_RETURN(DeviceMemory m, descriptors.Map(t.allocated[s]));
        PTXB_ASSIGN_OR_RETURN(ptxb::Tensor view, View(m.data(), t));
        extents_.Mark(m.data(), static_cast<size_t>(t.allocated[s]),
                      static_cast<size_t>(ViewBytes(view)));
        opened_.push_back(std::move(m));
        views_[s].push_back(view);
      }
    }
    for (int s = 0; s < 2; ++s) {
      for (const ptxb::Tensor& v : views_[s]) pointers_[s].push_back(&v);
    }
    return target_->SetWorkload(r);
  }

  // Runs the loaded code on the harness's own buffers and waits for it.
  absl::Status Compute(const Request& r, Descriptors& descriptors) {
    if (target_ == nullptr) return absl::FailedPreconditionError("nothing loaded");
    std::vector<ptxb::Tensor> views;
    for (const protocol::TensorMeta& t : r.tensors) {
      PTXB_ASSIGN_OR_RETURN(void* p, OpenForCompute(t, descriptors));
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
    if (r.calls < 1 || r.calls > protocol::kMaxCallsPerBracket) {
      return absl::InvalidArgumentError("a bracket's calls out of range");
    }
    KernelTracer::Discard();  // what ran before this call is not its
    PTXB_RETURN_IF_ERROR(memops_.WaitEqual(stream_, Word(SyncLayout::kGo), r.generation));
    absl::Status call;
    for (int i = 0; i < r.calls && call.ok(); ++i) {
      const int set = r.set ^ (i & 1);
      call = target_->Call(pointers_[set].data(), static_cast<int>(pointers_[set].size()), stream_);
    }
    const cudaError_t launch = cudaGetLastError();
    // "done" is written whatever happened, so the harness's stream moves on.
    const absl::Status done = memops_.Write(stream_, Word(SyncLayout::kDone), r.generation);
    if (!call.ok()) return call;
    PTXB_RETURN_IF_ERROR(CudaStatus(launch, "CUDA error after run()"));
    return done;
  }

  const int fd_;
  const Loader& loader_;
  std::string note_;  // the text of the current request's first reply, when it succeeds
  cudaStream_t stream_ = nullptr;
  gpu::StreamMemOps memops_;
  DeviceMemory sync_;  // the bracket's words (bracket.h SyncLayout)
  std::unique_ptr<Candidate> target_;
  std::vector<DeviceMemory> opened_;                // both sets of the workload's tensors
  TensorExtents extents_;  // their own bytes, told to compute-sanitizer
  std::map<int64_t, DeviceMemory> compute_opened_;  // buffer id -> mapping, for kCompute
  std::vector<ptxb::Tensor> views_[2];
  std::vector<const ptxb::Tensor*> pointers_[2];
};

}  // namespace

int RunHostLoop(int fd, const Loader& loader) { return Host(fd, loader).Run(); }

}  // namespace ptxbench::runner
