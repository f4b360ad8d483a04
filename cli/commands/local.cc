// Commands that need no scheduler: definitions, prompts check, prompts render.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/commands/commands.h"
#include "common/gpu_arch.h"
#include "common/status_macros.h"
#include "common/text_format.h"
#include "nlohmann/json.hpp"
#include "prompts/prompts.h"
#include "workloads/registry.h"

namespace ptxbench::cli {
namespace {

using prompts::PromptRegistry;
using workloads::Definition;
using workloads::DefinitionRegistry;


std::string AxesText(const Definition& d) {
  std::vector<std::string> parts;
  for (const auto& axis : d.axes) {
    parts.push_back(axis.is_const ? absl::StrCat(axis.name, "=", axis.value) : axis.name);
  }
  return absl::StrJoin(parts, ", ");
}

absl::Status RunDefinitions(const Invocation& inv) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<DefinitionRegistry> registry, LoadDefinitions(inv));
  const std::vector<const Definition*> definitions = registry->List();
  if (inv.global.json) {
    nlohmann::json items = nlohmann::json::array();
    for (const Definition* d : definitions) {
      nlohmann::json axes = nlohmann::json::array();
      for (const auto& axis : d->axes) {
        nlohmann::json a = {{"name", axis.name}, {"type", axis.is_const ? "const" : "var"}};
        if (axis.is_const) a["value"] = axis.value;
        axes.push_back(std::move(a));
      }
      items.push_back({{"name", d->name},
                       {"op_type", d->op_type},
                       {"axes", std::move(axes)},
                       {"workloads", d->workloads.size()},
                       {"tags", d->tags},
                       {"dataset", d->dataset},
                       {"version", d->version}});
    }
    inv.out() << nlohmann::json({{"definitions", std::move(items)},
                                 {"skipped", registry->problems()}})
                     .dump(2)
              << "\n";
    return absl::OkStatus();
  }
  Table table({"NAME", "OP_TYPE", "AXES", "WORKLOADS", "DATASET", "VERSION"});
  table.AlignRight(3);
  for (const Definition* d : definitions) {
    table.AddRow({d->name, d->op_type, AxesText(*d), absl::StrCat(d->workloads.size()),
                  d->dataset, d->version.substr(0, 12)});
  }
  inv.out() << table.Render();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PromptRegistry>> LoadPrompts(const Invocation& inv) {
  return PromptRegistry::Load(
      inv.args.Has("root") ? inv.args.Get("root") : PromptRegistry::BundledRoot(),
      inv.args.Get("prompts", ""));
}

// --architectures: the GPUs the prompts are for, as an experiment names them
// (families or sm_NN, comma-separated); Hopper when not given.
absl::StatusOr<std::vector<std::string>> PromptArchitectures(const Invocation& inv) {
  if (!inv.args.Has("architectures")) return DefaultArchitectures();
  absl::StatusOr<std::vector<std::string>> parsed = ParseArchitectures(
      absl::StrSplit(inv.args.Get("architectures"), ',', absl::SkipWhitespace()));
  if (!parsed.ok()) return UsageError(absl::StrCat("--architectures: ", parsed.status().message()));
  return parsed;
}

// Checks one tag: it is known and renders for every language. Returns the
// rendered sizes ("cuda 1234 chars, ptx 1300 chars").
absl::StatusOr<std::string> CheckTag(const PromptRegistry& registry, const std::string& tag,
                                     const std::vector<std::string>& architectures) {
  PTXB_RETURN_IF_ERROR(registry.Check(tag));
  std::vector<std::string> sizes;
  for (const std::string& language : PromptRegistry::Languages()) {
    PTXB_ASSIGN_OR_RETURN(std::string prompt,
                          registry.RenderSystemPrompt(tag, language, architectures));
    sizes.push_back(absl::StrCat(language, " ", prompt.size(), " chars"));
  }
  return absl::StrJoin(sizes, ", ");
}

absl::Status RunPromptsCheck(const Invocation& inv) {
  PTXB_ASSIGN_OR_RETURN(std::vector<std::string> architectures, PromptArchitectures(inv));
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<PromptRegistry> registry, LoadPrompts(inv));
  const std::string root = registry->Origin();
  const std::vector<std::string> tags = registry->Tags();
  if (tags.empty()) return absl::FailedPreconditionError(absl::StrCat(root, " defines no prompt tags"));
  int failed = 0;
  nlohmann::json items = nlohmann::json::array();
  Table table({"TAG", "RESULT", "DETAIL"});
  int refused = 0;
  for (const std::string& tag : tags) {
    absl::StatusOr<std::string> result = CheckTag(*registry, tag, architectures);
    if (!result.ok()) ++failed;
    // Well formed, but for GPUs other than these: submit refuses it. Each tag
    // is judged in the language it teaches (a Triton tag in a Triton experiment).
    const absl::Status target = registry->CheckTarget(
        tag, architectures, registry->IsTritonTag(tag) ? "triton" : "cuda");
    refused += result.ok() && !target.ok();
    nlohmann::json item = {{"tag", tag}, {"ok", result.ok()}, {"usable", result.ok() && target.ok()}};
    if (!result.ok()) item["error"] = std::string(result.status().message());
    if (!target.ok()) item["refused"] = std::string(target.message());
    items.push_back(std::move(item));
    table.AddRow({tag, !result.ok() ? "ERROR" : target.ok() ? "OK" : "REFUSED",
                  !result.ok() ? std::string(result.status().message())
                  : target.ok() ? *result
                                : std::string(target.message())});
  }
  if (inv.global.json) {
    inv.out()
        << nlohmann::json({{"root", root}, {"ok", failed == 0}, {"tags", std::move(items)}}).dump(2)
        << "\n";
  } else {
    inv.out() << table.Render();
  }
  if (failed > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(failed, " of ", tags.size(), " prompt tags in ", root, " failed the check"));
  }
  if (!inv.global.json) {
    inv.out() << "all " << tags.size() << " prompt tags OK (" << root << ")"
              << (refused > 0 ? absl::StrCat("; submit refuses ", refused,
                                             " of them in an experiment for these GPUs (",
                                             absl::StrJoin(architectures, ", "), ")")
                              : "")
              << "\n";
  }
  return absl::OkStatus();
}

