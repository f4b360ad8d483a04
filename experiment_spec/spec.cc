#include "experiment_spec/spec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/gpu_arch.h"
#include "common/hash.h"
#include "common/json_reader.h"
#include "common/status_macros.h"
#include "experiment_spec/limits.h"
#include "experiment_spec/spec_reader.h"
#include "workloads/native_reference.h"

namespace ptxbench::experiment_spec {

namespace spec_internal {

absl::StatusOr<std::optional<AgentSettings>> ReadMode(const SpecReader& r, const Json& doc,
                                                      bool list_form) {
  std::string mode = "multiturn";
  if (const Json* v = JsonReader::Member(doc, "mode")) {
    PTXB_ASSIGN_OR_RETURN(mode, r.json().Enum(*v, "mode", {"multiturn", "agent", "synthesis"}));
  }
  const Json* agent = JsonReader::Member(doc, "agent");
  if (mode == "multiturn") {
    if (agent != nullptr) {
      return r.Error("agent", *agent, "no agent object", "it applies only with \"mode\": \"agent\"");
    }
    return std::nullopt;
  }
  if (const Json* v = JsonReader::Member(doc, "num_turns")) {
    return NoTurnsWithAgent(r.json(), "num_turns", *v, "in agent mode");
  }
  if (const Json* v = JsonReader::Member(doc, "context_policy")) {
    return r.Error("context_policy", *v, "no context_policy in agent mode",
                   "the agent CLI keeps its own context");
  }
  if (agent == nullptr) {
    return r.json().Missing("agent", "an object naming the CLI and its budgets (mode is agent)");
  }
  PTXB_ASSIGN_OR_RETURN(AgentSettings settings, ReadAgentSettings(r, *agent));
  if (settings.starter == "fixit" && !list_form) {
    return r.Error("agent.starter", (*agent)["starter"], "none",
                   "a session starts from fix-it items' kernels, which only a list spec has");
  }
  return settings;
}

}  // namespace spec_internal

namespace {

using spec_internal::IsExperimentName;
using spec_internal::Json;
using spec_internal::kExperimentName;
using spec_internal::kMaxCount;
using spec_internal::CheckLimit;
using spec_internal::ExpandMatrix;
using spec_internal::FillOptions;
using spec_internal::FinishExpansion;
using spec_internal::Matrix;
using spec_internal::ReadMatrix;
using spec_internal::ReadMode;
using spec_internal::Options;
using spec_internal::ReadAgentSettings;
using spec_internal::SpecReader;
// std::map-backed: dump() of a normalized spec has sorted keys (canonical).
using Canonical = nlohmann::json;

// One item of a list spec, read and checked.
struct ListItem {
  std::string definition;
  int64_t count = 0;
  int64_t turns = 0;
  double speedup = 1;
  std::string tag;
  std::vector<std::string> workloads;
  std::string repair_kernel, repair_log, repair_sha256;
};

// A fix-it item's two files (both, or neither), into `parsed` and its
// normalized form.
absl::Status ReadRepair(const SpecReader& r, const Json& item, const std::string& at,
                        ListItem& parsed, Canonical& normalized) {
  const bool has_kernel = item.contains("error_kernel_path"), has_log = item.contains("error_log_path");
  if (has_kernel != has_log) {
    const char* present = has_kernel ? "error_kernel_path" : "error_log_path";
    return r.Error(JsonField(at, present), item[present], "both error_kernel_path and error_log_path",
                   "a fix-it item needs the kernel and its error log");
  }
  if (!has_kernel) return absl::OkStatus();
  PTXB_ASSIGN_OR_RETURN(parsed.repair_kernel, r.SentFile(item["error_kernel_path"],
                                                         JsonField(at, "error_kernel_path")));
  PTXB_ASSIGN_OR_RETURN(parsed.repair_log,
                        r.SentFile(item["error_log_path"], JsonField(at, "error_log_path")));
  if (absl::StripAsciiWhitespace(parsed.repair_kernel).empty()) {
    return r.Error(JsonField(at, "error_kernel_path"), item["error_kernel_path"], "a kernel to fix",
                   "the file is empty");
  }
  normalized["error_kernel_path"] = item["error_kernel_path"];
  normalized["error_log_path"] = item["error_log_path"];
  // The contents, not only the paths, make the experiment.
  parsed.repair_sha256 =
      Sha256Hex(absl::StrCat(parsed.repair_kernel, std::string(1, '\0'), parsed.repair_log));
  normalized["repair_sha256"] = parsed.repair_sha256;
  return absl::OkStatus();
}

// Item `at` of a list spec, and its normalized form. In agent mode
// (`agent` set) its sessions' evaluations are the agent's max_evaluations,
// not num_turns, and with starter fixit it must be a fix-it item.
absl::StatusOr<ListItem> ReadListItem(const SpecReader& r, const Json& item, const std::string& at,
                                      const std::optional<AgentSettings>& agent,
                                      absl::string_view language, Canonical& normalized) {
  if (!item.is_object()) return r.Error(at, item, "an object");
  PTXB_RETURN_IF_ERROR(r.json().CheckKeys(item, at,
                                          {"num_trajectories", "num_turns", "target_speedup",
                                           "prompt_tag", "definition", "test_path",
                                           "error_kernel_path", "error_log_path",
                                           "kernel_policy"},
                                          /*allow_comments=*/true));
  // PTXBench's prepared multiturn example names "kernel_policy": "default".
  // ptxbench has that one policy (every kernel is checked and timed in full),
  // so the value is accepted and any other refused, never half read.
  if (const Json* v = JsonReader::Member(item, "kernel_policy")) {
    PTXB_RETURN_IF_ERROR(r.json().Enum(*v, JsonField(at, "kernel_policy"), {"default"}).status());
  }
  ListItem parsed;
  PTXB_ASSIGN_OR_RETURN(const Json* count, r.json().Required(item, at, "num_trajectories"));
  PTXB_ASSIGN_OR_RETURN(parsed.count, r.Count(*count, JsonField(at, "num_trajectories"), kMaxCount));
  if (!agent) {
    PTXB_ASSIGN_OR_RETURN(const Json* turns, r.json().Required(item, at, "num_turns"));
    PTXB_ASSIGN_OR_RETURN(parsed.turns, r.Count(*turns, JsonField(at, "num_turns"), kMaxTurns));
  } else if (const Json* turns = JsonReader::Member(item, "num_turns")) {
    return NoTurnsWithAgent(r.json(), JsonField(at, "num_turns"), *turns, "in agent mode");
  } else {
    parsed.turns = agent->max_evaluations;
  }
  PTXB_ASSIGN_OR_RETURN(const Json* speedup, r.json().Required(item, at, "target_speedup"));
  PTXB_ASSIGN_OR_RETURN(parsed.speedup, r.Speedup(*speedup, JsonField(at, "target_speedup")));
  PTXB_ASSIGN_OR_RETURN(const Json* tag, r.json().Required(item, at, "prompt_tag"));
  PTXB_RETURN_IF_ERROR(r.CheckPromptTag(*tag, JsonField(at, "prompt_tag")));
  // A list spec names no architectures: it targets the default.
  PTXB_RETURN_IF_ERROR(
      r.CheckPromptTarget(*tag, JsonField(at, "prompt_tag"), DefaultArchitectures(), language));
  parsed.tag = tag->get<std::string>();
  const std::string definition_field = JsonField(at, "definition");
  const std::string& fallback = r.input().default_definition;
  if (auto it = item.find("definition"); it != item.end()) {
    PTXB_RETURN_IF_ERROR(r.CheckDefinition(*it, definition_field));
    parsed.definition = it->get<std::string>();
  } else if (!fallback.empty()) {
    PTXB_RETURN_IF_ERROR(r.CheckDefinition(Json(fallback), definition_field));
    parsed.definition = fallback;
  } else {
    return r.json().Missing(definition_field,
                            "a definition, in the item or on the command line (--definition)");
  }
  normalized = {{"definition", parsed.definition},
                {"num_trajectories", parsed.count},
                {"target_speedup", parsed.speedup},
                {"prompt_tag", parsed.tag}};
  if (!agent) normalized["num_turns"] = parsed.turns;
  if (auto it = item.find("test_path"); it != item.end()) {
    // PTXBench times the one workload its test script names: so do we, or
    // the speedups would not compare.
    PTXB_ASSIGN_OR_RETURN(std::string uuid, r.TestScriptWorkload(*it, JsonField(at, "test_path"),
                                                                 parsed.definition));
    parsed.workloads = {uuid};
    normalized["test_path"] = it->get<std::string>();
    normalized["workloads"] = parsed.workloads;
  }
  PTXB_RETURN_IF_ERROR(ReadRepair(r, item, at, parsed, normalized));
  if (agent && agent->starter == "fixit" && parsed.repair_kernel.empty()) {
    return r.json().Missing(JsonField(at, "error_kernel_path"),
                            "a fix-it item's kernel and log (agent.starter is fixit: each "
                            "session starts from one)");
  }
  return parsed;
}

// The list's trajectories: consecutive sample indices in file order.
void AddListTrajectories(const std::vector<ListItem>& items, const std::string& model,
                         ExpandedExperiment& out) {
  int32_t next_index = 0;
  for (const ListItem& item : items) {
    for (int64_t k = 0; k < item.count; ++k) {
      TrajectorySpec t;
      t.sample_index = next_index++;
      t.trajectory_id = DeriveTrajectoryId(out.experiment_id, model, item.definition, item.tag,
                                           t.sample_index);
      t.model = model;
      t.definition = item.definition;
      t.prompt_tag = item.tag;
      t.num_turns = static_cast<int32_t>(item.turns);
      t.target_speedup = item.speedup;
      t.workloads = item.workloads;
      t.repair_kernel = item.repair_kernel;
      t.repair_log = item.repair_log;
      t.repair_sha256 = item.repair_sha256;
      out.trajectories.push_back(std::move(t));
    }
  }
}

// PTXBench's list config names no language; its tags do, as PTXBench's
// runner reads them: a list whose tags are all Triton tags (triton-hopper...)
// is a Triton experiment (its configs/quickstart-triton.json), any other is
// CUDA. One that mixes them is refused: one experiment has one language.
absl::StatusOr<std::string> ListLanguage(const SpecReader& r, const Json& list) {
  size_t triton = 0, tagged = 0;
  const Json* first_other = nullptr;
  std::string other_at;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json* tag = list[i].is_object() ? JsonReader::Member(list[i], "prompt_tag") : nullptr;
    if (tag == nullptr || !tag->is_string()) continue;  // the item's own check says why
    ++tagged;
    if (r.prompts().IsTritonTag(tag->get<std::string>())) {
      ++triton;
    } else if (first_other == nullptr) {
      first_other = tag;
      other_at = JsonField(JsonIndex("", i), "prompt_tag");
    }
  }
  if (triton == 0) return std::string("cuda");
  if (triton < tagged) {
    return r.Error(other_at, *first_other, "a Triton tag, as the list's other items have",
                   "one experiment is in one language: split the list, or use the object form "
                   "with its \"language\"");
  }
  return std::string("triton");
}

// A list spec: PTXBench's list config (a JSON array of items), or ptxbench's
// object form {"name", "items": [...], "mode", "agent", and the options a
// matrix has but architectures}, which can run its items as agent sessions.
absl::StatusOr<ExpandedExperiment> ExpandList(const SpecReader& r, const Json& doc,
                                              const SpecLimits& limits) {
  const SpecInput& input = r.input();
  const bool object_form = doc.is_object();
  const Json* name = nullptr;
  Options options;
  std::optional<AgentSettings> agent;
  // PTXBench's protocol runs the memcheck gate; ptxbench's gate is off by
  // default until it has run on a GPU machine (docs/FORMATS.md): the object
  // form turns it on with "memcheck": true.
  if (object_form) {
    PTXB_RETURN_IF_ERROR(r.json().CheckKeys(doc, "",
                                            {"name", "items", "mode", "agent", "context_policy",
                                             "language", "eval", "priority", "max_cost_usd",
                                             "profile", "memcheck", "held_out_workloads"},
                                            /*allow_comments=*/true));
    name = JsonReader::Member(doc, "name");
    PTXB_ASSIGN_OR_RETURN(agent, ReadMode(r, doc, /*list_form=*/true));
    PTXB_ASSIGN_OR_RETURN(options, r.ReadOptions(doc));
  }
  const Json& list = object_form ? doc["items"] : doc;
  const std::string items_at = object_form ? "items" : "";
  if (!list.is_array() || list.empty()) {
    return r.Error(items_at, list, "a non-empty list of experiments");
  }
  if (!object_form) {
    PTXB_ASSIGN_OR_RETURN(options.language, ListLanguage(r, list));
  }
  ExpandedExperiment out;
  // A list config has no name field: --name, else the config file's name.
  const std::string stem = std::filesystem::path(input.path).stem().string();
  if (input.name.empty() && name == nullptr && !IsExperimentName(stem)) {
    return r.Error("name", Json(stem), kExperimentName,
                   "a list-form spec takes its name from the command line (--name) or "
                   "else from its file name");
  }
  PTXB_ASSIGN_OR_RETURN(out.name, r.Name(name, stem));
  if (input.default_model.empty()) {
    return r.json().ErrorFound("model", "nothing", "a model given on the command line (--model)",
                               "a list-form spec names no model of its own");
  }
  PTXB_RETURN_IF_ERROR(r.CheckModel(Json(input.default_model), "model"));

  std::vector<ListItem> items;
  Canonical normalized_items = Canonical::array();
  int64_t total = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = JsonIndex(items_at, i);
    Canonical normalized_item;
    PTXB_ASSIGN_OR_RETURN(ListItem parsed, ReadListItem(r, list[i], at, agent, options.language,
                                                        normalized_item));
    normalized_items.push_back(std::move(normalized_item));
    total += parsed.count;  // at most 2^31 items of at most 2^31 each: no overflow
    PTXB_RETURN_IF_ERROR(
        CheckLimit(r, JsonField(at, "num_trajectories"), list[i]["num_trajectories"], total,
                   absl::StrCat("num_trajectories summed over items [0] to [", i, "]"), limits));
    items.push_back(std::move(parsed));
  }

