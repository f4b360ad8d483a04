// GpuEvaluator's memcheck gate and debug report (gpu_eval.h;
// docs/MEASUREMENT.md, "The memcheck gate"): runs of the runner, in the
// evaluation's sandbox, with the candidate host under compute-sanitizer's
// memcheck, judged from the sanitizer's own log (runner/measure/sanitizer_log.h).

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/printable_text.h"
#include "worker/gpu_eval.h"
#include "worker/held_out.h"
#include "worker/runner/measure/sanitizer_log.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;

constexpr int kDebugContextLines = 4;  // PTXBench's source_context_lines
constexpr size_t kMaxLogBytes = 32 << 10;

// The submission's file that reports name, when its text is the request's
// kernel_source (a "solution" has several files: no source shown).
const char* SourceFileName(const std::string& language) {
  if (language == "cuda") return "kernel.cu";
  if (language == "triton") return "kernel.py";
  return nullptr;
}

}  // namespace

GpuEvaluator::SanitizeOutcome GpuEvaluator::Sanitize(const v1::EvalRequest& request,
                                                     const CompiledKernel& compiled,
                                                     const gpu::GpuInfo& gpu,
                                                     const runner::WorkloadSpec& workload,
                                                     bool debug, bool* suspect) {
  const absl::Time start = absl::Now();
  SanitizeOutcome o;
  auto end = [&](v1::EvalStatus status, std::string why) {
    o.status = status;
    o.why = PrintableText(why, kMaxLogBytes);
    o.wall = absl::Now() - start;
    return o;
  };
  const sandbox::UidRange::Lease candidate_uid = candidate_uids_->Acquire();
  absl::StatusOr<runner::RunnerJob> made = MakeJob(request, compiled, gpu, candidate_uid.uid());
  if (!made.ok()) return end(v1::INFRA_ERROR, std::string(made.status().message()));
  runner::RunnerJob& job = *made;
  job.workloads = {workload};
  // Checked calls only, on fresh inputs each: PTXBench's two runs of the
  // gate as two calls of one run (half the sanitizer's start-up); one for
  // the debug report. The reference is not timed again where this GPU has
  // its figure.
  job.trials = debug ? 1 : 2;
  job.warmup_calls = 0;
  job.timed_calls = 1;
  job.known_references = reference_times_.Lookup(gpu, job);
  job.sanitize.sanitizer = options_.sanitizer;
  job.sanitize.sanitizer_root = options_.sanitizer_root;
  job.sanitize.print_limit = debug ? 100 : 1;
  job.sanitize.debug = debug;
  job.isolation.call_deadline_s =
      std::max<int>(1, static_cast<int>(absl::ToInt64Seconds(options_.sanitize_call_deadline)));
  absl::StatusOr<HarnessProcessOutcome> outcome =
      RunJob(job, gpu, options_.sanitize_deadline, {"results.jsonl", runner::kSanitizerLog});
  if (!outcome.ok()) {
    return end(v1::INFRA_ERROR, absl::StrCat("starting the runner: ", outcome.status().message()));
  }
  o.findings = runner::JudgeSanitizerLog(outcome->collected[runner::kSanitizerLog]);
  const runner::RunnerOutput out = runner::ParseRunnerOutput(outcome->collected["results.jsonl"]);
  const v1::EvalStatus ran = outcome->status != v1::EVAL_STATUS_UNSPECIFIED ? outcome->status
                             : out.traces.empty() ? v1::INFRA_ERROR
                                                  : out.traces.front().status();
  *suspect |= outcome->status != v1::EVAL_STATUS_UNSPECIFIED || ran == v1::RUNTIME_ERROR ||
              ran == v1::TIMEOUT;
  if (ran == v1::TIMEOUT) {
    return end(v1::TIMEOUT, absl::StrCat("the kernel did not finish under memcheck within ",
                                         absl::FormatDuration(options_.sanitize_call_deadline),
                                         " a call"));
  }
  if (o.findings.verdict == runner::SanitizerVerdict::kErrors) return end(v1::RUNTIME_ERROR, "");
  if (o.findings.verdict == runner::SanitizerVerdict::kClean) return end(v1::PASSED, "");
  // No finished report. A kernel that crashed leaves that to the
  // evaluation, which sees the crash itself; otherwise the sanitizer failed.
  if (ran == v1::RUNTIME_ERROR) return end(v1::PASSED, "");
  std::string why = absl::StrCat("compute-sanitizer wrote no finished report (",
                                 o.findings.incomplete, ")");
  if (!out.traces.empty()) absl::StrAppend(&why, "\n", out.traces.front().log());
  if (!outcome->diagnostic.empty()) absl::StrAppend(&why, "\n", outcome->diagnostic);
  return end(v1::INFRA_ERROR, why);
}

