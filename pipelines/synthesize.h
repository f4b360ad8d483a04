#ifndef PTXBENCH_PIPELINES_SYNTHESIZE_H_
#define PTXBENCH_PIPELINES_SYNTHESIZE_H_

// The synthesize stage (docs/PIPELINES.md): for each row of its input (a
// wrong -> fixed pair, or a correct kernel), a model writes the reasoning
// that leads to the kernel, through a synthesis experiment
// (experiment_spec/synthesis.h) so the gateways' rate limits, retries, cost
// caps and scripted providers apply. The prompt is a bundled template
// filled with the row's texts; its sha256 and the model are the row's
// provenance. Once the experiment has finished, each row's text is the
// first answer within the stage's length bounds.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "pipelines/pipeline.h"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::pipelines {

// A turn of a trajectory.
struct TurnRef {
  std::string trajectory_id;
  int turn = 0;
};

// One row to explain: the kernel's turn, and for a fix the wrong turn it
// repairs.
struct SynthesisRow {
  std::string definition;
  TurnRef kernel;
  std::optional<TurnRef> wrong;
  nlohmann::json source;  // the input's line, kept as the row's lineage
};

// The rows of a pairs stage's pairs.jsonl, or of a select stage's
// selection.jsonl (its correct turns); INVALID_ARGUMENT naming the line
// that is not one.
absl::StatusOr<std::vector<SynthesisRow>> ReadPairsForSynthesis(absl::string_view text);
absl::StatusOr<std::vector<SynthesisRow>> ReadSelectionForSynthesis(absl::string_view text);

// What the template shows: the task the kernel was written for and the
// kernels (the wrong one and its feedback for a fix).
struct SynthesisTexts {
  std::string task_prompt;
  std::string kernel;
  std::string wrong_kernel;
  std::string wrong_feedback;
};

// A bundled template ("fixit", "kernelgen"): the system prompt and the user
// prompt with {task}, {kernel}, {wrong_kernel}, {feedback} to fill.
struct SynthesisTemplate {
  std::string system;
  std::string user;
  std::string sha256;  // of both, the rows' provenance
};
const SynthesisTemplate& FindTemplate(absl::string_view name);

struct SynthesisExperiment {
  std::string name;       // "<pipeline>.<stage>.<first 12 hex digits of its id>"
  std::string spec_json;  // a synthesis spec, one row per input row, in order
  std::map<std::string, std::string> files;  // the rows' prompts
};

// `texts[i]` are `rows[i]`'s.
SynthesisExperiment BuildSynthesisExperiment(const Pipeline& pipeline, const Stage& stage,
                                             const std::vector<SynthesisRow>& rows,
                                             const std::vector<SynthesisTexts>& texts);

// The stage's result from its finished experiment's trajectories (full
// detail; the row is the sample index): synthesis.jsonl, one line per row
// with its text when one was within the bounds, and the counts.
struct Synthesis {
  std::string jsonl;
  nlohmann::json counts;
};
Synthesis CollectSynthesis(const Stage& stage, const std::vector<SynthesisRow>& rows,
                           const std::vector<ptxbench::v1::Trajectory>& trajectories);

// One line of synthesis.jsonl, read back (for the dataset stage).
struct SynthesizedRow {
  SynthesisRow row;
  bool synthesized = false;
  std::string text;
};
absl::StatusOr<std::vector<SynthesizedRow>> ReadSynthesisJsonl(absl::string_view text);

}  // namespace ptxbench::pipelines

#endif  // PTXBENCH_PIPELINES_SYNTHESIZE_H_
