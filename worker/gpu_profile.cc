// GpuEvaluator::Profile (gpu_eval.h): a second run of the runner, in the
// evaluation's sandbox, with the candidate host under Nsight Compute
// (docs/MEASUREMENT.md, "Profiles").

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/printable_text.h"
#include "worker/gpu_eval.h"
#include "worker/held_out.h"
#include "worker/profile/ncu_summary.h"
#include "worker/profile/workload_choice.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;

// Errors of a failed profile: the cause, and the end of what ran (ncu's
// own lines are the candidate host's output).
constexpr size_t kMaxErrorBytes = 4096;

std::string ErrorText(const std::vector<std::string>& lines) {
  std::string text = absl::StrJoin(lines, "\n");
  if (text.size() > kMaxErrorBytes) text = text.substr(text.size() - kMaxErrorBytes);
  return PrintableText(text, kMaxErrorBytes);
}

}  // namespace

void GpuEvaluator::Profile(const v1::EvalRequest& request, const CompiledKernel& compiled,
                           const gpu::GpuInfo& gpu,
                           const std::vector<runner::WorkloadSpec>& evaluated,
                           v1::EvalResult& result, bool* suspect) {
  const absl::Time start = absl::Now();
  v1::KernelProfileRun& p = *result.mutable_profile();
  p.set_tool(options_.profiler);
  auto end = [&](v1::EvalStatus status, const std::vector<std::string>& errors) {
    p.set_status(status);
    if (!errors.empty()) p.set_error(ErrorText(errors));
    p.set_wall_time_ms(absl::ToInt64Milliseconds(absl::Now() - start));
  };
  if (options_.ncu.empty()) return end(v1::INFRA_ERROR, {"this worker cannot profile"});
  std::vector<std::string> uuids;
  for (const runner::WorkloadSpec& w : evaluated) {
    if (!HeldOut(request, w.uuid)) uuids.push_back(w.uuid);  // held_out.h
  }
  // (An empty list would mean "any of the definition's".)
  if (uuids.empty()) return end(v1::INFRA_ERROR, {"no shown workload to profile"});
  absl::StatusOr<const workloads::Workload*> chosen =
      ChooseProfileWorkload(*compiled.definition, uuids, request.profile_workload_uuid());
  if (!chosen.ok()) return end(v1::INFRA_ERROR, {std::string(chosen.status().message())});
  const auto spec = std::find_if(evaluated.begin(), evaluated.end(),
                                 [&](const runner::WorkloadSpec& w) { return w.uuid == (*chosen)->uuid; });
  p.set_workload_uuid(spec->uuid);
  p.mutable_axes()->insert(spec->axes.begin(), spec->axes.end());
  // A kernel that crashed or hung on this workload would do it again.
  for (const v1::WorkloadTrace& t : result.traces()) {
    if (t.workload_uuid() == spec->uuid && (t.status() == v1::RUNTIME_ERROR ||
                                            t.status() == v1::TIMEOUT)) {
      return end(t.status(), {"not profiled: the kernel failed this workload in its evaluation"});
    }
  }

  const sandbox::UidRange::Lease candidate_uid = candidate_uids_->Acquire();
  absl::StatusOr<runner::RunnerJob> made = MakeJob(request, compiled, gpu, candidate_uid.uid());
  if (!made.ok()) return end(v1::INFRA_ERROR, {std::string(made.status().message())});
  runner::RunnerJob& job = *made;
  job.workloads = {*spec};
  // One checked call under the profiler; the reference timed once (its
  // figures are not used).
  job.trials = 1;
  job.warmup_calls = 0;
  job.timed_calls = 1;
  job.profile.ncu = options_.ncu;
  job.profile.ncu_root = options_.ncu_root;
  job.profile.metrics = absl::StrJoin(NcuMetrics(), ",");
  absl::StatusOr<HarnessProcessOutcome> outcome =
      RunJob(job, gpu, options_.profile_deadline,
             {"results.jsonl", runner::kProfileReport, runner::kProfileCsv});
  if (!outcome.ok()) {
    return end(v1::INFRA_ERROR, {absl::StrCat("starting the runner: ", outcome.status().message())});
  }
  const runner::RunnerOutput out = runner::ParseRunnerOutput(outcome->collected["results.jsonl"]);
  if (outcome->status != v1::EVAL_STATUS_UNSPECIFIED) {
    // The runner crashed or ran past the profile's deadline.
    *suspect = true;
    return end(outcome->status == v1::TIMEOUT ? v1::TIMEOUT : v1::RUNTIME_ERROR,
               {outcome->diagnostic});
  }
  if (out.traces.empty()) {
    return end(v1::INFRA_ERROR, {"the profile run wrote no result", outcome->diagnostic});
  }
  const v1::WorkloadTrace& trace = out.traces.front();
  if (trace.status() == v1::RUNTIME_ERROR || trace.status() == v1::TIMEOUT ||
      trace.status() == v1::INFRA_ERROR) {
    *suspect |= trace.status() != v1::INFRA_ERROR;
    std::vector<std::string> errors(trace.errors().begin(), trace.errors().end());
    errors.push_back(trace.log());
    return end(trace.status(), errors);
  }
  const std::string& report = outcome->collected[runner::kProfileReport];
  p.set_report_bytes(static_cast<int64_t>(report.size()));
  p.set_report(report);  // empty when none, or over the harness's limit
  const std::string& csv = outcome->collected[runner::kProfileCsv];
  if (csv.empty()) {
    return end(v1::INFRA_ERROR, {"the profiler wrote no figures", trace.log()});
  }
  absl::StatusOr<NcuSummary> summary = SummarizeNcuCsv(csv);
  if (!summary.ok()) return end(v1::INFRA_ERROR, {std::string(summary.status().message()), trace.log()});
  MoveInto(*std::move(summary), p);
  end(v1::PASSED, {});
}

}  // namespace ptxbench::worker
