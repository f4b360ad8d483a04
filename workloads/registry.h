#ifndef PTXBENCH_WORKLOADS_REGISTRY_H_
#define PTXBENCH_WORKLOADS_REGISTRY_H_

// The set of workload definitions a process knows: the bundled ones plus the
// FlashInfer-Trace datasets a user names. A dataset is read as
// FlashInfer-Bench reads it: every definitions/**/*.json is one definition
// (keyed by its "name", any folder layout: nested by op type or flat), every
// workloads/**/*.jsonl line one workload of the definition its "definition"
// field names. A safetensors input's path is relative to the dataset root.
//
// A bad file skips only itself: the load goes on and lists what it skipped
// (problems()), one line each. A definition without workloads loads (it is
// refused when used, workloads::CheckUsable). Immutable after Load; safe to
// share between threads.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "workloads/definition.h"

namespace ptxbench::workloads {

struct DatasetOptions {
  // Dataset roots, in order, loaded after the bundled definitions.
  std::vector<std::string> datasets;
  // A dataset definition whose name is also a bundled one replaces it. When
  // false, such a definition is skipped (a problem naming this option): the
  // same name never silently means a different operator.
  bool prefer_datasets = false;
};

class DefinitionRegistry {
 public:
  // Loads the bundled definitions, then each dataset. Fails only when the
  // bundled set is broken, or a dataset root is missing or yields no
  // definition at all (its problems in the message); everything else is a
  // problem of the loaded registry.
  static absl::StatusOr<std::unique_ptr<DefinitionRegistry>> Load(const DatasetOptions& options);

  // The bundled dataset root: DataDir() + "/workloads/data" (the source
  // tree's workloads/data, or $PTXBENCH_DATA_DIR/workloads/data when set).
  static std::string BundledRoot();

  // NOT_FOUND "unknown definition 'x' (known: a, b, c)" when absent, saying
  // when files of the datasets were skipped.
  absl::StatusOr<const Definition*> Find(absl::string_view name) const;

  // Sorted by name.
  std::vector<const Definition*> List() const;

  // What the load skipped, in load order: "<file>[:line]: <why> (skipped)".
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::map<std::string, Definition, std::less<>> definitions_;
  std::vector<std::string> problems_;
};

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_REGISTRY_H_
