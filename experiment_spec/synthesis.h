#ifndef PTXBENCH_EXPERIMENT_SPEC_SYNTHESIS_H_
#define PTXBENCH_EXPERIMENT_SPEC_SYNTHESIS_H_

// Synthesis experiments ("mode": "synthesis"; docs/FORMATS.md "Synthesis
// specs", docs/PIPELINES.md): a model answers one prepared prompt per row,
// and nothing is evaluated. A pipeline's synthesize stage writes the reasoning
// behind a kernel this way, through the gateways like any model call, so rate
// limits, retries, the experiment's cost cap and the scripted providers
// apply. Each row is a trajectory of up to `max_passes` turns: an answer
// whose text is outside [min_chars, max_chars] is asked for again, afresh
// (no history), and the trajectory ends at the first answer within them.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ptxbench::experiment_spec {

struct SynthesisSettings {
  std::string system;            // the system prompt of every row
  std::string take = "answer";   // answer | reasoning: which text is the result
  int64_t min_chars = 0;
  int64_t max_chars = 0;  // 0 = no bound
  int64_t max_passes = 1;
  int64_t max_tokens = 0;  // 0 = the model's own setting

  // The text of an answer that is its result (`take`).
  bool Within(int64_t chars) const {
    return chars > 0 && chars >= min_chars && (max_chars == 0 || chars <= max_chars);
  }
};

// Canonical JSON, every field (the experiments table keeps it; part of the
// spec's hash, with the system prompt as its sha256 there).
nlohmann::json SynthesisSettingsJson(const SynthesisSettings& s);
// Reads back what SynthesisSettingsJson wrote; INTERNAL when unreadable.
absl::StatusOr<SynthesisSettings> SynthesisSettingsFromJson(const nlohmann::json& j);

}  // namespace ptxbench::experiment_spec

#endif  // PTXBENCH_EXPERIMENT_SPEC_SYNTHESIS_H_
