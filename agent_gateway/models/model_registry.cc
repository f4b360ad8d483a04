#include "agent_gateway/models/model_registry.h"

#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/json_reader.h"
#include "common/status_macros.h"

namespace ptxbench::agent_gateway {
namespace {

using Json = StrictJson;

// The optional number `key` of `object` (at `parent`), at least 0, else
// `fallback`.
absl::StatusOr<double> OptionalNumber(const JsonReader& r, const Json& object,
                                      absl::string_view parent, const char* key, double fallback) {
  const Json* value = JsonReader::Member(object, key);
  if (value == nullptr) return fallback;
  return r.NonNegativeNumber(*value, JsonField(parent, key));
}

// The object `key` of `entry` (at `at`) with only `known` keys, or nullptr
// when absent.
absl::StatusOr<const Json*> OptionalObject(const JsonReader& r, const Json& entry,
                                           absl::string_view at, const char* key,
                                           const std::vector<std::string>& known) {
  const Json* value = JsonReader::Member(entry, key);
  if (value == nullptr) return nullptr;
  const std::string path = JsonField(at, key);
  PTXB_RETURN_IF_ERROR(r.RequireObject(*value, path));
  PTXB_RETURN_IF_ERROR(r.CheckKeys(*value, path, known, /*allow_comments=*/false));
  return value;
}

absl::StatusOr<ModelConfig> ParseEntry(const JsonReader& r, const std::string& name,
                                       const Json& j) {
  const std::string at = JsonField("models", name);
  PTXB_RETURN_IF_ERROR(r.RequireObject(j, at));
  PTXB_RETURN_IF_ERROR(r.CheckKeys(j, at,
                                   {"provider", "base_url", "model_id", "api_key_env", "params",
                                    "price", "limits", "answers_dir", "notes", "context_window",
                                    "lineage"},
                                   /*allow_comments=*/false));
  ModelConfig m;
  m.name = name;
  m.origin = r.origin();
  PTXB_ASSIGN_OR_RETURN(const Json* provider, r.Required(j, at, "provider"));
  PTXB_ASSIGN_OR_RETURN(m.provider, r.Enum(*provider, JsonField(at, "provider"),
                                           {"openai", "anthropic", "gemini", "scripted"}));
  const bool scripted = m.provider == "scripted";
  for (auto [key, out, required] :
       {std::tuple{"base_url", &m.base_url, !scripted}, std::tuple{"model_id", &m.model_id, !scripted},
        std::tuple{"api_key_env", &m.api_key_env, false},
        std::tuple{"answers_dir", &m.answers_dir, scripted}}) {
    const Json* value = JsonReader::Member(j, key);
    if (value == nullptr && required) return r.Required(j, at, key).status();
    if (value != nullptr) {
      PTXB_ASSIGN_OR_RETURN(*out, r.String(*value, JsonField(at, key), /*allow_empty=*/true));
    }
  }
  if (const Json* lineage = JsonReader::Member(j, "lineage")) {
    PTXB_RETURN_IF_ERROR(r.RequireObject(*lineage, JsonField(at, "lineage")));
    m.lineage = lineage->dump();
  }
  PTXB_ASSIGN_OR_RETURN(const double window, OptionalNumber(r, j, at, "context_window", 0));
  m.context_window = static_cast<int64_t>(window);
  PTXB_ASSIGN_OR_RETURN(const Json* params,
                        OptionalObject(r, j, at, "params",
                                       {"temperature", "top_p", "max_tokens", "reasoning_effort",
                                        "thinking_budget_tokens"}));
  if (params != nullptr) {
    const std::string path = JsonField(at, "params");
    PTXB_ASSIGN_OR_RETURN(const double t, OptionalNumber(r, *params, path, "temperature", 0));
    PTXB_ASSIGN_OR_RETURN(const double top_p, OptionalNumber(r, *params, path, "top_p", 0));
    PTXB_ASSIGN_OR_RETURN(const double max_tokens,
                          OptionalNumber(r, *params, path, "max_tokens", 0));
    PTXB_ASSIGN_OR_RETURN(const double budget,
                          OptionalNumber(r, *params, path, "thinking_budget_tokens", 0));
    m.params.set_temperature(t);
    m.params.set_top_p(top_p);
    m.params.set_max_tokens(static_cast<int32_t>(max_tokens));
    m.params.set_thinking_budget_tokens(static_cast<int32_t>(budget));
    if (const Json* effort = JsonReader::Member(*params, "reasoning_effort")) {
      PTXB_ASSIGN_OR_RETURN(std::string text, r.String(*effort, JsonField(path, "reasoning_effort"),
                                                       /*allow_empty=*/true));
      m.params.set_reasoning_effort(text);
    }
  }
  PTXB_ASSIGN_OR_RETURN(const Json* price,
                        OptionalObject(r, j, at, "price",
                                       {"input_per_mtok", "output_per_mtok", "reasoning_per_mtok",
                                        "cached_input_per_mtok"}));
  if (price != nullptr) {
    const std::string path = JsonField(at, "price");
    for (auto [key, out, fallback] :
         {std::tuple{"input_per_mtok", &m.price.input_per_mtok, 0.0},
          std::tuple{"output_per_mtok", &m.price.output_per_mtok, 0.0},
          std::tuple{"reasoning_per_mtok", &m.price.reasoning_per_mtok, -1.0},
          std::tuple{"cached_input_per_mtok", &m.price.cached_input_per_mtok, -1.0}}) {
      PTXB_ASSIGN_OR_RETURN(*out, OptionalNumber(r, *price, path, key, fallback));
    }
  }
  PTXB_ASSIGN_OR_RETURN(const Json* limits,
                        OptionalObject(r, j, at, "limits", {"rpm", "tpm", "concurrency"}));
  if (limits != nullptr) {
    const std::string path = JsonField(at, "limits");
    PTXB_ASSIGN_OR_RETURN(const double rpm, OptionalNumber(r, *limits, path, "rpm", 0));
    PTXB_ASSIGN_OR_RETURN(const double tpm, OptionalNumber(r, *limits, path, "tpm", 0));
    PTXB_ASSIGN_OR_RETURN(const double conc, OptionalNumber(r, *limits, path, "concurrency", 0));
    m.limits = {static_cast<int>(rpm), static_cast<int64_t>(tpm), static_cast<int>(conc)};
  }
  return m;
}

}  // namespace

double CostUsd(const ModelPrice& price, const ptxbench::v1::Usage& usage) {
  // Providers count cached input inside input, and reasoning inside output.
  const double cached = static_cast<double>(usage.cached_tokens());
  const double input = static_cast<double>(usage.input_tokens()) - cached;
  const double reasoning = static_cast<double>(usage.reasoning_tokens());
  const double output = static_cast<double>(usage.output_tokens()) - reasoning;
  const double cached_price =
      price.cached_input_per_mtok >= 0 ? price.cached_input_per_mtok : price.input_per_mtok;
  const double reasoning_price =
      price.reasoning_per_mtok >= 0 ? price.reasoning_per_mtok : price.output_per_mtok;
  return (input * price.input_per_mtok + cached * cached_price + output * price.output_per_mtok +
          reasoning * reasoning_price) /
         1e6;
}

std::string ModelRegistry::BundledFile() { return DataDir() + "/agent_gateway/data/models.json"; }

absl::StatusOr<std::unique_ptr<ModelRegistry>> ModelRegistry::Load(
    const std::vector<std::string>& files) {
  auto registry = std::unique_ptr<ModelRegistry>(new ModelRegistry());
  for (const std::string& file : files) {
    absl::StatusOr<std::string> text = ReadFile(file);
    if (!text.ok()) {
      return absl::NotFoundError(absl::StrCat("model registry ", file, " cannot be read"));
    }
    PTXB_ASSIGN_OR_RETURN(const Json doc, ParseStrictJson(*text, file));
    const JsonReader r(file);
    constexpr char kModels[] = "an object of model name -> entry";
    if (!doc.is_object()) return r.Error("", doc, "a model registry {\"models\": {...}}");
    const Json* models = JsonReader::Member(doc, "models");
    if (models == nullptr) return r.Missing("models", kModels);
    if (!models->is_object()) return r.Error("models", *models, kModels);
    for (const auto& [name, entry] : models->items()) {
      PTXB_ASSIGN_OR_RETURN(registry->models_[name], ParseEntry(r, name, entry));
    }
  }
  return registry;
}

absl::StatusOr<const ModelConfig*> ModelRegistry::Find(absl::string_view name) const {
  auto it = models_.find(name);
  if (it == models_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown model \"", name,
                                            "\": add it to a model registry file (--models FILE)"));
  }
  return &it->second;
}

std::vector<std::string> ModelRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, m] : models_) names.push_back(name);
  return names;
}

}  // namespace ptxbench::agent_gateway
