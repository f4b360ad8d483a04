// libptxbench-host.so: the host loop (host_loop.h) for a host process whose
// code is in another language — the PyTorch reference host
// (worker/runner/torch_host.py), which loads it with ctypes. The loop keeps
// the protocol, the buffers it maps from the harness's descriptors, the
// bracket's words and the calibration kernel in ptxbench's C++; the host's
// own code comes in as three callbacks. The library's CUDA runtime is the process's (torch loads it
// first), so the stream a callback gets is usable by torch.

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "worker/runner/candidate.h"
#include "worker/runner/host_loop.h"

extern "C" {

// Each returns 0, or non-zero with a NUL-terminated message in `error`.
struct ptxb_host_callbacks {
  // kLoad: the definition's JSON text.
  int (*load)(const char* definition_json, char* error, int error_size);
  // kWorkload: {"axes": {...}, "scalars": {name: value as the dataset wrote it}}.
  int (*workload)(const char* workload_json, char* error, int error_size);
  // A timing call (keep_outputs 0: the result is dropped) or a compute call
  // (1: the result is written into the output views). `stream` is a
  // cudaStream_t; views: inputs, then outputs.
  int (*call)(const ptxb::Tensor* const* views, int count, void* stream, int keep_outputs,
              char* error, int error_size);
};

// Serves the harness on `fd` until it quits; the process's exit code.
__attribute__((visibility("default"))) int ptxb_host_serve(int fd,
                                                           const ptxb_host_callbacks* callbacks);
}

namespace ptxbench::runner {
namespace {

constexpr int kErrorSize = 4096;

absl::Status Outcome(int rc, const char* error) {
  if (rc == 0) return absl::OkStatus();
  return absl::AbortedError(error[0] != '\0' ? error : "the host's callback failed");
}

class CallbackTarget final : public Candidate {
 public:
  explicit CallbackTarget(const ptxb_host_callbacks& callbacks) : callbacks_(callbacks) {}

  absl::Status SetWorkload(const protocol::Request& r) override {
    nlohmann::json scalars = nlohmann::json::object();
    for (const auto& [name, value] : r.scalars) {
      scalars[name] = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    }
    const std::string text = nlohmann::json{{"axes", r.axes}, {"scalars", scalars}}.dump();
    char error[kErrorSize] = {};
    return Outcome(callbacks_.workload(text.c_str(), error, kErrorSize), error);
  }
  absl::Status Call(const ptxb::Tensor* const* views, int count, cudaStream_t stream) override {
    return Invoke(views, count, stream, 0);
  }
  absl::Status Compute(const ptxb::Tensor* const* views, int count, cudaStream_t stream) override {
    return Invoke(views, count, stream, 1);
  }

 private:
  absl::Status Invoke(const ptxb::Tensor* const* views, int count, cudaStream_t stream, int keep) {
    char error[kErrorSize] = {};
    return Outcome(callbacks_.call(views, count, stream, keep, error, kErrorSize), error);
  }

  const ptxb_host_callbacks callbacks_;
};

}  // namespace
}  // namespace ptxbench::runner

int ptxb_host_serve(int fd, const ptxb_host_callbacks* callbacks) {
  namespace runner = ptxbench::runner;
  if (callbacks == nullptr) return 2;
  const ptxb_host_callbacks copy = *callbacks;
  return runner::RunHostLoop(
      fd, [copy](const runner::protocol::Request& r)
              -> absl::StatusOr<std::unique_ptr<runner::Candidate>> {
        char error[runner::kErrorSize] = {};
        if (absl::Status s = runner::Outcome(copy.load(r.definition.c_str(), error, runner::kErrorSize), error);
            !s.ok()) {
          return s;
        }
        return std::make_unique<runner::CallbackTarget>(copy);
      });
}
