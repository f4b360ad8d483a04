#include "worker/runner/harness/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cuda_runtime_api.h>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"
#include "worker/runner/harness/harness_internal.h"
#include "worker/runner/hosts/host_loop.h"
#include "worker/runner/hosts/reference_host.h"
#include "worker/runner/measure/progress.h"

namespace ptxbench::runner {
namespace harness_internal {

using gpu::CudaStatus;
using protocol::Op;
using protocol::Request;

int Harness::Run() {
  if (std::optional<int> ended = ReadJob()) return *ended;
  // 1. The boundary, while the runner still has the worker's privileges
  // (which also read the inputs a dataset fixes, and open a profile's
  // files beside the results).
  LoadFixedInputs();
  if (tool_run() && !OpenProfileFiles()) {
    return FailAll(v1::INFRA_ERROR, "cannot create the profile's files", kRunnerResultsLost);
  }
  absl::StatusOr<std::unique_ptr<Isolation>> iso = Isolation::Prepare(job_, dir_);
  if (!iso.ok()) return FailAll(v1::INFRA_ERROR, Infra("isolation", iso.status()), kRunnerOk);
  isolation_ = iso->get();
  if (std::optional<int> ended = StartHosts(**iso)) return *ended;
  Phase("isolation", "isolation ready");

  // 2. The GPU, and every buffer before any host runs (a host that hogs
  // memory cannot make the harness fail later).
  if (absl::Status s = InitGpu(); !s.ok()) {
    EndReferenceHost();
    return FailAll(v1::INFRA_ERROR, Infra("GPU", s), kRunnerOk);
  }
  Phase("CUDA", "CUDA ready");
  PrepareWorkloads();
  Phase("buffers", "buffers allocated; timing the reference", BuffersDetail());

  // 3. The baseline, before the candidate host may even start. A native
  // reference host is done then; the PyTorch one stays to compute the
  // expected outputs of every checked call.
  const std::string references = TimeReferences();
  if (use_torch_) {
    torch_link_.Attach(reference_.get());
  } else {
    EndReferenceHost();
  }
  SettleInputDistributions();
  if (job_.compare_references) return CompareReferences();
  if (job_.reference_only) return WriteReferenceFigures();
  Phase("reference timing", "reference timed; starting the candidate host", references);

  // 4. The candidate: a Triton one's JIT first, in a host of its own.
  if (triton()) {
    if (std::optional<int> ended = RunJit()) return *ended;
  }
  return EvaluateCandidate();
}

void Harness::EndHosts() {
  jit_.reset();
  candidate_.reset();
  EndReferenceHost();
}

void Harness::Emit(const std::string& line) {
  out_ << line << std::flush;
  if (!out_.good()) results_lost_ = true;
}

int Harness::FailAll(v1::EvalStatus status, const std::string& error, int code) {
  for (const WorkloadSpec& w : job_.workloads) Emit(TraceLine(FailedTrace(w, status, error)));
  return code;
}

std::optional<int> Harness::ReadJob() {
  absl::StatusOr<workloads::Definition> def = workloads::ParseDefinition(job_.definition_json, "job");
  if (!def.ok()) return FailAll(v1::INFRA_ERROR, std::string(def.status().message()), kRunnerBadJob);
  def_ = *std::move(def);
  trials_ = job_.trials > 0 ? job_.trials : std::max(def_.trials, 1);
  tol_ = {def_.tolerance.atol, def_.tolerance.rtol, def_.tolerance.required_matched_ratio};
  call_deadline_ = absl::Seconds(job_.isolation.call_deadline_s);
  absl::StatusOr<bool> torch = UsesPyTorch(job_, def_);
  if (!torch.ok()) return FailAll(v1::INFRA_ERROR, std::string(torch.status().message()), kRunnerOk);
  use_torch_ = *torch;
  return std::nullopt;
}

std::optional<int> Harness::StartHosts(Isolation& iso) {
  int cpair[2], opipe[2], rpair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cpair) != 0 ||
      pipe2(opipe, O_CLOEXEC) != 0 ||
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rpair) != 0) {
    return FailAll(v1::INFRA_ERROR, "cannot create the hosts' channels", kRunnerOk);
  }
  absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> sandboxed =
      iso.SpawnCandidateHost(cpair[1], opipe[1]);
  close(cpair[1]);
  close(opipe[1]);
  if (!sandboxed.ok()) {
    return FailAll(v1::INFRA_ERROR, Infra("the candidate host's sandbox", sandboxed.status()),
                   kRunnerOk);
  }
  candidate_fd_ = cpair[0];
  artifact_ = iso.candidate_artifact();
  int jpair[2] = {-1, -1}, jpipe[2] = {-1, -1};
  std::unique_ptr<sandbox::SandboxedProcess> jit;
  if (triton()) {
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, jpair) != 0 ||
        pipe2(jpipe, O_CLOEXEC) != 0) {
      return FailAll(v1::INFRA_ERROR, "cannot create the JIT host's channels", kRunnerOk);
    }
    absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> spawned =
        iso.SpawnJitHost(jpair[1], jpipe[1]);
    close(jpair[1]);
    close(jpipe[1]);
    if (!spawned.ok()) {
      return FailAll(v1::INFRA_ERROR, Infra("the JIT host's sandbox", spawned.status()),
                     kRunnerOk);
    }
    jit = *std::move(spawned);
    jit_fd_ = jpair[0];
  }
  absl::StatusOr<pid_t> reference_pid =
      use_torch_ ? StartTorchHost(iso, job_.torch, rpair[1],
                                  {rpair[0], cpair[0], opipe[0], jpair[0], jpipe[0]})
                 : iso.ForkReferenceHost([&]() {
                     for (int fd : {rpair[0], cpair[0], opipe[0], jpair[0], jpipe[0]}) {
                       if (fd >= 0) close(fd);
                     }
                     const workloads::Definition& d = def_;
                     return RunHostLoop(
                         rpair[1],
                         [&d](const Request&) -> absl::StatusOr<std::unique_ptr<Candidate>> {
                           return MakeReferenceTarget(d);
                         });
                   });
  close(rpair[1]);
  if (!reference_pid.ok()) {
    close(rpair[0]);
    return FailAll(v1::INFRA_ERROR, Infra("the reference host", reference_pid.status()), kRunnerOk);
  }
  reference_pid_ = *reference_pid;
  reference_ = std::make_unique<HostChannel>(rpair[0], [pid = reference_pid_]() {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return absl::StrCat("the reference host ended (status ", status, ")");
    }
    return std::string("the reference host stopped answering");
  });
  if (absl::Status s = iso.DropPrivileges(); !s.ok()) {
    EndReferenceHost();
    return FailAll(v1::INFRA_ERROR, Infra("dropping privileges", s), kRunnerOk);
  }
  for (const std::string& p : iso.Protections()) std::cerr << "ptxbench-runner: " << p << "\n";
  candidate_ = std::make_shared<WatchedHost>(*std::move(sandboxed), opipe[0]);
  if (jit != nullptr) jit_ = std::make_shared<WatchedHost>(std::move(jit), jpipe[0]);
  // Every wait of the harness is bounded by the call deadline; if it is held
  // up anyway (a CUDA call of the harness that the candidate's broken
  // context blocks), the candidate's hosts go, which releases it.
  StartStuckReporter(call_deadline_ + absl::Seconds(10),
                     [host = std::weak_ptr<WatchedHost>(candidate_),
                      jit_host = std::weak_ptr<WatchedHost>(jit_)] {
                       for (const auto& weak : {host, jit_host}) {
                         if (auto h = weak.lock()) h->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
                       }
                     });
  return std::nullopt;
}