  Canonical normalized = Canonical::object();
  normalized["form"] = "list";
  normalized["name"] = out.name;
  normalized["model"] = input.default_model;
  normalized["items"] = std::move(normalized_items);
  if (!input.eval.empty()) {
    PTXB_ASSIGN_OR_RETURN(options.eval, r.json().Enum(Json(input.eval), "eval", {"full", "compile-only"}));
  }
  FillOptions(options, normalized, out);
  if (agent) {
    normalized["mode"] = "agent";
    normalized["agent"] = AgentSettingsJson(*agent);
    normalized.erase("context_policy");
    out.agent = std::move(agent);
  }
  out.normalized_json = normalized.dump();
  out.experiment_id = DeriveExperimentId(out.name);
  out.trajectories.reserve(static_cast<size_t>(total));
  AddListTrajectories(items, input.default_model, out);
  PTXB_RETURN_IF_ERROR(ResolveHeldOut(r, options, out));
  return out;
}

// PTXBench's plan.json ({"config", "plan": [...]}: one entry per trajectory,
// in exp_index order) as the list config it records: each entry an item of
// one trajectory. Its "config" and exp_index are bookkeeping; the rest of an
// entry is read as a list item.
absl::StatusOr<Json> PlanAsList(const SpecReader& r, const Json& doc) {
  PTXB_RETURN_IF_ERROR(r.json().CheckKeys(doc, "", {"config", "plan"}, /*allow_comments=*/true));
  const Json& plan = doc["plan"];
  if (!plan.is_array() || plan.empty()) {
    return r.Error("plan", plan, "a non-empty list of experiments");
  }
  Json list = Json::array();
  for (size_t i = 0; i < plan.size(); ++i) {
    const std::string at = JsonIndex("plan", i);
    if (!plan[i].is_object()) return r.Error(at, plan[i], "an object");
    auto index = plan[i].find("exp_index");
    if (index == plan[i].end() || !index->is_number_integer() ||
        index->get<int64_t>() != static_cast<int64_t>(i)) {
      return r.json().ErrorFound(JsonField(at, "exp_index"),
                                 index == plan[i].end() ? "nothing" : JsonForError(*index),
                                 absl::StrCat(i, " (the entries are the experiments in order)"));
    }
    Json item = plan[i];
    item.erase("exp_index");
    item.erase("config");
    item["num_trajectories"] = 1;
    list.push_back(std::move(item));
  }
  return list;
}

