// Experiment renderings (`status`) and the enum display names.

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/terminal/format.h"
#include "cli/views/views.h"
#include "common/gpu_arch.h"
#include "common/lineage.h"
#include "common/text_format.h"

namespace ptxbench::cli {
namespace {

int64_t CountOf(const google::protobuf::Map<std::string, int64_t>& map, const std::string& key) {
  auto it = map.find(key);
  return it == map.end() ? 0 : it->second;
}

nlohmann::json MapJson(const google::protobuf::Map<std::string, int64_t>& map) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : map) out[key] = value;
  return out;
}

}  // namespace

std::string StateName(v1::TrajectoryState state) {
  if (state == v1::TRAJECTORY_STATE_UNSPECIFIED) return "-";
  return v1::TrajectoryState_Name(state);
}

std::string FailureClassName(v1::FailureClass failure_class) {
  if (failure_class == v1::FAILURE_CLASS_UNSPECIFIED) return "-";
  return v1::FailureClass_Name(failure_class);
}

std::string EvalStatusName(v1::EvalStatus status) {
  if (status == v1::EVAL_STATUS_UNSPECIFIED) return "-";
  return v1::EvalStatus_Name(status);
}

std::vector<std::pair<std::string, int64_t>> OrderedStateCounts(
    const v1::ExperimentProgress& progress) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::set<std::string> known;
  for (int s = v1::TrajectoryState_MIN; s <= v1::TrajectoryState_MAX; ++s) {
    if (!v1::TrajectoryState_IsValid(s) || s == v1::TRAJECTORY_STATE_UNSPECIFIED) continue;
    std::string name = v1::TrajectoryState_Name(static_cast<v1::TrajectoryState>(s));
    known.insert(name);
    if (int64_t n = CountOf(progress.by_state(), name); n > 0) out.emplace_back(name, n);
  }
  std::vector<std::pair<std::string, int64_t>> unknown;
  for (const auto& [name, n] : progress.by_state()) {
    if (!known.count(name) && n > 0) unknown.emplace_back(name, n);
  }
  std::sort(unknown.begin(), unknown.end());
  out.insert(out.end(), unknown.begin(), unknown.end());
  return out;
}

std::vector<std::string> UnservedArchitectures(const v1::GetExperimentResponse& experiment,
                                               const v1::ListExecutorsResponse& executors) {
  const v1::Experiment& e = experiment.experiment();
  if (e.eval_mode() != v1::FULL || experiment.progress().eval_tasks_queued() == 0) return {};
  std::vector<std::string> targets(e.architectures().begin(), e.architectures().end());
  if (targets.empty()) targets = DefaultArchitectures();
  for (const v1::ExecutorInfo& x : executors.executors()) {
    if (x.kind() != v1::WORKER || x.status() != "active") continue;
    for (const v1::Gpu& g : x.capabilities().gpus()) {
      if (g.healthy() && TargetsArchitecture(targets, g.sm_arch())) return {};
    }
  }
  return targets;
}

bool WaitsForTriton(const v1::GetExperimentResponse& experiment,
                    const v1::ListExecutorsResponse& executors) {
  const v1::Experiment& e = experiment.experiment();
  if (e.language() != "triton" || e.eval_mode() != v1::FULL ||
      experiment.progress().eval_tasks_queued() == 0) {
    return false;
  }
  std::vector<std::string> targets(e.architectures().begin(), e.architectures().end());
  if (targets.empty()) targets = DefaultArchitectures();
  bool any_gpu = false;
  for (const v1::ExecutorInfo& x : executors.executors()) {
    if (x.kind() != v1::WORKER || x.status() != "active") continue;
    const v1::Capabilities& caps = x.capabilities();
    const bool of_targets =
        std::any_of(caps.gpus().begin(), caps.gpus().end(), [&](const v1::Gpu& g) {
          return g.healthy() && TargetsArchitecture(targets, g.sm_arch());
        });
    if (!of_targets) continue;
    any_gpu = true;
    if (caps.simulated() || !caps.triton().empty()) return false;
  }
  return any_gpu;
}

nlohmann::json ExperimentJson(const v1::GetExperimentResponse& experiment,
                              const std::vector<std::string>& waiting_for,
                              bool waiting_for_triton) {
  const v1::Experiment& e = experiment.experiment();
  const v1::ExperimentProgress& p = experiment.progress();
  return {
      {"experiment", e.experiment_id()},
      {"name", e.name()},
      {"created_unix_ms", e.created_unix_ms()},
      {"num_turns", e.num_turns()},
      {"trajectories",
       {{"total", p.total()},
        {"terminal", p.terminal()},
        {"by_state", MapJson(p.by_state())},
        {"by_failure_class", MapJson(p.by_failure_class())}}},
      {"turns", {{"completed", p.turns_completed()}}},
      {"tasks",
       {{"queued", p.tasks_queued()},
        {"leased", p.tasks_leased()},
        {"eval_queued", p.eval_tasks_queued()}}},
      {"architectures", std::vector<std::string>(e.architectures().begin(), e.architectures().end())},
      {"waiting_for_architectures", waiting_for},
      {"waiting_for_triton", waiting_for_triton},
      {"correct", p.correct()},
      {"target_met", p.target_met()},
      {"cost_usd", p.cost_usd()},
      {"simulated", p.simulated()},
  };
}

nlohmann::json ExperimentListJson(const v1::ListExperimentsResponse& list) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& e : list.experiments()) items.push_back(ExperimentJson(e));
  return {{"experiments", std::move(items)}};
}