void Harness::Phase(absl::string_view name, absl::string_view progress, absl::string_view detail) {
  const double now = SecondsSinceStart();
  std::string part = absl::StrFormat("%s %.2f", name, now - phase_mark_s_);
  if (!detail.empty()) absl::StrAppend(&part, " [", detail, "]");
  phases_.push_back(std::move(part));
  phase_mark_s_ = now;
  Progress(progress);
}

std::string Harness::SetUpLine() const {
  return absl::StrFormat("%.2f s (%s)", phase_mark_s_, absl::StrJoin(phases_, ", "));
}

std::string Harness::BuffersDetail() const {
  double made = 0, allocated = 0;
  for (const PreparedWorkload& w : workloads_) {
    made += w.reference_setup_s;
    allocated += w.allocation_s;
  }
  return absl::StrFormat("references %.2f, allocations %.2f", made, allocated);
}

void Harness::LoadFixedInputs() {
  for (const WorkloadSpec& w : job_.workloads) fixed_.push_back(runner::LoadFixedInputs(def_, w));
}

void Harness::EndReferenceHost() {
  if (reference_ == nullptr) return;
  (void)reference_->Send(Request{Op::kQuit});
  torch_link_.Attach(nullptr);
  reference_.reset();
  ReapReferenceHost(reference_pid_);
}

