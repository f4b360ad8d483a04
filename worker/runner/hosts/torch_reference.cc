#include "worker/runner/hosts/torch_reference.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"

extern char** environ;

namespace ptxbench::runner {
namespace {

using protocol::Op;
using protocol::Request;

// The runner's environment for the reference host, but: CUDA's lazy module
// loading (the runner's EAGER would load every kernel of torch at start, GBs
// and a minute), and a HOME and TMPDIR it can use after dropping to the
// sandbox uid (the runner's private directory is not its own).
std::vector<std::string> TorchEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view v(*e);
    if (absl::StartsWith(v, "CUDA_MODULE_LOADING=") || absl::StartsWith(v, "HOME=") ||
        absl::StartsWith(v, "TMPDIR=")) {
      continue;
    }
    env.emplace_back(v);
  }
  for (const char* v : {"HOME=/tmp", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1",
                        "PYTHONUNBUFFERED=1", "CUDA_MODULE_LOADING=LAZY"}) {
    env.emplace_back(v);
  }
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

absl::StatusOr<pid_t> StartTorchHost(Isolation& isolation, const TorchHostSpec& spec, int channel,
                                     const std::vector<int>& close_fds) {
  if (spec.python.empty()) {
    return absl::FailedPreconditionError(
        "the definition's reference is PyTorch code and this worker has no Python with torch "
        "(start it with --torch-python PATH)");
  }
  // Everything the child needs is made before the fork: it only execs.
  std::vector<std::string> args = {spec.python, spec.script, "--channel", "3", "--library",
                                   spec.library};
  std::vector<std::string> env = TorchEnvironment();
  std::vector<char*> argv = Pointers(args), envp = Pointers(env);
  return isolation.ForkReferenceHost([&]() {
    for (int fd : close_fds) close(fd);
    if (channel == 3) {
      fcntl(3, F_SETFD, 0);
    } else if (dup2(channel, 3) != 3) {
      return 126;
    }
    execve(argv[0], argv.data(), envp.data());
    std::fprintf(stderr, "ptxbench-runner: cannot start %s: %s\n", argv[0], std::strerror(errno));
    return 127;
  });
}

absl::StatusOr<protocol::TensorMeta> TorchHostLink::Export(const TensorBuffer& t,
                                                           std::vector<int>* descriptors) {
  auto it = ids_.find(t.data());
  if (it == ids_.end()) it = ids_.emplace(t.data(), static_cast<int64_t>(ids_.size())).first;
  protocol::TensorMeta m;
  m.name = t.name;
  m.dtype = static_cast<int>(t.dtype());
  m.sizes.assign(t.view.sizes, t.view.sizes + t.view.ndim);
  m.buffer = it->second;
  m.allocated[0] = t.allocated();
  if (!sent_.contains(m.buffer)) {
    PTXB_ASSIGN_OR_RETURN(const int fd, t.ExportDescriptor());
    descriptors->push_back(fd);
    m.attached = true;
    sent_.insert(m.buffer);
  }
  return m;
}

absl::Status TorchHostLink::Ask(const Request& r, const std::vector<int>& descriptors) {
  if (channel_ == nullptr) return absl::FailedPreconditionError("the PyTorch reference host is not up");
  absl::StatusOr<protocol::Reply> reply = channel_->Ask(r, timeout_, descriptors);
  if (!reply.ok()) {
    return absl::InternalError(absl::StrCat("the PyTorch reference host: ", reply.status().message(),
                                            "; ", channel_->WhyGone()));
  }
  if (!reply->ok) return absl::InternalError(absl::StrCat("the PyTorch reference: ", reply->text));
  return absl::OkStatus();
}

absl::Status TorchHostLink::Compute(size_t index, const Request& workload,
                                    const std::vector<TensorBuffer>& in,
                                    std::vector<TensorBuffer>& out) {
  if (current_ != index) {
    PTXB_RETURN_IF_ERROR(Ask(workload));
    Selected(index);
  }
  Request compute{Op::kCompute};
  std::vector<int> descriptors;
  auto add = [&](const TensorBuffer& t) -> absl::Status {
    PTXB_ASSIGN_OR_RETURN(protocol::TensorMeta m, Export(t, &descriptors));
    compute.tensors.push_back(std::move(m));
    return absl::OkStatus();
  };
  absl::Status status;
  for (const TensorBuffer& t : in) {
    if (status.ok()) status = add(t);
  }
  for (const TensorBuffer& t : out) {
    if (status.ok()) status = add(t);
  }
  compute.num_inputs = static_cast<int>(in.size());
  if (status.ok()) status = Ask(compute, descriptors);
  for (int fd : descriptors) close(fd);
  // A request that did not arrive whole leaves the host without them.
  if (!status.ok()) sent_.clear();
  return status;
}

absl::Status TorchReference::Run(const std::vector<TensorBuffer>& inputs,
                                 std::vector<TensorBuffer>& outputs, cudaStream_t stream) {
  // The inputs were enqueued on the harness's stream; the host reads them
  // from its own context.
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaStreamSynchronize(stream), "preparing the inputs"));
  return link_->Compute(index_, workload_, inputs, outputs);
}

}  // namespace ptxbench::runner