// The references a full evaluation of `x` uses: its definitions that only
// their PyTorch code computes go in x.pytorch_references; one with no
// reference at all is refused.
absl::Status NoteReferences(const SpecReader& r,
                            const workloads::DefinitionRegistry& definitions,
                            ExpandedExperiment& x) {
  if (x.eval_mode != ptxbench::v1::FULL) return absl::OkStatus();
  std::set<std::string> names;
  for (const TrajectorySpec& t : x.trajectories) names.insert(t.definition);
  for (const std::string& name : names) {
    const workloads::Definition& d = **definitions.Find(name);
    absl::StatusOr<workloads::ReferenceKind> kind = workloads::ChooseReference(d);
    if (!kind.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(r.input().path, ": ", kind.status().message()));
    }
    if (*kind == workloads::ReferenceKind::kPyTorch) {
      x.pytorch_references[name] =
          std::string(workloads::NativeReference(d).status().message());
    }
  }
  return absl::OkStatus();
}

// Profiles: the spec's own "profile": true, or a prompt tag that asks for
// profile feedback (its text tells the model what the profile section says).
// A profile runs the kernel, so a compile-only experiment cannot have one.
absl::Status NoteProfile(const SpecReader& r, const PromptRegistry& prompts,
                         ExpandedExperiment& x) {
  std::string asking_tag;
  for (const TrajectorySpec& t : x.trajectories) {
    if (prompts.AsksForProfile(t.prompt_tag)) {
      asking_tag = t.prompt_tag;
      x.profile = true;
      break;
    }
  }
  if (!x.profile || x.eval_mode == ptxbench::v1::FULL) return absl::OkStatus();
  const std::string who = asking_tag.empty()
                              ? std::string("\"profile\": true")
                              : absl::StrCat("prompt tag '", asking_tag, "' (profile feedback)");
  return r.json().ErrorFound("eval", "compile-only", "full",
                             absl::StrCat(who, " needs the kernel run on a GPU"));
}

}  // namespace