std::string StateCountsText(const v1::ExperimentProgress& progress) {
  std::vector<std::string> parts;
  for (const auto& [name, n] : OrderedStateCounts(progress))
    parts.push_back(absl::StrCat(name, " ", n));
  return parts.empty() ? "none yet" : absl::StrJoin(parts, ", ");
}

std::string ExperimentText(const v1::GetExperimentResponse& experiment,
                           const std::vector<std::string>& waiting_for,
                           bool waiting_for_triton) {
  const v1::Experiment& e = experiment.experiment();
  const v1::ExperimentProgress& p = experiment.progress();
  std::string out = absl::StrCat("experiment  ", e.experiment_id());
  if (!e.name().empty()) absl::StrAppend(&out, " (", e.name(), ")");
  if (p.simulated()) absl::StrAppend(&out, "  (SIMULATED results)");
  absl::StrAppend(&out, "\n");
  std::vector<std::string> about = {absl::StrCat("created ", FormatUnixMs(e.created_unix_ms()))};
  if (e.eval_mode() != v1::EVAL_MODE_UNSPECIFIED) {
    about.push_back(absl::StrCat("eval ", v1::EvalMode_Name(e.eval_mode())));
  }
  if (!e.language().empty()) about.push_back(absl::StrCat("language ", e.language()));
  if (e.eval_mode() == v1::FULL && !e.architectures().empty()) {
    about.push_back(absl::StrCat("GPUs ", absl::StrJoin(e.architectures(), "/")));
  }
  if (e.num_turns() > 0) about.push_back(absl::StrCat("up to ", e.num_turns(), " turns"));
  absl::StrAppend(&out, "about       ", absl::StrJoin(about, ", "), "\n");
  if (const std::string made = LineageText(e.lineage_json()); !made.empty()) {
    absl::StrAppend(&out, "made by     ", made, "\n");
  }
  absl::StrAppend(&out, "progress    ", ProgressBar(p.terminal(), p.total(), 30), " ",
                  Fraction(p.terminal(), p.total()), " trajectories finished\n");
  absl::StrAppend(&out, "states      ", StateCountsText(p), "\n");
  if (!p.by_failure_class().empty()) {
    std::vector<std::string> parts;
    std::map<std::string, int64_t> sorted(p.by_failure_class().begin(), p.by_failure_class().end());
    for (const auto& [name, n] : sorted) parts.push_back(absl::StrCat(name, " ", n));
    absl::StrAppend(&out, "failures    ", absl::StrJoin(parts, ", "), "\n");
  }
  absl::StrAppend(&out, "turns       ", p.turns_completed(), " completed; tasks ", p.tasks_queued(),
                  " queued, ", p.tasks_leased(), " leased\n");
  if (!waiting_for.empty()) {
    std::vector<std::string> named;
    for (const std::string& a : waiting_for) named.push_back(DescribeArchitecture(a));
    absl::StrAppend(&out, "waiting     ", p.eval_tasks_queued(),
                    " evaluation(s) wait for a GPU of ", absl::StrJoin(named, " or "),
                    ": no active worker has one (see 'ptxbench workers')\n");
  }
  if (waiting_for_triton) {
    absl::StrAppend(&out, "waiting     ", p.eval_tasks_queued(),
                    " evaluation(s) wait for a worker that runs Triton: no active worker of its "
                    "GPUs has Triton (start one with --torch-python PATH, a Python with torch, "
                    "Triton and CUDA; see 'ptxbench workers')\n");
  }
  absl::StrAppend(&out, "results     ", p.correct(), " with a correct kernel, ", p.target_met(),
                  " met the target\n");
  absl::StrAppend(&out, "cost        ", FormatCost(p.cost_usd()), "\n");
  return out;
}

std::string ExperimentTable(const v1::ListExperimentsResponse& list) {
  Table table({"EXPERIMENT", "NAME", "CREATED", "FINISHED", "LIVE", "CORRECT", "TARGET MET",
               "FAILED", "COST", "NOTE"});
  for (size_t c : {4, 5, 6, 7, 8}) table.AlignRight(c);
  for (const auto& item : list.experiments()) {
    const v1::Experiment& e = item.experiment();
    const v1::ExperimentProgress& p = item.progress();
    table.AddRow({e.experiment_id(), e.name(), FormatUnixMs(e.created_unix_ms()),
                  absl::StrCat(p.terminal(), "/", p.total()),
                  absl::StrCat(p.total() - p.terminal()), absl::StrCat(p.correct()),
                  absl::StrCat(p.target_met()), absl::StrCat(CountOf(p.by_state(), "FAILED")),
                  FormatCost(p.cost_usd()), p.simulated() ? "SIMULATED" : ""});
  }
  return table.Render();
}

std::string ProgressLine(const std::string& experiment_id, const v1::ExperimentProgress& progress,
                         bool finished) {
  std::string line =
      absl::StrCat(absl::FormatTime("%H:%M:%S", absl::Now(), absl::LocalTimeZone()), " ",
                   experiment_id, " ", Fraction(progress.terminal(), progress.total()),
                   " finished | ", StateCountsText(progress), " | correct ", progress.correct(),
                   ", target met ", progress.target_met(), " | ", FormatCost(progress.cost_usd()));
  if (progress.simulated()) absl::StrAppend(&line, " | SIMULATED");
  if (finished) absl::StrAppend(&line, " | done");
  return line;
}

}  // namespace ptxbench::cli
