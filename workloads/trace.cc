#include "workloads/trace.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "workloads/workload_record.h"

namespace ptxbench::workloads {
namespace {

using Json = StrictJson;

constexpr const char* kFlashInferStatuses[] = {
    "PASSED",        "INCORRECT_SHAPE", "INCORRECT_DTYPE", "INCORRECT_NUMERICAL",
    "RUNTIME_ERROR", "COMPILE_ERROR",   "TIMEOUT"};

// ptxbench's statuses that are not FlashInfer-Bench's; its own exports and
// evaluation envelopes may carry them.
constexpr const char* kPtxbenchStatuses[] = {"LIBRARY_FALLBACK", "COMPILED", "INFRA_ERROR"};

// FlashInfer-Bench serializes non-finite floats as strings.
Json ErrorValue(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return x;
}

// A number, or one of the spellings of an undefined value: null (NaN, as
// JSON writers without NaN give it) or FlashInfer-Bench's strings.
absl::StatusOr<double> ReadErrorValue(const JsonReader& r, const Json& v, absl::string_view path) {
  if (v.is_number()) return v.get<double>();
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return r.Error(path, v, "a number, null, \"NaN\", \"Infinity\" or \"-Infinity\"");
}

// Present and not null.
const Json* Given(const Json& object, absl::string_view key) {
  const Json* v = JsonReader::Member(object, key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

absl::StatusOr<std::optional<double>> OptionalNumber(const JsonReader& r, const Json& object,
                                                     absl::string_view parent,
                                                     absl::string_view key) {
  const Json* v = Given(object, key);
  if (v == nullptr) return std::nullopt;
  PTXB_ASSIGN_OR_RETURN(double x, r.Number(*v, JsonField(parent, key)));
  return x;
}

absl::StatusOr<TraceCorrectness> ReadCorrectness(const JsonReader& r, const Json& c) {
  constexpr absl::string_view at = "evaluation.correctness";
  PTXB_RETURN_IF_ERROR(r.RequireObject(c, at));
  TraceCorrectness out;
  for (auto [key, field] : {std::pair{"max_relative_error", &out.max_relative_error},
                            std::pair{"max_absolute_error", &out.max_absolute_error}}) {
    PTXB_ASSIGN_OR_RETURN(const Json* v, r.Required(c, at, key));
    PTXB_ASSIGN_OR_RETURN(*field, ReadErrorValue(r, *v, JsonField(at, key)));
  }
  PTXB_ASSIGN_OR_RETURN(out.matched_ratio, OptionalNumber(r, c, at, "matched_ratio"));
  return out;
}

absl::StatusOr<TracePerformance> ReadPerformance(const JsonReader& r, const Json& p) {
  constexpr absl::string_view at = "evaluation.performance";
  PTXB_RETURN_IF_ERROR(r.RequireObject(p, at));
  TracePerformance out;
  for (auto [key, field] : {std::pair{"latency_ms", &out.latency_ms},
                            std::pair{"reference_latency_ms", &out.reference_latency_ms},
                            std::pair{"speedup_factor", &out.speedup_factor}}) {
    PTXB_ASSIGN_OR_RETURN(const Json* v, r.Required(p, at, key));
    PTXB_ASSIGN_OR_RETURN(*field, r.NonNegativeNumber(*v, JsonField(at, key)));
  }
  if (const Json* v = Given(p, "reference")) {
    PTXB_ASSIGN_OR_RETURN(out.reference, r.String(*v, JsonField(at, "reference"), true));
  }
  PTXB_ASSIGN_OR_RETURN(out.roofline_fraction, OptionalNumber(r, p, at, "roofline_fraction"));
  return out;
}

absl::StatusOr<TraceEnvironment> ReadEnvironment(const JsonReader& r, const Json& e) {
  constexpr absl::string_view at = "evaluation.environment";
  PTXB_RETURN_IF_ERROR(r.RequireObject(e, at));
  TraceEnvironment out;
  PTXB_ASSIGN_OR_RETURN(const Json* hardware, r.Required(e, at, "hardware"));
  PTXB_ASSIGN_OR_RETURN(out.hardware, r.String(*hardware, JsonField(at, "hardware")));
  if (const Json* libs = Given(e, "libs")) {
    const std::string libs_at = JsonField(at, "libs");
    PTXB_RETURN_IF_ERROR(r.RequireObject(*libs, libs_at));
    for (const auto& [name, version] : libs->items()) {
      PTXB_ASSIGN_OR_RETURN(out.libs[name], r.String(version, JsonField(libs_at, name), true));
    }
  }
  if (const Json* simulated = Given(e, "simulated")) {
    if (!simulated->is_boolean()) return r.Error(JsonField(at, "simulated"), *simulated, "a boolean");
    out.simulated = simulated->get<bool>();
  }
  return out;
}

// Metrics exist exactly where the status says they were measured.
absl::Status CheckPresence(const JsonReader& r, const Json& evaluation, absl::string_view key,
                           const std::string& status, bool wanted) {
  const Json* v = Given(evaluation, key);
  const std::string at = JsonField("evaluation", key);
  if (wanted && v == nullptr) {
    return r.Missing(at, absl::StrCat("an object (status ", status, " has ", key, " metrics)"));
  }
  if (!wanted && v != nullptr) {
    return r.Error(at, *v, "null", absl::StrCat("status ", status, " has no ", key, " metrics"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TraceEvaluation> ReadEvaluation(const JsonReader& r, const Json& e) {
  constexpr absl::string_view at = "evaluation";
  PTXB_RETURN_IF_ERROR(r.RequireObject(e, at));
  TraceEvaluation out;
  std::vector<std::string> statuses(std::begin(kFlashInferStatuses), std::end(kFlashInferStatuses));
  statuses.insert(statuses.end(), std::begin(kPtxbenchStatuses), std::end(kPtxbenchStatuses));
  PTXB_ASSIGN_OR_RETURN(const Json* status, r.Required(e, at, "status"));
  PTXB_ASSIGN_OR_RETURN(out.status, r.Enum(*status, JsonField(at, "status"), statuses));
  if (const Json* log = Given(e, "log")) {
    PTXB_ASSIGN_OR_RETURN(out.log, r.String(*log, JsonField(at, "log"), true));
  }
  // FlashInfer-Bench's rule for each status.
  const bool wants_correctness = out.status == "PASSED" || out.status == "INCORRECT_NUMERICAL";
  const bool wants_performance = out.status == "PASSED";
  const Json* correctness = Given(e, "correctness");
  PTXB_RETURN_IF_ERROR(CheckPresence(r, e, "correctness", out.status, wants_correctness));
  if (correctness != nullptr) {
    PTXB_ASSIGN_OR_RETURN(out.correctness, ReadCorrectness(r, *correctness));
  }
  const Json* performance = Given(e, "performance");
  PTXB_RETURN_IF_ERROR(CheckPresence(r, e, "performance", out.status, wants_performance));
  if (performance != nullptr) {
    PTXB_ASSIGN_OR_RETURN(out.performance, ReadPerformance(r, *performance));
  }
  PTXB_ASSIGN_OR_RETURN(const Json* environment, r.Required(e, at, "environment"));
  PTXB_ASSIGN_OR_RETURN(out.environment, ReadEnvironment(r, *environment));
  PTXB_ASSIGN_OR_RETURN(const Json* timestamp, r.Required(e, at, "timestamp"));
  PTXB_ASSIGN_OR_RETURN(out.timestamp, r.String(*timestamp, JsonField(at, "timestamp")));
  if (const Json* errors = Given(e, "errors")) {
    const std::string errors_at = JsonField(at, "errors");
    if (!errors->is_array()) return r.Error(errors_at, *errors, "a list of strings");
    for (size_t i = 0; i < errors->size(); ++i) {
      PTXB_ASSIGN_OR_RETURN(std::string line, r.String((*errors)[i], JsonIndex(errors_at, i), true));
      out.errors.push_back(std::move(line));
    }
  }
  return out;
}

Json EvaluationJson(const TraceEvaluation& e) {
  Json out = Json::object();
  out["status"] = e.status;
  out["log"] = e.log;
  out["correctness"] = nullptr;
  if (e.correctness) {
    Json c = Json::object();
    c["max_relative_error"] = ErrorValue(e.correctness->max_relative_error);
    c["max_absolute_error"] = ErrorValue(e.correctness->max_absolute_error);
    if (e.correctness->matched_ratio) c["matched_ratio"] = ErrorValue(*e.correctness->matched_ratio);
    out["correctness"] = std::move(c);
  }
  out["performance"] = nullptr;
  if (e.performance) {
    Json p = Json::object();
    p["latency_ms"] = e.performance->latency_ms;
    p["reference_latency_ms"] = e.performance->reference_latency_ms;
    p["speedup_factor"] = e.performance->speedup_factor;
    if (!e.performance->reference.empty()) p["reference"] = e.performance->reference;
    if (e.performance->roofline_fraction) p["roofline_fraction"] = *e.performance->roofline_fraction;
    out["performance"] = std::move(p);
  }
  Json libs = Json::object();
  for (const auto& [name, version] : e.environment.libs) libs[name] = version;
  out["environment"] = {{"hardware", e.environment.hardware},
                        {"libs", std::move(libs)},
                        {"simulated", e.environment.simulated}};
  out["timestamp"] = e.timestamp;
  if (!e.errors.empty()) out["errors"] = e.errors;
  return out;
}

}  // namespace

bool IsFlashInferStatus(absl::string_view status) {
  for (const char* known : kFlashInferStatuses) {
    if (status == known) return true;
  }
  return false;
}

StrictJson TraceJson(const TraceRecord& record) {
  Json out = Json::object();
  out["definition"] = record.definition;
  out["solution"] = record.solution ? Json(*record.solution) : Json();
  out["workload"] = WorkloadJson(record.workload);
  out["evaluation"] = record.evaluation ? EvaluationJson(*record.evaluation) : Json();
  return out;
}

std::string FormatTraceLine(const TraceRecord& record) {
  return TraceJson(record).dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::StatusOr<TraceRecord> ParseTraceLine(absl::string_view line, absl::string_view origin) {
  // The definition and the workload are read as a workload line is.
  PTXB_ASSIGN_OR_RETURN(WorkloadRecord workload, ParseWorkloadRecord(line, origin));
  PTXB_ASSIGN_OR_RETURN(Json doc, ParseStrictJson(line, origin));
  JsonReader r(origin);
  TraceRecord out;
  out.definition = std::move(workload.definition);
  out.workload = std::move(workload.workload);
  if (const Json* solution = Given(doc, "solution")) {
    PTXB_ASSIGN_OR_RETURN(std::string name, r.String(*solution, "solution"));
    out.solution = std::move(name);
  }
  if (const Json* evaluation = Given(doc, "evaluation")) {
    PTXB_ASSIGN_OR_RETURN(out.evaluation, ReadEvaluation(r, *evaluation));
  }
  return out;
}

}  // namespace ptxbench::workloads
