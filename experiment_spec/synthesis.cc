// Synthesis specs (synthesis.h): their strict reading and expansion, one
// trajectory per (model, row).
#include "experiment_spec/synthesis.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "experiment_spec/spec_reader.h"

namespace ptxbench::experiment_spec {

nlohmann::json SynthesisSettingsJson(const SynthesisSettings& s) {
  return {{"take", s.take},           {"min_chars", s.min_chars},
          {"max_chars", s.max_chars}, {"max_passes", s.max_passes},
          {"max_tokens", s.max_tokens}};
}

absl::StatusOr<SynthesisSettings> SynthesisSettingsFromJson(const nlohmann::json& j) {
  SynthesisSettings s;
  try {
    s.take = j.at("take").get<std::string>();
    s.min_chars = j.at("min_chars").get<int64_t>();
    s.max_chars = j.at("max_chars").get<int64_t>();
    s.max_passes = j.at("max_passes").get<int64_t>();
    s.max_tokens = j.at("max_tokens").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    return absl::InternalError(
        absl::StrCat("stored synthesis settings are unreadable: ", e.what()));
  }
  return s;
}

namespace spec_internal {

// The prompt tag every synthesis trajectory has: its prompts are the spec's.
constexpr char kSynthesisTag[] = "synthesis";

bool IsSynthesisSpec(const Json& doc) {
  return doc.is_object() && doc.contains("mode") && doc["mode"] == "synthesis";
}

absl::StatusOr<ExpandedExperiment> ExpandSynthesis(const SpecReader& r, const Json& doc,
                                                   const SpecLimits& limits) {
  const JsonReader& j = r.json();
  PTXB_RETURN_IF_ERROR(j.CheckKeys(doc, "",
                                   {"name", "mode", "models", "system", "take", "min_chars",
                                    "max_chars", "max_passes", "max_tokens", "rows", "priority",
                                    "max_cost_usd"},
                                   /*allow_comments=*/false));
  ExpandedExperiment out;
  auto name_it = doc.find("name");
  PTXB_ASSIGN_OR_RETURN(out.name, r.Name(name_it == doc.end() ? nullptr : &*name_it, ""));
  PTXB_ASSIGN_OR_RETURN(std::vector<std::string> models,
                        r.DistinctList(doc, "models", &SpecReader::CheckModel));
  SynthesisSettings s;
  PTXB_ASSIGN_OR_RETURN(const Json* system, j.Required(doc, "", "system"));
  PTXB_ASSIGN_OR_RETURN(s.system, j.String(*system, "system", /*allow_empty=*/false));
  if (const Json* v = JsonReader::Member(doc, "take")) {
    PTXB_ASSIGN_OR_RETURN(s.take, j.Enum(*v, "take", {"answer", "reasoning"}));
  }
  constexpr int64_t kMaxChars = 100'000'000;
  if (const Json* v = JsonReader::Member(doc, "min_chars")) {
    PTXB_ASSIGN_OR_RETURN(s.min_chars, j.Integer(*v, "min_chars", 0, kMaxChars));
  }
  if (const Json* v = JsonReader::Member(doc, "max_chars")) {
    PTXB_ASSIGN_OR_RETURN(s.max_chars, j.Integer(*v, "max_chars", 0, kMaxChars));
    if (s.max_chars > 0 && s.max_chars < s.min_chars) {
      return r.Error("max_chars", *v, absl::StrCat("at least min_chars (", s.min_chars, "), or 0"));
    }
  }
  if (const Json* v = JsonReader::Member(doc, "max_passes")) {
    PTXB_ASSIGN_OR_RETURN(s.max_passes, r.Count(*v, "max_passes", kMaxTurns));
  }
  if (const Json* v = JsonReader::Member(doc, "max_tokens")) {
    PTXB_ASSIGN_OR_RETURN(s.max_tokens,
                          j.Integer(*v, "max_tokens", 0, std::numeric_limits<int32_t>::max()));
  }
  PTXB_ASSIGN_OR_RETURN(const Json* rows, j.Required(doc, "", "rows"));
  if (!rows->is_array() || rows->empty()) {
    return r.Error("rows", *rows, "a non-empty list of {definition, prompt_path}");
  }
  const int64_t total = static_cast<int64_t>(models.size() * rows->size());
  PTXB_RETURN_IF_ERROR(CheckLimit(r, "rows", *rows, total,
                                  absl::StrCat(models.size(), " models x ", rows->size(), " rows"),
                                  limits));
  // Only priority and max_cost_usd of the shared options are keys here.
  PTXB_ASSIGN_OR_RETURN(const Options options, r.ReadOptions(doc));
  struct Row {
    std::string definition, prompt, sha256;
  };
  std::vector<Row> read;
  Json normalized_rows = Json::array();
  for (size_t i = 0; i < rows->size(); ++i) {
    const Json& row = (*rows)[i];
    const std::string at = JsonIndex("rows", i);
    PTXB_RETURN_IF_ERROR(j.RequireObject(row, at));
    PTXB_RETURN_IF_ERROR(j.CheckKeys(row, at, {"definition", "prompt_path"},
                                     /*allow_comments=*/false));
    PTXB_ASSIGN_OR_RETURN(const Json* definition, j.Required(row, at, "definition"));
    PTXB_RETURN_IF_ERROR(r.CheckDefinition(*definition, JsonField(at, "definition")));
    PTXB_ASSIGN_OR_RETURN(const Json* path, j.Required(row, at, "prompt_path"));
    Row parsed;
    parsed.definition = definition->get<std::string>();
    PTXB_ASSIGN_OR_RETURN(parsed.prompt, r.SentFile(*path, JsonField(at, "prompt_path")));
    if (absl::StripAsciiWhitespace(parsed.prompt).empty()) {
      return r.Error(JsonField(at, "prompt_path"), *path, "a file with a prompt", "it is empty");
    }
    parsed.sha256 = Sha256Hex(parsed.prompt);
    normalized_rows.push_back({{"definition", parsed.definition}, {"prompt_sha256", parsed.sha256}});
    read.push_back(std::move(parsed));
  }

  // Canonical (std::map-backed): sorted keys.
  nlohmann::json normalized = SynthesisSettingsJson(s);
  normalized["form"] = "synthesis";
  normalized["name"] = out.name;
  normalized["models"] = models;
  normalized["system_sha256"] = Sha256Hex(s.system);
  normalized["rows"] = normalized_rows;
  normalized["priority"] = options.priority;
  normalized["max_cost_usd"] = options.max_cost_usd;
  out.normalized_json = normalized.dump();
  out.experiment_id = DeriveExperimentId(out.name);
  out.priority = static_cast<int32_t>(options.priority);
  out.max_cost_usd = options.max_cost_usd;
  out.eval_mode = ptxbench::v1::EVAL_MODE_UNSPECIFIED;  // nothing is evaluated
  out.synthesis = s;
  out.trajectories.reserve(static_cast<size_t>(total));
  for (const std::string& model : models) {
    for (size_t i = 0; i < read.size(); ++i) {
      TrajectorySpec t;
      t.sample_index = static_cast<int32_t>(i);  // the row
      t.trajectory_id = DeriveTrajectoryId(out.experiment_id, model, read[i].definition,
                                           kSynthesisTag, t.sample_index);
      t.model = model;
      t.definition = read[i].definition;
      t.prompt_tag = kSynthesisTag;
      t.num_turns = static_cast<int32_t>(s.max_passes);
      t.synthesis_prompt = read[i].prompt;
      t.synthesis_sha256 = read[i].sha256;
      out.trajectories.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace spec_internal
}  // namespace ptxbench::experiment_spec
