#ifndef PTXBENCH_EXPERIMENT_SPEC_SPEC_H_
#define PTXBENCH_EXPERIMENT_SPEC_SPEC_H_

// Library experiment_spec/ (ptxbench::experiment_spec): the experiment spec
// format, its one owner. Owns the strict reading and expansion (this header;
// each form in a file of its own: matrix.cc, spec.cc's lists, synthesis.cc,
// ptxbench_agent.cc), the field checks (spec_reader.h), the limits and rules
// others check too (limits.h), the prompts of an expansion
// (rendered_prompts.h), the one-off evaluation's spec (one_off_eval.h) and
// what a client gathers from a spec (references.h). May include: the folders
// above it in docs/ARCHITECTURE.md's table (common/, protos/, workloads/,
// prompts/, agents/), never the scheduler, the CLI or the pipelines that use
// it.
//
// Experiment specs: parsing, validation and deterministic expansion into
// trajectories. Two input forms:
//  - matrix (a JSON object): name, models[], definitions[], prompt_tags[],
//    samples, num_turns, target_speedup; optional context_policy
//    (full|latest-pair|single-user), language (cuda|ptx|solution|triton), priority (>= 1),
//    eval (full|compile-only), max_cost_usd. A definition or model given on
//    the command line replaces the definitions[] or models[] list. With
//    "mode": "agent" each trajectory is one coding-agent session instead of
//    a turn loop: an "agent" object (agent_settings.h) replaces num_turns
//    and context_policy, which are then refused. With "mode": "synthesis"
//    a model answers prepared prompts and nothing is evaluated
//    (synthesis.h).
//  - PTXBench list (a JSON array): [{num_trajectories, num_turns,
//    target_speedup, prompt_tag, [definition], [test_path]}]; keys starting
//    with '_' are ignored; definition and model come from the command line.
//    A list spec's name is SpecInput.name, else its file name without the
//    extension; items own consecutive sample indices in file order. An
//    item's test_path (a PTXBench test script, sent in SpecInput.files)
//    holds its trajectories to the one workload the script names
//    (WORKLOAD_UUID = "..." and DEFINITION_NAME = "..." lines), as PTXBench
//    times it. A fix-it item (error_kernel_path and error_log_path, sent the
//    same way) starts each trajectory from that broken kernel and its log. A PTXBench plan.json
//    ({"config", "plan"}) runs as the list it records, one trajectory per entry.
// Validation errors are common/json_reader.h's (docs/FORMATS.md, "Strict
// JSON errors"): file, JSON path, what was expected and what was found, e.g.
//   spec.json: $.samples: expected an integer from 1 to 2147483647, found 0
//   spec.json: line 3, column 16: malformed JSON: ...
// and nothing is created for an invalid spec. Unknown fields, duplicate keys,
// duplicate list entries and non-integer counts are errors.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/gpu_arch.h"
#include "prompts/prompts.h"
#include "experiment_spec/agent_settings.h"
#include "experiment_spec/synthesis.h"
#include "ptxbench/v1/common.pb.h"
#include "workloads/registry.h"

