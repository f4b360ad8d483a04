#include "worker/runner/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <cuda_runtime_api.h>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "worker/gpu/sample_stats.h"
#include "worker/gpu/timing.h"
#include "worker/runner/call_timer.h"
#include "worker/runner/cost.h"
#include "worker/runner/fixed_inputs.h"
#include "worker/runner/host_loop.h"
#include "worker/runner/isolation.h"
#include "worker/runner/progress.h"
#include "worker/runner/protocol.h"
#include "worker/runner/reference_host.h"
#include "worker/runner/references.h"
#include "worker/runner/torch_reference.h"
#include "worker/runner/watched_host.h"
#include "worker/runner/workload_eval.h"
#include "workloads/native_reference.h"

namespace ptxbench::runner {
namespace {

namespace v1 = ::ptxbench::v1;
using gpu::CudaStatus;
using protocol::Op;
using protocol::Reply;
using protocol::Request;

// Setup, load and workload requests (not calls).
constexpr absl::Duration kRequestTimeout = absl::Seconds(60);

uint64_t CallSeed(uint64_t root, const std::string& uuid, absl::string_view phase, int trial,
                  int call) {
  return StableHash64(absl::StrCat(root, "/", uuid, "/", phase, "/", trial, "/", call));
}

class Harness {
 public:
  Harness(const RunnerJob& job, std::string dir, std::ostream& out)
      : job_(job), dir_(std::move(dir)), out_(out),
        torch_link_(absl::Seconds(job.isolation.call_deadline_s)) {}

