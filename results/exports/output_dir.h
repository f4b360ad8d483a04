#ifndef PTXBENCH_RESULTS_EXPORTS_OUTPUT_DIR_H_
#define PTXBENCH_RESULTS_EXPORTS_OUTPUT_DIR_H_

// The folder one export is written into. The files go into a temporary
// sibling of the final path (".<name>.partial-XXXXXX" beside it), which
// Commit() renames into place: the export appears whole, at once, or not at
// all. Until then the destructor removes the temporary folder, so an export
// that failed or was abandoned leaves nothing half-written behind. Not
// thread-safe.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::exports {

class OutputDir {
 public:
  // Refuses a `final_path` that exists and is not an empty folder
  // (kAlreadyExists naming it); creates its missing parents.
  static absl::StatusOr<std::unique_ptr<OutputDir>> Create(const std::string& final_path);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  // The temporary folder, where files are written until Commit().
  const std::string& path() const { return path_; }
  // Where the export appears: absolute, without a trailing slash.
  const std::string& final_path() const { return final_path_; }
  // path() + "/" + relative.
  std::string File(absl::string_view relative) const;
  // Creates path()/relative and its parents.
  absl::Status MakeDirs(absl::string_view relative) const;

  // Renames the temporary folder to final_path(). kAlreadyExists when a
  // non-empty folder appeared there meanwhile (the temporary is kept, and
  // removed by the destructor).
  absl::Status Commit();

 private:
  OutputDir(std::string path, std::string final_path)
      : path_(std::move(path)), final_path_(std::move(final_path)) {}

  const std::string path_;
  const std::string final_path_;
  bool committed_ = false;
};

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_OUTPUT_DIR_H_
