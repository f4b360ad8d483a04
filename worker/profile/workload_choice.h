#ifndef PTXBENCH_WORKER_PROFILE_WORKLOAD_CHOICE_H_
#define PTXBENCH_WORKER_PROFILE_WORKLOAD_CHOICE_H_

// Which workload of an evaluation a profile runs (docs/MEASUREMENT.md,
// "Profiles"): the one the request names, else the largest of those
// evaluated (the greatest product of its axis values; the first of equals),
// where a kernel's time is most its own and least its launch's.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/definition.h"

namespace ptxbench::worker {

// `evaluated`: the request's workload uuids (empty: all of the
// definition's). NOT_FOUND when `requested` is not among them, or nothing
// is evaluated.
absl::StatusOr<const workloads::Workload*> ChooseProfileWorkload(
    const workloads::Definition& definition, const std::vector<std::string>& evaluated,
    const std::string& requested);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_PROFILE_WORKLOAD_CHOICE_H_