  int Run() {
    absl::StatusOr<workloads::Definition> def = workloads::ParseDefinition(job_.definition_json, "job");
    if (!def.ok()) return FailAll(v1::INFRA_ERROR, std::string(def.status().message()), kRunnerBadJob);
    def_ = *std::move(def);
    trials_ = job_.trials > 0 ? job_.trials : std::max(def_.trials, 1);
    tol_ = {def_.tolerance.atol, def_.tolerance.rtol, def_.tolerance.required_matched_ratio};
    call_deadline_ = absl::Seconds(job_.isolation.call_deadline_s);
    absl::StatusOr<bool> torch = UsePyTorch();
    if (!torch.ok()) return FailAll(v1::INFRA_ERROR, std::string(torch.status().message()), kRunnerOk);
    use_torch_ = *torch;

    // 1. The boundary, while the runner still has the worker's privileges
    // (which also read the inputs a dataset fixes).
    LoadFixedInputs();
    absl::StatusOr<std::unique_ptr<Isolation>> iso = Isolation::Prepare(job_, dir_);
    if (!iso.ok()) return FailAll(v1::INFRA_ERROR, Infra("isolation", iso.status()), kRunnerOk);
    isolation_ = iso->get();
    int cpair[2], opipe[2], rpair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cpair) != 0 ||
        pipe2(opipe, O_CLOEXEC) != 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rpair) != 0) {
      return FailAll(v1::INFRA_ERROR, "cannot create the hosts' channels", kRunnerOk);
    }
    absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> sandboxed =
        (*iso)->SpawnCandidateHost(cpair[1], opipe[1]);
    close(cpair[1]);
    close(opipe[1]);
    if (!sandboxed.ok()) {
      return FailAll(v1::INFRA_ERROR, Infra("the candidate host's sandbox", sandboxed.status()),
                     kRunnerOk);
    }
    const std::string artifact = (*iso)->candidate_artifact();
    absl::StatusOr<pid_t> reference_pid =
        use_torch_ ? StartTorchHost(**iso, job_.torch, rpair[1], {rpair[0], cpair[0], opipe[0]})
                   : (*iso)->ForkReferenceHost([&]() {
                       close(rpair[0]);
                       close(cpair[0]);
                       close(opipe[0]);
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
    if (absl::Status s = (*iso)->DropPrivileges(); !s.ok()) {
      EndReferenceHost();
      return FailAll(v1::INFRA_ERROR, Infra("dropping privileges", s), kRunnerOk);
    }
    for (const std::string& p : (*iso)->Protections()) std::cerr << "ptxbench-runner: " << p << "\n";
    candidate_ = std::make_shared<WatchedHost>(*std::move(sandboxed), opipe[0]);
    // Every wait of the harness is bounded by the call deadline; if it is held
    // up anyway (a CUDA call of the harness that the candidate's broken
    // context blocks), the candidate host goes, which releases it.
    StartStuckReporter(call_deadline_ + absl::Seconds(10),
                       [host = std::weak_ptr<WatchedHost>(candidate_)] {
                         if (auto h = host.lock()) h->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
                       });
    Progress("isolation ready");

    // 2. The GPU, and every buffer before any host runs (a host that hogs
    // memory cannot make the harness fail later).
    if (absl::Status s = InitGpu(); !s.ok()) {
      EndReferenceHost();
      return FailAll(v1::INFRA_ERROR, Infra("GPU", s), kRunnerOk);
    }
    PrepareWorkloads();
    Progress("buffers allocated; timing the reference");

    // 3. The baseline, before the candidate host may even start. A native
    // reference host is done then; the PyTorch one stays to compute the
    // expected outputs of every checked call.
    TimeReferences(*reference_);
    if (use_torch_) {
      torch_link_.Attach(reference_.get());
    } else {
      EndReferenceHost();
    }
    if (job_.compare_references) return CompareReferences();
    if (job_.reference_only) return WriteReferenceFigures();
    Progress("reference timed; starting the candidate host");

    // 4. The candidate.
    if (absl::Status s = candidate_->Release(); !s.ok()) {
      return FailAll(v1::INFRA_ERROR, Infra("starting the candidate host", s), kRunnerOk);
    }
    HostChannel cand(cpair[0], [this]() {
      candidate_->WaitForEnd(absl::Seconds(2));
      return candidate_->Describe();
    });
    absl::StatusOr<Calibration> calibration = timer_->SetUpHost(cand, "candidate host");
    if (!calibration.ok()) {
      // Nothing submitted is loaded yet: ptxbench's own failure.
      return FailAll(v1::INFRA_ERROR, Infra("the candidate host before loading the kernel",
                                            calibration.status()),
                     kRunnerOk);
    }
    candidate_calibration_ = *calibration;
    Progress("candidate host calibrated; loading the kernel");
    Request load{Op::kLoad};
    load.language = job_.language;
    load.artifact = artifact;
    load.launch_spec = job_.launch_spec;
    for (const workloads::Axis& a : def_.axes) load.axis_order.push_back(a.name);
    if (std::optional<v1::WorkloadTrace> failed = LoadCandidate(cand, load)) {
      for (const WorkloadSpec& w : job_.workloads) {
        v1::WorkloadTrace t = *failed;
        SetIdentity(t, w);
        Emit(TraceLine(t));
      }
      return candidate_->ended() ? kRunnerCandidateFailed : kRunnerOk;
    }
    std::string stopped_at;
    for (size_t i = 0; i < job_.workloads.size(); ++i) {
      const WorkloadSpec& w = job_.workloads[i];
      if (!stopped_at.empty()) {
        v1::WorkloadTrace t;
        SetIdentity(t, w);
        t.set_status(v1::RUNTIME_ERROR);
        t.add_errors(absl::StrCat("not run: the evaluation stopped at workload ", stopped_at));
        Emit(TraceLine(t));
        continue;
      }
      Emit(StartedLine(w.uuid));
      Progress(absl::StrCat("workload ", w.uuid));
      bool stop = false;
      Emit(TraceLine(Evaluate(i, cand, &stop)));
      if (stop) stopped_at = w.uuid;
    }
    (void)cand.Send(Request{Op::kQuit});
    candidate_->WaitForEnd(absl::Seconds(2));
    Progress("done");
    return candidate_failed_ ? kRunnerCandidateFailed : kRunnerOk;
  }

  bool results_lost() const { return results_lost_; }

  // Ends the hosts, and removes the candidate's sandbox (its cgroup).
  void EndHosts() {
    candidate_.reset();
    EndReferenceHost();
  }

 private:
  struct Workload {
    std::unique_ptr<Reference> reference;  // the harness's own: inputs and expected outputs
    std::unique_ptr<Reference> native;     // compare_references: the native one beside it
    std::optional<WorkloadBuffers> buffers;
    std::string error;  // why it cannot be evaluated (infrastructure)
    double reference_ms = 0;
    std::string reference_log;
  };


  static std::string Infra(absl::string_view what, const absl::Status& s) {
    return absl::StrCat(what, ": ", s.message());
  }

  static void SetIdentity(v1::WorkloadTrace& t, const WorkloadSpec& w) {
    t.set_workload_uuid(w.uuid);
    t.mutable_axes()->clear();
    for (const auto& [k, v] : w.axes) (*t.mutable_axes())[k] = v;
  }

  // One result line, checked: a line that cannot be written (the worker's
  // disk is full) makes the run end with kRunnerResultsLost, so the worker
  // says so instead of blaming the kernel for what it cannot read.
  void Emit(const std::string& line) {
    out_ << line << std::flush;
    if (!out_.good()) results_lost_ = true;
  }

  int FailAll(v1::EvalStatus status, const std::string& error, int code) {
    for (const WorkloadSpec& w : job_.workloads) {
      v1::WorkloadTrace t;
      SetIdentity(t, w);
      t.set_status(status);
      t.add_errors(error);
      Emit(TraceLine(t));
    }
    return code;
  }

  // Which reference the job gets (job.h ReferenceChoice); an error names
  // why the definition has none.
  absl::StatusOr<bool> UsePyTorch() const {
    if (job_.reference == ReferenceChoice::kPyTorch || job_.compare_references) {
      if (def_.reference.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("definition ", def_.name, " has no PyTorch reference"));
      }
      return true;
    }
    if (job_.reference == ReferenceChoice::kNative) return false;
    PTXB_ASSIGN_OR_RETURN(const workloads::ReferenceKind kind, workloads::ChooseReference(def_));
    return kind == workloads::ReferenceKind::kPyTorch;
  }

