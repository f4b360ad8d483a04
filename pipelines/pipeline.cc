// The pipeline file, read strictly (pipeline.h, docs/PIPELINES.md). Each
// kind's parameters are a table: name, type, default; the reader checks a
// stage against its kind's row and fills the defaults in, so two files that
// mean the same stage give it the same id.

#include "pipelines/pipeline.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/hash.h"
#include "common/json_reader.h"
#include "common/status_macros.h"
#include "experiment_spec/limits.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::pipelines {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = StrictJson;
using Canonical = nlohmann::json;

// One parameter of a kind: its type and, when optional, its default.
struct Param {
  // kFile: a path (relative to the pipeline file) whose content, hashed
  // by ReadPipeline's hash_file, is part of the stage's id.
  enum Type { kString, kStrings, kCount, kNumber, kChoice, kObject, kFile };
  const char* name;
  Type type;
  std::vector<std::string> choices = {};  // kChoice
  bool required = false;
  Canonical fallback = nullptr;  // the default; null: absent means "not set"
  int64_t max = 1'000'000;       // kCount
};

struct Kind {
  const char* name;
  // The outputs it takes (empty: finished experiments, named by
  // "experiments"); what it makes.
  std::vector<Output> takes;
  Output makes;
  std::vector<Param> params;
};

// The statuses a failed row may have: the kernel's faults (INFRA_ERROR is
// not one, and COMPILED is no failure).
const std::vector<std::string>& FailureStatuses() {
  static const std::vector<std::string> statuses = [] {
    std::vector<std::string> out;
    for (v1::EvalStatus s : {v1::COMPILE_ERROR, v1::RUNTIME_ERROR, v1::TIMEOUT,
                             v1::INCORRECT_SHAPE, v1::INCORRECT_DTYPE, v1::INCORRECT_NUMERICAL,
                             v1::LIBRARY_FALLBACK}) {
      out.push_back(v1::EvalStatus_Name(s));
    }
    return out;
  }();
  return statuses;
}

const std::vector<Kind>& Kinds() {
  static const std::vector<Kind> kinds = {
      {"select",
       {Output::kExperiment},
       Output::kSelection,
       {{"rows", Param::kChoice, {"failed", "correct"}, true},
        {"statuses", Param::kStrings},
        {"max_turn", Param::kCount, {}, false, nullptr, experiment_spec::kMaxTurns},
        {"prompt_tags", Param::kStrings},
        {"min_speedup", Param::kNumber},
        {"arch_features", Param::kChoice, {"any", "hopper"}, false, "any"},
        {"per_definition_cap", Param::kCount},
        {"seed", Param::kString, {}, false, "ptxbench"},
        {"accept_compiled", Param::kChoice, {"no", "yes"}, false, "no"}}},
      {"derive",
       {Output::kSelection},
       Output::kExperiment,
       {{"model", Param::kString, {}, true},
        {"prompt_tag", Param::kString, {}, true},
        {"num_turns", Param::kCount, {}, false, 5, experiment_spec::kMaxTurns},
        {"target_speedup", Param::kNumber, {}, false, 0.15},
        // Present: each item is a coding-agent session (a spec's "agent"
        // object, read by the scheduler when the experiment is submitted).
        {"agent", Param::kObject},
        {"eval", Param::kChoice, {"as-source", "full", "compile-only"}, false, "as-source"}}},
      {"pairs",
       {Output::kExperiment},
       Output::kPairs,
       {{"which", Param::kChoice, {"first", "every"}, false, "first"},
        {"min_speedup", Param::kNumber, {}, false, 0.0},
        {"arch_features", Param::kChoice, {"any", "hopper"}, false, "any"},
        {"accept_compiled", Param::kChoice, {"no", "yes"}, false, "no"}}},
      {"synthesize",
       {Output::kPairs, Output::kSelection},
       Output::kSynthesis,
       {{"model", Param::kString, {}, true},
        {"template", Param::kChoice, {"fixit", "kernelgen"}, true},
        {"max_tokens", Param::kCount, {}, false, 32768, 1 << 20},
        {"min_chars", Param::kCount, {}, false, 200, 10'000'000},
        {"max_chars", Param::kCount, {}, false, 190000, 10'000'000},
        {"max_passes", Param::kCount, {}, false, 1, 100},
        {"take", Param::kChoice, {"answer", "reasoning"}, false, "answer"}}},
      {"dataset",
       {Output::kSynthesis},
       Output::kDataset,
       {{"shape", Param::kChoice, {"fixit5", "kernelgen3"}, true},
        {"max_chars", Param::kCount, {}, false, nullptr, 100'000'000}}},
      {"model",
       {Output::kDataset},
       Output::kModel,
       {{"model", Param::kString, {}, true},
        {"checkpoint", Param::kString, {}, true},
        {"provider", Param::kChoice, {"openai", "anthropic", "gemini", "scripted"}, true},
        {"base_url", Param::kString},
        {"model_id", Param::kString},
        {"api_key_env", Param::kString},
        {"answers_dir", Param::kString}}},
      {"evaluate",
       {Output::kModel},
       Output::kEvaluation,
       {{"base", Param::kString, {}, true},
        {"spec", Param::kFile, {}, true},
        {"eval", Param::kChoice, {"as-source", "full", "compile-only"}, false, "as-source"}}},
  };
  return kinds;
}

