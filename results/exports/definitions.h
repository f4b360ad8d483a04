#ifndef PTXBENCH_RESULTS_EXPORTS_DEFINITIONS_H_
#define PTXBENCH_RESULTS_EXPORTS_DEFINITIONS_H_

// The definition documents an export was given, by name, with their
// workload lines read, so trace lines can carry each workload's inputs as
// the dataset gives them. Small: one entry per definition.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxbench/v1/client.pb.h"
#include "workloads/definition.h"

namespace ptxbench::exports {

class DefinitionIndex {
 public:
  struct Entry {
    ptxbench::v1::DefinitionDocument document;
    std::map<std::string, workloads::Workload, std::less<>> workloads;  // by uuid
  };

  // Adds `documents` and returns those new to the index, in order. A name
  // given again must be the same definition (same text and workload lines):
  // kFailedPrecondition otherwise, since one export cannot hold two versions
  // of it. A workload line that does not parse is kInvalidArgument naming
  // the definition and the line.
  absl::StatusOr<std::vector<const Entry*>> Add(
      const std::vector<ptxbench::v1::DefinitionDocument>& documents);

  const Entry* Find(absl::string_view name) const;
  const workloads::Workload* FindWorkload(absl::string_view definition,
                                          absl::string_view uuid) const;

 private:
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_DEFINITIONS_H_
