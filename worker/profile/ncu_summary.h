#ifndef PTXBENCH_WORKER_PROFILE_NCU_SUMMARY_H_
#define PTXBENCH_WORKER_PROFILE_NCU_SUMMARY_H_

// Room worker/profile/: profiles on request (docs/MEASUREMENT.md,
// "Profiles"). This part turns what Nsight Compute measured into the bounded
// per-kernel summary a model reads (KernelProfile): the metrics ncu is asked
// for (kNcuMetrics) and the reading of its raw CSV page
// (ncu_csv.h). Pure text analysis; the page was written by a process the
// kernel ran in, so every value is checked and every name cleaned.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::worker {

// The metrics a profile collects (ncu --metrics, comma-separated).
const std::vector<std::string>& NcuMetrics();

// Kernels kept in a summary (the longest), and stall reasons per kernel.
inline constexpr int kMaxProfiledKernels = 8;
inline constexpr int kMaxStalls = 3;

struct NcuSummary {
  std::vector<ptxbench::v1::KernelProfile> kernels;  // longest first, at most kMaxProfiledKernels
  int kernels_profiled = 0;  // distinct kernels among the launches
  int launches = 0;
};

// Launches of one kernel (same name) are summed into one KernelProfile: its
// durations added, its other figures those of its longest launch. Kernels
// named in `skip` (ptxbench's own) are left out. An empty page (no launch)
// is an empty summary; a page that is not ncu's CSV is INVALID_ARGUMENT.
absl::StatusOr<NcuSummary> SummarizeNcuCsv(absl::string_view csv,
                                           const std::vector<std::string>& skip = {});

// The summary's kernels and count into `run`.
void MoveInto(NcuSummary&& summary, ptxbench::v1::KernelProfileRun& run);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_PROFILE_NCU_SUMMARY_H_
