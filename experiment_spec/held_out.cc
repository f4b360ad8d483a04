// Held-out workloads (docs/FORMATS.md, "Held-out workloads"): which of a
// trajectory's workloads its model is never shown, decided once when the
// spec is expanded so that every trajectory of a definition holds out the
// same ones, whatever model or prompt it has (their figures compare).

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "experiment_spec/spec_reader.h"

namespace ptxbench::experiment_spec::spec_internal {
namespace {

// The workloads `t` is evaluated on, in the definition's order.
std::vector<std::string> Evaluated(const workloads::Definition& d, const TrajectorySpec& t) {
  std::vector<std::string> out;
  for (const workloads::Workload& w : d.workloads) {
    if (t.workloads.empty() ||
        std::find(t.workloads.begin(), t.workloads.end(), w.uuid) != t.workloads.end()) {
      out.push_back(w.uuid);
    }
  }
  return out;
}

// `count` of `evaluated`: those first by sha256(experiment name, definition,
// uuid). Seeded by the experiment's name, so a model cannot learn which
// shapes are held out from another experiment's prompts; fixed by it, so a
// resubmission holds out the same ones.
std::set<std::string> ChosenByHash(const std::string& experiment, const std::string& definition,
                                   const std::vector<std::string>& evaluated, int64_t count) {
  std::vector<std::pair<std::string, std::string>> keyed;
  for (const std::string& uuid : evaluated) {
    keyed.emplace_back(
        Sha256Hex(absl::StrCat(experiment, std::string(1, '\0'), definition, std::string(1, '\0'),
                               uuid)),
        uuid);
  }
  std::sort(keyed.begin(), keyed.end());
  std::set<std::string> out;
  for (int64_t i = 0; i < count && i < static_cast<int64_t>(keyed.size()); ++i) {
    out.insert(keyed[i].second);
  }
  return out;
}

}  // namespace

absl::Status ResolveHeldOut(const SpecReader& r, const Options& o, ExpandedExperiment& out) {
  if (!o.held_out) return absl::OkStatus();
  const HeldOutRequest& h = *o.held_out;
  const Json as_written = h.count > 0 ? Json(h.count) : Json(h.uuids);
  if (o.eval == "compile-only") {
    return r.Error("held_out_workloads", as_written, "no held-out workloads",
                   "a compile-only evaluation runs no workload");
  }
  std::set<std::string> named(h.uuids.begin(), h.uuids.end());
  // Per (definition, evaluated set): most trajectories share one.
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<std::string>> decided;
  for (TrajectorySpec& t : out.trajectories) {
    const workloads::Definition& d = **r.definitions().Find(t.definition);
    std::vector<std::string> evaluated = Evaluated(d, t);
    auto [it, fresh] = decided.try_emplace({t.definition, evaluated});
    if (fresh) {
      const std::set<std::string> chosen =
          h.count > 0 ? ChosenByHash(out.name, t.definition, evaluated, h.count)
                      : std::set<std::string>(h.uuids.begin(), h.uuids.end());
      for (const std::string& uuid : evaluated) {
        if (chosen.contains(uuid)) it->second.push_back(uuid);
      }
      if (it->second.size() >= evaluated.size()) {
        return r.Error("held_out_workloads", as_written,
                       "fewer workloads than a trajectory is evaluated on",
                       absl::StrCat("definition ", t.definition, "'s trajectories are evaluated on ",
                                    evaluated.size(), " workload(s); holding out ",
                                    it->second.size(), " would leave none to show"));
      }
    }
    for (const std::string& uuid : it->second) named.erase(uuid);
    if (it->second.empty()) continue;
    t.workloads = std::move(evaluated);
    t.held_out = it->second;
  }
  if (!named.empty()) {
    return r.Error("held_out_workloads", as_written, "workloads the experiment evaluates",
                   absl::StrCat("no trajectory is evaluated on workload ", *named.begin()));
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::experiment_spec::spec_internal
