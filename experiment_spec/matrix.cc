// The matrix form of a spec (spec.h): every (model, definition, prompt tag,
// sample) of its lists, read strictly into a Matrix (spec_reader.h), then
// expanded. A Matrix built as a value (one_off_eval.cc) expands the same way.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json_reader.h"
#include "common/status_macros.h"
#include "experiment_spec/limits.h"
#include "experiment_spec/spec.h"
#include "experiment_spec/spec_reader.h"

namespace ptxbench::experiment_spec::spec_internal {
namespace {

// std::map-backed: dump() of a normalized spec has sorted keys (canonical).
using Canonical = nlohmann::json;

// Every (model, definition, tag, sample) of a matrix, in that order.
void AddMatrixTrajectories(const std::vector<std::string>& models,
                           const std::vector<std::string>& definitions,
                           const std::vector<std::string>& tags, int64_t samples, int64_t turns,
                           double speedup, ExpandedExperiment& out) {
  for (const std::string& model : models) {
    for (const std::string& definition : definitions) {
      for (const std::string& tag : tags) {
        for (int64_t i = 0; i < samples; ++i) {
          TrajectorySpec t;
          t.sample_index = static_cast<int32_t>(i);
          t.trajectory_id = DeriveTrajectoryId(out.experiment_id, model, definition, tag,
                                               t.sample_index);
          t.model = model;
          t.definition = definition;
          t.prompt_tag = tag;
          t.num_turns = static_cast<int32_t>(turns);
          t.target_speedup = speedup;
          out.trajectories.push_back(std::move(t));
        }
      }
    }
  }
}

}  // namespace

absl::StatusOr<Matrix> ReadMatrix(const SpecReader& r, const Json& doc) {
  PTXB_RETURN_IF_ERROR(r.json().CheckKeys(
      doc, "",
      {"name", "models", "definitions", "prompt_tags", "samples", "num_turns", "target_speedup",
       "context_policy", "language", "priority", "eval", "max_cost_usd", "architectures", "mode",
       "agent", "profile", "memcheck", "held_out_workloads"},
      /*allow_comments=*/false));
  Matrix m;
  auto name_it = doc.find("name");
  PTXB_ASSIGN_OR_RETURN(m.name, r.Name(name_it == doc.end() ? nullptr : &*name_it, ""));
  PTXB_ASSIGN_OR_RETURN(m.agent, ReadMode(r, doc, /*list_form=*/false));
  PTXB_ASSIGN_OR_RETURN(m.models, r.DistinctList(doc, "models", &SpecReader::CheckModel));
  PTXB_ASSIGN_OR_RETURN(m.definitions,
                        r.DistinctList(doc, "definitions", &SpecReader::CheckDefinition));
  PTXB_ASSIGN_OR_RETURN(m.prompt_tags,
                        r.DistinctList(doc, "prompt_tags", &SpecReader::CheckPromptTag));
  PTXB_ASSIGN_OR_RETURN(const Json* samples_json, r.json().Required(doc, "", "samples"));
  PTXB_ASSIGN_OR_RETURN(m.samples, r.Count(*samples_json, "samples", kMaxCount));
  // An agent session's turns are its evaluations, up to max_evaluations.
  m.num_turns = m.agent ? m.agent->max_evaluations : 0;
  if (!m.agent) {
    PTXB_ASSIGN_OR_RETURN(const Json* turns_json, r.json().Required(doc, "", "num_turns"));
    PTXB_ASSIGN_OR_RETURN(m.num_turns, r.Count(*turns_json, "num_turns", kMaxTurns));
  }
  PTXB_ASSIGN_OR_RETURN(const Json* speedup_json, r.json().Required(doc, "", "target_speedup"));
  PTXB_ASSIGN_OR_RETURN(m.target_speedup, r.Speedup(*speedup_json, "target_speedup"));
  PTXB_ASSIGN_OR_RETURN(m.options, r.ReadOptions(doc));
  for (size_t i = 0; i < m.prompt_tags.size(); ++i) {
    PTXB_RETURN_IF_ERROR(r.CheckPromptTarget(Json(m.prompt_tags[i]), JsonIndex("prompt_tags", i),
                                             m.options.architectures, m.options.language));
  }
  return m;
}

absl::StatusOr<ExpandedExperiment> ExpandMatrix(const SpecReader& r, const Matrix& m,
                                                const SpecLimits& limits) {
  ExpandedExperiment out;
  out.name = m.name;
  out.agent = m.agent;
  // Each factor is below 2^31 and the list sizes are small, but multiply in
  // long double so an absurd matrix cannot overflow before it is refused.
  const long double product = static_cast<long double>(m.models.size()) *
                              m.definitions.size() * m.prompt_tags.size() * m.samples;
  const int64_t total = static_cast<int64_t>(
      std::min<long double>(product, std::numeric_limits<int64_t>::max()));
  PTXB_RETURN_IF_ERROR(CheckLimit(
      r, "samples", Json(m.samples), total,
      absl::StrCat(m.models.size(), " models x ", m.definitions.size(), " definitions x ",
                   m.prompt_tags.size(), " prompt tags x ", m.samples, " samples"),
      limits));

  Canonical normalized = Canonical::object();
  normalized["form"] = "matrix";
  normalized["name"] = out.name;
  normalized["models"] = m.models;
  normalized["definitions"] = m.definitions;
  normalized["prompt_tags"] = m.prompt_tags;
  normalized["samples"] = m.samples;
  normalized["target_speedup"] = m.target_speedup;
  FillOptions(m.options, normalized, out);
  if (out.agent) {
    // Multiturn specs keep the keys (and hashes) they had before agent mode.
    normalized["mode"] = "agent";
    normalized["agent"] = AgentSettingsJson(*out.agent);
    normalized.erase("context_policy");
  } else {
    normalized["num_turns"] = m.num_turns;
  }
  out.normalized_json = normalized.dump();

  out.experiment_id = DeriveExperimentId(out.name);
  out.trajectories.reserve(static_cast<size_t>(total));
  AddMatrixTrajectories(m.models, m.definitions, m.prompt_tags, m.samples, m.num_turns,
                        m.target_speedup, out);
  PTXB_RETURN_IF_ERROR(ResolveHeldOut(r, m.options, out));
  return out;
}

}  // namespace ptxbench::experiment_spec::spec_internal
