#include "workloads/reference/compare.h"

#include <cmath>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::reference {

float Bf16BitsToFloat(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

absl::StatusOr<CompareResult> CompareOutputs(absl::Span<const float> actual,
                                             absl::Span<const float> expected,
                                             const Tolerance& tol) {
  if (actual.size() != expected.size()) {
    return absl::InvalidArgumentError(absl::StrCat("compare: output has ", actual.size(),
                                                   " elements, expected ", expected.size()));
  }
  CompareResult r;
  r.total = static_cast<int64_t>(actual.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double x = actual[i], y = expected[i];
    bool ok;
    if (!std::isfinite(x) || !std::isfinite(y)) {
      ++r.nonfinite;
      ok = false;
    } else {
      const double abs_err = std::fabs(x - y);
      const double rel_err = abs_err / (std::fabs(y) + 1e-8);
      if (abs_err > r.max_abs_error) r.max_abs_error = abs_err;
      if (rel_err > r.max_rel_error) r.max_rel_error = rel_err;
      ok = !(abs_err > tol.atol && rel_err > tol.rtol);
    }
    if (ok) {
      ++r.matched;
      r.matched_error_sq += (x - y) * (x - y);
      r.matched_expected_sq += y * y;
    } else if (r.first_mismatch < 0) {
      r.first_mismatch = static_cast<int64_t>(i);
    }
    r.actual_varying += std::memcmp(&actual[i], &actual[0], sizeof(float)) != 0;
    r.expected_varying += std::memcmp(&expected[i], &expected[0], sizeof(float)) != 0;
  }
  r.passed = r.nonfinite == 0 && r.matched_ratio() >= tol.required_matched_ratio &&
             !r.constant() && !r.unrelated();
  return r;
}

}  // namespace ptxbench::reference
