#include "agent_gateway/model_registry.h"


#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {
namespace {

using nlohmann::json;

class EntryReader {
 public:
  EntryReader(const std::string& file, const std::string& model) : file_(file), model_(model) {}

  absl::Status Error(absl::string_view field, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": model \"", model_, "\": ", field, " ", what));
  }
  absl::Status CheckKeys(const json& object, absl::string_view where,
                         const std::vector<std::string>& allowed) const {
    for (const auto& [key, value] : object.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        return Error(absl::StrCat(where, key), absl::StrCat("is not a known field (",
                                                            absl::StrJoin(allowed, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> String(const json& object, const char* key, bool required) const {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) return Error(key, "is required");
      return std::string();
    }
    if (!it->is_string()) return Error(key, "must be a string");
    return it->get<std::string>();
  }
  absl::StatusOr<double> Number(const json& object, const char* key, double fallback,
                                const char* where) const {
    auto it = object.find(key);
    if (it == object.end()) return fallback;
    if (!it->is_number() || it->get<double>() < 0) {
      return Error(absl::StrCat(where, key), "must be a non-negative number");
    }
    return it->get<double>();
  }

 private:
  std::string file_, model_;
};

absl::StatusOr<ModelConfig> ParseEntry(const std::string& file, const std::string& name,
                                       const json& j) {
  EntryReader r(file, name);
  if (!j.is_object()) return r.Error("entry", "must be an object");
  absl::Status keys = r.CheckKeys(j, "", {"provider", "base_url", "model_id", "api_key_env",
                                          "params", "price", "limits", "answers_dir", "notes",
                                          "context_window"});
  if (!keys.ok()) return keys;
  ModelConfig m;
  m.name = name;
  m.origin = file;
  absl::StatusOr<std::string> s = r.String(j, "provider", true);
  if (!s.ok()) return s.status();
  m.provider = *s;
  if (m.provider != "openai" && m.provider != "anthropic" && m.provider != "gemini" &&
      m.provider != "scripted") {
    return r.Error("provider", "must be openai, anthropic, gemini or scripted");
  }
  const bool scripted = m.provider == "scripted";
  for (auto [key, out, required] :
       {std::tuple{"base_url", &m.base_url, !scripted}, std::tuple{"model_id", &m.model_id, !scripted},
        std::tuple{"api_key_env", &m.api_key_env, false},
        std::tuple{"answers_dir", &m.answers_dir, scripted}}) {
    s = r.String(j, key, required);
    if (!s.ok()) return s.status();
    *out = *s;
  }
  absl::StatusOr<double> window = r.Number(j, "context_window", 0, "");
  if (!window.ok()) return window.status();
  m.context_window = static_cast<int64_t>(*window);
  if (auto p = j.find("params"); p != j.end()) {
    if (!p->is_object()) return r.Error("params", "must be an object");
    absl::Status k = r.CheckKeys(*p, "params.", {"temperature", "top_p", "max_tokens",
                                                 "reasoning_effort", "thinking_budget_tokens"});
    if (!k.ok()) return k;
    absl::StatusOr<double> t = r.Number(*p, "temperature", 0, "params.");
    absl::StatusOr<double> top_p = r.Number(*p, "top_p", 0, "params.");
    absl::StatusOr<double> max_tokens = r.Number(*p, "max_tokens", 0, "params.");
    absl::StatusOr<double> budget = r.Number(*p, "thinking_budget_tokens", 0, "params.");
    for (const auto* v : {&t, &top_p, &max_tokens, &budget}) {
      if (!v->ok()) return v->status();
    }
    m.params.set_temperature(*t);
    m.params.set_top_p(*top_p);
    m.params.set_max_tokens(static_cast<int32_t>(*max_tokens));
    m.params.set_thinking_budget_tokens(static_cast<int32_t>(*budget));
    s = r.String(*p, "reasoning_effort", false);
    if (!s.ok()) return s.status();
    m.params.set_reasoning_effort(*s);
  }
  if (auto p = j.find("price"); p != j.end()) {
    if (!p->is_object()) return r.Error("price", "must be an object");
    absl::Status k = r.CheckKeys(*p, "price.", {"input_per_mtok", "output_per_mtok",
                                                "reasoning_per_mtok", "cached_input_per_mtok"});
    if (!k.ok()) return k;
    for (auto [key, out, fallback] :
         {std::tuple{"input_per_mtok", &m.price.input_per_mtok, 0.0},
          std::tuple{"output_per_mtok", &m.price.output_per_mtok, 0.0},
          std::tuple{"reasoning_per_mtok", &m.price.reasoning_per_mtok, -1.0},
          std::tuple{"cached_input_per_mtok", &m.price.cached_input_per_mtok, -1.0}}) {
      absl::StatusOr<double> v = r.Number(*p, key, fallback, "price.");
      if (!v.ok()) return v.status();
      *out = *v;
    }
  }
  if (auto p = j.find("limits"); p != j.end()) {
    if (!p->is_object()) return r.Error("limits", "must be an object");
    absl::Status k = r.CheckKeys(*p, "limits.", {"rpm", "tpm", "concurrency"});
    if (!k.ok()) return k;
    absl::StatusOr<double> rpm = r.Number(*p, "rpm", 0, "limits.");
    absl::StatusOr<double> tpm = r.Number(*p, "tpm", 0, "limits.");
    absl::StatusOr<double> conc = r.Number(*p, "concurrency", 0, "limits.");
    for (const auto* v : {&rpm, &tpm, &conc}) {
      if (!v->ok()) return v->status();
    }
    m.limits = {static_cast<int>(*rpm), static_cast<int64_t>(*tpm), static_cast<int>(*conc)};
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
    json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("models") ||
        !doc["models"].is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": not a model registry (expected {\"models\": {NAME: {...}}})"));
    }
    for (const auto& [name, entry] : doc["models"].items()) {
      absl::StatusOr<ModelConfig> m = ParseEntry(file, name, entry);
      if (!m.ok()) return m.status();
      registry->models_[name] = *std::move(m);
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