namespace ptxbench::experiment_spec {

// Specs name prompt tags of this registry; the scheduler renders them with it.
using prompts::PromptRegistry;

struct SpecInput {
  std::string text;              // the file's contents
  std::string path;              // for error messages ("<stdin>" if none)
  std::string name;              // overrides the spec's name when non-empty
  std::string default_definition;  // list form; replaces a matrix's definitions
  std::string default_model;       // list form; replaces a matrix's models
  std::string eval;                // "full" | "compile-only" replaces the spec's; "" keeps it
  // List form: the files its items name (test_path, error_kernel_path,
  // error_log_path), by that path (the client reads them; the scheduler may
  // be elsewhere).
  std::map<std::string, std::string> files;
  // Prompt tags the submission brings (SubmitExperimentRequest.prompts): tag
  // -> its text without the ABI description.
  std::map<std::string, std::string> prompts;
  // A PTXBench coding-agent experiment.json: the agent CLI to run instead of
  // the one it names (`submit --agent-cli`); "" keeps it.
  std::string agent_cli;
};

struct SpecLimits {
  int64_t max_trajectories = 100'000;  // a larger matrix is refused
};

struct TrajectorySpec {
  std::string trajectory_id;  // DeriveTrajectoryId(...)
  std::string model;
  std::string definition;
  std::string prompt_tag;
  int32_t sample_index = 0;
  int32_t num_turns = 0;
  double target_speedup = 1.0;
  // The workloads its kernels are evaluated on; empty: all of the
  // definition's. A list item's test_path selects the one its script names.
  std::vector<std::string> workloads;
  // Those of `workloads` (then never empty) that its model is never shown:
  // not in its prompt, its feedback or its agent's task file, and evaluated
  // after the others (docs/FORMATS.md, "Held-out workloads").
  std::vector<std::string> held_out;
  // A fix-it (repair) item's broken kernel and its error log, which its
  // first prompt carries; empty for an ordinary trajectory.
  std::string repair_kernel;
  std::string repair_log;
  std::string repair_sha256;  // of both, computed once at expansion
  // A synthesis trajectory's prompt (synthesis.h), its task prompt; empty
  // for every other.
  std::string synthesis_prompt;
  std::string synthesis_sha256;
};

struct ExpandedExperiment {
  std::string experiment_id;  // DeriveExperimentId(name)
  std::string name;
  // Canonical JSON of the normalized spec (defaults filled in, keys sorted);
  // two submissions are "the same spec" iff spec_hash is equal.
  std::string normalized_json;
  std::string spec_hash;      // sha256 of normalized_json
  int32_t priority = 1;
  ptxbench::v1::EvalMode eval_mode = ptxbench::v1::FULL;
  std::string language = "cuda";
  std::string context_policy = "full";
  double max_cost_usd = 0;    // 0 = no limit
  // Agent mode ("mode": "agent"): the CLI and budgets of every session;
  // nullopt for the multiturn loop.
  std::optional<AgentSettings> agent;
  // A synthesis experiment ("mode": "synthesis"): its rows' system prompt
  // and length bounds; nothing of it is evaluated.
  std::optional<SynthesisSettings> synthesis;
  // The GPU architectures its evaluations run on (common/gpu_arch.h).
  std::vector<std::string> architectures = DefaultArchitectures();
  // Every evaluation is profiled too (EvalRequest.profile): the spec's
  // "profile": true, or a prompt tag of it that asks for profile feedback
  // (PromptRegistry::AsksForProfile). Routed to workers that can profile.
  bool profile = false;
  // PTXBench's memcheck gate before each evaluation's timing, and a debug
  // report on RUNTIME_ERROR/TIMEOUT (EvalRequest.memcheck): "memcheck" in
  // the spec; unset, on for PTXBench's own forms (a list config, a
  // coding-agent experiment.json) and off for a matrix (docs/FORMATS.md).
  // Written into the normalized spec only when on. Routed to workers with
  // compute-sanitizer.
  bool memcheck = false;
  std::vector<TrajectorySpec> trajectories;  // deterministic order
  // Full evaluation only: the definitions no native reference computes, each
  // with why none does (workloads/native_reference.h). Their own PyTorch
  // reference needs a GPU worker that runs one, which Core::Submit looks for
  // among the registered executors. Not part of the spec's hash.
  std::map<std::string, std::string> pytorch_references;
  // What made it (SubmitExperimentRequest.lineage_json, canonical JSON), ""
  // when submitted by hand. Not part of the spec's hash.
  std::string lineage_json;
  // The tags of its trajectories that the submission brought
  // (SpecInput.prompts): tag -> text. Their sha256s are in the spec's hash.
  std::map<std::string, std::string> submitted_prompts;
};

// INVALID_ARGUMENT for every validation problem (first one found). A full
// evaluation of a definition with no reference at all (no native reference
// fits it and it has no PyTorch code) is such a problem; a compile-only one
// runs no reference.
// Whether a stored experiment's normalized spec (ExpandedExperiment::
// normalized_json) asks for the memcheck gate: the one reader of that key.
bool NormalizedSpecAsksMemcheck(absl::string_view normalized_json);

absl::StatusOr<ExpandedExperiment> ExpandSpec(
    const SpecInput& input, const workloads::DefinitionRegistry& definitions,
    const PromptRegistry& prompts, const SpecLimits& limits);

// "exp_" + first 16 hex digits of sha256("experiment\0" + name).
std::string DeriveExperimentId(absl::string_view name);
// "tr_" + first 20 hex digits of sha256 of the NUL-joined
// (experiment_id, model, definition, prompt_tag, sample_index).
std::string DeriveTrajectoryId(absl::string_view experiment_id,
                               absl::string_view model,
                               absl::string_view definition,
                               absl::string_view prompt_tag, int32_t sample_index);

}  // namespace ptxbench::experiment_spec

#endif  // PTXBENCH_EXPERIMENT_SPEC_SPEC_H_
