#include "verdict/verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptxbench::verdict {

namespace v1 = ::ptxbench::v1;

void Summarize(v1::EvalResult& result) {
  v1::EvalStatus status = v1::PASSED;
  double min_speedup = std::numeric_limits<double>::infinity();
  for (const v1::WorkloadTrace& t : result.traces()) {
    if (status == v1::PASSED && t.status() != v1::PASSED) status = t.status();
    // NaN compares false: a NaN speedup is "not timed".
    if (t.speedup() > 0) min_speedup = std::min(min_speedup, t.speedup());
  }
  result.set_status(status);
  result.set_all_passed(status == v1::PASSED && result.traces_size() > 0);
  result.set_min_speedup(std::isinf(min_speedup) || !result.all_passed() ? 0 : min_speedup);
}

bool Correct(const v1::EvalResult& result) {
  if (result.status() != v1::PASSED || !result.all_passed() || result.traces().empty()) {
    return false;
  }
  for (const v1::WorkloadTrace& t : result.traces()) {
    if (t.status() != v1::PASSED) return false;
  }
  return true;
}

bool ReachesTarget(double speedup, double target_speedup) { return speedup >= target_speedup; }

bool TargetMet(const v1::EvalResult& result, double target_speedup) {
  return Correct(result) && ReachesTarget(result.min_speedup(), target_speedup);
}

double MinSpeedup(const v1::EvalResult& result) {
  return Correct(result) ? result.min_speedup() : 0;
}

double KernelSpeedup(const v1::EvalResult& result) {
  if (result.traces().empty()) return 0;
  double log_sum = 0;
  for (const v1::WorkloadTrace& trace : result.traces()) {
    if (!(trace.speedup() > 0) || !std::isfinite(trace.speedup())) return 0;
    log_sum += std::log(trace.speedup());
  }
  return std::exp(log_sum / result.traces_size());
}

double RooflineFraction(const v1::EvalResult& result) {
  double sum = 0;
  int n = 0;
  for (const v1::WorkloadTrace& trace : result.traces()) {
    if (trace.roofline_fraction() > 0 && std::isfinite(trace.roofline_fraction())) {
      sum += trace.roofline_fraction();
      ++n;
    }
  }
  return n == 0 ? 0 : sum / n;
}

bool FallbackCorrect(const v1::EvalResult& result) {
  if (result.status() != v1::LIBRARY_FALLBACK) return false;
  bool fallback = false;
  for (const v1::WorkloadTrace& trace : result.traces()) {
    if (trace.status() == v1::PASSED) continue;
    if (trace.status() != v1::LIBRARY_FALLBACK || !trace.has_census() ||
        !trace.census().outputs_correct()) {
      return false;
    }
    fallback = true;
  }
  return fallback;
}

Verdict Judge(const v1::EvalResult& result) {
  Verdict v;
  v.correct = Correct(result);
  v.fallback_correct = FallbackCorrect(result);
  if (v.correct) {
    v.min_speedup = result.min_speedup();
    v.kernel_speedup = KernelSpeedup(result);
    v.roofline = RooflineFraction(result);
  }
  return v;
}

v1::EvalResult ShownPart(const v1::EvalResult& result, const std::set<std::string>& held_out) {
  if (held_out.empty() || result.traces().empty()) return result;
  v1::EvalResult shown = result;
  shown.clear_traces();
  for (const v1::WorkloadTrace& trace : result.traces()) {
    if (!held_out.contains(trace.workload_uuid())) *shown.add_traces() = trace;
  }
  if (shown.has_memcheck() && held_out.contains(shown.memcheck().workload_uuid())) {
    shown.clear_memcheck();
  }
  if (shown.has_profile() && held_out.contains(shown.profile().workload_uuid())) {
    shown.clear_profile();
  }
  // The result's own error came from a trace (worker/eval_summary.h) or from
  // the whole run; a status that Summarize no longer gives keeps no error.
  const v1::EvalStatus before = result.status();
  Summarize(shown);
  if (shown.status() != before) shown.clear_error();
  return shown;
}

}  // namespace ptxbench::verdict
