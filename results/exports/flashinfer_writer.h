#ifndef PTXBENCH_RESULTS_EXPORTS_FLASHINFER_WRITER_H_
#define PTXBENCH_RESULTS_EXPORTS_FLASHINFER_WRITER_H_

// The flashinfer-trace export: a FlashInfer-Trace dataset that
// FlashInfer-Bench (and ptxbench's --dataset) loads (docs/FORMATS.md,
// "Exports"):
//   definitions/<op_type>/<name>.json     the definition's text, as given
//   workloads/<op_type>/<name>.jsonl      its workload lines, as given
//   solutions/<op_type>/<name>/<solution>.json   one per distinct kernel
//   traces/<op_type>/<name>.jsonl         one line per workload evaluated
// A kernel becomes a solution named "<model>_<definition>_<sha256 prefix>"
// (a solution the model wrote as JSON keeps its own name). Raw-PTX kernels
// and results in statuses FlashInfer-Bench does not have (LIBRARY_FALLBACK,
// COMPILED) are left out: FlashInfer-Bench could not load them.

#include <memory>

#include "absl/status/statusor.h"
#include "results/exports/export.h"
#include "results/exports/output_dir.h"

namespace ptxbench::exports {

absl::StatusOr<std::unique_ptr<Writer>> MakeFlashinferWriter(std::unique_ptr<OutputDir> dir,
                                                             const Options& options);

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_FLASHINFER_WRITER_H_
