#ifndef PTXBENCH_WORKLOADS_LAUNCH_SPEC_H_
#define PTXBENCH_WORKLOADS_LAUNCH_SPEC_H_

// The launch spec of a raw-PTX submission (prompts/abi/ptx.md): which entry
// to launch, and its grid, block and dynamic shared memory as integer
// expressions over the definition's axis names (+ - * / % and parentheses;
// / and % round toward zero like C, on non-negative values floor).
//
// On disk and in an EvalRequest the spec travels inside the PTX text, as one
// comment line that ptxas ignores and the kernel's sha256 covers:
//   // ptxbench-launch: {"entry": "k", "grid": ["(N+127)/128", 1, 1], ...}
// The scheduler writes that line from the answer's ```json block
// (WithLaunchSpecLine).

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "workloads/definition.h"
#include "workloads/expression.h"

namespace ptxbench::workloads {

inline constexpr char kLaunchSpecPrefix[] = "// ptxbench-launch: ";

struct LaunchSpec {
  std::string entry;
  std::array<std::string, 3> grid;   // expressions
  std::array<std::string, 3> block;  // expressions
  std::string shared_mem_bytes = "0";
};

struct LaunchConfig {
  std::array<int64_t, 3> grid;
  std::array<int64_t, 3> block;
  int64_t shared_mem_bytes = 0;
};

// Parses the spec JSON (numbers or expression strings). kInvalidArgument
// naming the field for a malformed spec.
absl::StatusOr<LaunchSpec> ParseLaunchSpec(absl::string_view json);
std::string LaunchSpecJson(const LaunchSpec& spec);  // one line

// The spec line of `ptx_source`, if it has one.
std::optional<std::string> FindLaunchSpecJson(absl::string_view ptx_source);

// The spec at these axis values; kInvalidArgument when an expression fails or
// a dimension is not positive, or the block exceeds 1024 threads, or the
// dynamic shared memory exceeds 227 KiB.
absl::StatusOr<LaunchConfig> Resolve(const LaunchSpec& spec,
                                     const std::map<std::string, int64_t>& axes);

// `ptx_source` with the spec line appended (`spec_json` put on one line).
std::string WithLaunchSpecLine(absl::string_view ptx_source, absl::string_view spec_json);

// The build-time check of a raw-PTX submission: the spec line exists, parses
// and resolves at every workload of `definition`, and names one of
// `entries` (the module's .entry functions, from ptxas). An error is the
// submission's fault, written for the model.
absl::Status CheckLaunchSpec(absl::string_view ptx_source, const Definition& definition,
                             const std::vector<std::string>& entries);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_LAUNCH_SPEC_H_
