#ifndef PTXBENCH_COMMON_EVAL_TEXT_H_
#define PTXBENCH_COMMON_EVAL_TEXT_H_

// The parts of an evaluation's text that the model's feedback
// (scheduler/feedback/feedback.h), `ptxbench show` and the agent tools all
// print the same way: the SASS census line and the profile section, in the
// layout docs/FORMATS.md ("Feedback messages") documents. Pure functions.

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "common/printable_text.h"  // PrintableText, which the census lines use
#include "ptxbench/v1/common.pb.h"

namespace ptxbench {

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

// What ran on the GPU during a workload's timed calls (WorkloadTrace.census,
// docs/FORMATS.md "Feedback messages"). Kernel names are text the candidate
// controls (a Triton function's name, an image it loaded), so every name is
// shortened and made printable, and a line names a bounded number of them.
inline constexpr size_t kCensusNameBytes = 80;
inline constexpr int kCensusKernelsShown = 4;

// A kernel's name as a census line shows it: a demangled C++ name without
// its return type, parameter list and template arguments ("void
// ns::kernel<128, float>(Params)" -> "ns::kernel<...>"), printable
// (PrintableText) and cut to kCensusNameBytes in its middle ("..." says
// so; the end of a library's name says whose it is). A name that is empty
// after that is "?".
std::string ShortKernelName(absl::string_view name);

// "sm90_xmma_gemm_..._cublas, pytorch_flash::flash_fwd_kernel<...>": the
// short names of the census's kernels of `origin`, in census order, at most
// `max_names` (then "and N more").
std::string CensusKernelNames(const ptxbench::v1::KernelCensus& census,
                              ptxbench::v1::KernelOrigin origin,
                              int max_names = kCensusKernelsShown);

// The census's lines, each ending in a newline and starting with `indent`:
// "kernels that ran (per timed call): gemm (submission) 0.7123 ms, 30
// launches; ..." (the kCensusKernelsShown first, then "+N more, 0.0012 ms",
// then "not accounted for 0.0100 ms" when some of the bracket's GPU time is
// not covered), and, when the census is incomplete, "census incomplete: GAP
// (28 of 30 timed calls seen)" (the gap cut to 300 bytes, printable). ""
// for a census with no kernel and nothing missing.
std::string RenderKernelCensus(const ptxbench::v1::KernelCensus& census,
                               absl::string_view indent);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_EVAL_TEXT_H_
