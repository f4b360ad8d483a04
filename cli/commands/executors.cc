// Executor commands: workers, models, drain.

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/client/client.h"
#include "cli/commands/commands.h"
#include "cli/views/views.h"
#include "common/status_macros.h"

namespace ptxbench::cli {
namespace {

absl::Status RunWorkers(const Invocation& inv) {
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::ListExecutorsResponse list, client.ListExecutors());
  if (inv.global.json) {
    inv.out() << ExecutorListJson(list).dump(2) << "\n";
  } else if (list.executors().empty()) {
    inv.out() << "no workers or gateways registered (start them with 'ptxbench up', or point "
                 "ptxbench-worker / ptxbench-gateway at "
              << inv.global.scheduler << ")\n";
  } else {
    inv.out() << ExecutorTable(list, absl::Now());
  }
  return absl::OkStatus();
}

// The models the active gateways serve, and by how many gateways.
absl::Status RunModels(const Invocation& inv) {
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::ListExecutorsResponse list, client.ListExecutors());
  std::map<std::string, std::vector<std::string>> served;  // model -> gateways
  std::vector<std::string> any;  // gateways serving any model (simulated)
  for (const v1::ExecutorInfo& e : list.executors()) {
    if (e.kind() != v1::GATEWAY || e.status() == "lost" || e.status() == "stopped") continue;
    if (e.capabilities().serves_any_model()) any.push_back(e.name());
    for (const std::string& m : e.capabilities().models()) served[m].push_back(e.name());
  }
  if (inv.global.json) {
    nlohmann::json out = {{"models", served}, {"any_model", any}};
    inv.out() << out.dump(2) << "\n";
    return absl::OkStatus();
  }
  if (served.empty() && any.empty()) {
    inv.out() << "no gateway registered at " << inv.global.scheduler
              << " (start ptxbench-gateway)\n";
    return absl::OkStatus();
  }
  for (const auto& [model, gateways] : served) {
    inv.out() << model << "  (" << gateways.size() << " gateway" << (gateways.size() == 1 ? "" : "s")
              << ": " << absl::StrJoin(gateways, ", ") << ")\n";
  }
  if (!any.empty()) {
    inv.out() << "any model name, SIMULATED  (" << absl::StrJoin(any, ", ") << ")\n";
  }
  return absl::OkStatus();
}

absl::Status RunDrain(const Invocation& inv) {
  const std::string& id = inv.args.positionals[0];
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::DrainResponse response, client.Drain(id));
  if (inv.global.json) {
    inv.out() << nlohmann::json({{"executor", id}, {"draining", true}}).dump(2) << "\n";
  } else {
    inv.out() << "executor " << id
              << " is draining: it finishes what it holds and takes nothing new\n";
  }
  return absl::OkStatus();
}

}  // namespace

void AddExecutorCommands(std::vector<Command>* commands) {
  commands->push_back({{"workers",
                        "",
                        0,
                        0,
                        {},
                        "registered workers and gateways: capacity, leases, last seen",
                        ""},
                       RunWorkers});
  commands->push_back({{"models",
                        "",
                        0,
                        0,
                        {},
                        "models the registered gateways serve",
                        ""},
                       RunModels});
  commands->push_back({{"drain",
                        "EXECUTOR_ID",
                        1,
                        1,
                        {},
                        "tell an executor to finish what it holds and take nothing new",
                        ""},
                       RunDrain});
}

}  // namespace ptxbench::cli