  // The values the workloads fix, read now with the worker's privileges.
  void LoadFixedInputs() {
    for (const WorkloadSpec& w : job_.workloads) fixed_.push_back(runner::LoadFixedInputs(def_, w));
  }

  void EndReferenceHost() {
    if (reference_ == nullptr) return;
    (void)reference_->Send(Request{Op::kQuit});
    torch_link_.Attach(nullptr);
    reference_.reset();
    ReapReferenceHost(reference_pid_);
  }

  absl::Status InitGpu() {
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice(0)"));
    cudaDeviceProp prop{};
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"));
    gpu_name_ = prop.name;
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                                    "cudaStreamCreate"));
    PTXB_ASSIGN_OR_RETURN(timer_, CallTimer::Create(stream_, call_deadline_));
    return absl::OkStatus();
  }

  void PrepareWorkloads() {
    workloads_.resize(job_.workloads.size());
    for (size_t i = 0; i < job_.workloads.size(); ++i) {
      Workload& w = workloads_[i];
      if (!fixed_[i].ok()) {
        w.error = Infra("the workload's inputs", fixed_[i].status());
        continue;
      }
      if (!use_torch_ || job_.compare_references) {
        absl::StatusOr<std::unique_ptr<Reference>> ref = MakeReference(def_, job_.workloads[i].axes);
        if (!ref.ok()) {
          w.error = std::string(ref.status().message());
          continue;
        }
        (use_torch_ ? w.native : w.reference) = *std::move(ref);
      }
      if (use_torch_) {
        w.reference = std::make_unique<TorchReference>(&torch_link_, i, WorkloadRequest(i, {}));
      }
      absl::StatusOr<WorkloadBuffers> b =
          WorkloadBuffers::Allocate(def_, job_.workloads[i].axes, use_torch_);
      if (!b.ok()) {
        w.error = std::string(b.status().message());
        continue;
      }
      w.buffers.emplace(*std::move(b));
      for (const FixedValue& f : *fixed_[i]) {
        if (absl::Status s = w.buffers->Fix(f.index, f.bytes); !s.ok()) {
          w.error = Infra("the workload's inputs", s);
          break;
        }
      }
      fixed_[i]->clear();  // on the GPU now
    }
  }

  Request WorkloadRequest(size_t i, const std::vector<protocol::TensorMeta>& tensors) const {
    Request r{Op::kWorkload};
    r.axes = job_.workloads[i].axes;
    r.tensors = tensors;
    r.num_inputs = static_cast<int>(def_.inputs.size());
    for (const FixedInput& f : job_.workloads[i].fixed) {
      if (f.path.empty()) r.scalars[f.name] = f.scalar_json;
    }
    return r;
  }

  // Workload `i` to `host` with its shared buffers (their descriptors
  // attached); kInternal when the harness cannot export them, else the
  // channel's answer.
  absl::StatusOr<Reply> SendWorkload(HostChannel& host, size_t i, absl::Duration timeout) {
    absl::StatusOr<WorkloadBuffers::Exported> shared = workloads_[i].buffers->Export();
    if (!shared.ok()) {
      return absl::InternalError(absl::StrCat("sharing the buffers: ", shared.status().message()));
    }
    absl::StatusOr<Reply> reply =
        host.Ask(WorkloadRequest(i, shared->tensors), timeout, shared->descriptors);
    for (int fd : shared->descriptors) close(fd);
    return reply;
  }

  void TimeReferences(HostChannel& host) {
    absl::StatusOr<Calibration> calibration = timer_->SetUpHost(host, "reference host");
    if (calibration.ok()) {
      Request load{Op::kLoad};
      load.definition = job_.definition_json;
      absl::StatusOr<Reply> loaded = host.Ask(load, kRequestTimeout);
      if (!loaded.ok() || !loaded->ok) {
        calibration = absl::InternalError(
            loaded.ok() ? loaded->text : std::string(loaded.status().message()));
      }
    }
    for (size_t i = 0; i < workloads_.size(); ++i) {
      Workload& w = workloads_[i];
      if (!w.error.empty()) continue;
      if (!calibration.ok()) {
        w.error = Infra("the reference host", calibration.status());
        continue;
      }
      absl::StatusOr<double> ms = TimeReference(host, i, *calibration);
      if (!ms.ok()) {
        w.error = Infra("reference", ms.status());
        continue;
      }
      w.reference_ms = *ms;
      w.reference_log = calibration->log + w.reference_log;
    }
  }

  absl::StatusOr<double> TimeReference(HostChannel& host, size_t i, const Calibration& cal) {
    Workload& w = workloads_[i];
    const WorkloadSpec& spec = job_.workloads[i];
    absl::StatusOr<Reply> reply = SendWorkload(host, i, kRequestTimeout);
    if (!reply.ok()) return reply.status();
    if (!reply->ok) return absl::InternalError(reply->text);
    torch_link_.Selected(i);
    std::vector<double> medians;
    for (int t = 0; t < trials_; ++t) {
      std::vector<double> samples;
      for (int call = 0; call < job_.warmup_calls + job_.timed_calls; ++call) {
        const int set = call % WorkloadBuffers::kSets;
        PTXB_RETURN_IF_ERROR(w.buffers->Prepare(*w.reference, CallSeed(job_.seed, spec.uuid, "ref", t, call),
                                                /*expected=*/false, stream_));
        PTXB_RETURN_IF_ERROR(gpu::L2Flusher::ResetPersisting());
        Request r{Op::kCall};
        r.set = set;
        CallResult c = timer_->Call(
            host, r, [&](cudaStream_t st) { return w.buffers->Stage(set, st); },
            [](cudaStream_t) { return absl::OkStatus(); });
        PTXB_RETURN_IF_ERROR(ToStatus(c));
        if (call >= job_.warmup_calls) samples.push_back(std::max(c.bracket_ms - cal.overhead_ms, 0.0));
      }
      const gpu::SampleStats s = gpu::Summarize(samples);
      medians.push_back(s.median);
      absl::StrAppendFormat(&w.reference_log,
                            "reference %s trial %d: median %.4f ms (min %.4f, max %.4f, cv %.2f%%)\n",
                            w.reference->Name(), t, s.median, s.min, s.max, 100 * s.cv);
    }
    return gpu::Summarize(medians).mean;
  }

  // The load, in the candidate host: a failed load is the kernel's fault.
  std::optional<v1::WorkloadTrace> LoadCandidate(HostChannel& host, const Request& load) {
    absl::StatusOr<Reply> reply = host.Ask(load, call_deadline_);
    v1::WorkloadTrace t;
    if (reply.ok() && reply->ok) return std::nullopt;
    if (reply.ok()) {
      t.set_status(v1::RUNTIME_ERROR);
      t.add_errors(absl::StrCat("the kernel did not load: ", reply->text));
    } else if (absl::IsDeadlineExceeded(reply.status())) {
      candidate_->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
      t.set_status(v1::TIMEOUT);
      t.add_errors(absl::StrCat("loading the kernel did not finish within ",
                                absl::FormatDuration(call_deadline_)));
    } else {
      t.set_status(v1::RUNTIME_ERROR);
      t.add_errors(absl::StrCat("while loading the kernel, ", host.WhyGone()));
    }
    if (const std::string full = isolation_->DiskFullNote(); !full.empty()) t.add_errors(full);
    return t;
  }

  // A call of the candidate that did not end well: the trace's status.
  v1::EvalStatus Blame(const CallResult& r, std::string* error, bool* stop) {
    switch (r.end) {
      case CallEnd::kOk:
        return v1::PASSED;
      case CallEnd::kRefused:
        *error = absl::StrCat("run() failed: ", r.message);
        *stop = timer_->stream_stuck();
        candidate_failed_ |= timer_->stream_stuck();  // a CUDA error in the call's work
        return v1::RUNTIME_ERROR;
      case CallEnd::kGone:
        *error = r.message;
        *stop = true;
        candidate_failed_ = true;
        return v1::RUNTIME_ERROR;
      case CallEnd::kTimeout:
        At("killing the candidate host");
        candidate_->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
        *error = r.message;
        *stop = true;
        candidate_failed_ = true;
        return v1::TIMEOUT;
      case CallEnd::kInfra:
        *error = r.message;
        *stop = true;
        return v1::INFRA_ERROR;
    }
    return v1::INFRA_ERROR;
  }

  v1::WorkloadTrace Evaluate(size_t i, HostChannel& host, bool* stop) {
    const WorkloadSpec& spec = job_.workloads[i];
    Workload& w = workloads_[i];
    v1::WorkloadTrace trace;
    SetIdentity(trace, spec);
    std::string log = absl::StrFormat(
        "gpu %s; inputs from seed %d (secret during the evaluation; per call: "
        "StableHash64(\"seed/uuid/phase/trial/call\")); %d trials, %d warm-up + %d timed calls; "
        "timed by the harness (bracket minus calibrated overhead)\n",
        gpu_name_, job_.seed, trials_, job_.warmup_calls, job_.timed_calls);
    log += w.reference_log;
    log += candidate_calibration_.log;
    if (w.reference != nullptr) trace.set_reference(w.reference->Name());
    if (!def_.inputs.empty() && spec.fixed.size() == def_.inputs.size()) {
      log += "note: the dataset fixes every input of this workload, so every call gets the same "
             "inputs: outputs kept from an earlier call cannot be told from computed ones\n";
    }
    auto finish = [&](v1::EvalStatus status, const std::vector<std::string>& errors) {
      trace.set_status(status);
      for (const std::string& e : errors) trace.add_errors(e);
      if (status == v1::RUNTIME_ERROR || status == v1::TIMEOUT) {
        if (const std::string full = isolation_->DiskFullNote(); !full.empty()) {
          trace.add_errors(full);
        }
        // What the kernel printed: shown as its own, never interpreted.
        const std::string output = candidate_->Output();
        if (!output.empty()) absl::StrAppend(&log, "the candidate host's output:\n", output, "\n");
      }
      trace.set_log(log);
      return trace;
    };
    if (!w.error.empty()) return finish(v1::INFRA_ERROR, {w.error});
    At("workload request");
    absl::StatusOr<Reply> reply = SendWorkload(host, i, call_deadline_);
    if (!reply.ok() && absl::IsInternal(reply.status())) {
      return finish(v1::INFRA_ERROR, {std::string(reply.status().message())});
    }
    if (!reply.ok()) {
      *stop = true;
      return finish(absl::IsDeadlineExceeded(reply.status()) ? v1::TIMEOUT : v1::RUNTIME_ERROR,
                    {host.WhyGone()});
    }
    if (!reply->ok) return finish(v1::RUNTIME_ERROR, {reply->text});

    const double overhead = candidate_calibration_.overhead_ms;
    const double tolerance = candidate_calibration_.tolerance_ms;
    const absl::Time workload_start = absl::Now();
    double bracketed_ms = 0;  // the GPU time inside brackets, for "where the time goes"
    int forced = 0;
    // One checked call on set `set`; nullopt when it went well.
    auto checked_call = [&](int set, uint64_t seed, CallCheck* check,
                            double* bracket) -> std::optional<std::pair<v1::EvalStatus, std::vector<std::string>>> {
      At("prepare");
      absl::Status s = w.buffers->Prepare(*w.reference, seed, /*expected=*/true, stream_);
      if (s.ok()) s = gpu::L2Flusher::ResetPersisting();
      if (!s.ok()) {
        *stop = true;
        return std::make_pair(v1::INFRA_ERROR, std::vector<std::string>{Infra("preparing inputs", s)});
      }
      Request r{Op::kCall};
      r.set = set;
      CallResult c = timer_->Call(
          host, r, [&](cudaStream_t st) { return w.buffers->Stage(set, st); },
          [&](cudaStream_t st) { return w.buffers->EnqueueChecks(set, tol_, st); });
      forced += c.gate_forced;
      std::string error;
      if (const v1::EvalStatus bad = Blame(c, &error, stop); bad != v1::PASSED) {
        return std::make_pair(bad, std::vector<std::string>{error});
      }
      At("read checks");
      absl::StatusOr<CallCheck> read = w.buffers->ReadChecks(set, tol_);
      if (!read.ok()) {
        *stop = true;
        return std::make_pair(v1::INFRA_ERROR, std::vector<std::string>{Infra("checks", read.status())});
      }
      *check = *read;
      *bracket = c.bracket_ms;
      if (!check->passed) return std::make_pair(v1::INCORRECT_NUMERICAL, check->errors);
      return std::nullopt;
    };
    auto note_check = [&](const CallCheck& check, bool first) {
      trace.set_max_abs_error(std::max(trace.max_abs_error(), check.max_abs_error));
      trace.set_max_rel_error(std::max(trace.max_rel_error(), check.max_rel_error));
      trace.set_matched_ratio(first ? check.matched_ratio
                                    : std::min(trace.matched_ratio(), check.matched_ratio));
    };

    // Correctness: one call per trial on fresh inputs.
    for (int t = 0; t < trials_; ++t) {
      CallCheck check;
      double bracket = 0;
      auto bad = checked_call(0, CallSeed(job_.seed, spec.uuid, "check", t, 0), &check, &bracket);
      note_check(check, t == 0);
      if (bad) {
        absl::StrAppend(&log, "correctness trial ", t, ": ", v1::EvalStatus_Name(bad->first), "\n");
        return finish(bad->first, bad->second);
      }
    }
    absl::StrAppend(&log, "correctness: ", trials_, " trials passed\n");

    // Timing, with every call's outputs checked.
    std::vector<double> medians;
    for (int t = 0; t < trials_; ++t) {
      std::vector<double> samples;
      for (int call = 0; call < job_.warmup_calls + job_.timed_calls; ++call) {
        const int set = call % WorkloadBuffers::kSets;
        CallCheck check;
        double bracket = 0;
        auto bad = checked_call(set, CallSeed(job_.seed, spec.uuid, "time", t, call), &check, &bracket);
        if (bad) {
          std::vector<std::string> errors = bad->second;
          if (bad->first == v1::INCORRECT_NUMERICAL) {
            errors.insert(errors.begin(),
                          absl::StrCat("the outputs of timed call ", call, " (trial ", t,
                                       ", fresh inputs) are wrong although the correctness calls "
                                       "passed: results must be computed by every call, and be "
                                       "complete when the call's work is"));
          }
          absl::StrAppend(&log, "timing trial ", t, ": ", v1::EvalStatus_Name(bad->first), "\n");
          return finish(bad->first, errors);
        }
        bracketed_ms += bracket;
        const double latency = bracket - overhead;
        if (latency < -tolerance) {
          // Shorter than a call that does nothing: the synchronization was
          // tampered with.
          return finish(v1::RUNTIME_ERROR,
                        {absl::StrFormat("integrity check failed at timed call %d (trial %d): the "
                                         "harness's bracket (%.4f ms) is shorter than the "
                                         "calibrated cost of a call (%.4f ms, tolerance %.4f ms)",
                                         call, t, bracket, overhead, tolerance)});
        }
        if (call >= job_.warmup_calls) samples.push_back(std::max(latency, 1e-6));
      }
      const gpu::SampleStats s = gpu::Summarize(samples);
      medians.push_back(s.median);
      absl::StrAppendFormat(&log,
                            "candidate trial %d: median %.4f ms (min %.4f, max %.4f, cv %.2f%%); "
                            "all %d calls' outputs checked\n",
                            t, s.median, s.min, s.max, 100 * s.cv,
                            job_.warmup_calls + job_.timed_calls);
    }
    if (forced > 0) {
      absl::StrAppend(&log, forced, " calls synchronized inside run() (or loaded code): the gate "
                            "was opened for them, so their host time is in their measurement\n");
    }
    absl::StrAppendFormat(&log,
                          "wall: this workload %.2f s (timed brackets %.2f s); the harness so far "
                          "%.2f s\n",
                          absl::ToDoubleSeconds(absl::Now() - workload_start), bracketed_ms / 1000,
                          SecondsSinceStart());
    const double latency = gpu::Summarize(medians).mean;
    trace.set_latency_ms(latency);
    trace.set_reference_latency_ms(w.reference_ms);
    trace.set_speedup(latency > 0 ? w.reference_ms / latency : 0);
    absl::StatusOr<WorkloadCost> cost = CostOf(def_, spec.axes);
    if (cost.ok()) {
      const double roofline = RooflineFraction(*cost, PeaksFor(gpu_name_), latency);
      trace.set_roofline_fraction(roofline);
      if (roofline > 1.1) {
        return finish(v1::RUNTIME_ERROR,
                      {absl::StrFormat("integrity check failed: %.4f ms is %.0f%% of the roofline "
                                       "time, faster than the GPU's peaks allow",
                                       latency, 100 * roofline)});
      }
      if (cost->flops > 0 && latency > 0) {
        absl::StrAppendFormat(&log, "%.1f TFLOP/s; reference %.1f TFLOP/s\n",
                              cost->flops / (latency * 1e9), cost->flops / (w.reference_ms * 1e9));
      }
    }
    return finish(v1::PASSED, {});
  }

  // compare_references jobs: the PyTorch reference's outputs (in buffer set
  // 0, checked as a candidate's are) against the native one's, on fresh
  // inputs per trial; its time as the reference time.
  int CompareReferences() {
    for (size_t i = 0; i < job_.workloads.size(); ++i) {
      Workload& w = workloads_[i];
      v1::WorkloadTrace t;
      SetIdentity(t, job_.workloads[i]);
      t.set_reference_latency_ms(w.reference_ms);
      t.set_status(v1::PASSED);
      std::string log = w.reference_log;
      for (int trial = 0; w.error.empty() && trial < trials_; ++trial) {
        absl::StatusOr<CallCheck> check = CompareOnce(w, CallSeed(job_.seed, job_.workloads[i].uuid, "compare", trial, 0));
        if (!check.ok()) {
          w.error = Infra("comparing the references", check.status());
          break;
        }
        t.set_max_abs_error(std::max(t.max_abs_error(), check->max_abs_error));
        t.set_max_rel_error(std::max(t.max_rel_error(), check->max_rel_error));
        t.set_matched_ratio(trial == 0 ? check->matched_ratio : std::min(t.matched_ratio(), check->matched_ratio));
        absl::StrAppendFormat(&log, "trial %d: max abs %g, max rel %g, matched %.6f\n", trial,
                              check->max_abs_error, check->max_rel_error, check->matched_ratio);
        if (!check->passed) {
          t.set_status(v1::INCORRECT_NUMERICAL);
          for (const std::string& e : check->errors) t.add_errors(e);
          break;
        }
      }
      if (!w.error.empty()) {
        t.set_status(v1::INFRA_ERROR);
        t.add_errors(w.error);
      }
      t.set_reference(absl::StrCat("PyTorch, checked against ", w.native ? w.native->Name() : "none"));
      t.set_log(log);
      Emit(TraceLine(t));
    }
    return kRunnerOk;
  }

  // One trial of CompareReferences: fresh inputs, the native outputs as the
  // expected ones, the PyTorch outputs into set 0, checked.
  absl::StatusOr<CallCheck> CompareOnce(Workload& w, uint64_t seed) {
    PTXB_RETURN_IF_ERROR(w.buffers->Prepare(*w.native, seed, /*expected=*/true, stream_));
    PTXB_RETURN_IF_ERROR(w.buffers->Stage(0, stream_));
    PTXB_RETURN_IF_ERROR(w.reference->Run(w.buffers->inputs(0), w.buffers->outputs(0), stream_));
    PTXB_RETURN_IF_ERROR(w.buffers->EnqueueChecks(0, tol_, stream_));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(stream_), "the checks"));
    return w.buffers->ReadChecks(0, tol_);
  }

  // reference_only jobs: the reference's figures as the traces.
  int WriteReferenceFigures() {
    for (size_t i = 0; i < job_.workloads.size(); ++i) {
      v1::WorkloadTrace t;
      SetIdentity(t, job_.workloads[i]);
      const Workload& w = workloads_[i];
      t.set_status(w.error.empty() ? v1::PASSED : v1::INFRA_ERROR);
      if (!w.error.empty()) t.add_errors(w.error);
      t.set_reference_latency_ms(w.reference_ms);
      if (w.reference != nullptr) t.set_reference(w.reference->Name());
      t.set_log(w.reference_log);
      Emit(TraceLine(t));
    }
    return kRunnerOk;
  }

  void ReapReferenceHost(pid_t pid) {
    for (int i = 0; i < 200; ++i) {
      const pid_t r = waitpid(pid, nullptr, WNOHANG);
      if (r == pid || r < 0) return;  // reaped now, or already
      usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }

  const RunnerJob& job_;
  const std::string dir_;
  std::ostream& out_;
  workloads::Definition def_;
  int trials_ = 1;
  reference::Tolerance tol_;
  absl::Duration call_deadline_;
  std::string gpu_name_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<CallTimer> timer_;
  std::vector<Workload> workloads_;
  bool use_torch_ = false;
  // Per workload: the values it fixes, until they are on the GPU, or why
  // they cannot be made.
  std::vector<absl::StatusOr<std::vector<FixedValue>>> fixed_;
  std::unique_ptr<HostChannel> reference_;     // the reference host, while it is up
  pid_t reference_pid_ = -1;
  TorchHostLink torch_link_;
  std::shared_ptr<WatchedHost> candidate_;
  const Isolation* isolation_ = nullptr;  // lives as long as Run()
  Calibration candidate_calibration_;
  bool candidate_failed_ = false;
  bool results_lost_ = false;
};

}  // namespace

int RunHarness(const RunnerJob& job, const std::string& private_dir, std::ostream& out) {
  // Never destroyed: its CUDA objects are left to the process's end. A
  // candidate whose context broke (an illegal address) never records its
  // "done", so the harness's stream waits on it for good, and tearing the
  // objects down (cudaFree synchronizes the device) would hold the GPU until
  // the worker's deadline (seen on the H200: 3 minutes for one illegal
  // address). Only the hosts are ended here; the caller exits at once.
  auto* harness = new Harness(job, private_dir, out);
  const int code = harness->Run();
  harness->EndHosts();
  return harness->results_lost() ? kRunnerResultsLost : code;
}

}  // namespace ptxbench::runner
