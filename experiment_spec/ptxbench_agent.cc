// PTXBench's coding-agent experiment.json, read field by field
// (docs/FORMATS.md, "PTXBench coding-agent experiments"): every field is
// read into the agent-mode experiment it means, ignored with a reason (the
// client prints those), or refused naming the field; nothing is half read.

#include <cmath>
#include <filesystem>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agents/clis.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "experiment_spec/references.h"
#include "experiment_spec/spec_reader.h"

namespace ptxbench::experiment_spec::spec_internal {
namespace {

using Canonical = nlohmann::json;

// The run's workload: PTXBench's three selectors.
struct Selector {
  std::string task_id, definition, workload_uuid;
};

struct Run {
  std::string run_id;
  Selector selector;
  std::string tag;        // the trajectory's prompt tag (tag+extra when there is one)
  std::string base_tag;   // prompt_tag
  std::string extra_tag;  // extra_user_prompt_tag, or ""
  int64_t max_turns = 0;  // 0: no limit
};

absl::Status Refuse(const SpecReader& r, const Json& doc, absl::string_view key,
                    absl::string_view expected, absl::string_view why) {
  if (const Json* v = JsonReader::Member(doc, key)) return r.Error(key, *v, expected, why);
  return absl::OkStatus();
}

// The fields that have no meaning in ptxbench, or one it does not offer.
absl::Status RefuseUnsupported(const SpecReader& r, const Json& doc) {
  PTXB_RETURN_IF_ERROR(Refuse(r, doc, "workload_manifest", "no workload_manifest",
                              "name the workload with definition and workload_uuid, from the "
                              "definitions the scheduler has loaded (--dataset)"));
  PTXB_RETURN_IF_ERROR(Refuse(r, doc, "codex_auth_file", "no codex_auth_file",
                              "ptxbench's model proxy calls the API with a key from the "
                              "gateway's environment (OPENAI_API_KEY); a ChatGPT-plan login is "
                              "not proxied, and nothing of it may enter the sandbox"));
  PTXB_RETURN_IF_ERROR(Refuse(r, doc, "serviceTier", "no serviceTier",
                              "the model proxy does not choose a service tier"));
  if (const Json* v = JsonReader::Member(doc, "language")) {
    PTXB_RETURN_IF_ERROR(r.json().Enum(*v, "language", {"cuda"}).status());
  }
  if (const Json* v = JsonReader::Member(doc, "binding")) {
    PTXB_RETURN_IF_ERROR(r.json().Enum(*v, "binding", {"tvm-ffi"}).status());
  }
  if (const Json* v = JsonReader::Member(doc, "disable_web"); v && *v != Json(true)) {
    return r.Error("disable_web", *v, "true",
                   "a ptxbench agent never reaches the web: its sandbox has only its loopback");
  }
  if (const Json* v = JsonReader::Member(doc, "add_goal_command"); v && *v != Json(false)) {
    return r.Error("add_goal_command", *v, "false", "goal mode is not supported yet");
  }
  // Read where PTXBench means something ptxbench does its own way; the
  // client says so when it submits.
  for (const auto& [key, why] : kPtxbenchAgentIgnored) {
    const Json* v = JsonReader::Member(doc, key);
    if (v != nullptr && !v->is_string() && !v->is_number() && !v->is_null()) {
      return r.Error(key, *v, "a string or a number (the field is ignored)");
    }
  }
  return absl::OkStatus();
}

// target_hardware and nvcc_gencode: both say Hopper.
absl::StatusOr<std::vector<std::string>> ReadHardware(const SpecReader& r, const Json& doc) {
  if (const Json* v = JsonReader::Member(doc, "target_hardware")) {
    if (!v->is_array() || v->empty()) return r.Error("target_hardware", *v, "a list of GPUs");
    for (size_t i = 0; i < v->size(); ++i) {
      PTXB_RETURN_IF_ERROR(
          r.json().Enum((*v)[i], JsonIndex("target_hardware", i), {"H100", "H200"}).status());
    }
  }
  if (const Json* v = JsonReader::Member(doc, "nvcc_gencode")) {
    PTXB_RETURN_IF_ERROR(r.json()
                             .Enum(*v, "nvcc_gencode",
                                   {"arch=compute_90a,code=sm_90a", "arch=compute_90,code=sm_90"})
                             .status());
  }
  return ParseArchitectures({"hopper"});
}

absl::StatusOr<Selector> ReadSelector(const SpecReader& r, const Json& object,
                                      const std::string& at, const Selector* fallback) {
  const bool any = object.contains("task_id") || object.contains("definition") ||
                   object.contains("workload_uuid");
  if (!any && fallback != nullptr) return *fallback;
  Selector s;
  const std::pair<const char*, std::string*> fields[] = {
      {"task_id", &s.task_id}, {"definition", &s.definition}, {"workload_uuid", &s.workload_uuid}};
  for (const auto& [key, field] : fields) {
    PTXB_ASSIGN_OR_RETURN(const Json* v, r.json().Required(object, at, key));
    PTXB_ASSIGN_OR_RETURN(*field, r.String(*v, JsonField(at, key)));
  }
  const std::string definition_at = JsonField(at, "definition");
  PTXB_RETURN_IF_ERROR(r.CheckDefinition(Json(s.definition), definition_at));
  const workloads::Definition& d = **r.definitions().Find(s.definition);
  bool known = false;
  for (const workloads::Workload& w : d.workloads) known |= w.uuid == s.workload_uuid;
  if (!known) {
    return r.Error(JsonField(at, "workload_uuid"), Json(s.workload_uuid),
                   absl::StrCat("a workload of ", s.definition),
                   "a PTXBench dataset's workloads are there when the scheduler loads it "
                   "(ptxbench-scheduler --dataset DIR)");
  }
  return s;
}

// The agent CLI: the file's "agent" (PTXBench's default is agy) or the one
// given on the command line, which is recorded as a substitution.
absl::StatusOr<const agents::AgentCli*> ReadCli(const SpecReader& r, const Json& doc,
                                                Canonical& normalized) {
  const Json* named = JsonReader::Member(doc, "agent");
  const std::string in_file = named != nullptr && named->is_string() ? named->get<std::string>()
                                                                     : "agy";
  if (named != nullptr && !named->is_string()) return r.Error("agent", *named, "a string");
  const std::string& given = r.input().agent_cli;
  const agents::AgentCli* cli = agents::FindAgentCli(given.empty() ? in_file : given);
  if (cli == nullptr && !given.empty()) {
    return r.json().ErrorFound("agent", absl::StrCat("--agent-cli ", given),
                               absl::StrCat("one of ", agents::AgentCliNames()));
  }
  if (cli == nullptr) {
    return r.Error("agent", named != nullptr ? *named : Json("agy"),
                   absl::StrCat("one of ", agents::AgentCliNames()),
                   in_file == "agy" ? "Antigravity (agy) cannot be installed here; "
                                      "`submit --agent-cli gemini-cli` runs the experiment with "
                                      "Gemini CLI, recorded as a substitution"
                                    : "");
  }
  if (!given.empty() && cli->name != in_file) {
    normalized["substitution"] = {{"agent", in_file}, {"cli", cli->name}};
  }
  return cli;
}

absl::Status ReadEffort(const SpecReader& r, const Json& doc, const agents::AgentCli& cli,
                        AgentSettings& out, Canonical& normalized) {
  const Json* v = JsonReader::Member(doc, "effort");
  if (v == nullptr) return absl::OkStatus();
  if (cli.efforts.empty()) {
    if (normalized.contains("substitution")) {
      // The effort was the substituted CLI's; the one running has none.
      normalized["substitution"]["effort_dropped"] = *v;
      return absl::OkStatus();
    }
    return r.Error("effort", *v, "no effort",
                   absl::StrCat(cli.name, " has no reasoning-effort setting"));
  }
  PTXB_ASSIGN_OR_RETURN(out.effort, r.json().Enum(*v, "effort", cli.efforts));
  return absl::OkStatus();
}

// The budgets and limits of every session.
absl::Status ReadLimits(const SpecReader& r, const Json& doc, AgentSettings& out) {
  if (const Json* v = JsonReader::Member(doc, "print_timeout")) {
    PTXB_ASSIGN_OR_RETURN(out.wall_time_s, r.Seconds(*v, "print_timeout", absl::Minutes(1),
                                                     absl::Hours(24 * 30), /*numbers=*/false));
  }
  if (const Json* v = JsonReader::Member(doc, "stream_stall_timeout")) {
    PTXB_ASSIGN_OR_RETURN(out.stall_timeout_s,
                          r.Seconds(*v, "stream_stall_timeout", absl::Seconds(10),
                                    absl::Seconds(out.wall_time_s), /*numbers=*/true));
  }
  if (const Json* v = JsonReader::Member(doc, "tool_start_grace")) {
    PTXB_ASSIGN_OR_RETURN(out.budget_grace_s, r.Seconds(*v, "tool_start_grace", absl::Seconds(0),
                                                        absl::Minutes(10), /*numbers=*/true));
  }
  if (const Json* v = JsonReader::Member(doc, "max_parallel")) {
    PTXB_ASSIGN_OR_RETURN(out.max_parallel, r.json().Integer(*v, "max_parallel", 1, 100'000));
  }
  if (const Json* v = JsonReader::Member(doc, "task_view")) {
    PTXB_ASSIGN_OR_RETURN(out.task_view, r.json().Enum(*v, "task_view", {"full", "multiturn"}));
  }
  if (const Json* v = JsonReader::Member(doc, "codex_use_mcp")) {
    if (!v->is_boolean()) return r.Error("codex_use_mcp", *v, "true or false");
    if (out.cli == "codex") out.eval_interface = v->get<bool>() ? "mcp" : "command";
  }
  // The feedback is PTXBench's multiturn text in either style; the default
  // style's per-workload traces are in that text, not a separate field.
  if (const Json* v = JsonReader::Member(doc, "feedback_style")) {
    PTXB_RETURN_IF_ERROR(r.json().Enum(*v, "feedback_style", {"default", "multiturn"}).status());
  }
  // PTXBench's feedback has no budget line.
  out.show_budget = false;
  return absl::OkStatus();
}

// A token budget or max_turns at the top and in a run: the run's wins for
// max_turns; one token budget holds for the whole experiment.
absl::StatusOr<int64_t> ReadTokenBudget(const SpecReader& r, const Json& doc, const Json& runs) {
  int64_t budget = 0;
  if (const Json* v = JsonReader::Member(doc, "token_budget")) {
    PTXB_ASSIGN_OR_RETURN(budget, r.json().Integer(*v, "token_budget", 1, int64_t{1} << 40));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string at = JsonField(JsonIndex("runs", i), "token_budget");
    const Json* v = runs[i].is_object() ? JsonReader::Member(runs[i], "token_budget") : nullptr;
    if (v == nullptr) {
      if (budget == 0) return r.json().Missing(at, "a token budget, here or at the top");
      continue;
    }
    PTXB_ASSIGN_OR_RETURN(int64_t own, r.json().Integer(*v, at, 1, int64_t{1} << 40));
    if (budget == 0) budget = own;
    if (own != budget) {
      return r.Error(at, *v, absl::StrCat(budget),
                     "every run of one experiment has the same token budget; put runs with "
                     "another budget in an experiment.json of their own");
    }
  }
  return budget;
}

// One run: its selectors, tags and turn limit.
absl::StatusOr<Run> ReadRun(const SpecReader& r, const Json& item, const std::string& at,
                            const Selector* top, int64_t top_turns) {
  if (!item.is_object()) return r.Error(at, item, "an object");
  PTXB_RETURN_IF_ERROR(r.json().CheckKeys(
      item, at,
      {"run_id", "prompt_tag", "extra_user_prompt_tag", "token_budget", "max_turns", "task_id",
       "definition", "workload_uuid"},
      /*allow_comments=*/true));
  Run run;
  PTXB_ASSIGN_OR_RETURN(const Json* id, r.json().Required(item, at, "run_id"));
  PTXB_ASSIGN_OR_RETURN(run.run_id, r.String(*id, JsonField(at, "run_id")));
  PTXB_ASSIGN_OR_RETURN(run.selector, ReadSelector(r, item, at, top));
  PTXB_ASSIGN_OR_RETURN(const Json* tag, r.json().Required(item, at, "prompt_tag"));
  PTXB_RETURN_IF_ERROR(r.CheckPromptTag(*tag, JsonField(at, "prompt_tag")));
  run.base_tag = tag->get<std::string>();
  run.tag = run.base_tag;
  if (const Json* extra = JsonReader::Member(item, "extra_user_prompt_tag")) {
    const std::string field = JsonField(at, "extra_user_prompt_tag");
    PTXB_RETURN_IF_ERROR(r.CheckPromptTag(*extra, field));
    run.extra_tag = extra->get<std::string>();
    run.tag = absl::StrCat(run.base_tag, "+", run.extra_tag);
  }
  run.max_turns = top_turns;
  if (const Json* v = JsonReader::Member(item, "max_turns")) {
    PTXB_ASSIGN_OR_RETURN(run.max_turns,
                          r.json().Integer(*v, JsonField(at, "max_turns"), 1, kMaxTurns));
  }
  return run;
}

// A tag's text: the one the submission brought (a hub's), else ptxbench's.
absl::StatusOr<std::string> TagText(const SpecReader& r, const std::string& tag,
                                    const std::vector<std::string>& architectures) {
  auto brought = r.input().prompts.find(tag);
  if (brought != r.input().prompts.end()) return brought->second;
  return r.prompts().TagText(tag, architectures);
}

// The prompts of the runs: a tag and its extra tag, then the TVM-FFI
// example, one after the other as PTXBench builds its knowledge pack. Only
// what differs from the plain tag is kept as a composed prompt.
absl::Status ComposePrompts(const SpecReader& r, const std::vector<Run>& runs,
                            const std::string& example, ExpandedExperiment& out) {
  for (const Run& run : runs) {
    if (out.submitted_prompts.contains(run.tag)) continue;
    if (run.extra_tag.empty() && example.empty()) continue;
    PTXB_ASSIGN_OR_RETURN(std::string text, TagText(r, run.base_tag, out.architectures));
    if (!run.extra_tag.empty()) {
      PTXB_ASSIGN_OR_RETURN(std::string extra, TagText(r, run.extra_tag, out.architectures));
      absl::StrAppend(&text, extra);
    }
    if (!example.empty()) {
      absl::StrAppend(&text, "## Required TVM-FFI wrapper example\n\n```cpp\n", example,
                      example.ends_with('\n') ? "" : "\n", "```\n\n");
    }
    out.submitted_prompts[run.tag] = std::move(text);
  }
  return absl::OkStatus();
}

}  // namespace

bool IsPtxbenchAgentExperiment(const Json& doc) {
  return doc.is_object() && doc.contains("runs");
}

absl::StatusOr<ExpandedExperiment> ExpandPtxbenchAgent(const SpecReader& r, const Json& doc,
                                                       const SpecLimits& limits) {
  std::vector<std::string> keys = {
      "task_id", "definition", "workload_uuid", "language", "binding", "target_hardware",
      "nvcc_gencode", "target_speedup", "prompt_hub", "prompt_files_root", "tvm_ffi_example",
      "agent", "disable_web", "codex_auth_file", "codex_use_mcp", "serviceTier", "model",
      "effort", "add_goal_command", "token_budget", "max_turns", "max_parallel", "print_timeout",
      "feedback_style", "task_view", "tool_start_grace", "stream_stall_timeout", "runs",
      "workload_manifest"};
  for (const auto& [key, why] : kPtxbenchAgentIgnored) keys.push_back(key);
  PTXB_RETURN_IF_ERROR(r.json().CheckKeys(doc, "", keys, /*allow_comments=*/true));
  PTXB_RETURN_IF_ERROR(RefuseUnsupported(r, doc));
  const SpecInput& input = r.input();
  if (!input.default_definition.empty()) {
    return r.json().ErrorFound("definition", absl::StrCat("--definition ", input.default_definition),
                               "no --definition",
                               "a PTXBench coding-agent experiment names its definition and "
                               "workload_uuid itself");
  }
  ExpandedExperiment out;
  Canonical normalized = Canonical::object();
  normalized["form"] = "ptxbench-agent";

  // The experiment's name: --name, else the file's name, as for a list.
  const std::string stem = std::filesystem::path(input.path).stem().string();
  const std::string parent = std::filesystem::path(input.path).parent_path().filename().string();
  // PTXBench names the file experiment.json inside the experiment's folder.
  const std::string fallback = stem == "experiment" && !parent.empty() ? parent : stem;
  PTXB_ASSIGN_OR_RETURN(out.name, r.Name(nullptr, fallback));
  normalized["name"] = out.name;

  const Json& runs = doc["runs"];
  if (!runs.is_array() || runs.empty()) return r.Error("runs", runs, "a non-empty list of runs");
  if (static_cast<int64_t>(runs.size()) > limits.max_trajectories) {
    return r.Error("runs", Json(runs.size()),
                   absl::StrCat("at most ", limits.max_trajectories, " runs (one trajectory each)"));
  }

  AgentSettings agent;
  PTXB_ASSIGN_OR_RETURN(const agents::AgentCli* cli, ReadCli(r, doc, normalized));
  agent.cli = cli->name;
  agent.cli_version = cli->version;
  PTXB_RETURN_IF_ERROR(ReadEffort(r, doc, *cli, agent, normalized));
  PTXB_RETURN_IF_ERROR(ReadLimits(r, doc, agent));
  PTXB_ASSIGN_OR_RETURN(agent.token_budget, ReadTokenBudget(r, doc, runs));
  int64_t top_turns = 0;
  if (const Json* v = JsonReader::Member(doc, "max_turns")) {
    PTXB_ASSIGN_OR_RETURN(top_turns, r.json().Integer(*v, "max_turns", 1, kMaxTurns));
  }
  agent.max_evaluations = top_turns;

  std::string model = input.default_model;
  if (model.empty()) {
    PTXB_ASSIGN_OR_RETURN(const Json* m, r.json().Required(doc, "", "model"));
    PTXB_RETURN_IF_ERROR(r.CheckModel(*m, "model"));
    model = m->get<std::string>();
  } else {
    PTXB_RETURN_IF_ERROR(r.CheckModel(Json(model), "model"));
  }
  normalized["models"] = {model};

  double speedup = 0;  // PTXBench's examples: correctness is the goal
  if (const Json* v = JsonReader::Member(doc, "target_speedup")) {
    PTXB_ASSIGN_OR_RETURN(speedup, r.json().Number(*v, "target_speedup"));
    if (!(speedup >= 0) || !std::isfinite(speedup)) {
      return r.Error("target_speedup", *v, "a number of at least 0 (0: correctness alone)");
    }
  }
  normalized["target_speedup"] = speedup;

  Options options;
  PTXB_ASSIGN_OR_RETURN(options.architectures, ReadHardware(r, doc));
  if (!input.eval.empty()) options.eval = input.eval;
  FillOptions(options, normalized, out);
  normalized.erase("context_policy");

  std::optional<Selector> top;
  if (doc.contains("task_id") || doc.contains("definition") || doc.contains("workload_uuid")) {
    PTXB_ASSIGN_OR_RETURN(top, ReadSelector(r, doc, "", nullptr));
  }
  std::vector<Run> parsed;
  std::set<std::string> run_ids;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string at = JsonIndex("runs", i);
    PTXB_ASSIGN_OR_RETURN(Run run, ReadRun(r, runs[i], at, top ? &*top : nullptr, top_turns));
    if (!run_ids.insert(run.run_id).second) {
      return r.Error(JsonField(at, "run_id"), Json(run.run_id), "a run_id no other run has");
    }
    for (const std::string* tag : {&run.base_tag, &run.extra_tag}) {
      if (tag->empty()) continue;
      PTXB_RETURN_IF_ERROR(
          r.CheckPromptTarget(Json(*tag), JsonField(at, "prompt_tag"), out.architectures, "cuda"));
    }
    parsed.push_back(std::move(run));
  }

  std::string example;
  if (const Json* v = JsonReader::Member(doc, "tvm_ffi_example")) {
    PTXB_ASSIGN_OR_RETURN(example, r.SentFile(*v, "tvm_ffi_example"));
    normalized["tvm_ffi_example_sha256"] = Sha256Hex(example);
  }
  for (const char* key : {"prompt_hub", "prompt_files_root"}) {
    // Read by `ptxbench submit`, which brings the hub's tags it names.
    if (const Json* v = JsonReader::Member(doc, key)) PTXB_RETURN_IF_ERROR(r.String(*v, key).status());
  }
  PTXB_RETURN_IF_ERROR(ComposePrompts(r, parsed, example, out));

  out.agent = agent;
  normalized["mode"] = "agent";
  normalized["agent"] = AgentSettingsJson(agent);
  if (const Json* v = JsonReader::Member(doc, "feedback_style")) normalized["feedback_style"] = *v;
  out.experiment_id = DeriveExperimentId(out.name);
  Canonical listed = Canonical::array();
  for (size_t i = 0; i < parsed.size(); ++i) {
    const Run& run = parsed[i];
    TrajectorySpec t;
    t.sample_index = static_cast<int32_t>(i);
    t.model = model;
    t.definition = run.selector.definition;
    t.prompt_tag = run.tag;
    t.trajectory_id = DeriveTrajectoryId(out.experiment_id, model, t.definition, t.prompt_tag,
                                         t.sample_index);
    t.num_turns = static_cast<int32_t>(run.max_turns);
    t.target_speedup = speedup;
    t.workloads = {run.selector.workload_uuid};
    // The run's id is kept as its label, beside the trajectory it became.
    listed.push_back({{"run_id", run.run_id},
                      {"task_id", run.selector.task_id},
                      {"definition", t.definition},
                      {"workload_uuid", run.selector.workload_uuid},
                      {"prompt_tag", t.prompt_tag},
                      {"max_turns", run.max_turns},
                      {"trajectory", t.trajectory_id}});
    out.trajectories.push_back(std::move(t));
  }
  normalized["runs"] = std::move(listed);
  out.normalized_json = normalized.dump();
  return out;
}

}  // namespace ptxbench::experiment_spec::spec_internal
