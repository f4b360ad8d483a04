#ifndef PTXBENCH_EXPERIMENT_SPEC_SPEC_READER_H_
#define PTXBENCH_EXPERIMENT_SPEC_SPEC_READER_H_

// Private to experiment_spec/: the strict reader of one spec document's
// fields, for spec.cc's expansion of both forms. The typed reads every format
// shares are common/json_reader.h's; these are the checks of a spec's own
// values (names, models, definitions, prompt tags and their targets, the
// files a list item names) and the settings both forms share.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/gpu_arch.h"
#include "common/json_reader.h"
#include "common/status_macros.h"
#include "experiment_spec/agent_settings.h"
#include "experiment_spec/limits.h"
#include "experiment_spec/spec.h"

namespace ptxbench::experiment_spec::spec_internal {

using Json = StrictJson;

inline constexpr char kExperimentName[] = "a name of [A-Za-z0-9._-]{1,100}";
inline constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();

bool IsExperimentName(absl::string_view name);

// "held_out_workloads" (docs/FORMATS.md, "Held-out workloads"): a count
// per definition, or the workloads by uuid; one of the two is set.
struct HeldOutRequest {
  int64_t count = 0;
  std::vector<std::string> uuids;
};

// The settings both forms share, with their defaults.
struct Options {
  std::string context_policy = "full";
  std::string language = "cuda";
  std::string eval = "full";
  int64_t priority = 1;
  double max_cost_usd = 0;
  std::vector<std::string> architectures = DefaultArchitectures();
  // "profile": true: every evaluation is profiled too (docs/MEASUREMENT.md,
  // "Profiles"); a prompt tag that asks for profiles sets it as well.
  bool profile = false;
  // "memcheck": true|false: PTXBench's memcheck gate and debug reports
  // (docs/MEASUREMENT.md, "The memcheck gate"); unset: the form's default
  // (kMemcheckByDefault in spec.cc).
  std::optional<bool> memcheck;
  std::optional<HeldOutRequest> held_out;
};

// Writes the options into a normalized spec and the expansion.
void FillOptions(const Options& o, nlohmann::json& normalized, ExpandedExperiment& out);

class SpecReader;
// Holds out `o.held_out` of the workloads each of `out`'s trajectories is
// evaluated on (TrajectorySpec::held_out), once its trajectories are made;
// INVALID_ARGUMENT when it would leave a trajectory no shown workload, names
// a workload no trajectory evaluates, or the evaluation is compile-only
// (held_out.cc).
absl::Status ResolveHeldOut(const SpecReader& r, const Options& o, ExpandedExperiment& out);

// Reads and checks the fields of one spec document, reporting against its
// path.
class SpecReader {
 public:
  SpecReader(const SpecInput& input, const workloads::DefinitionRegistry& definitions,
             const PromptRegistry& prompts)
      : input_(input), json_(input.path), definitions_(definitions), prompts_(prompts) {}

  const JsonReader& json() const { return json_; }
  const SpecInput& input() const { return input_; }
  const PromptRegistry& prompts() const { return prompts_; }
  const workloads::DefinitionRegistry& definitions() const { return definitions_; }
  absl::Status Error(absl::string_view field, const Json& value, absl::string_view expected,
                     absl::string_view why = "") const {
    return json_.Error(field, value, expected, why);
  }

  absl::StatusOr<int64_t> Count(const Json& value, absl::string_view field, int64_t max) const {
    return json_.Integer(value, field, 1, max);
  }
  absl::StatusOr<double> Speedup(const Json& value, absl::string_view field) const;
  // A duration written as Go and absl do ("90s", "10m", "24h", "1h30m") or,
  // when `numbers`, a number of seconds too, within [min, max], as whole
  // seconds.
  absl::StatusOr<int64_t> Seconds(const Json& value, absl::string_view field, absl::Duration min,
                                  absl::Duration max, bool numbers) const;
  absl::StatusOr<std::string> String(const Json& value, absl::string_view field) const {
    return json_.String(value, field, /*allow_empty=*/true);
  }

  absl::Status CheckModel(const Json& value, absl::string_view field) const;
  absl::Status CheckDefinition(const Json& value, absl::string_view field) const;
  absl::Status CheckPromptTag(const Json& value, absl::string_view field) const;
  // A known tag (CheckPromptTag) written for the experiment's `language`
  // (a Triton tag for "triton", another for the rest) and for the GPUs it
  // targets: PromptRegistry::CheckTarget.
  absl::Status CheckPromptTarget(const Json& value, absl::string_view field,
                                 const std::vector<std::string>& architectures,
                                 absl::string_view language) const;