namespace spec_internal {

absl::Status FinishExpansion(const SpecReader& r, ExpandedExperiment& out) {
  PTXB_RETURN_IF_ERROR(NoteProfile(r, r.prompts(), out));
  // Tags the submission brought are used as they came, so their texts are
  // part of what makes two submissions the same spec.
  for (const TrajectorySpec& t : out.trajectories) {
    auto brought = r.input().prompts.find(t.prompt_tag);
    // (A PTXBench agent experiment's composed tags are already there.)
    if (brought != r.input().prompts.end()) {
      out.submitted_prompts.try_emplace(t.prompt_tag, brought->second);
    }
  }
  if (!out.submitted_prompts.empty()) {
    Canonical normalized = Canonical::parse(out.normalized_json);
    for (const auto& [tag, text] : out.submitted_prompts) {
      normalized["submitted_prompts"][tag] = Sha256Hex(text);
    }
    out.normalized_json = normalized.dump();
  }
  out.spec_hash = Sha256Hex(out.normalized_json);
  return NoteReferences(r, r.definitions(), out);
}

}  // namespace spec_internal

bool NormalizedSpecAsksMemcheck(absl::string_view normalized_json) {
  const Json doc = Json::parse(std::string(normalized_json), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return false;
  const auto it = doc.find("memcheck");
  return it != doc.end() && it->is_boolean() && it->get<bool>();
}

absl::StatusOr<ExpandedExperiment> ExpandSpec(
    const SpecInput& input, const workloads::DefinitionRegistry& definitions,
    const PromptRegistry& prompts, const SpecLimits& limits) {
  SpecInput named = input;
  if (named.path.empty()) named.path = "<stdin>";
  PTXB_ASSIGN_OR_RETURN(Json doc, ParseStrictJson(named.text, named.path));
  SpecReader reader(named, definitions, prompts);
  absl::StatusOr<ExpandedExperiment> out;
  if (doc.is_object() && doc.contains("plan")) {
    PTXB_ASSIGN_OR_RETURN(doc, PlanAsList(reader, doc));
  }
  if (spec_internal::IsPtxbenchAgentExperiment(doc)) {
    out = spec_internal::ExpandPtxbenchAgent(reader, doc, limits);
  } else if (spec_internal::IsSynthesisSpec(doc)) {
    if (!named.default_definition.empty() || !named.eval.empty()) {
      return reader.json().ErrorFound("mode", "synthesis with --definition or --eval",
                                      "neither", "a synthesis spec's rows name their definitions "
                                      "and nothing of it is evaluated");
    }
    if (!named.default_model.empty()) doc["models"] = Json::array({named.default_model});
    out = spec_internal::ExpandSynthesis(reader, doc, limits);
  } else if (!named.agent_cli.empty()) {
    return reader.json().ErrorFound("agent", absl::StrCat("--agent-cli ", named.agent_cli),
                                    "no --agent-cli",
                                    "it replaces the agent of a PTXBench coding-agent "
                                    "experiment.json; a ptxbench spec names its agent.cli");
  } else if (doc.is_object() && doc.contains("items")) {
    out = ExpandList(reader, doc, limits);
  } else if (doc.is_object()) {
    // A model or definition named on the command line replaces the matrix's
    // list, so `--model` means the same for both forms.
    if (!named.default_model.empty()) doc["models"] = Json::array({named.default_model});
    if (!named.default_definition.empty()) {
      doc["definitions"] = Json::array({named.default_definition});
    }
    if (!named.eval.empty()) doc["eval"] = named.eval;
    absl::StatusOr<Matrix> matrix = ReadMatrix(reader, doc);
    out = matrix.ok() ? ExpandMatrix(reader, *matrix, limits) : matrix.status();
  } else if (doc.is_array()) {
    out = ExpandList(reader, doc, limits);
  } else {
    return reader.Error("", doc, "an object (matrix spec) or a list (PTXBench config)");
  }
  if (!out.ok()) return out;
  PTXB_RETURN_IF_ERROR(FinishExpansion(reader, *out));
  return out;
}

std::string DeriveExperimentId(absl::string_view name) {
  std::string data("experiment", 10);
  data.push_back('\0');
  data.append(name.data(), name.size());
  return "exp_" + Sha256Hex(data).substr(0, 16);
}

std::string DeriveTrajectoryId(absl::string_view experiment_id, absl::string_view model,
                               absl::string_view definition, absl::string_view prompt_tag,
                               int32_t sample_index) {
  std::string data;
  for (absl::string_view part : {experiment_id, model, definition, prompt_tag}) {
    data.append(part.data(), part.size());
    data.push_back('\0');
  }
  data += std::to_string(sample_index);
  return "tr_" + Sha256Hex(data).substr(0, 20);
}

}  // namespace ptxbench::experiment_spec
