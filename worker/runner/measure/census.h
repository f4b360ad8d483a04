#ifndef PTXBENCH_WORKER_RUNNER_MEASURE_CENSUS_H_
#define PTXBENCH_WORKER_RUNNER_MEASURE_CENSUS_H_

// The census of what a candidate's timed calls ran on the GPU
// (docs/SECURITY.md, "What ran"): the candidate host's tracer
// (kernel_census.h) says after each call which kernels ran, from which
// loaded image, for how long; the harness decides here where each came from
// and whether the call was the submission's own work. Plain C++: the rules
// build and are tested without CUDA (census_test.cc).
//
// The tracer runs in the candidate's process, so what it says is as
// trustworthy as that process: a candidate can silence it, and with enough
// effort forge it. Two things bound that. The harness's bracket (bracket.h),
// which no candidate reaches, measures each call's GPU time; kernels the
// census saw must account for it, so GPU work with the tracer silenced shows
// as unaccounted time. And a census that stops coming, or comes malformed,
// after the tracer started before the submission was loaded, is itself a
// finding. What is left (a forged census that accounts for the time) is
// written down in docs/SECURITY.md.
//
// Wire form (the text of a call's "finished" reply, protocol.h; printable,
// at most protocol::kMaxReplyText):
//   census busy=<ns> more=<kernels left out>
//   k <image> <launches> <ns> <name>
// one "k" line per kernel name, largest time first. <image> is the first 16
// hex digits of the sha256 of the loaded image that defines the name,
// followed by 'b' (loaded before the submission was) or 'a' (after); "?"
// where no loaded image defines it, "*" where several do, "-" for the
// driver's own memsets and copies ("[memset]", "[memcpy]").

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::runner {

// One kernel name's work in one call.
struct CensusEntry {
  std::string image;  // as on the wire
  int64_t launches = 0;
  int64_t ns = 0;
  std::string name;
};

// What one call ran.
struct CallCensus {
  int64_t busy_ns = 0;  // the union of the GPU intervals of everything seen
  int64_t more = 0;     // kernel names left out of `entries` (the wire's bound)
  std::vector<CensusEntry> entries;
};

// The most "k" lines a reply carries, and the longest name kept.
inline constexpr size_t kMaxCensusEntries = 16;
inline constexpr size_t kMaxCensusName = 180;

// Bounded to protocol::kMaxReplyText: names cut, entries past the bound
// counted in `more` (their time kept in busy_ns).
std::string EncodeCallCensus(const CallCensus& census);
// Total: anything but the form above is kDataLoss.
absl::StatusOr<CallCensus> DecodeCallCensus(absl::string_view text);

// What the harness knows of the submission's images.
struct CensusRules {
  // "cuda", "ptx", "triton" (RunnerJob::language).
  std::string language;
  // Triton: the 16-hex-digit prefixes of the sha256 of each image the JIT
  // built (the harness hashes the JIT's cache itself). For a build, every
  // image loaded after the submission is its own: the candidate host's view
  // has no vendor library (docs/SECURITY.md).
  std::set<std::string> jit_images;
  // Why the host's tracer did not start (said at set-up, before any
  // submitted code ran); empty when it did. Without a tracer nothing is
  // judged, and every trace says what cannot be seen.
  std::string off;
};

// The kernels a cubin defines: its ".text.<name>" sections (one per kernel
// and per function not inlined), at most kMaxImageKernels. Anything that is
// not a 64-bit ELF read within bounds defines nothing, so its kernels are
// nobody's.
inline constexpr size_t kMaxImageKernels = 1 << 16;
std::vector<std::string> CubinKernels(absl::string_view image);

// Why a candidate host's tracer is off, from its set-up reply's note
// ("census: on" or "census: off: <why>"); empty when it is on.
std::string CensusOffReason(absl::string_view setup_note);

// Where a kernel of `entry` came from.
ptxbench::v1::KernelOrigin OriginOf(const CensusRules& rules, const CensusEntry& entry);

// The census of one workload's timed calls.
class CensusTally {
 public:
  explicit CensusTally(CensusRules rules) : rules_(std::move(rules)) {}

  // One timed call: its census reply (`text`, as the host sent it) and its
  // GPU time net of the calibrated overhead. `gate_forced`: the call
  // synchronized inside run(), so its bracket holds host time and says
  // nothing of unseen GPU work.
  void Add(absl::string_view text, double net_ms, bool gate_forced);

  // Library compute ran in a timed call, the census is missing, or it left
  // GPU time unaccounted: the workload is LIBRARY_FALLBACK.
  bool fallback() const;
  // One line naming why (the library kernels, or the gap); empty when not.
  std::string Finding() const;
  // The trace's census; `outputs_correct` as the checks found.
  ptxbench::v1::KernelCensus Summary(bool outputs_correct) const;

 private:
  struct Kernel {
    ptxbench::v1::KernelOrigin origin;
    std::string image;  // LaunchedKernel.image
    int64_t launches = 0;
    int64_t ns = 0;
  };
  std::string Gap() const;
  double MedianUnaccountedMs() const;

  const CensusRules rules_;
  int64_t timed_ = 0;
  int64_t seen_ = 0;
  int64_t malformed_ = 0;
  int64_t left_out_ = 0;
  std::map<std::string, Kernel> kernels_;  // by name
  std::vector<double> unaccounted_ms_;     // per call whose gate held
  std::vector<double> net_ms_;
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_MEASURE_CENSUS_H_
