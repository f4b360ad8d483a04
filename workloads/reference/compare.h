#ifndef PTXBENCH_WORKLOADS_REFERENCE_COMPARE_H_
#define PTXBENCH_WORKLOADS_REFERENCE_COMPARE_H_

// The correctness rule of docs/MEASUREMENT.md ("Correctness checks"), on host
// values (plain C++, no CUDA).

#include <cmath>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ptxbench::reference {

struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
  double required_matched_ratio = 1.0;
};

struct CompareResult {
  int64_t total = 0;
  int64_t matched = 0;          // elements within tolerance (finite ones only)
  int64_t nonfinite = 0;        // NaN/Inf in the output or the expected values
  double max_abs_error = 0;     // over finite pairs
  double max_rel_error = 0;     // |x-y| / (|y| + 1e-8), over finite pairs
  int64_t first_mismatch = -1;  // index of the first failing element, or -1
  // Elements whose bits differ from the first element's, in the output and
  // in the expected values.
  int64_t actual_varying = 0;
  int64_t expected_varying = 0;
  // Over the matched elements: the sums of (x - y)^2 and of y^2.
  double matched_error_sq = 0;
  double matched_expected_sq = 0;
  bool passed = false;

  double matched_ratio() const {
    return total == 0 ? 1.0 : static_cast<double>(matched) / static_cast<double>(total);
  }
  // The output is one value repeated (all zeros, a constant, the untouched
  // poison) where the expected values are not: it fails however close the
  // tolerance lets it be, since expected values that are all below atol
  // would otherwise pass a kernel that computes nothing.
  bool constant() const { return expected_varying > 0 && actual_varying == 0; }
  // ||x - y|| / ||y|| over the matched elements (0 when their expected
  // values are all zero), and whether it is above kMaxRelativeL2: the
  // elements each passed, but the output as a whole does not follow the
  // expected values. Where every expected value is below atol the element
  // rule passes anything small (zeros give 1, values unrelated to the
  // expected ones about 1.4); a kernel that computes the output, in any
  // precision ptxbench checks, is far below 0.5. The elements a definition's
  // required_matched_ratio lets fail are not in it.
  static constexpr double kMaxRelativeL2 = 0.5;
  double relative_l2() const {
    return matched_expected_sq > 0 ? std::sqrt(matched_error_sq / matched_expected_sq) : 0;
  }
  bool unrelated() const { return relative_l2() > kMaxRelativeL2; }
};

// An element x (actual) fails against y (expected) iff |x-y| > atol AND
// |x-y| / (|y| + 1e-8) > rtol, or either is NaN/Inf. Passes iff no value is
// non-finite, matched/total >= required_matched_ratio, the output is not
// constant() where the expected values vary, and not unrelated().
// kInvalidArgument when the sizes differ.
absl::StatusOr<CompareResult> CompareOutputs(absl::Span<const float> actual,
                                             absl::Span<const float> expected,
                                             const Tolerance& tol = {});

// The float value of a bfloat16 bit pattern (exact).
float Bf16BitsToFloat(uint16_t bits);

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_COMPARE_H_
