#ifndef PTXBENCH_RESULTS_EXPORTS_TABLES_H_
#define PTXBENCH_RESULTS_EXPORTS_TABLES_H_

// The csv and jsonl exports: two tables, the same columns in both formats
// (docs/FORMATS.md, "Exports"):
//   turns.{csv,jsonl}      one row per turn
//   workloads.{csv,jsonl}  one row per turn and workload result
// Rows are formatted by hand into a large buffer (results/exports/file_sink.h): the
// tables are what a million-turn experiment is exported to, at well over
// 100,000 rows a second in constant memory.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "results/exports/folder_writer.h"

namespace ptxbench::exports {

// kCsv or kJsonl.
absl::StatusOr<std::unique_ptr<Writer>> MakeTableWriter(Format format,
                                                        std::unique_ptr<OutputDir> dir);

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_TABLES_H_
