#ifndef PTXBENCH_CLI_VIEWS_EVAL_ENVELOPE_H_
#define PTXBENCH_CLI_VIEWS_EVAL_ENVELOPE_H_

// The `ptxbench.eval.v1` envelope that `ptxbench eval --json` prints
// (docs/FORMATS.md, "Eval envelope"): one JSON object per evaluation, whose
// traces are FlashInfer-Trace trace lines, so existing analysis tools can read
// them.

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::cli {

struct EvalContext {
  std::string evaluation_id;  // "ev_<hex>"
  std::string task_id;        // empty for a local evaluation
  std::string definition;
  std::vector<std::string> workload_uuids;  // as asked; empty = all
  std::string kernel_sha256;
  double target_speedup = 1.0;
  int sanitizer_requested_runs = 0;
  int sanitizer_completed_runs = 0;
  bool sanitizer_clean = true;
  std::string timestamp;      // RFC 3339, UTC
};

// A fresh "ev_<16 hex>" id.
std::string NewEvaluationId();

nlohmann::json EvalEnvelope(const EvalContext& context, const ptxbench::v1::EvalResult& result);

// 0 when everything passed, 1 when the kernel failed, 2 on an infrastructure
// error (the exit codes of `ptxbench eval`, docs/FORMATS.md). In a compile-only
// evaluation "everything passed" means the kernel built (COMPILED).
int EvalExitCode(const ptxbench::v1::EvalResult& result, bool compile_only = false);

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_VIEWS_EVAL_ENVELOPE_H_
