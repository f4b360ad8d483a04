#include "results/report/facts.h"

#include <cmath>

namespace ptxbench::report {

bool FallbackCorrect(const ptxbench::v1::EvalResult& result) {
  if (result.status() != ptxbench::v1::LIBRARY_FALLBACK) return false;
  bool fallback = false;
  for (const auto& trace : result.traces()) {
    if (trace.status() == ptxbench::v1::PASSED) continue;
    if (trace.status() != ptxbench::v1::LIBRARY_FALLBACK || !trace.has_census() ||
        !trace.census().outputs_correct()) {
      return false;
    }
    fallback = true;
  }
  return fallback;
}

double KernelSpeedup(const ptxbench::v1::EvalResult& result) {
  if (result.traces().empty()) return 0;
  double log_sum = 0;
  for (const auto& trace : result.traces()) {
    if (!(trace.speedup() > 0) || !std::isfinite(trace.speedup())) return 0;
    log_sum += std::log(trace.speedup());
  }
  return std::exp(log_sum / result.traces_size());
}

double RooflineFraction(const ptxbench::v1::EvalResult& result) {
  double sum = 0;
  int n = 0;
  for (const auto& trace : result.traces()) {
    if (trace.roofline_fraction() > 0 && std::isfinite(trace.roofline_fraction())) {
      sum += trace.roofline_fraction();
      ++n;
    }
  }
  return n == 0 ? 0 : sum / n;
}

}  // namespace ptxbench::report
