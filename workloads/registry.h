#ifndef PTXBENCH_WORKLOADS_REGISTRY_H_
#define PTXBENCH_WORKLOADS_REGISTRY_H_

// The set of workload definitions a process knows: the bundled ones plus any
// FlashInfer-Trace dataset folder a user names
// (definitions/<op_type>/<name>.json, workloads/<op_type>/<name>.jsonl).
// Immutable after Load; safe to share between threads.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "workloads/definition.h"

namespace ptxbench::workloads {

class DefinitionRegistry {
 public:
  // Loads every definition under each dataset root, in order; a later root
  // may not redefine a name (error naming both files). Every definition needs
  // its workloads file; a workloads file without a definition, a duplicate
  // uuid (across all roots) or any invalid field is an error naming the file
  // (and line).
  static absl::StatusOr<std::unique_ptr<DefinitionRegistry>> Load(
      const std::vector<std::string>& dataset_roots);

  // The bundled dataset root: DataDir() + "/workloads/data" (the source
  // tree's workloads/data, or $PTXBENCH_DATA_DIR/workloads/data when set).
  static std::string BundledRoot();

  // NOT_FOUND "unknown definition 'x' (known: a, b, c)" when absent.
  absl::StatusOr<const Definition*> Find(absl::string_view name) const;

  // Sorted by name.
  std::vector<const Definition*> List() const;

 private:
  std::map<std::string, Definition, std::less<>> definitions_;
};

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_REGISTRY_H_
