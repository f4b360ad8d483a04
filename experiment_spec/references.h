#ifndef PTXBENCH_EXPERIMENT_SPEC_REFERENCES_H_
#define PTXBENCH_EXPERIMENT_SPEC_REFERENCES_H_

// What a spec names that must travel with it to a scheduler that may run
// elsewhere, for `ptxbench submit` to gather: the files its list items (or a
// plan.json's entries, or a PTXBench coding-agent experiment.json) name, the
// prompt tags it uses and their hub, the GPUs it targets, and its name. The
// same library as the strict reading (spec.h), so the format has one owner.
// Lenient by design: what it cannot make sense of names nothing here, and the
// scheduler's strict reading says what is wrong.

#include <cstddef>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::experiment_spec {

// The fields of a list item that name a file sent with the spec.
inline constexpr const char* kItemFileFields[] = {"test_path", "error_kernel_path",
                                                  "error_log_path"};

struct NamedFile {
  std::string where;  // for messages: "item [0]: test_path", "tvm_ffi_example"
  std::string path;   // as written
};

// A PTXBench coding-agent experiment.json's fields that ptxbench reads but
// does its own way; `ptxbench submit` says so (field, why).
inline constexpr std::pair<const char*, const char*> kPtxbenchAgentIgnored[] = {
    {"experiment_root", "sessions and their records live in ptxbench's database"},
    {"profile_base_url", "ptxbench's own GPU workers evaluate every kernel"},
    {"gateway_url", "ptxbench's agent gateway runs the sessions"},
    {"agent_image", "sessions run in ptxbench's sandbox, not a container image"},
    {"watch_interval", "the gateway reads the CLI's events as they come"},
};

struct SpecReferences {
  std::string name;  // a matrix's "name"; empty for a list or when not a string
  std::vector<NamedFile> files;
  std::set<std::string> prompt_tags;       // a matrix's prompt_tags, the items' prompt_tag
  std::vector<std::string> architectures;  // the default when none or malformed
  std::string language = "cuda";           // the spec's "language" when a string
  // Each trajectory is a coding-agent session ("mode": "agent", or a
  // PTXBench coding-agent experiment.json).
  bool agent_mode = false;
  // A PTXBench coding-agent experiment.json's prompt_hub and
  // prompt_files_root, as written; used when no --prompts is given.
  std::string hub;
  std::string hub_documents;
  // What it names that ptxbench ignores, each "field: why".
  std::vector<std::string> ignored;
};

SpecReferences ReferencesOf(absl::string_view spec_text);

}  // namespace ptxbench::experiment_spec

#endif  // PTXBENCH_EXPERIMENT_SPEC_REFERENCES_H_
