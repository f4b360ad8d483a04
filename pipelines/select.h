#ifndef PTXBENCH_PIPELINES_SELECT_H_
#define PTXBENCH_PIPELINES_SELECT_H_

// The select stage's choice (docs/PIPELINES.md): which evaluated turns of
// finished experiments a pipeline takes, failed or correct, filtered by
// status, turn, prompt tag, speedup and the Hopper instructions their PTX
// uses, and at most `per_definition_cap` per definition by deterministic
// stratified sampling over (status, turn), as PTXBench rebalances its
// Fixit collection. Pure: the same rows and parameters give the same
// selection on any machine.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::pipelines {

// One evaluated turn.
struct Row {
  std::string experiment_id;
  std::string trajectory_id;
  std::string definition;
  std::string prompt_tag;
  int turn = 0;
  std::string status;   // EvalStatus name
  bool correct = false;  // verdict::Correct of the evaluation
  double speedup = 0;   // its minimum speedup over its workloads (verdict::MinSpeedup)
  std::string kernel_sha256;
  // Its SASS census (where the worker had cuobjdump), else its PTX census,
  // counts Hopper instruction families; which one: "sass" or "ptx".
  bool hopper = false;
  std::string hopper_from = "ptx";
};

// The rows a trajectory offers: each turn with a kernel and an evaluation
// that judged it (INFRA_ERROR judges nothing; a compile-only COMPILED only
// the compile, which `accept_compiled` may count as correct).
std::vector<Row> RowsOf(const std::string& experiment_id, const ptxbench::v1::Trajectory& t);

struct Selection {
  std::vector<Row> rows;  // by definition, trajectory, turn
  int64_t candidates = 0;  // rows offered
  int64_t matched = 0;     // rows that passed the filters, before the cap
  // Kept rows counted by "definition", "status", "turn" and "prompt_tag".
  std::map<std::string, std::map<std::string, int64_t>> counts;
};

// `params` are a select stage's (pipeline.h: defaults filled in).
Selection Select(const std::vector<Row>& candidates, const nlohmann::json& params);

// The selection as its stage writes it: selection.jsonl, one row a line
// (docs/PIPELINES.md), and the counts for its manifest.
std::string SelectionJsonl(const Selection& s);
nlohmann::json SelectionCounts(const Selection& s);

}  // namespace ptxbench::pipelines

#endif  // PTXBENCH_PIPELINES_SELECT_H_