absl::Status RunPromptsRender(const Invocation& inv) {
  const std::string language = inv.args.Get("language", "cuda");
  const std::vector<std::string>& languages = PromptRegistry::Languages();
  if (std::find(languages.begin(), languages.end(), language) == languages.end()) {
    return UsageError(absl::StrCat("--language must be one of ", absl::StrJoin(languages, ", "),
                                   ", got '", language, "'"));
  }
  const std::string& tag = inv.args.positionals[0];
  PTXB_ASSIGN_OR_RETURN(std::vector<std::string> architectures, PromptArchitectures(inv));
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<PromptRegistry> registry, LoadPrompts(inv));
  PTXB_ASSIGN_OR_RETURN(std::string prompt,
                        registry->RenderSystemPrompt(tag, language, architectures));
  if (inv.global.json) {
    inv.out()
        << nlohmann::json({{"tag", tag}, {"language", language}, {"system_prompt", prompt}}).dump(2)
        << "\n";
  } else {
    inv.out() << prompt;
    if (prompt.empty() || prompt.back() != '\n') inv.out() << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

const FlagSpec kDatasetFlag = {"dataset", true, true, "DIR",
                               "also load a FlashInfer-Trace dataset folder"};
const FlagSpec kPreferDatasetFlag = {
    "prefer-dataset", false, false, "",
    "a dataset definition named like a bundled one replaces it (default: skipped)"};

absl::StatusOr<std::unique_ptr<DefinitionRegistry>> LoadDefinitions(const Invocation& inv) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<DefinitionRegistry> registry,
                        DefinitionRegistry::Load({inv.args.GetAll("dataset"),
                                                  inv.args.Has("prefer-dataset")}));
  for (const std::string& p : registry->problems()) inv.err() << "warning: " << p << "\n";
  return registry;
}

void AddLocalCommands(std::vector<Command>* commands) {
  commands->push_back(
      {{"definitions",
        "",
        0,
        0,
        {kDatasetFlag, kPreferDatasetFlag},
        "list workload definitions (bundled and --dataset); no scheduler needed",
        ""},
       RunDefinitions});
  const FlagSpec root = {"root", true, false, "DIR",
                         "prompt root with registry.json (default: bundled)"};
  const FlagSpec hub = {"prompts", true, false, "HUB",
                        "also a PTXBench prompt hub (its hub.json, or the folder holding it)"};
  const FlagSpec architectures = {
      "architectures", true, false, "LIST",
      "the GPUs the prompts are for, as an experiment names them (default hopper)"};
  commands->push_back({{"prompts check",
                        "",
                        0,
                        0,
                        {root, hub, architectures},
                        "check that every prompt tag expands and renders; no scheduler needed",
                        ""},
                       RunPromptsCheck});
  commands->push_back(
      {{"prompts render",
        "TAG",
        1,
        1,
        {{"language", true, false, "cuda|ptx|solution|triton",
          "kernel language of the ABI section (default cuda)"},
         root, hub, architectures},
        "print the system prompt of TAG; no scheduler needed",
        ""},
       RunPromptsRender});
}

}  // namespace ptxbench::cli