  // A required, non-empty list of distinct strings, each passing `check`.
  template <typename Check>
  absl::StatusOr<std::vector<std::string>> DistinctList(const Json& object, absl::string_view key,
                                                        Check check) const {
    PTXB_ASSIGN_OR_RETURN(const Json* list, json_.Required(object, "", key));
    if (!list->is_array() || list->empty()) {
      return Error(key, *list, "a non-empty list of strings");
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < list->size(); ++i) {
      const Json& item = (*list)[i];
      const std::string field = JsonIndex(key, i);
      PTXB_RETURN_IF_ERROR((this->*check)(item, field));
      std::string value = item.get<std::string>();
      if (auto it = std::find(out.begin(), out.end(), value); it != out.end()) {
        return Error(field, item, "each entry once",
                     absl::StrCat("it repeats ", JsonPath(JsonIndex(key, it - out.begin()))));
      }
      out.push_back(std::move(value));
    }
    return out;
  }

  // The name: the override from the command line, else the spec's own, else
  // `fallback`.
  absl::StatusOr<std::string> Name(const Json* in_spec, absl::string_view fallback) const;
  absl::StatusOr<Options> ReadOptions(const Json& object) const;
  // The kernel language at "language": cuda, ptx, solution or triton.
  absl::StatusOr<std::string> Language(const Json& value) const;
  // The text of a file the spec names (a path field), as the client sent it.
  absl::StatusOr<std::string> SentFile(const Json& value, absl::string_view field) const;
  // The workload a PTXBench test script (test_path) names: its
  // WORKLOAD_UUID = "..." line, checked against its DEFINITION_NAME and the
  // item's definition.
  absl::StatusOr<std::string> TestScriptWorkload(const Json& value, absl::string_view field,
                                                 const std::string& definition) const;

 private:
  const SpecInput& input_;
  const JsonReader json_;
  const workloads::DefinitionRegistry& definitions_;
  const PromptRegistry& prompts_;
};

// A matrix spec's values: read from its JSON and checked (ReadMatrix), or
// built as a value (the one-off evaluation, one_off_eval.h).
struct Matrix {
  std::string name;
  std::optional<AgentSettings> agent;  // nullopt: the multiturn loop
  std::vector<std::string> models;
  std::vector<std::string> definitions;
  std::vector<std::string> prompt_tags;
  int64_t samples = 1;
  int64_t num_turns = 1;  // in agent mode, the agent's max_evaluations
  double target_speedup = 1.0;
  Options options;
};

// The spec's mode: nullopt for the multiturn loop, else the agent object
// (spec.cc). Each mode refuses the other's fields, naming what to use
// instead; only a list spec (`list_form`) has fix-it items for an agent to
// start from (starter fixit).
absl::StatusOr<std::optional<AgentSettings>> ReadMode(const SpecReader& r, const Json& doc,
                                                      bool list_form);

// A matrix spec's values, read and checked (matrix.cc).
absl::StatusOr<Matrix> ReadMatrix(const SpecReader& r, const Json& doc);

// The experiment of a checked matrix: its trajectories (refused past
// `limits`, the error at "samples") and its normalized spec; the caller then
// finishes it (FinishExpansion).
absl::StatusOr<ExpandedExperiment> ExpandMatrix(const SpecReader& r, const Matrix& m,
                                                const SpecLimits& limits);

// What every form's expansion ends with: the profile its tags ask for, the
// prompts the submission brought, the spec's hash, and the references its
// full evaluation needs (a definition with none is refused).
absl::Status FinishExpansion(const SpecReader& r, ExpandedExperiment& out);

// Checks the trajectory count against the limit, naming how it came about
// ("2 models x 3 rows = 6 trajectories").
absl::Status CheckLimit(const SpecReader& r, absl::string_view field, const Json& value,
                        int64_t total, absl::string_view how, const SpecLimits& limits);

// The "agent" object of an agent-mode spec (agent_settings.cc).
absl::StatusOr<AgentSettings> ReadAgentSettings(const SpecReader& r, const Json& agent);

// Whether `doc` is a PTXBench coding-agent experiment.json (an object with
// "runs"), and its expansion (ptxbench_agent.cc).
bool IsPtxbenchAgentExperiment(const Json& doc);
absl::StatusOr<ExpandedExperiment> ExpandPtxbenchAgent(const SpecReader& r, const Json& doc,
                                                       const SpecLimits& limits);

// Whether `doc` is a synthesis spec ("mode": "synthesis"), and its
// expansion (synthesis.cc).
bool IsSynthesisSpec(const Json& doc);
absl::StatusOr<ExpandedExperiment> ExpandSynthesis(const SpecReader& r, const Json& doc,
                                                   const SpecLimits& limits);

}  // namespace ptxbench::experiment_spec::spec_internal

#endif  // PTXBENCH_EXPERIMENT_SPEC_SPEC_READER_H_
