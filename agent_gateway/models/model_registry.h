#ifndef PTXBENCH_AGENT_GATEWAY_MODELS_MODEL_REGISTRY_H_
#define PTXBENCH_AGENT_GATEWAY_MODELS_MODEL_REGISTRY_H_

// The model registry (docs/FORMATS.md, "Model registry"): a JSON data file
// mapping a model name, as experiments use it, to the provider that serves it,
// its endpoint, sampling parameters, prices and limits:
//
//   {"models": {NAME: {"provider": "openai"|"anthropic"|"gemini"|"scripted",
//     "base_url": URL, "model_id": ID, "api_key_env": VAR,
//     "params": {"temperature": t, "top_p": p, "max_tokens": n,
//                "reasoning_effort": "low|medium|high", "thinking_budget_tokens": n},
//     "price": {"input_per_mtok": x, "output_per_mtok": y, "reasoning_per_mtok": z,
//               "cached_input_per_mtok": c},
//     "limits": {"rpm": n, "tpm": n, "concurrency": n},
//     "context_window": n,                      // tokens, input + output

//     "answers_dir": DIR,                        // scripted only
//     "lineage": {...}}}                         // a pipeline's model stage's
//
// The bundled file (agent_gateway/data/models.json) covers common hosted
// models; a user's file extends it and overrides entries of the same name
// (whole entries, not fields). Keys are never stored here: only the name of
// the environment variable that holds one.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/call_limits.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::agent_gateway {

struct ModelPrice {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  double reasoning_per_mtok = -1;     // < 0: billed as output
  double cached_input_per_mtok = -1;  // < 0: billed as input
};

// rpm, tpm, concurrency; 0 = no limit. Held for the whole fleet by the
// scheduler (docs/ARCHITECTURE.md, "One rate limit per model").
using ModelLimits = ::ptxbench::RateLimits;

struct ModelConfig {
  std::string name;
  std::string provider;  // "openai", "anthropic", "gemini", "scripted"
  std::string base_url;
  std::string model_id;
  std::string api_key_env;  // empty: no key (self-hosted endpoints)
  ptxbench::v1::ModelParameters params;
  ModelPrice price;
  ModelLimits limits;
  // Input plus max output tokens the model accepts; 0 = unknown (not checked
  // before a call).
  int64_t context_window = 0;
  std::string answers_dir;  // scripted
  // What the model was made from, as a pipeline's model stage records it
  // (docs/PIPELINES.md): its JSON, "" when none.
  std::string lineage;
  std::string origin;       // the file it came from, for messages
};

// The cost of one call in US dollars, from its token usage.
double CostUsd(const ModelPrice& price, const ptxbench::v1::Usage& usage);

class ModelRegistry {
 public:
  // Reads `files` in order, later entries replacing earlier ones of the
  // same name. Strict JSON (common/json_reader.h): kInvalidArgument naming
  // the file and the path of the bad value ($.models.NAME.price...) for any
  // malformed entry or unknown key; kNotFound for a missing file.
  static absl::StatusOr<std::unique_ptr<ModelRegistry>> Load(const std::vector<std::string>& files);
  // The registry shipped with ptxbench (under DataDir()).
  static std::string BundledFile();

  // kNotFound naming the model and where to add it.
  absl::StatusOr<const ModelConfig*> Find(absl::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, ModelConfig, std::less<>> models_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_MODELS_MODEL_REGISTRY_H_