const Kind* FindKind(absl::string_view name) {
  for (const Kind& k : Kinds()) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

bool IsStageName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

absl::StatusOr<Canonical> ReadParam(const JsonReader& r, const Param& p, const Json& v,
                                    const std::string& at) {
  switch (p.type) {
    case Param::kString:
    case Param::kFile: {
      PTXB_ASSIGN_OR_RETURN(std::string s, r.String(v, at));
      return Canonical(s);
    }
    case Param::kStrings: {
      PTXB_ASSIGN_OR_RETURN(std::vector<std::string> list, r.StringList(v, at));
      return Canonical(list);
    }
    case Param::kCount: {
      PTXB_ASSIGN_OR_RETURN(int64_t n, r.Integer(v, at, 0, p.max));
      return Canonical(n);
    }
    case Param::kNumber: {
      PTXB_ASSIGN_OR_RETURN(double x, r.NonNegativeNumber(v, at));
      return Canonical(x);
    }
    case Param::kChoice: {
      PTXB_ASSIGN_OR_RETURN(std::string s, r.Enum(v, at, p.choices));
      return Canonical(s);
    }
    case Param::kObject: {
      PTXB_RETURN_IF_ERROR(r.RequireObject(v, at));
      return Canonical::parse(v.dump());  // keys sorted: part of the stage's id
    }
  }
  return Canonical();
}

// The kind's own checks beyond each parameter's type.
absl::Status CheckParams(const JsonReader& r, const Json& stage, const std::string& at,
                         const Stage& out) {
  if (out.kind == "select") {
    const bool correct = out.params["rows"] == "correct";
    if (const Json* v = JsonReader::Member(stage, "statuses")) {
      if (correct) {
        return r.Error(JsonField(at, "statuses"), *v, "no statuses",
                       "a selection of correct rows has one status, PASSED");
      }
      for (size_t i = 0; i < v->size(); ++i) {
        PTXB_RETURN_IF_ERROR(
            r.Enum((*v)[i], JsonIndex(JsonField(at, "statuses"), i), FailureStatuses()).status());
      }
    }
    if (const Json* v = JsonReader::Member(stage, "min_speedup"); v != nullptr && !correct) {
      return r.Error(JsonField(at, "min_speedup"), *v, "no min_speedup",
                     "a failed row has no speedup");
    }
  }
  if (out.kind == "model") {
    // A served checkpoint has an endpoint; a scripted stand-in (the
    // examples, tests) its answers.
    const bool scripted = out.params["provider"] == "scripted";
    for (const char* key : {"base_url", "model_id", "answers_dir"}) {
      const bool wanted = (std::string(key) == "answers_dir") == scripted;
      const Json* v = JsonReader::Member(stage, key);
      if (wanted && v == nullptr) {
        return r.Missing(JsonField(at, key), scripted ? "the scripted answers' folder"
                                                       : "a value (an endpoint's model needs it)");
      }
      if (!wanted && v != nullptr) {
        return r.Error(JsonField(at, key), *v, absl::StrCat("no ", key),
                       scripted ? "a scripted model has answers, not an endpoint"
                                : "only a scripted model has answers_dir");
      }
    }
  }
  if (out.kind == "derive" && out.params.contains("agent")) {
    if (const Json* v = JsonReader::Member(stage, "num_turns")) {
      return experiment_spec::NoTurnsWithAgent(r, JsonField(at, "num_turns"), *v, "with an agent");
    }
  }
  if (out.kind == "synthesize" &&
      out.params["min_chars"].get<int64_t>() > out.params["max_chars"].get<int64_t>()) {
    return r.Error(JsonField(at, "min_chars"), stage["min_chars"],
                   absl::StrCat("at most max_chars (", out.params["max_chars"].dump(), ")"));
  }
  return absl::OkStatus();
}

// The stage at `index`: its name, kind, input and parameters.
absl::StatusOr<Stage> ReadStage(const JsonReader& r, const Json& stage, size_t index) {
  const std::string at = JsonIndex("stages", index);
  PTXB_RETURN_IF_ERROR(r.RequireObject(stage, at));
  Stage out;
  PTXB_ASSIGN_OR_RETURN(const Json* name, r.Required(stage, at, "name"));
  PTXB_ASSIGN_OR_RETURN(out.name, r.String(*name, JsonField(at, "name")));
  if (!IsStageName(out.name)) {
    return r.Error(JsonField(at, "name"), *name, "a stage name of [A-Za-z0-9._-]{1,64}");
  }
  PTXB_ASSIGN_OR_RETURN(const Json* kind_json, r.Required(stage, at, "kind"));
  std::vector<std::string> kind_names;
  for (const Kind& k : Kinds()) kind_names.push_back(k.name);
  PTXB_ASSIGN_OR_RETURN(out.kind, r.Enum(*kind_json, JsonField(at, "kind"), kind_names));
  const Kind& kind = *FindKind(out.kind);
  out.output = kind.makes;

  std::vector<std::string> keys = {"name", "kind", "from"};
  if (out.kind == "select") keys.push_back("experiments");
  for (const Param& p : kind.params) keys.push_back(p.name);
  PTXB_RETURN_IF_ERROR(r.CheckKeys(stage, at, keys, /*allow_comments=*/true));

  const Json* from = JsonReader::Member(stage, "from");
  const Json* experiments = JsonReader::Member(stage, "experiments");
  if (from != nullptr && experiments != nullptr) {
    return r.Error(JsonField(at, "experiments"), *experiments, "either from or experiments",
                   "a stage takes one input");
  }
  if (experiments != nullptr) {
    PTXB_ASSIGN_OR_RETURN(out.experiments, r.StringList(*experiments, JsonField(at, "experiments")));
    if (out.experiments.empty()) {
      return r.Error(JsonField(at, "experiments"), *experiments, "one finished experiment or more");
    }
  } else if (from != nullptr) {
    PTXB_ASSIGN_OR_RETURN(out.from, r.String(*from, JsonField(at, "from")));
  } else {
    return r.Missing(JsonField(at, "from"),
                     out.kind == "select"
                         ? "the stage it takes from (or \"experiments\": finished experiments)"
                         : "the stage it takes from");
  }

  out.params = Canonical::object();
  for (const Param& p : kind.params) {
    const std::string field = JsonField(at, p.name);
    if (const Json* v = JsonReader::Member(stage, p.name)) {
      PTXB_ASSIGN_OR_RETURN(out.params[p.name], ReadParam(r, p, *v, field));
    } else if (p.required) {
      return r.Missing(field, "a value (the key is required)");
    } else if (!p.fallback.is_null()) {
      out.params[p.name] = p.fallback;
    }
  }
  PTXB_RETURN_IF_ERROR(CheckParams(r, stage, at, out));
  // An agent's sessions have no turn limit of the stage's.
  if (out.kind == "derive" && out.params.contains("agent")) out.params.erase("num_turns");
  return out;
}

// Follows `from` links from `start`; the names on the way when they come
// back to `target`, else nothing.
std::optional<std::vector<std::string>> CycleThrough(const std::map<std::string, const Json*>& by_name,
                                                     const std::string& start,
                                                     const std::string& target) {
  std::vector<std::string> path = {target, start};
  std::set<std::string> seen = {start};
  std::string at = start;
  for (;;) {
    auto it = by_name.find(at);
    if (it == by_name.end()) return std::nullopt;
    const Json* from = JsonReader::Member(*it->second, "from");
    if (from == nullptr || !from->is_string()) return std::nullopt;
    at = from->get<std::string>();
    path.push_back(at);
    if (at == target) return path;
    if (!seen.insert(at).second) return std::nullopt;
  }
}

// The stage's input: an earlier stage of a kind it takes.
absl::Status CheckInput(const JsonReader& r, const Json& stages, size_t index, const Stage& s,
                        const Pipeline& done) {
  const std::string at = JsonField(JsonIndex("stages", index), "from");
  const Kind& kind = *FindKind(s.kind);
  if (s.from.empty()) {
    if (s.kind != "select") {
      return r.Error(JsonField(JsonIndex("stages", index), "experiments"),
                     stages[index]["experiments"], "no experiments",
                     "only a select stage takes finished experiments");
    }
    return absl::OkStatus();
  }
  const Stage* input = done.Find(s.from);
  if (input == nullptr) {
    std::map<std::string, const Json*> by_name;
    for (const Json& st : stages) {
      if (st.is_object() && st.contains("name") && st["name"].is_string()) {
        by_name[st["name"].get<std::string>()] = &st;
      }
    }
    if (s.from == s.name) return r.Error(at, Json(s.from), "another stage", "a stage cannot take its own output");
    if (!by_name.contains(s.from)) {
      return r.Error(at, Json(s.from), "the name of an earlier stage", "no stage has that name");
    }
    if (std::optional<std::vector<std::string>> cycle = CycleThrough(by_name, s.from, s.name)) {
      std::reverse(cycle->begin(), cycle->end());
      return r.Error(at, Json(s.from), "a stage that does not take from this one",
                     absl::StrCat("a cycle: ", absl::StrJoin(*cycle, " -> ")));
    }
    return r.Error(at, Json(s.from), "the name of an earlier stage",
                   absl::StrCat("stages run in file order: put '", s.from, "' above '", s.name, "'"));
  }
  if (std::find(kind.takes.begin(), kind.takes.end(), input->output) == kind.takes.end()) {
    std::vector<std::string> wanted;
    for (Output o : kind.takes) wanted.emplace_back(OutputName(o));
    return r.Error(at, Json(s.from), absl::StrCat("a stage that makes ", absl::StrJoin(wanted, " or ")),
                   absl::StrCat("'", input->name, "' (", input->kind, ") makes ",
                                OutputName(input->output)));
  }
  return absl::OkStatus();
}

std::string StageId(const Stage& s, const Pipeline& done, const Canonical& files) {
  Canonical key = {{"kind", s.kind}, {"params", s.params}};
  if (!files.empty()) key["files"] = files;
  std::vector<std::string> inputs;
  if (const Stage* input = done.Find(s.from)) inputs.push_back(input->id);
  for (const std::string& e : s.experiments) inputs.push_back(absl::StrCat("experiment:", e));
  key["inputs"] = inputs;
  return "st_" + Sha256Hex(key.dump()).substr(0, 20);
}

}  // namespace

