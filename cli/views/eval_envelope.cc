#include "cli/views/eval_envelope.h"

#include <cmath>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "verdict/verdict.h"

namespace ptxbench::cli {

namespace v1 = ::ptxbench::v1;

namespace {

// JSON has no NaN/Inf: undefined errors are written as null.
nlohmann::json Number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

nlohmann::json Counts(const google::protobuf::Map<std::string, int64_t>& map) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : map) out[key] = value;
  return out;
}

// One FlashInfer-Trace trace line for a workload.
nlohmann::json Trace(const std::string& definition, const v1::EvalResult& result,
                     const v1::WorkloadTrace& t, const std::string& timestamp) {
  nlohmann::json axes = nlohmann::json::object();
  for (const auto& [name, value] : t.axes()) axes[name] = value;
  const bool timed = t.latency_ms() > 0;
  nlohmann::json evaluation = {
      {"status", v1::EvalStatus_Name(t.status())},
      {"log", t.log()},
      {"correctness",
       {{"max_relative_error", Number(t.max_rel_error())},
        {"max_absolute_error", Number(t.max_abs_error())},
        {"matched_ratio", Number(t.matched_ratio())}}},
      {"performance",
       timed ? nlohmann::json{{"latency_ms", t.latency_ms()},
                              {"reference_latency_ms", t.reference_latency_ms()},
                              {"reference", t.reference()},
                              {"speedup_factor", t.speedup()},
                              {"roofline_fraction", Number(t.roofline_fraction())}}
             : nlohmann::json()},
      {"environment",
       {{"hardware", result.gpu_model()},
        {"libs", {{"cuda", result.toolkit_version()}}},
        {"simulated", result.simulated()}}},
      {"timestamp", timestamp},
  };
  if (!t.errors().empty()) {
    evaluation["errors"] = nlohmann::json(std::vector<std::string>(t.errors().begin(), t.errors().end()));
  }
  return {{"definition", definition},
          {"workload", {{"uuid", t.workload_uuid()}, {"axes", axes}}},
          {"solution", nullptr},
          {"evaluation", evaluation}};
}

}  // namespace

std::string NewEvaluationId() {
  absl::BitGen gen;
  return absl::StrFormat("ev_%016x", absl::Uniform<uint64_t>(gen));
}

nlohmann::json EvalEnvelope(const EvalContext& c, const v1::EvalResult& result) {
  const bool infra = result.status() == v1::INFRA_ERROR;
  const bool all_passed = verdict::Correct(result);  // never an INFRA_ERROR
  nlohmann::json traces = nlohmann::json::array();
  if (!infra) {
    for (const v1::WorkloadTrace& t : result.traces()) {
      traces.push_back(Trace(c.definition, result, t, c.timestamp));
    }
  }
  nlohmann::json ptx = nullptr;
  if (!result.ptx().sha256().empty()) {
    ptx = {{"sha256", result.ptx().sha256()},
           {"size_bytes", result.ptx().size_bytes()},
           {"virtual_arch", result.ptx().virtual_arch()},
           {"instruction_counts", Counts(result.ptx().instruction_counts())},
           {"architecture_counts", Counts(result.ptx().architecture_counts())}};
  }
  nlohmann::json out = {
      {"schema", "ptxbench.eval.v1"},
      {"evaluation_id", c.evaluation_id},
      {"task_id", c.task_id.empty() ? nlohmann::json() : nlohmann::json(c.task_id)},
      {"definition", c.definition},
      {"workload_uuids", c.workload_uuids},
      {"kernel_sha256", c.kernel_sha256},
      {"status", v1::EvalStatus_Name(result.status())},
      {"all_passed", all_passed},
      {"min_speedup", all_passed ? nlohmann::json(verdict::MinSpeedup(result)) : nlohmann::json()},
      {"target_met", verdict::TargetMet(result, c.target_speedup)},
      {"sanitizer",
       {{"requested_runs", c.sanitizer_requested_runs},
        {"completed_runs", c.sanitizer_completed_runs},
        // Clean only means something when a sanitizer actually ran.
        {"clean", c.sanitizer_completed_runs > 0 ? nlohmann::json(c.sanitizer_clean)
                                                 : nlohmann::json()}}},
      {"compile_log", result.compile_log()},
      {"ptx", ptx},
      {"traces", traces},
      {"simulated", result.simulated()},
      {"dataset", result.dataset()},
      {"definition_version", result.definition_version()},
  };
  if (infra) out["error"] = result.error();
  return out;
}

int EvalExitCode(const v1::EvalResult& result, bool compile_only) {
  if (result.status() == v1::INFRA_ERROR || result.status() == v1::EVAL_STATUS_UNSPECIFIED) {
    return 2;
  }
  if (compile_only) return result.status() == v1::COMPILED ? 0 : 1;
  return verdict::Correct(result) ? 0 : 1;
}

}  // namespace ptxbench::cli
