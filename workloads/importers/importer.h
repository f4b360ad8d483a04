#ifndef PTXBENCH_WORKLOADS_IMPORTERS_IMPORTER_H_
#define PTXBENCH_WORKLOADS_IMPORTERS_IMPORTER_H_

// Turns the tasks of KernelBench and KernelBenchX into a FlashInfer-Trace
// dataset that `--dataset DIR` loads (docs/FORMATS.md, "Imported suites").
//
// Each task is someone else's Python: it runs only in probe.py (beside this
// file), one process per task with a deadline, a memory and CPU limit and
// bounded output, in a scratch folder of its own. What the probe prints is
// read as hostile text: the definition with the strict definition reader,
// each workload line with the workload reader, then the definition checked
// usable as a submitted one would be. A task that fails any of this is
// refused with its reason, and the import goes on.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ptxbench::workloads::importers {

enum class Suite { kKernelBench, kKernelBenchX };

// "kernelbench" / "kernelbenchx".
absl::StatusOr<Suite> ParseSuite(const std::string& name);

struct ImportOptions {
  Suite suite = Suite::kKernelBench;
  // The suite's tree: the repository root, its task folder
  // (KernelBench/, data/kernelbenchx/) or one category's folder.
  std::string source;
  std::string out;               // the dataset written; created, must be empty
  std::string python = "/usr/bin/python3";  // with torch
  std::string probe;             // empty: DataDir()/workloads/importers/probe.py
  absl::Duration deadline = absl::Seconds(120);  // per task
  uint64_t memory_bytes = 8ull << 30;            // RLIMIT_AS per task
  int jobs = 2;                                  // probes at once
};

// One task's fate.
struct TaskOutcome {
  std::string file;      // relative to the task folder: "level1/1_Square.py"
  std::string name;      // the definition's name
  std::string category;  // its folder: "level1", "Activation"
  bool imported = false;
  std::string reason;    // refused: a code of probe.py's REASONS, or "probe-failed"
  std::string detail;
  int workloads = 0;
};

struct ImportReport {
  std::vector<TaskOutcome> tasks;  // in file order
  int imported = 0;
  std::map<std::string, int> refused;  // by reason

  // "imported 87 of 100 tasks; refused 13: in-place 2, ..." and one line per
  // refused task.
  std::string Summary() const;
};

// Imports every task of options.source into options.out, in a fixed order
// (sorted paths), so the same tree gives the same files byte for byte. Writes
// definitions/<category>/<name>.json, workloads/<category>/<name>.jsonl and
// import.json (the report). Fails only when the tree has no task, the output
// folder cannot be written or is not empty, or the probe cannot be started.
absl::StatusOr<ImportReport> Import(const ImportOptions& options);

// One task's definition file and workload lines from the probe's answer
// (the line after "PTXB-PROBE "), or the refusal it carries. Checked with the
// definition and workload readers; `outcome` gets the refusal or the count.
// Exposed for tests: the answer is hostile text.
struct ImportedFiles {
  std::string definition_json;
  std::string workloads_jsonl;
};
absl::StatusOr<ImportedFiles> FilesFromAnswer(const std::string& answer, TaskOutcome& outcome);

}  // namespace ptxbench::workloads::importers

#endif  // PTXBENCH_WORKLOADS_IMPORTERS_IMPORTER_H_
