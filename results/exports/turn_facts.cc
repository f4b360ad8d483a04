#include "results/exports/turn_facts.h"

#include <cmath>
#include <utility>

#include "results/exports/text.h"
#include "verdict/verdict.h"

namespace ptxbench::exports {

namespace v1 = ::ptxbench::v1;

bool IsCorrect(const v1::EvalResult& eval) { return verdict::Correct(eval); }

bool IsCorrect(const v1::Turn& turn) { return turn.has_eval() && IsCorrect(turn.eval()); }

double CorrectSpeedup(const v1::Turn& turn) {
  return turn.has_eval() ? verdict::Judge(turn.eval()).kernel_speedup : 0;
}

bool IsSimulated(const v1::Turn& turn) {
  return turn.response().simulated() || (turn.has_eval() && turn.eval().simulated());
}

bool IsAnswered(const v1::Turn& turn) { return turn.state() == "eval" || turn.state() == "done"; }

const std::string& StatusName(v1::EvalStatus status) { return v1::EvalStatus_Name(status); }

workloads::TraceRecord ToTraceRecord(absl::string_view definition,
                                     std::optional<std::string> solution,
                                     const v1::WorkloadTrace& trace, const v1::EvalResult& eval,
                                     const workloads::Workload* workload, int64_t unix_ms) {
  workloads::TraceRecord out;
  out.definition = std::string(definition);
  out.solution = std::move(solution);
  if (workload != nullptr) {
    out.workload = *workload;
  } else {
    out.workload.uuid = trace.workload_uuid();
    for (const auto& [name, value] : trace.axes()) out.workload.axes[name] = value;
  }
  workloads::TraceEvaluation& e = out.evaluation.emplace();
  e.status = StatusName(trace.status());
  e.log = trace.log();
  if (trace.status() == v1::PASSED || trace.status() == v1::INCORRECT_NUMERICAL) {
    e.correctness = workloads::TraceCorrectness{trace.max_rel_error(), trace.max_abs_error(),
                                                trace.matched_ratio()};
  }
  if (trace.status() == v1::PASSED) {
    workloads::TracePerformance& p = e.performance.emplace();
    p.latency_ms = trace.latency_ms();
    p.reference_latency_ms = trace.reference_latency_ms();
    p.speedup_factor = trace.speedup();
    p.reference = trace.reference();
    if (trace.roofline_fraction() > 0) p.roofline_fraction = trace.roofline_fraction();
  }
  e.environment.hardware = !eval.gpu_model().empty() ? eval.gpu_model()
                           : eval.simulated()        ? "simulated"
                                                     : "unknown";
  if (!eval.toolkit_version().empty()) e.environment.libs["cuda"] = eval.toolkit_version();
  e.environment.simulated = eval.simulated();
  e.timestamp = unix_ms > 0 ? Rfc3339Millis(unix_ms) : "unknown";
  e.errors.assign(trace.errors().begin(), trace.errors().end());
  return out;
}

}  // namespace ptxbench::exports
