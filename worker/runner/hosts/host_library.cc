// libptxbench-host.so: the host loop (host_loop.h) for a host process whose
// code is in Python: the PyTorch reference host (worker/runner/hosts/torch_host.py)
// and the Triton candidate host (triton_host.py), which load it with ctypes.
// The loop keeps the protocol, the buffers it maps from the harness's
// descriptors, the bracket's words and the calibration kernel in ptxbench's
// C++, on a thread of its own; the Python thread asks it for the next thing
// only its own code can do (load, workload, call) and answers. Python is
// never called back from C: a ctypes callback needs memory that is both
// writable and executable, which the Triton candidate's sandbox refuses. The
// library's CUDA runtime is the process's (torch loads it first), so the
// stream a request carries is usable by torch.

#include <cuda_runtime_api.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "worker/runner/hosts/candidate.h"
#include "worker/runner/hosts/host_loop.h"

extern "C" {

// What ptxb_host_next hands the host's code.
enum ptxb_host_kind {
  PTXB_HOST_ENDED = 0,     // the loop ended: `count` is the process's exit code
  PTXB_HOST_LOAD = 1,      // `text`: the definition's JSON
  PTXB_HOST_WORKLOAD = 2,  // `text`: {"axes": {...}, "scalars": {name: value}}
  // A call on `views` (inputs, then outputs; `count` of them) on `stream` (a
  // cudaStream_t): a timing call (`keep` 0: a reference's result is dropped)
  // or a reference's compute call (1: the result goes into the output views).
  PTXB_HOST_CALL = 3,
};

// Starts the loop on channel `fd` on a thread of its own; 0, or -1 when it
// was started already.
__attribute__((visibility("default"))) int ptxb_host_start(int fd);
// Waits for the next request for the host's code; its kind, and its fields
// in the out-parameters (valid until ptxb_host_answer).
__attribute__((visibility("default"))) int ptxb_host_next(const char** text,
                                                          const ptxb::Tensor* const** views,
                                                          int* count, void** stream, int* keep);
// The answer to the request ptxb_host_next gave: 0, or non-zero with a
// message saying why it failed.
__attribute__((visibility("default"))) void ptxb_host_answer(int rc, const char* error);
}

namespace ptxbench::runner {
namespace {

// One request at a time between the loop's thread and the host's.
class Handoff {
 public:
  struct Request {
    int kind = PTXB_HOST_ENDED;
    std::string text;
    const ptxb::Tensor* const* views = nullptr;
    int count = 0;
    cudaStream_t stream = nullptr;
    int keep = 0;
  };

  // The loop's side: hands `r` over and waits for the answer.
  absl::Status Ask(Request r) {
    std::unique_lock<std::mutex> lock(mu_);
    request_ = std::move(r);
    posted_ = true;
    answered_ = false;
    changed_.notify_all();
    changed_.wait(lock, [this] { return answered_; });
    if (rc_ == 0) return absl::OkStatus();
    return absl::AbortedError(error_.empty() ? "the host's code failed" : error_);
  }
  // The loop ended with `code`: every later Next says so.
  void End(int code) {
    std::lock_guard<std::mutex> lock(mu_);
    request_ = Request{};
    request_.count = code;
    posted_ = true;
    ended_ = true;
    changed_.notify_all();
  }
  // The host's side.
  const Request& Next() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return posted_; });
    if (!ended_) posted_ = false;
    return request_;
  }
  void Answer(int rc, const char* error) {
    std::lock_guard<std::mutex> lock(mu_);
    rc_ = rc;
    error_ = error != nullptr ? error : "";
    answered_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  Request request_;
  bool posted_ = false, answered_ = false, ended_ = false;
  int rc_ = 0;
  std::string error_;
};

Handoff& TheHandoff() {
  static auto* handoff = new Handoff;
  return *handoff;
}

class HandedOffTarget final : public Candidate {
 public:
  absl::Status SetWorkload(const protocol::Request& r) override {
    nlohmann::json scalars = nlohmann::json::object();
    for (const auto& [name, value] : r.scalars) {
      scalars[name] = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    }
    Handoff::Request h;
    h.kind = PTXB_HOST_WORKLOAD;
    h.text = nlohmann::json{{"axes", r.axes}, {"scalars", scalars}}.dump();
    return TheHandoff().Ask(std::move(h));
  }
  absl::Status Call(const ptxb::Tensor* const* views, int count, cudaStream_t stream) override {
    return Invoke(views, count, stream, 0);
  }
  absl::Status Compute(const ptxb::Tensor* const* views, int count, cudaStream_t stream) override {
    return Invoke(views, count, stream, 1);
  }

 private:
  static absl::Status Invoke(const ptxb::Tensor* const* views, int count, cudaStream_t stream,
                             int keep) {
    Handoff::Request h;
    h.kind = PTXB_HOST_CALL;
    h.views = views;
    h.count = count;
    h.stream = stream;
    h.keep = keep;
    return TheHandoff().Ask(std::move(h));
  }
};

}  // namespace
}  // namespace ptxbench::runner

int ptxb_host_start(int fd) {
  namespace runner = ptxbench::runner;
  static bool started = false;
  if (started) return -1;
  started = true;
  std::thread([fd] {
    const int code = runner::RunHostLoop(
        fd, [](const runner::protocol::Request& r)
                -> absl::StatusOr<std::unique_ptr<runner::Candidate>> {
          runner::Handoff::Request h;
          h.kind = PTXB_HOST_LOAD;
          h.text = r.definition;
          if (absl::Status s = runner::TheHandoff().Ask(std::move(h)); !s.ok()) return s;
          return std::make_unique<runner::HandedOffTarget>();
        });
    runner::TheHandoff().End(code);
  }).detach();
  return 0;
}

int ptxb_host_next(const char** text, const ptxb::Tensor* const** views, int* count,
                   void** stream, int* keep) {
  const ptxbench::runner::Handoff::Request& r = ptxbench::runner::TheHandoff().Next();
  *text = r.text.c_str();
  *views = r.views;
  *count = r.count;
  *stream = r.stream;
  *keep = r.keep;
  return r.kind;
}

void ptxb_host_answer(int rc, const char* error) {
  ptxbench::runner::TheHandoff().Answer(rc, error);
}
