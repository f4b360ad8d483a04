#ifndef PTXBENCH_RESULTS_EXPORTS_PTXBENCH_WRITER_H_
#define PTXBENCH_RESULTS_EXPORTS_PTXBENCH_WRITER_H_

// The ptxbench export: one experiment as a PTXBench output root, so
// PTXBench's analysis scripts read it as one of their own runs
// (docs/FORMATS.md, "Exports"):
//   plan.json                    {"config", "plan": [one entry per trajectory]}
//   summary.json                 counts, by_prompt_tag, results[]
//   logs/exp_NNN.log             ptxbench's account of the trajectory
//   trajectories/exp_NNN.json    results/exports/ptxbench_messages.h
//   success/exp_NNN/kernel_v{k}.cu (.ptx, .json), success/exp_NNN/record.json
// exp_NNN numbers the trajectories in creation order from 0, three digits
// at least, as PTXBench does; kernel versions count from 0, as PTXBench's do.

#include <memory>

#include "absl/status/statusor.h"
#include "results/exports/export.h"
#include "results/exports/output_dir.h"

namespace ptxbench::exports {

absl::StatusOr<std::unique_ptr<Writer>> MakePtxbenchWriter(std::unique_ptr<OutputDir> dir,
                                                           const Options& options);

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_PTXBENCH_WRITER_H_
