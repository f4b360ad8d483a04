#ifndef PTXBENCH_SCHEDULER_SPEC_REFERENCES_H_
#define PTXBENCH_SCHEDULER_SPEC_REFERENCES_H_

// What a spec names that must travel with it to a scheduler that may run
// elsewhere, for `ptxbench submit` to gather: the files its list items (or a
// plan.json's entries) name, the prompt tags it uses, the GPUs it targets,
// and its name. The same room as the strict reading (spec.h), so the format
// has one owner. Lenient by design: what it cannot make sense of names
// nothing here, and the scheduler's strict reading says what is wrong.

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::scheduler {

// The fields of a list item that name a file sent with the spec.
inline constexpr const char* kItemFileFields[] = {"test_path", "error_kernel_path",
                                                  "error_log_path"};

struct NamedFile {
  size_t item = 0;    // index in the list (or the plan)
  std::string field;  // one of kItemFileFields
  std::string path;   // as written
};

struct SpecReferences {
  std::string name;  // a matrix's "name"; empty for a list or when not a string
  std::vector<NamedFile> files;
  std::set<std::string> prompt_tags;       // a matrix's prompt_tags, the items' prompt_tag
  std::vector<std::string> architectures;  // the default when none or malformed
};

SpecReferences ReferencesOf(absl::string_view spec_text);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_SPEC_REFERENCES_H_