absl::Status Harness::InitGpu() {
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice(0)"));
  cudaDeviceProp prop{};
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"));
  gpu_name_ = prop.name;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                                  "cudaStreamCreate"));
  PTXB_ASSIGN_OR_RETURN(timer_, CallTimer::Create(stream_, call_deadline_));
  return absl::OkStatus();
}

void Harness::PrepareWorkloads() {
  for (size_t i = 0; i < job_.workloads.size(); ++i) {
    workloads_.push_back(PrepareWorkload(job_, def_, i, use_torch_, &torch_link_, fixed_[i]));
  }
}

void Harness::SettleInputDistributions() {
  for (size_t i = 0; i < workloads_.size(); ++i) {
    PreparedWorkload& w = workloads_[i];
    if (!w.error.empty() || !w.buffers || w.reference == nullptr) continue;
    absl::StatusOr<std::vector<workloads::InputDistribution>> dropped =
        w.buffers->KeepFiniteDistributions(
            *w.reference, CallSeed(job_.seed, job_.workloads[i].uuid, "distributions", 0, 0),
            stream_);
    if (!dropped.ok()) {
      w.error = Infra("choosing the input distributions", dropped.status());
      continue;
    }
    w.inputs_log = absl::StrCat("inputs: each call's drawn from one of ",
                                workloads::DescribeInputDistributions(w.buffers->distributions()),
                                ", chosen by its seed");
    if (!dropped->empty()) {
      absl::StrAppend(&w.inputs_log, " (", workloads::DescribeInputDistributions(*dropped),
                      " left out: the reference's outputs are not finite for such inputs)");
    }
    absl::StrAppend(&w.inputs_log, "\n");
  }
}

void Harness::ReapReferenceHost(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    const pid_t r = waitpid(pid, nullptr, WNOHANG);
    if (r == pid || r < 0) return;  // reaped now, or already
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace harness_internal

int RunHarness(const RunnerJob& job, const std::string& private_dir, std::ostream& out) {
  // Never destroyed: its CUDA objects are left to the process's end. A
  // candidate whose context broke (an illegal address) never records its
  // "done", so the harness's stream waits on it for good, and tearing the
  // objects down (cudaFree synchronizes the device) would hold the GPU until
  // the worker's deadline (seen on the H200: 3 minutes for one illegal
  // address). Only the hosts are ended here; the caller exits at once.
  auto* harness = new harness_internal::Harness(job, private_dir, out);
  const int code = harness->Run();
  harness->EndHosts();
  return harness->results_lost() ? kRunnerResultsLost : code;
}

}  // namespace ptxbench::runner
