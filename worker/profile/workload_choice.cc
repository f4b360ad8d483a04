#include "worker/profile/workload_choice.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ptxbench::worker {

absl::StatusOr<const workloads::Workload*> ChooseProfileWorkload(
    const workloads::Definition& definition, const std::vector<std::string>& evaluated,
    const std::string& requested) {
  auto is_evaluated = [&](const workloads::Workload& w) {
    return evaluated.empty() || std::find(evaluated.begin(), evaluated.end(), w.uuid) !=
                                    evaluated.end();
  };
  const workloads::Workload* best = nullptr;
  long double best_size = -1;
  for (const workloads::Workload& w : definition.workloads) {
    if (!is_evaluated(w)) continue;
    if (!requested.empty()) {
      if (w.uuid == requested) return &w;
      continue;
    }
    // long double: a product of a few int64 axes cannot overflow it.
    long double size = 1;
    for (const auto& [axis, value] : w.axes) size *= static_cast<long double>(value);
    if (size > best_size) {
      best = &w;
      best_size = size;
    }
  }
  if (best != nullptr) return best;
  return absl::NotFoundError(
      requested.empty()
          ? absl::StrCat("definition ", definition.name, " has no workload to profile")
          : absl::StrCat("workload ", requested, " to profile is not one of this evaluation's (",
                         definition.name, ")"));
}

}  // namespace ptxbench::worker
