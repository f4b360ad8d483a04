// The candidate (harness_internal.h): its host released and calibrated, the
// submission loaded (a Triton one's JIT first, in a host of its own), then
// per workload the checked calls and the timed ones.

#include "worker/runner/harness/harness_internal.h"

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "worker/gpu/timing.h"
#include "worker/runner/measure/progress.h"
#include "worker/runner/measure/workload_eval.h"

namespace ptxbench::runner::harness_internal {

using protocol::Op;
using protocol::Reply;
using protocol::Request;

int Harness::EvaluateCandidate() {
  if (absl::Status s = candidate_->Release(); !s.ok()) {
    return FailAll(v1::INFRA_ERROR, Infra("starting the candidate host", s), kRunnerOk);
  }
  HostChannel cand(candidate_fd_, [this]() {
    candidate_->WaitForEnd(absl::Seconds(2));
    return candidate_->Describe();
  });
  // A profile run times nothing: no calibration (whose kernels the
  // profiler would profile too).
  absl::StatusOr<Calibration> calibration = Calibration{};
  if (!tool_run()) {
    calibration = timer_->SetUpHost(cand, "candidate host");
  } else if (absl::Status s = timer_->SetUpHostWithoutCalibration(cand); !s.ok()) {
    calibration = s;
  }
  if (!calibration.ok()) {
    // Nothing submitted is loaded yet: ptxbench's own failure.
    return FailAll(v1::INFRA_ERROR, Infra("the candidate host before loading the kernel",
                                          calibration.status()),
                   kRunnerOk);
  }
  candidate_calibration_ = *calibration;
  census_rules_.language = job_.language;
  census_rules_.off = CensusOffReason(timer_->setup_note());
  Phase("candidate host", "candidate host calibrated; loading the kernel");
  if (std::optional<v1::WorkloadTrace> failed = LoadCandidate(cand, LoadRequest())) {
    for (const WorkloadSpec& w : job_.workloads) {
      v1::WorkloadTrace t = *failed;
      SetIdentity(t, w);
      Emit(TraceLine(t));
    }
    return candidate_->ended() ? kRunnerCandidateFailed : kRunnerOk;
  }
  Phase("kernel load", "kernel loaded");
  EvaluateWorkloads(cand);
  (void)cand.Send(Request{Op::kQuit});
  // A profile run's host is the profiler's target: the profiler then
  // writes its report and reads it back, within the call deadline.
  candidate_->WaitForEnd(tool_run() ? call_deadline_ : absl::Seconds(2));
  if (tool_run()) CopyProfileFiles();
  Progress("done");
  return candidate_failed_ ? kRunnerCandidateFailed : kRunnerOk;
}

Request Harness::LoadRequest() const {
  Request load{Op::kLoad};
  load.language = job_.language;
  load.artifact = artifact_;
  load.launch_spec = job_.launch_spec;
  // A Python host takes the definition's inputs and outputs from it.
  if (triton()) load.definition = job_.definition_json;
  for (const workloads::Axis& a : def_.axes) load.axis_order.push_back(a.name);
  return load;
}

std::optional<v1::WorkloadTrace> Harness::LoadCandidate(HostChannel& host, const Request& load,
                                                        WatchedHost* watched) {
  if (watched == nullptr) watched = candidate_.get();
  absl::StatusOr<Reply> reply = host.Ask(load, call_deadline_);
  v1::WorkloadTrace t;
  if (reply.ok() && reply->ok) return std::nullopt;
  if (reply.ok()) {
    t.set_status(v1::RUNTIME_ERROR);
    t.add_errors(absl::StrCat("the kernel did not load: ", reply->text));
  } else if (absl::IsDeadlineExceeded(reply.status())) {
    watched->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
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

v1::WorkloadTrace Harness::Evaluate(size_t i, HostChannel& host, bool* stop) {
  const WorkloadSpec& spec = job_.workloads[i];
  PreparedWorkload& w = workloads_[i];
  v1::WorkloadTrace trace;
  SetIdentity(trace, spec);
  std::string log = MethodLine(gpu_name_, job_, trials_) + jit_log_ + w.reference_log +
                    w.inputs_log + candidate_calibration_.log;
  if (w.reference != nullptr) trace.set_reference(w.reference->Name());
  if (!def_.inputs.empty() && spec.fixed.size() == def_.inputs.size()) {
    log += "note: the dataset fixes every input of this workload, so every call gets the same "
           "inputs: outputs kept from an earlier call cannot be told from computed ones\n";
  }
  auto finish = [&](const Failure& f) {
    trace.set_status(f.first);
    for (const std::string& e : f.second) trace.add_errors(e);
    if (f.first == v1::RUNTIME_ERROR || f.first == v1::TIMEOUT) {
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
  if (!w.error.empty()) return finish({v1::INFRA_ERROR, {w.error}});
  if (std::optional<Failure> f = SendCandidateWorkload(host, i, stop)) return finish(*f);
  WorkloadCalls calls{spec, w, host, stop};
  if (std::optional<Failure> f = CheckCorrectness(calls, &trace, &log)) return finish(*f);
  if (tool_run()) {
    absl::StrAppend(&log, sanitizing() ? "sanitize run" : "profile run", ": checked calls only, "
                    "under the ", sanitizing() ? "sanitizer" : "profiler", "; nothing timed\n");
    return finish({v1::PASSED, {}});
  }
  const absl::Time start = absl::Now();
  TimingTally tally(candidate_calibration_.overhead_ms, candidate_calibration_.tolerance_ms,
                    job_.warmup_calls);
  CensusTally census(census_rules_);
  if (std::optional<Failure> f = TimeCalls(calls, tally, census, &log)) {
    if (job_.census && f->first == v1::INCORRECT_NUMERICAL) {
      *trace.mutable_census() = census.Summary(false);
    }
    return finish(*f);
  }
  if (job_.census) {
    *trace.mutable_census() = census.Summary(true);
    if (!trace.census().gap().empty()) {
      absl::StrAppend(&log, "census: ", trace.census().gap(), "\n");
    }
  }
  if (calls.forced > 0) {
    absl::StrAppend(&log, calls.forced, " calls synchronized inside run() (or loaded code): the "
                    "gate was opened for them, so their host time is in their measurement\n");
  }
  absl::StrAppendFormat(&log,
                        "wall: this workload %.2f s (timed brackets %.2f s); the harness so far "
                        "%.2f s, of which set-up %s\n",
                        absl::ToDoubleSeconds(absl::Now() - start), tally.bracketed_ms() / 1000,
                        SecondsSinceStart(), SetUpLine());
  if (std::optional<std::string> forged = SetFigures(def_, spec, gpu_name_, tally.latency_ms(),
                                                     w.reference_ms, &trace, &log)) {
    return finish({v1::RUNTIME_ERROR, {*forged}});
  }
  if (job_.census && census.fallback()) {
    // Timed, but not the submission's own work: no speedup is its.
    trace.set_speedup(0);
    trace.set_roofline_fraction(0);
    return finish({v1::LIBRARY_FALLBACK, {census.Finding()}});
  }
  return finish({v1::PASSED, {}});
}

std::optional<Harness::Failure> Harness::SendCandidateWorkload(HostChannel& host, size_t i,
                                                               bool* stop) {
  At("workload request");
  absl::StatusOr<Reply> reply = SendWorkload(host, def_, job_.workloads[i], *workloads_[i].buffers, call_deadline_);
  if (!reply.ok() && absl::IsInternal(reply.status())) {
    return Failure{v1::INFRA_ERROR, {std::string(reply.status().message())}};
  }
  if (!reply.ok()) {
    *stop = true;
    return Failure{absl::IsDeadlineExceeded(reply.status()) ? v1::TIMEOUT : v1::RUNTIME_ERROR,
                   {host.WhyGone()}};
  }
  if (!reply->ok) return Failure{v1::RUNTIME_ERROR, {reply->text}};
  return std::nullopt;
}

std::optional<Harness::Failure> Harness::CheckedCall(WorkloadCalls& calls, int set, uint64_t seed,
                                                     CallCheck* check, double* bracket) {
  PreparedWorkload& w = calls.w;
  At("prepare");
  absl::Status s = w.buffers->Prepare(*w.reference, seed, /*expected=*/true, stream_);
  if (s.ok()) s = gpu::L2Flusher::ResetPersisting();
  if (!s.ok()) {
    *calls.stop = true;
    return Failure{v1::INFRA_ERROR, {Infra("preparing inputs", s)}};
  }
  Request r{Op::kCall};
  r.set = set;
  CallResult c = timer_->Call(
      calls.host, r, [&](cudaStream_t st) { return w.buffers->Stage(set, st); },
      [&](cudaStream_t st) { return w.buffers->EnqueueChecks(set, tol_, st); });
  calls.forced += c.gate_forced;
  calls.last_forced = c.gate_forced;
  calls.census = std::move(c.census);
  const CallVerdict verdict = JudgeCall(c, timer_->stream_stuck());
  *calls.stop |= verdict.stop;
  candidate_failed_ |= verdict.candidate_failed;
  if (verdict.kill) {
    At("killing the candidate host");
    (calls.watched != nullptr ? calls.watched : candidate_.get())
        ->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
  }
  if (verdict.status != v1::PASSED) return Failure{verdict.status, {verdict.error}};
  At("read checks");
  absl::StatusOr<CallCheck> read = w.buffers->ReadChecks(set, tol_);
  if (!read.ok()) {
    *calls.stop = true;
    return Failure{v1::INFRA_ERROR, {Infra("checks", read.status())}};
  }
  *check = *read;
  *bracket = c.bracket_ms;
  if (!check->passed) {
    // Which inputs it got: a kernel right on standard-normal values may be
    // wrong on others (workloads/input_distribution.h).
    std::vector<std::string> errors = {absl::StrCat(
        "on inputs drawn as '", workloads::InputDistributionName(w.buffers->DistributionOf(seed)),
        "' (docs/MEASUREMENT.md, \"Input distributions\"):")};
    errors.insert(errors.end(), check->errors.begin(), check->errors.end());
    return Failure{v1::INCORRECT_NUMERICAL, errors};
  }
  return std::nullopt;
}

std::optional<Harness::Failure> Harness::CheckCorrectness(WorkloadCalls& calls,
                                                          v1::WorkloadTrace* trace,
                                                          std::string* log) {
  for (int t = 0; t < trials_; ++t) {
    CallCheck check;
    double bracket = 0;
    std::optional<Failure> bad =
        CheckedCall(calls, 0, CallSeed(job_.seed, calls.spec.uuid, "check", t, 0), &check, &bracket);
    NoteCheck(check, t == 0, trace);
    if (bad) {
      absl::StrAppend(log, "correctness trial ", t, ": ", v1::EvalStatus_Name(bad->first), "\n");
      return bad;
    }
  }
  absl::StrAppend(log, "correctness: ", trials_, " trials passed\n");
  return std::nullopt;
}

std::optional<Harness::Failure> Harness::TimeCalls(WorkloadCalls& calls, TimingTally& tally,
                                                   CensusTally& census, std::string* log) {
  const int per_trial = job_.warmup_calls + job_.timed_calls;
  for (int t = 0; t < trials_; ++t) {
    for (int call = 0; call < per_trial; ++call) {
      CallCheck check;
      double bracket = 0;
      std::optional<Failure> bad =
          CheckedCall(calls, call % WorkloadBuffers::kSets,
                      CallSeed(job_.seed, calls.spec.uuid, "time", t, call), &check, &bracket);
      if (bad) {
        if (bad->first == v1::INCORRECT_NUMERICAL) {
          bad->second.insert(bad->second.begin(), WrongTimedCallError(t, call));
        }
        absl::StrAppend(log, "timing trial ", t, ": ", v1::EvalStatus_Name(bad->first), "\n");
        return bad;
      }
      if (std::optional<std::string> tampered = tally.Add(t, call, bracket)) {
        return Failure{v1::RUNTIME_ERROR, {*tampered}};
      }
      if (call >= job_.warmup_calls) {
        census.Add(calls.census, bracket - candidate_calibration_.overhead_ms, calls.last_forced);
      }
    }
    tally.EndTrial(t, per_trial, log);
  }
  return std::nullopt;
}

std::optional<int> Harness::RunJit() {
  const absl::Time start = absl::Now();
  if (absl::Status s = jit_->Release(); !s.ok()) {
    return FailAll(v1::INFRA_ERROR, Infra("starting the JIT host", s), kRunnerOk);
  }
  HostChannel host(jit_fd_, [this]() {
    jit_->WaitForEnd(absl::Seconds(2));
    return jit_->Describe();
  });
  if (absl::Status s = timer_->SetUpHostWithoutCalibration(host); !s.ok()) {
    return FailAll(v1::INFRA_ERROR, Infra("the JIT host before loading the kernel", s),
                   kRunnerOk);
  }
  Progress("Triton JIT");
  std::optional<v1::WorkloadTrace> failed = LoadCandidate(host, LoadRequest(), jit_.get());
  std::string at;
  for (size_t i = 0; !failed && i < job_.workloads.size(); ++i) {
    const WorkloadSpec& spec = job_.workloads[i];
    PreparedWorkload& w = workloads_[i];
    if (!w.error.empty()) continue;  // its own trace says so later
    at = spec.uuid;
    bool stop = false;
    std::optional<Failure> bad = SendCandidateWorkload(host, i, &stop);
    if (!bad) {
      WorkloadCalls calls{spec, w, host, &stop, 0, jit_.get()};
      CallCheck check;
      double bracket = 0;
      bad = CheckedCall(calls, 0, CallSeed(job_.seed, spec.uuid, "jit", 0, 0), &check, &bracket);
    }
    // Wrong outputs are for the checked calls that follow to say.
    if (bad && bad->first != v1::INCORRECT_NUMERICAL) {
      failed.emplace();
      failed->set_status(JitStatus(*bad));
      for (const std::string& e : bad->second) failed->add_errors(e);
    }
  }
  (void)host.Send(Request{Op::kQuit});
  if (!jit_->WaitForEnd(absl::Seconds(5))) {
    jit_->Kill(sandbox::SandboxedProcess::KillReason::kDeadline);
    jit_->WaitForEnd(absl::Seconds(5));
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  JitCache built = isolation_->JitImages();
  jit_log_ = absl::StrFormat(
      "Triton JIT: %.2f s in a host of its own before timing (one call per workload on "
      "inputs no timed call gets; compile and autotuning time, in no figure); %s built, "
      "the only code of the submission's own that its timed calls may run\n",
      seconds, DescribeJitCache(built));
  census_rules_.jit_images = std::move(built.tags);
  Phase("Triton JIT", "Triton JIT done");
  if (!failed) {
    jit_.reset();
    return std::nullopt;
  }
  const std::string output = jit_->Output();
  for (const WorkloadSpec& w : job_.workloads) {
    v1::WorkloadTrace t = *failed;
    SetIdentity(t, w);
    if (!at.empty() && t.errors_size() > 0) {
      t.set_errors(0, absl::StrCat("during Triton's JIT (workload ", at, "): ", t.errors(0)));
    }
    t.set_log(absl::StrCat(jit_log_, output.empty() ? "" : "the JIT host's output:\n", output));
    Emit(TraceLine(t));
  }
  jit_.reset();
  return candidate_failed_ ? kRunnerCandidateFailed : kRunnerOk;
}

v1::EvalStatus Harness::JitStatus(const Failure& f) {
  for (const std::string& e : f.second) {
    if (absl::StrContains(e, "Triton could not compile")) return v1::COMPILE_ERROR;
  }
  return f.first;
}

void Harness::EvaluateWorkloads(HostChannel& cand) {
  std::string stopped_at;
  for (size_t i = 0; i < job_.workloads.size(); ++i) {
    const WorkloadSpec& w = job_.workloads[i];
    if (!stopped_at.empty()) {
      Emit(TraceLine(FailedTrace(
          w, v1::RUNTIME_ERROR,
          absl::StrCat("not run: the evaluation stopped at workload ", stopped_at))));
      continue;
    }
    Emit(StartedLine(w.uuid));
    Progress(absl::StrCat("workload ", w.uuid));
    bool stop = false;
    Emit(TraceLine(Evaluate(i, cand, &stop)));
    if (stop) stopped_at = w.uuid;
  }
}

}  // namespace ptxbench::runner::harness_internal
