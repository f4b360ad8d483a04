#ifndef PTXBENCH_RESULTS_EXPORTS_TESTING_SCRATCH_H_
#define PTXBENCH_RESULTS_EXPORTS_TESTING_SCRATCH_H_

// A scratch folder per test, removed after it (kept when PTXB_KEEP_SCRATCH is
// set), and a one-call export of a
// whole experiment, for the export tests.

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "results/exports/export.h"

namespace ptxbench::exports::testing {

class Scratch {
 public:
  Scratch() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ptxb_export_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~Scratch() {
    if (std::getenv("PTXB_KEEP_SCRATCH") != nullptr) return;  // to look at what a test wrote
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& relative) const { return path_ + "/" + relative; }

 private:
  std::string path_;
};

// MakeWriter, one experiment with `trajectories`, Finish.
inline absl::Status ExportAll(Format format, const std::string& out, const Options& options,
                              const ptxbench::v1::Experiment& experiment,
                              const std::vector<ptxbench::v1::DefinitionDocument>& definitions,
                              const std::vector<ptxbench::v1::Trajectory>& trajectories) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer, MakeWriter(format, out, options));
  PTXB_RETURN_IF_ERROR(writer->BeginExperiment(experiment, definitions));
  for (const ptxbench::v1::Trajectory& t : trajectories) PTXB_RETURN_IF_ERROR(writer->Add(t));
  PTXB_RETURN_IF_ERROR(writer->EndExperiment());
  return writer->Finish();
}

// The files under `root`, relative, sorted.
inline std::vector<std::string> FilesUnder(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) out.push_back(std::filesystem::relative(e.path(), root).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ptxbench::exports::testing

#endif  // PTXBENCH_RESULTS_EXPORTS_TESTING_SCRATCH_H_