bool GpuEvaluator::MemcheckGate(const v1::EvalRequest& request, const CompiledKernel& compiled,
                                const gpu::GpuInfo& gpu,
                                const std::vector<runner::WorkloadSpec>& evaluated,
                                v1::EvalResult& result, bool* suspect) {
  v1::MemcheckRun& m = *result.mutable_memcheck();
  m.set_tool(options_.sanitizer_name);
  // The first workload the evaluation runs (PTXBench's scripts gate the one
  // workload each evaluates).
  const runner::WorkloadSpec& w = evaluated.front();
  m.set_workload_uuid(w.uuid);
  if (options_.sanitizer.empty()) {
    m.set_status(v1::INFRA_ERROR);
    result.set_status(v1::INFRA_ERROR);
    result.set_error("this worker has no compute-sanitizer for the memcheck gate");
    return true;
  }
  const SanitizeOutcome o = Sanitize(request, compiled, gpu, w, /*debug=*/false, suspect);
  m.set_status(o.status);
  m.set_wall_time_ms(absl::ToInt64Milliseconds(o.wall));
  m.set_errors(o.findings.errors);
  m.set_report(o.findings.report);
  if (o.status == v1::PASSED) return false;
  if (o.status == v1::INFRA_ERROR) {
    result.set_status(v1::INFRA_ERROR);
    result.set_error(absl::StrCat("the memcheck gate: ", o.why));
    return true;
  }
  // The turn stops here, untimed, as PTXBench's does.
  const std::string report =
      o.status == v1::TIMEOUT
          ? absl::StrCat(o.why, "\n", o.findings.report)
          : absl::StrCat("compute-sanitizer memcheck reported ", o.findings.errors,
                         " error(s) on workload ", w.uuid, ":\n", o.findings.report);
  for (const runner::WorkloadSpec& each : evaluated) {
    v1::WorkloadTrace* t = result.add_traces();
    t->set_workload_uuid(each.uuid);
    for (const auto& [k, v] : each.axes) (*t->mutable_axes())[k] = v;
    t->set_status(o.status);
    if (each.uuid == w.uuid) {
      t->add_errors(o.status == v1::TIMEOUT ? "the memcheck gate timed out; not timed"
                                            : "the memcheck gate found memory errors; not timed");
      t->set_log(report);
    } else {
      t->add_errors(absl::StrCat("not run: the memcheck gate stopped the evaluation at workload ",
                                 w.uuid));
    }
  }
  return true;
}

void GpuEvaluator::DebugReport(const v1::EvalRequest& request, const CompiledKernel& compiled,
                               const gpu::GpuInfo& gpu,
                               const std::vector<runner::WorkloadSpec>& evaluated,
                               v1::EvalResult& result, bool* suspect) {
  if (options_.sanitizer.empty()) return;
  // Never of a held-out workload (held_out.h).
  const auto failed = std::find_if(result.traces().begin(), result.traces().end(),
                                   [&](const v1::WorkloadTrace& t) {
                                     return !HeldOut(request, t.workload_uuid()) &&
                                            (t.status() == v1::RUNTIME_ERROR ||
                                             t.status() == v1::TIMEOUT) &&
                                            !absl::StartsWith(t.errors_size() > 0 ? t.errors(0) : "",
                                                              "not run:");
                                   });
  if (failed == result.traces().end()) return;
  const auto spec = std::find_if(evaluated.begin(), evaluated.end(), [&](const runner::WorkloadSpec& w) {
    return w.uuid == failed->workload_uuid();
  });
  if (spec == evaluated.end()) return;
  const SanitizeOutcome o = Sanitize(request, compiled, gpu, *spec, /*debug=*/true, suspect);
  v1::MemcheckRun& m = *result.mutable_memcheck();
  m.set_debug_wall_time_ms(absl::ToInt64Milliseconds(o.wall));
  std::string report;
  if (o.findings.errors > 0) {
    report = absl::StrCat("memcheck debug report (", options_.sanitizer_name, ", print limit 100) on workload ",
                          spec->uuid, ":\n", o.findings.report);
    if (const char* file = SourceFileName(request.language())) {
      const std::string context = runner::SourceContext(o.findings.locations, file,
                                                         request.kernel_source(), kDebugContextLines);
      if (!context.empty()) absl::StrAppend(&report, "source around the faults:\n", context);
    }
  }
  // A hang: memcheck prints nothing for a kernel that never ends, and the
  // core dump PTXBench takes of one is not taken here (docs/MEASUREMENT.md).
  const std::string note =
      o.status == v1::TIMEOUT
          ? absl::StrCat("memcheck debug run on workload ", spec->uuid, ": ", o.why,
                         "; no memory error was reported before it was stopped")
          : absl::StrCat("memcheck debug run on workload ", spec->uuid,
                         ": no memory error reported");
  // The report replaces the failure log of the workload it is about.
  for (v1::WorkloadTrace& t : *result.mutable_traces()) {
    if (t.workload_uuid() != spec->uuid) continue;
    t.set_log(!report.empty() ? report
                              : absl::StrCat(t.log(), t.log().empty() ? "" : "\n", note, "\n"));
  }
  m.set_debug_report(!report.empty());
}

}  // namespace ptxbench::worker
