#ifndef PTXBENCH_WORKER_HELD_OUT_H_
#define PTXBENCH_WORKER_HELD_OUT_H_

// Held-out workloads on the worker's side (docs/FORMATS.md, "Held-out
// workloads"): the model is shown only the part of a result that
// verdict::ShownPart keeps, so nothing in that part may depend on a
// held-out workload. The real and the simulated evaluator therefore run the
// shown workloads first (a kernel that breaks the CUDA context on a
// held-out workload leaves no shown workload "not run"), and choose the
// memcheck gate's, the debug report's and the profile's workload among the
// shown ones only.

#include <string>
#include <vector>

#include "ptxbench/v1/common.pb.h"

namespace ptxbench::worker {

// Whether `uuid` is one of the request's held-out workloads.
bool HeldOut(const ptxbench::v1::EvalRequest& request, const std::string& uuid);

// `items` in their order, those whose uuid (`uuid_of`) is held out moved to
// the end (in their order too).
template <typename T, typename UuidOf>
std::vector<T> ShownFirst(const ptxbench::v1::EvalRequest& request, std::vector<T> items,
                          UuidOf uuid_of) {
  std::vector<T> out, held;
  for (T& item : items) {
    (HeldOut(request, uuid_of(item)) ? held : out).push_back(std::move(item));
  }
  for (T& item : held) out.push_back(std::move(item));
  return out;
}

// The uuids of `uuids` that are not held out, in order.
std::vector<std::string> ShownOnly(const ptxbench::v1::EvalRequest& request,
                                   const std::vector<std::string>& uuids);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_HELD_OUT_H_
