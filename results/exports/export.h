#ifndef PTXBENCH_RESULTS_EXPORTS_EXPORT_H_
#define PTXBENCH_RESULTS_EXPORTS_EXPORT_H_

// `ptxbench export`: trajectories streamed out of the scheduler become files
// other tools read (docs/FORMATS.md, "Exports"):
//   csv, jsonl        turns and per-workload results as two tables (pandas)
//   ptxbench          a PTXBench output root (plan, summary, trajectories,
//                     logs, success kernels), one experiment
//   flashinfer-trace  a FlashInfer-Trace dataset: definitions, workloads,
//                     solutions (one per kernel) and traces
//   sft               chat records that end with a correct kernel, plus a
//                     manifest of what they came from
//
// Usage: MakeWriter, then per experiment BeginExperiment, Add for each of its
// trajectories (whole, in creation order), EndExperiment; then Finish. The
// folder appears at Finish, whole (results/exports/output_dir.h); a writer destroyed
// before a successful Finish leaves nothing behind. Writers stream: rows are
// written as trajectories arrive and memory does not grow with their number
// (beyond small counters). After any error the writer refuses further calls.
// Not thread-safe.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::exports {

enum class Format { kCsv, kJsonl, kPtxbench, kFlashinferTrace, kSft };

// "csv", "jsonl", "ptxbench", "flashinfer-trace", "sft"; kInvalidArgument
// listing them otherwise.
absl::StatusOr<Format> ParseFormat(absl::string_view name);
absl::string_view FormatName(Format format);

// What the stream must carry for `format`: RESULTS for the tables (no texts
// needed), FULL for the rest (prompts, answers, kernels, feedback, logs).
ptxbench::v1::TurnDetail DetailFor(Format format);

// Which correct turns become SFT records.
struct SftFilter {
  enum class Kind {
    kCorrect,     // every correct turn
    kBest,        // per trajectory, the fastest correct turn (earliest on ties)
    kMinSpeedup,  // correct turns with a speedup of at least min_speedup
  };
  Kind kind = Kind::kCorrect;
  double min_speedup = 0;  // kMinSpeedup
};

// "correct", "best" or "min-speedup=X" (X a positive number);
// kInvalidArgument saying which forms exist otherwise.
absl::StatusOr<SftFilter> ParseSftFilter(absl::string_view text);
// The form ParseSftFilter reads ("min-speedup=1.5").
std::string SftFilterName(const SftFilter& filter);

struct Options {
  SftFilter sft_filter;           // the sft format only
  std::string ptxbench_version;   // written into manifests and summaries
  absl::Time now = absl::UnixEpoch();  // the export's time, in summaries and manifests
};

class Writer {
 public:
  virtual ~Writer() = default;

  // Starts an experiment; `definitions` are the documents of (at least) the
  // definitions its trajectories use. The ptxbench format takes one
  // experiment: a second is kInvalidArgument.
  virtual absl::Status BeginExperiment(const ptxbench::v1::Experiment& experiment,
                                       const std::vector<ptxbench::v1::DefinitionDocument>& definitions) = 0;
  // One whole trajectory of the current experiment (not a `continued` part),
  // in creation order.
  virtual absl::Status Add(const ptxbench::v1::Trajectory& trajectory) = 0;
  virtual absl::Status EndExperiment() = 0;
  // Writes the summaries and manifests, then moves the folder into place.
  virtual absl::Status Finish() = 0;
};

// A writer of `format` into `out_dir`, which must not exist or be an empty
// folder (kAlreadyExists naming it otherwise); nothing appears there before
// Finish.
absl::StatusOr<std::unique_ptr<Writer>> MakeWriter(Format format, const std::string& out_dir,
                                                   const Options& options);

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_EXPORT_H_
