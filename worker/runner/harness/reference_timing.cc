// The reference's figures (harness_internal.h): reused from an earlier run
// on this GPU or timed on the reference host, and the jobs that measure the
// references only.

#include "worker/runner/harness/harness_internal.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"

namespace ptxbench::runner::harness_internal {

using protocol::Op;
using protocol::Reply;
using protocol::Request;

// Setup, load and workload requests (not calls).
constexpr absl::Duration kRequestTimeout = absl::Seconds(60);

const KnownReference* Harness::FindKnown(const std::string& uuid) const {
  for (const KnownReference& k : job_.known_references) {
    if (k.workload_uuid == uuid) return &k;
  }
  return nullptr;
}

std::string Harness::TimeReferences() {
  std::vector<size_t> to_time;
  int reused = 0;
  for (size_t i = 0; i < workloads_.size(); ++i) {
    PreparedWorkload& w = workloads_[i];
    if (!w.error.empty()) continue;
    const KnownReference* known = FindKnown(job_.workloads[i].uuid);
    if (known != nullptr && w.reference != nullptr && known->name == w.reference->Name()) {
      w.reference_ms = known->ms;
      w.reference_log = known->log;
      ++reused;
    } else {
      to_time.push_back(i);
    }
  }
  std::string counts = absl::StrCat(to_time.size(), " timed here");
  if (reused > 0) absl::StrAppend(&counts, ", ", reused, " from an earlier run");
  if (to_time.empty()) return counts;
  HostChannel& host = *reference_;
  absl::StatusOr<Calibration> calibration = timer_->SetUpHost(host, "reference host");
  if (calibration.ok() && job_.calibration_survey) {
    absl::StatusOr<std::string> survey = timer_->SurveyCalibration(host, "reference host");
    if (survey.ok()) {
      calibration->log += *survey;
    } else {
      calibration = survey.status();
    }
  }
  if (calibration.ok()) {
    Request load{Op::kLoad};
    load.definition = job_.definition_json;
    absl::StatusOr<Reply> loaded = host.Ask(load, kRequestTimeout);
    if (!loaded.ok() || !loaded->ok) {
      calibration = absl::InternalError(
          loaded.ok() ? loaded->text : std::string(loaded.status().message()));
    }
  }
  Phase("reference host", "reference host calibrated");
  for (size_t i : to_time) {
    PreparedWorkload& w = workloads_[i];
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
    if (w.reference != nullptr) {
      Emit(ReferenceLine({job_.workloads[i].uuid, w.reference->Name(), *ms, w.reference_log}));
    }
    if (job_.calibration_survey && i == 0) {
      // Again with the reference loaded and a workload's buffers mapped: does
      // the hand-over cost more once the context holds more?
      absl::StatusOr<std::string> again =
          timer_->SurveyCalibration(host, "reference host after its first workload");
      w.reference_log += again.ok() ? *again : std::string(again.status().message()) + "\n";
    }
  }
  return counts;
}

absl::StatusOr<double> Harness::TimeReference(HostChannel& host, size_t i, const Calibration& cal) {
  PreparedWorkload& w = workloads_[i];
  const WorkloadSpec& spec = job_.workloads[i];
  absl::StatusOr<Reply> reply = SendWorkload(host, def_, spec, *w.buffers, kRequestTimeout);
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
      r.calls = job_.calls_per_bracket;
      CallResult c = timer_->Call(
          host, r,
          [&](cudaStream_t st) -> absl::Status {
            if (r.calls > 1) PTXB_RETURN_IF_ERROR(w.buffers->Stage(1 - set, st));
            return w.buffers->Stage(set, st);
          },
          [](cudaStream_t) { return absl::OkStatus(); });
      PTXB_RETURN_IF_ERROR(ToStatus(c));
      if (call >= job_.warmup_calls) {
        samples.push_back(std::max(c.bracket_ms - cal.overhead_ms, 0.0) / r.calls);
      }
    }
    medians.push_back(gpu::Summarize(samples).median);
    absl::StrAppendFormat(&w.reference_log, "reference %s trial %d: %s\n", w.reference->Name(),
                          t, gpu::DescribeTrial(samples));
  }
  return gpu::Summarize(medians).mean;
}

int Harness::CompareReferences() {
  for (size_t i = 0; i < job_.workloads.size(); ++i) {
    Emit(TraceLine(CompareReferencesTrace(job_.workloads[i], workloads_[i], job_.seed, trials_,
                                          tol_, stream_)));
  }
  return kRunnerOk;
}

int Harness::WriteReferenceFigures() {
  for (size_t i = 0; i < job_.workloads.size(); ++i) {
    Emit(TraceLine(ReferenceFiguresTrace(job_.workloads[i], workloads_[i])));
  }
  return kRunnerOk;
}

}  // namespace ptxbench::runner::harness_internal
