#include "worker/held_out.h"

#include <algorithm>

namespace ptxbench::worker {

bool HeldOut(const ptxbench::v1::EvalRequest& request, const std::string& uuid) {
  const auto& held = request.held_out_workload_uuids();
  return std::find(held.begin(), held.end(), uuid) != held.end();
}

std::vector<std::string> ShownOnly(const ptxbench::v1::EvalRequest& request,
                                   const std::vector<std::string>& uuids) {
  std::vector<std::string> out;
  for (const std::string& uuid : uuids) {
    if (!HeldOut(request, uuid)) out.push_back(uuid);
  }
  return out;
}

}  // namespace ptxbench::worker
