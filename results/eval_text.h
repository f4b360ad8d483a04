#ifndef PTXBENCH_COMMON_EVAL_TEXT_H_
#define PTXBENCH_COMMON_EVAL_TEXT_H_

// The parts of an evaluation's text that the model's feedback
// (scheduler/feedback/feedback.h), `ptxbench show` and the agent tools all
// print the same way: the SASS census line and the profile section, in the
// layout docs/FORMATS.md ("Feedback messages") documents. Pure functions.

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench {

// `text` with every byte outside printable ASCII (control characters,
// escape sequences, invalid or any UTF-8) as '?', cut to `max_bytes`: how
// text a kernel controls (its kernel names, what it printed) is shown in a
// terminal or to a model.
std::string PrintableText(absl::string_view text, size_t max_bytes);

// "[K=5120, M=8192, N=7168]": axes in name order; "" when there are none.
std::string AxesLabel(const std::map<std::string, int64_t>& axes);

// One line (with its newline): "SASS (cuobjdump): 1234 instructions; HGMMA
// 64, SYNCS 12, UTMALDG 8; no local-memory loads or stores." Families in
// name order; "" for a census with no instruction.
std::string RenderSassCensus(const ptxbench::v1::SassCensus& sass);

// The profile section, each line ending in a newline: a heading naming the
// tool and the workload, then per kernel (the longest first, at most
// `max_kernels`) its duration, throughputs, occupancy, caches and largest
// stalls; or the heading and why there is no profile. A simulated profile
// says so first. Unmeasured values (negative) are left out.
inline constexpr int kFeedbackProfileKernels = 3;
std::string RenderProfile(const ptxbench::v1::KernelProfileRun& profile,
                          int max_kernels = kFeedbackProfileKernels);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_EVAL_TEXT_H_
