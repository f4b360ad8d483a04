// Executor renderings (`workers`).

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/terminal/format.h"
#include "cli/views/views.h"
#include "common/text_format.h"

namespace ptxbench::cli {
namespace {

// What an executor can run: "2x NVIDIA H200 (sm_90)", "compile-only",
// "any model", "gpt-4o, claude-x".
std::string CapacityText(const v1::ExecutorInfo& e) {
  const v1::Capabilities& caps = e.capabilities();
  if (e.kind() == v1::GATEWAY) {
    if (caps.serves_any_model()) return "any model";
    if (caps.models().empty()) return "no models";
    return OneLine(absl::StrJoin(caps.models(), ", "), 40);
  }
  if (caps.gpus().empty()) return "compile-only (no GPU)";
  std::map<std::string, int> by_model;
  int unhealthy = 0;
  for (const v1::Gpu& gpu : caps.gpus()) {
    ++by_model[gpu.sm_arch().empty() ? gpu.model()
                                     : absl::StrCat(gpu.model(), " (", gpu.sm_arch(), ")")];
    if (!gpu.healthy()) ++unhealthy;
  }
  std::vector<std::string> parts;
  for (const auto& [model, n] : by_model) parts.push_back(absl::StrCat(n, "x ", model));
  std::string text = absl::StrJoin(parts, ", ");
  if (unhealthy > 0) absl::StrAppend(&text, ", ", unhealthy, " unhealthy");
  return text;
}

std::string KindName(v1::ExecutorKind kind) {
  switch (kind) {
    case v1::WORKER:
      return "worker";
    case v1::GATEWAY:
      return "gateway";
    default:
      return "-";
  }
}

}  // namespace

nlohmann::json ExecutorListJson(const v1::ListExecutorsResponse& list) {
  nlohmann::json items = nlohmann::json::array();
  for (const v1::ExecutorInfo& e : list.executors()) {
    const v1::Capabilities& caps = e.capabilities();
    nlohmann::json gpus = nlohmann::json::array();
    for (const v1::Gpu& gpu : caps.gpus()) {
      gpus.push_back({{"index", gpu.index()},
                      {"model", gpu.model()},
                      {"sm_arch", gpu.sm_arch()},
                      {"memory_bytes", gpu.memory_bytes()},
                      {"healthy", gpu.healthy()}});
    }
    items.push_back(
        {{"executor", e.executor_id()},
         {"kind", KindName(e.kind())},
         {"name", e.name()},
         {"status", e.status()},
         {"draining", e.draining()},
         {"slots", caps.slots()},
         {"leases", e.leases()},
         {"simulated", caps.simulated()},
         {"gpus", std::move(gpus)},
         {"models", std::vector<std::string>(caps.models().begin(), caps.models().end())},
         {"serves_any_model", caps.serves_any_model()},
         {"protections",
          std::vector<std::string>(caps.protections().begin(), caps.protections().end())},
         {"protection_warnings", std::vector<std::string>(caps.protection_warnings().begin(),
                                                          caps.protection_warnings().end())},
         {"torch_reference", caps.torch_reference()},
         {"triton", caps.triton()},
         {"profiler", caps.profiler()},
         {"profiler_unavailable", caps.profiler_unavailable()},
         {"sanitizer", caps.sanitizer()},
         {"sanitizer_unavailable", caps.sanitizer_unavailable()},
         {"registered_unix_ms", e.registered_unix_ms()},
         {"last_seen_unix_ms", e.last_seen_unix_ms()}});
  }
  return {{"executors", std::move(items)}};
}

std::string ExecutorTable(const v1::ListExecutorsResponse& list, absl::Time now) {
  Table table({"EXECUTOR", "KIND", "NAME", "CAPACITY", "SLOTS", "LEASES", "LAST SEEN", "STATUS"});
  table.AlignRight(4);
  table.AlignRight(5);
  for (const v1::ExecutorInfo& e : list.executors()) {
    std::string status = e.status().empty() ? (e.draining() ? "draining" : "-") : e.status();
    if (e.capabilities().simulated()) absl::StrAppend(&status, " [SIMULATED]");
    table.AddRow({e.executor_id(), KindName(e.kind()), e.name(), CapacityText(e),
                  absl::StrCat(e.capabilities().slots()), absl::StrCat(e.leases()),
                  FormatAge(e.last_seen_unix_ms(), now), status});
  }
  std::string text = table.Render();
  // What the sandbox of each worker's node (and of each gateway's agent
  // sessions) does, and what it does not.
  for (const v1::ExecutorInfo& e : list.executors()) {
    const v1::Capabilities& caps = e.capabilities();
    const bool sessions = e.kind() == v1::GATEWAY && caps.agent_slots() > 0;
    if ((e.kind() != v1::WORKER && !sessions) || caps.simulated()) continue;
    if (!caps.protections().empty()) {
      absl::StrAppend(&text, e.executor_id(), sessions ? " sessions: " : " sandbox: ",
                      absl::StrJoin(caps.protections(), "; "), "\n");
    }
    for (const std::string& w : caps.protection_warnings()) {
      absl::StrAppend(&text, e.executor_id(), " WARNING: ", w, "\n");
    }
    // Which definitions its GPUs can evaluate: those without a native
    // reference need a Python with torch.
    if (!caps.gpus().empty()) {
      absl::StrAppend(&text, e.executor_id(), " PyTorch references: ",
                      caps.torch_reference().empty()
                          ? "none (start the worker with --torch-python PATH, a Python with "
                            "torch and CUDA)"
                          : caps.torch_reference(),
                      "\n");
      // Whether Triton experiments can go to it.
      absl::StrAppend(&text, e.executor_id(), " Triton: ",
                      caps.triton().empty()
                          ? "none (start the worker with --torch-python PATH, a Python with "
                            "torch, Triton and CUDA)"
                          : caps.triton(),
                      "\n");
      // Whether experiments that ask for profiles can go to it.
      absl::StrAppend(&text, e.executor_id(), " profiler: ",
                      !caps.profiler().empty() ? caps.profiler()
                                               : absl::StrCat("none (", caps.profiler_unavailable().empty()
                                                                            ? "not reported"
                                                                            : caps.profiler_unavailable(),
                                                              ")"),
                      "\n");
      // Whether experiments that ask for the memcheck gate can go to it.
      absl::StrAppend(&text, e.executor_id(), " sanitizer: ",
                      !caps.sanitizer().empty()
                          ? caps.sanitizer()
                          : absl::StrCat("none (", caps.sanitizer_unavailable().empty()
                                                       ? "not reported"
                                                       : caps.sanitizer_unavailable(),
                                         ")"),
                      "\n");
    }
  }
  return text;
}

}  // namespace ptxbench::cli
