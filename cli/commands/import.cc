// `ptxbench definitions import SUITE DIR --out DIR`: KernelBench and KernelBenchX
// as a FlashInfer-Trace dataset (workloads/importers/importer.h). No scheduler
// needed.

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/commands/commands.h"
#include "common/status_macros.h"
#include "workloads/importers/importer.h"

namespace ptxbench::cli {
namespace {

namespace importers = workloads::importers;

absl::Status RunImport(const Invocation& inv) {
  absl::StatusOr<importers::Suite> suite = importers::ParseSuite(inv.args.positionals[0]);
  if (!suite.ok()) return UsageError(suite.status().message());
  if (!inv.args.Has("out")) return UsageError("definitions import needs --out DIR");
  importers::ImportOptions options;
  options.suite = *suite;
  options.source = inv.args.positionals[1];
  options.out = inv.args.Get("out");
  if (inv.args.Has("python")) options.python = inv.args.Get("python");
  if (inv.args.Has("deadline-s")) {
    int seconds = 0;
    if (!absl::SimpleAtoi(inv.args.Get("deadline-s"), &seconds) || seconds < 1 || seconds > 3600) {
      return UsageError("--deadline-s: expected whole seconds from 1 to 3600");
    }
    options.deadline = absl::Seconds(seconds);
  }
  if (inv.args.Has("jobs")) {
    if (!absl::SimpleAtoi(inv.args.Get("jobs"), &options.jobs) || options.jobs < 1 ||
        options.jobs > 64) {
      return UsageError("--jobs: expected a whole number from 1 to 64");
    }
  }
  PTXB_ASSIGN_OR_RETURN(importers::ImportReport report, importers::Import(options));
  inv.out() << report.Summary();
  inv.out() << "written to " << options.out << " (load it with --dataset " << options.out
            << ")\n";
  return absl::OkStatus();
}

}  // namespace

void AddImportCommand(std::vector<Command>* commands) {
  commands->push_back(
      {{"definitions import",
        "kernelbench|kernelbenchx DIR",
        2,
        2,
        {{"out", true, false, "DIR", "the FlashInfer-Trace dataset to write (an empty folder)"},
         {"python", true, false, "PATH", "a Python with torch (default /usr/bin/python3)"},
         {"deadline-s", true, false, "N", "seconds each task may run (default 120)"},
         {"jobs", true, false, "N", "tasks probed at once (default 2)"}},
        "import KernelBench or KernelBenchX tasks as definitions; no scheduler needed",
        "Each task runs in a Python process of its own (limited in time, memory and\n"
        "output) that says what definition and workloads it becomes, or why it cannot\n"
        "(docs/FORMATS.md, \"Imported suites\"). Prints how many imported and the\n"
        "refusals by reason; the dataset's import.json lists every task."},
       RunImport});
}

}  // namespace ptxbench::cli