absl::string_view OutputName(Output o) {
  switch (o) {
    case Output::kSelection: return "a selection";
    case Output::kExperiment: return "an experiment";
    case Output::kPairs: return "pairs";
    case Output::kSynthesis: return "a synthesis";
    case Output::kDataset: return "a dataset";
    case Output::kModel: return "a model";
    case Output::kEvaluation: return "an evaluation";
  }
  return "";
}

std::string PipelinePath(const std::string& pipeline_file, const std::string& path) {
  if (std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::absolute(pipeline_file).parent_path() / path)
      .lexically_normal()
      .string();
}

const Stage* Pipeline::Find(absl::string_view name) const {
  for (const Stage& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

absl::StatusOr<Pipeline> ReadPipeline(absl::string_view text, absl::string_view origin,
                                      const FileHasher& hash_file) {
  PTXB_ASSIGN_OR_RETURN(Json doc, ParseStrictJson(text, origin));
  const JsonReader r(origin);
  PTXB_RETURN_IF_ERROR(r.RequireObject(doc, ""));
  PTXB_RETURN_IF_ERROR(r.CheckKeys(doc, "", {"name", "stages"}, /*allow_comments=*/true));
  Pipeline out;
  PTXB_ASSIGN_OR_RETURN(const Json* name, r.Required(doc, "", "name"));
  PTXB_ASSIGN_OR_RETURN(out.name, r.String(*name, "name"));
  if (!IsStageName(out.name)) return r.Error("name", *name, "a name of [A-Za-z0-9._-]{1,64}");
  PTXB_ASSIGN_OR_RETURN(const Json* stages, r.Required(doc, "", "stages"));
  if (!stages->is_array() || stages->empty()) {
    return r.Error("stages", *stages, "a non-empty list of stages");
  }
  for (size_t i = 0; i < stages->size(); ++i) {
    PTXB_ASSIGN_OR_RETURN(Stage s, ReadStage(r, (*stages)[i], i));
    if (out.Find(s.name) != nullptr) {
      return r.Error(JsonField(JsonIndex("stages", i), "name"), Json(s.name),
                     "a name no other stage has");
    }
    PTXB_RETURN_IF_ERROR(CheckInput(r, *stages, i, s, out));
    // The contents of the files it takes, not only their paths.
    Canonical files = Canonical::object();
    for (const Param& p : FindKind(s.kind)->params) {
      if (p.type != Param::kFile || !hash_file || !s.params.contains(p.name)) continue;
      const std::string path = s.params[p.name].get<std::string>();
      absl::StatusOr<std::string> sha = hash_file(path);
      if (!sha.ok()) {
        return r.Error(JsonField(JsonIndex("stages", i), p.name), Json(path),
                       absl::StrCat("a ", p.name, " file that can be read"),
                       sha.status().message());
      }
      files[p.name] = *sha;
    }
    s.id = StageId(s, out, files);
    out.stages.push_back(std::move(s));
  }
  return out;
}

}  // namespace ptxbench::pipelines
