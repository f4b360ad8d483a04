#include "workloads/definition.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json_reader.h"
#include "common/status_macros.h"
#include "workloads/expression.h"
#include "workloads/safetensors.h"

namespace ptxbench::workloads {
namespace {

// Ordered, so axes and tensors keep file order (= run() argument order).
using Json = StrictJson;

constexpr const char* kDtypes[] = {
    "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1",
    "int64",   "int32",   "int16",    "int8",          "bool"};

constexpr int kMaxTrials = 100;

// Names that become identifiers in run() signatures and launch expressions.
bool IsIdentifier(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (!absl::ascii_isalpha(name[0]) && name[0] != '_') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// Names that become file names (definition names, op types).
bool IsFileSafeName(absl::string_view name) {
  if (name.empty() || name.size() > 128 || name[0] == '.') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

// Workload ids: FlashInfer-Trace allows any non-empty string (dashed UUIDs,
// bare hex, ...). They appear in logs, feedback and tables, so no control
// characters, and a bounded length.
bool IsWorkloadId(absl::string_view text) {
  if (text.empty() || text.size() > 256) return false;
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

absl::StatusOr<std::vector<Axis>> ParseAxes(const JsonReader& r, const Json& axes) {
  PTXB_RETURN_IF_ERROR(r.RequireObject(axes, "axes"));
  std::vector<Axis> out;
  for (const auto& [name, spec] : axes.items()) {
    const std::string field = JsonField("axes", name);
    if (!IsIdentifier(name)) {
      return r.ErrorFound(field, Json(name).dump(),
                          "an axis name that is an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    }
    PTXB_RETURN_IF_ERROR(r.RequireObject(spec, field));
    PTXB_ASSIGN_OR_RETURN(const Json* type, r.Required(spec, field, "type"));
    Axis axis;
    axis.name = name;
    if (*type == "const") {
      axis.is_const = true;
      PTXB_ASSIGN_OR_RETURN(const Json* value, r.Required(spec, field, "value"));
      PTXB_ASSIGN_OR_RETURN(axis.value, r.Integer(*value, JsonField(field, "value"), 1,
                                                  std::numeric_limits<int64_t>::max()));
    } else if (*type != "var") {
      return r.Error(JsonField(field, "type"), *type, "\"const\" or \"var\"");
    }
    out.push_back(std::move(axis));
  }
  return out;
}

absl::StatusOr<std::vector<TensorSpec>> ParseTensors(const JsonReader& r, const Json& tensors,
                                                     absl::string_view kind,
                                                     const std::vector<Axis>& axes) {
  PTXB_RETURN_IF_ERROR(r.RequireObject(tensors, kind));
  std::set<std::string> axis_names;
  for (const Axis& axis : axes) axis_names.insert(axis.name);
  std::vector<TensorSpec> out;
  for (const auto& [name, spec] : tensors.items()) {
    const std::string field = JsonField(kind, name);
    if (!IsIdentifier(name)) {
      return r.ErrorFound(field, Json(name).dump(),
                          "a tensor name that is an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    }
    PTXB_RETURN_IF_ERROR(r.RequireObject(spec, field));
    TensorSpec tensor;
    tensor.name = name;
    PTXB_ASSIGN_OR_RETURN(const Json* shape, r.Required(spec, field, "shape"));
    const std::string shape_field = JsonField(field, "shape");
    if (shape->is_null()) {
      tensor.is_scalar = true;
    } else {
      PTXB_ASSIGN_OR_RETURN(tensor.shape, r.StringList(*shape, shape_field));
      for (size_t i = 0; i < tensor.shape.size(); ++i) {
        if (axis_names.contains(tensor.shape[i])) continue;
        // Not an axis: an expression over axes ("qk_nope_head_dim + v_head_dim").
        if (absl::Status s = CheckExpression(tensor.shape[i], {axis_names.begin(), axis_names.end()});
            !s.ok()) {
          return r.Error(JsonIndex(shape_field, i), (*shape)[i],
                         "an axis declared in \"axes\" or an expression over them", s.message());
        }
      }
    }
    PTXB_ASSIGN_OR_RETURN(const Json* dtype, r.Required(spec, field, "dtype"));
    PTXB_ASSIGN_OR_RETURN(tensor.dtype, r.String(*dtype, JsonField(field, "dtype")));
    if (!IsKnownDtype(tensor.dtype)) {
      return r.Error(JsonField(field, "dtype"), *dtype,
                     absl::StrCat("a known dtype (", absl::StrJoin(kDtypes, ", "), ")"));
    }
    out.push_back(std::move(tensor));
  }
  return out;
}

absl::StatusOr<Tolerance> ParseTolerance(const JsonReader& r, const Json& value) {
  PTXB_RETURN_IF_ERROR(r.RequireObject(value, "tolerance"));
  PTXB_RETURN_IF_ERROR(r.CheckKeys(value, "tolerance", {"atol", "rtol", "required_matched_ratio"},
                                   /*allow_comments=*/false));
  Tolerance tolerance;
  for (const auto& [key, v] : value.items()) {
    const std::string field = JsonField("tolerance", key);
    if (key == "required_matched_ratio") {
      PTXB_ASSIGN_OR_RETURN(double ratio, r.Number(v, field));
      if (!(ratio > 0 && ratio <= 1)) return r.Error(field, v, "a number in (0, 1]");
      tolerance.required_matched_ratio = ratio;
    } else {
      PTXB_ASSIGN_OR_RETURN((key == "atol" ? tolerance.atol : tolerance.rtol),
                            r.NonNegativeNumber(v, field));
    }
  }
  return tolerance;
}

absl::StatusOr<InputSource> ParseInputSource(const JsonReader& r, const Json& value,
                                             absl::string_view field) {
  PTXB_RETURN_IF_ERROR(r.RequireObject(value, field));
  PTXB_ASSIGN_OR_RETURN(const Json* type, r.Required(value, field, "type"));
  InputSource source;
  PTXB_ASSIGN_OR_RETURN(
      source.type, r.Enum(*type, JsonField(field, "type"), {"random", "scalar", "safetensors"}));
  if (source.type == "scalar") {
    PTXB_ASSIGN_OR_RETURN(const Json* v, r.Required(value, field, "value"));
    if (v->is_boolean()) {
      source.scalar_kind = InputSource::ScalarKind::kBool;
      source.scalar_int = v->get<bool>() ? 1 : 0;
      source.scalar_value = static_cast<double>(source.scalar_int);
    } else if (v->is_number_integer()) {
      if (v->is_number_unsigned() &&
          v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return r.Error(JsonField(field, "value"), *v, "an integer that fits in 64 bits");
      }
      source.scalar_kind = InputSource::ScalarKind::kInt;
      source.scalar_int = v->get<int64_t>();
      source.scalar_value = static_cast<double>(source.scalar_int);
    } else {
      PTXB_ASSIGN_OR_RETURN(source.scalar_value, r.Number(*v, JsonField(field, "value")));
    }
  } else if (source.type == "safetensors") {
    PTXB_ASSIGN_OR_RETURN(const Json* path, r.Required(value, field, "path"));
    PTXB_ASSIGN_OR_RETURN(source.path, r.String(*path, JsonField(field, "path")));
    PTXB_ASSIGN_OR_RETURN(const Json* key, r.Required(value, field, "tensor_key"));
    PTXB_ASSIGN_OR_RETURN(source.tensor_key, r.String(*key, JsonField(field, "tensor_key")));
  }
  return source;
}

// What the tags say about one property: nullopt when nothing, else the
// value; `conflict` when two tags disagree.
struct TagReading {
  std::optional<bool> value;
  std::string first;  // the tag that decided
  std::string conflict;
};

TagReading ReadTags(const std::vector<std::string>& tags,
                    const std::vector<std::pair<std::string, bool>>& meanings) {
  TagReading out;
  for (const std::string& tag : tags) {
    for (const auto& [spelling, meaning] : meanings) {
      if (tag != spelling) continue;
      if (out.value.has_value() && *out.value != meaning && out.conflict.empty()) {
        out.conflict = absl::StrCat("\"", out.first, "\" and \"", tag, "\" contradict each other");
      }
      if (!out.value.has_value()) {
        out.value = meaning;
        out.first = tag;
      }
    }
  }
  return out;
}

const std::vector<std::pair<std::string, bool>>& CausalTags() {
  static const auto* tags = new std::vector<std::pair<std::string, bool>>{
      {"causal", true}, {"causal:true", true}, {"mask:causal", true}, {"causal:false", false}};
  return *tags;
}

const std::vector<std::pair<std::string, bool>>& BackwardTags() {
  static const auto* tags = new std::vector<std::pair<std::string, bool>>{
      {"backward", true},
      {"direction:backward", true},
      {"stage:backward", true},
      {"direction:forward", false}};
  return *tags;
}

absl::StatusOr<std::vector<InputDistribution>> ParseInputDistributions(const JsonReader& r,
                                                                      const Json& list) {
  constexpr char kExpected[] =
      "a non-empty list of distinct input distributions (normal, outliers, scaled_1e-3, "
      "scaled_64)";
  if (!list.is_array() || list.empty()) return r.Error("input_distributions", list, kExpected);
  std::vector<InputDistribution> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::optional<InputDistribution> d =
        list[i].is_string() ? ParseInputDistribution(list[i].get<std::string>()) : std::nullopt;
    if (!d || std::find(out.begin(), out.end(), *d) != out.end()) {
      return r.Error(JsonIndex("input_distributions", i), list[i], kExpected);
    }
    out.push_back(*d);
  }
  return out;
}

}  // namespace

bool IsKnownDtype(absl::string_view dtype) {
  for (const char* known : kDtypes) {
    if (dtype == known) return true;
  }
  return false;
}

bool IsCausal(const Definition& d) { return ReadTags(d.tags, CausalTags()).value.value_or(false); }

bool IsBackward(const Definition& d) {
  return ReadTags(d.tags, BackwardTags()).value.value_or(false);
}

absl::StatusOr<std::vector<int64_t>> TensorDims(const TensorSpec& tensor,
                                                const std::map<std::string, int64_t>& axis_values) {
  std::vector<int64_t> dims;
  for (const std::string& entry : tensor.shape) {
    absl::StatusOr<int64_t> v = EvaluateExpression(entry, axis_values);
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", tensor.name, ": shape entry \"", entry, "\": ", v.status().message()));
    }
    if (*v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", tensor.name, ": shape entry \"", entry, "\" is ", *v));
    }
    dims.push_back(*v);
  }
  return dims;
}

absl::StatusOr<std::map<std::string, int64_t>> Definition::AxisValues(
    const Workload& w) const {
  std::map<std::string, int64_t> values;
  for (const Axis& axis : axes) {
    if (axis.is_const) {
      values[axis.name] = axis.value;
      continue;
    }
    auto it = w.axes.find(axis.name);
    if (it == w.axes.end()) {
      return absl::InvalidArgumentError(absl::StrCat("definition '", name, "', workload ",
                                                     w.uuid, ": no value for var axis '",
                                                     axis.name, "'"));
    }
    values[axis.name] = it->second;
  }
  return values;
}

absl::StatusOr<Definition> ParseDefinition(absl::string_view json,
                                           absl::string_view origin) {
  PTXB_ASSIGN_OR_RETURN(Json doc, ParseStrictJson(json, origin));
  JsonReader r(origin);
  if (!doc.is_object()) return r.Error("", doc, "an object");

  // Unknown top-level fields are ignored: FlashInfer-Trace datasets may carry
  // fields this version does not know, and must still load.
  Definition d;
  d.json = std::string(json);
  PTXB_ASSIGN_OR_RETURN(const Json* name, r.Required(doc, "", "name"));
  PTXB_ASSIGN_OR_RETURN(d.name, r.String(*name, "name"));
  if (!IsFileSafeName(d.name)) {
    return r.Error("name", *name, "a name of [A-Za-z0-9._-]{1,128} not starting with '.'");
  }
  PTXB_ASSIGN_OR_RETURN(const Json* op_type, r.Required(doc, "", "op_type"));
  PTXB_ASSIGN_OR_RETURN(d.op_type, r.String(*op_type, "op_type"));
  if (!IsFileSafeName(d.op_type)) {
    return r.Error("op_type", *op_type, "a name of [A-Za-z0-9._-]{1,128} not starting with '.'");
  }
  if (const Json* tags = JsonReader::Member(doc, "tags")) {
    PTXB_ASSIGN_OR_RETURN(d.tags, r.StringList(*tags, "tags"));
    for (const auto* meanings : {&CausalTags(), &BackwardTags()}) {
      if (TagReading t = ReadTags(d.tags, *meanings); !t.conflict.empty()) {
        return r.Error("tags", *tags, "tags that agree with each other", t.conflict);
      }
    }
  }
  if (const Json* description = JsonReader::Member(doc, "description")) {
    PTXB_ASSIGN_OR_RETURN(d.description, r.String(*description, "description", true));
  }
  PTXB_ASSIGN_OR_RETURN(const Json* axes, r.Required(doc, "", "axes"));
  PTXB_ASSIGN_OR_RETURN(d.axes, ParseAxes(r, *axes));
  PTXB_ASSIGN_OR_RETURN(const Json* inputs, r.Required(doc, "", "inputs"));
  PTXB_ASSIGN_OR_RETURN(d.inputs, ParseTensors(r, *inputs, "inputs", d.axes));
  PTXB_ASSIGN_OR_RETURN(const Json* outputs, r.Required(doc, "", "outputs"));
  PTXB_ASSIGN_OR_RETURN(d.outputs, ParseTensors(r, *outputs, "outputs", d.axes));
  if (d.outputs.empty()) return r.Error("outputs", *outputs, "at least one output");
  for (const TensorSpec& out : d.outputs) {
    if (inputs->contains(out.name)) {
      return r.ErrorFound(JsonField("outputs", out.name), Json(out.name).dump(),
                          "an output name that no input has");
    }
  }
  PTXB_ASSIGN_OR_RETURN(const Json* reference, r.Required(doc, "", "reference"));
  PTXB_ASSIGN_OR_RETURN(d.reference, r.String(*reference, "reference"));
  if (const Json* constraints = JsonReader::Member(doc, "constraints")) {
    PTXB_ASSIGN_OR_RETURN(d.constraints, r.StringList(*constraints, "constraints"));
  }
  if (const Json* tolerance = JsonReader::Member(doc, "tolerance")) {
    PTXB_ASSIGN_OR_RETURN(d.tolerance, ParseTolerance(r, *tolerance));
  }
  if (const Json* trials = JsonReader::Member(doc, "trials")) {
    PTXB_ASSIGN_OR_RETURN(int64_t n, r.Integer(*trials, "trials", 1, kMaxTrials));
    d.trials = static_cast<int>(n);
  }
  if (const Json* importance = JsonReader::Member(doc, "importance")) {
    PTXB_ASSIGN_OR_RETURN(d.importance, r.NonNegativeNumber(*importance, "importance"));
  }
  if (const Json* list = JsonReader::Member(doc, "input_distributions")) {
    PTXB_ASSIGN_OR_RETURN(d.input_distributions, ParseInputDistributions(r, *list));
  }
  return d;
}

absl::StatusOr<WorkloadRecord> ParseWorkloadRecord(absl::string_view line,
                                                   absl::string_view origin) {
  PTXB_ASSIGN_OR_RETURN(Json doc, ParseStrictJson(line, origin));
  JsonReader r(origin);
  if (!doc.is_object()) return r.Error("", doc, "an object");
  WorkloadRecord record;
  PTXB_ASSIGN_OR_RETURN(const Json* definition, r.Required(doc, "", "definition"));
  PTXB_ASSIGN_OR_RETURN(record.definition, r.String(*definition, "definition"));
  // "solution" and "evaluation" are null in a workload file and filled in a
  // trace file; neither matters for loading workloads.
  PTXB_ASSIGN_OR_RETURN(const Json* workload, r.Required(doc, "", "workload"));
  PTXB_RETURN_IF_ERROR(r.RequireObject(*workload, "workload"));
  Workload& w = record.workload;

  PTXB_ASSIGN_OR_RETURN(const Json* uuid, r.Required(*workload, "workload", "uuid"));
  PTXB_ASSIGN_OR_RETURN(w.uuid, r.String(*uuid, "workload.uuid"));
  if (!IsWorkloadId(w.uuid)) {
    return r.Error("workload.uuid", *uuid,
                   "an id of 1 to 256 characters without control characters");
  }
  PTXB_ASSIGN_OR_RETURN(const Json* axes, r.Required(*workload, "workload", "axes"));
  PTXB_RETURN_IF_ERROR(r.RequireObject(*axes, "workload.axes"));
  for (const auto& [name, value] : axes->items()) {
    PTXB_ASSIGN_OR_RETURN(w.axes[name], r.Integer(value, JsonField("workload.axes", name), 1,
                                                  std::numeric_limits<int64_t>::max()));
  }
  PTXB_ASSIGN_OR_RETURN(const Json* inputs, r.Required(*workload, "workload", "inputs"));
  PTXB_RETURN_IF_ERROR(r.RequireObject(*inputs, "workload.inputs"));
  for (const auto& [name, value] : inputs->items()) {
    PTXB_ASSIGN_OR_RETURN(w.inputs[name],
                          ParseInputSource(r, value, JsonField("workload.inputs", name)));
  }
  if (const Json* importance = JsonReader::Member(*workload, "importance")) {
    PTXB_ASSIGN_OR_RETURN(w.importance, r.NonNegativeNumber(*importance, "workload.importance"));
  }
  return record;
}

absl::StatusOr<Workload> ParseWorkloadLine(absl::string_view line,
                                           absl::string_view origin) {
  PTXB_ASSIGN_OR_RETURN(WorkloadRecord record, ParseWorkloadRecord(line, origin));
  return std::move(record.workload);
}

absl::Status ValidateWorkload(const Definition& definition, const Workload& workload,
                              absl::string_view origin) {
  const JsonReader r(origin);
  const std::string axes_of = absl::StrCat("only the axes of definition '", definition.name, "'");
  for (const auto& [name, value] : workload.axes) {
    const std::string field = JsonField("workload.axes", name);
    const Axis* axis = nullptr;
    for (const Axis& a : definition.axes) {
      if (a.name == name) axis = &a;
    }
    if (axis == nullptr) {
      return r.ErrorFound(field, absl::StrCat(value), axes_of,
                          absl::StrCat("it has no axis ", name));
    }
    if (axis->is_const && axis->value != value) {
      return r.ErrorFound(field, absl::StrCat(value),
                          absl::StrCat(axis->value, " (the axis is const)"));
    }
  }
  for (const Axis& axis : definition.axes) {
    if (!axis.is_const && !workload.axes.contains(axis.name)) {
      return r.Missing(JsonField("workload.axes", axis.name), "a value for the var axis");
    }
  }
  for (const auto& [name, source] : workload.inputs) {
    bool known = false;
    for (const TensorSpec& input : definition.inputs) known = known || input.name == name;
    if (!known) {
      return r.ErrorFound(JsonField("workload.inputs", name),
                          absl::StrCat("{\"type\":\"", source.type, "\"}"),
                          absl::StrCat("only the inputs of definition '", definition.name, "'"),
                          absl::StrCat("it has no input ", name));
    }
  }
  for (const TensorSpec& input : definition.inputs) {
    if (!workload.inputs.contains(input.name)) {
      return r.Missing(JsonField("workload.inputs", input.name), "a source for the input");
    }
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::workloads

namespace ptxbench::workloads {
namespace {

// The dtypes the GPU harness cannot hold yet (worker/runner/measure/tensors.h).
constexpr const char* kHarnessLacks[] = {"float4_e2m1"};

// The integer dtypes and the float dtypes with their largest finite value:
// a scalar beyond it would become infinity, not the value the file gives.
struct IntRange {
  const char* dtype;
  int64_t min, max;
};
constexpr IntRange kIntRanges[] = {{"int8", INT8_MIN, INT8_MAX},
                                   {"int16", INT16_MIN, INT16_MAX},
                                   {"int32", INT32_MIN, INT32_MAX},
                                   {"int64", INT64_MIN, INT64_MAX}};
struct FloatRange {
  const char* dtype;
  double max;
};
constexpr FloatRange kFloatRanges[] = {{"float32", 3.4028234663852886e38},
                                       {"float16", 65504},
                                       {"bfloat16", 3.3895313892515355e38},
                                       {"float8_e4m3fn", 448},
                                       {"float8_e5m2", 57344}};

absl::Status CheckHarnessDtypes(const Definition& d, const std::vector<TensorSpec>& tensors,
                                absl::string_view kind) {
  for (const TensorSpec& t : tensors) {
    for (const char* lacking : kHarnessLacks) {
      if (t.dtype != lacking) continue;
      return absl::FailedPreconditionError(
          absl::StrCat("definition ", d.name, ", ", kind, " ", t.name, ": dtype ", t.dtype,
                       " is not supported by the GPU harness yet"));
    }
  }
  return absl::OkStatus();
}

// Why the scalar `s` is not exactly a value of `input`, or "" when it is.
std::string ScalarMismatch(const TensorSpec& input, const InputSource& s) {
  if (!input.is_scalar) {
    return absl::StrCat("a \"scalar\" source gives one value, but the input is a tensor of shape [",
                        absl::StrJoin(input.shape, ", "), "]");
  }
  const std::string value = absl::StrCat("the scalar value ", ScalarJson(s));
  const bool is_bool = s.scalar_kind == InputSource::ScalarKind::kBool;
  if (input.dtype == "bool") {
    return is_bool ? "" : absl::StrCat(value, " is not a boolean, the input's dtype is bool");
  }
  if (is_bool) return absl::StrCat(value, " is a boolean, the input's dtype is ", input.dtype);
  for (const IntRange& r : kIntRanges) {
    if (input.dtype != r.dtype) continue;
    if (s.scalar_kind != InputSource::ScalarKind::kInt) {
      return absl::StrCat(value, " is not an integer, the input's dtype is ", input.dtype);
    }
    if (s.scalar_int < r.min || s.scalar_int > r.max) {
      return absl::StrCat(value, " does not fit in ", input.dtype);
    }
  }
  for (const FloatRange& r : kFloatRanges) {
    if (input.dtype == r.dtype && std::fabs(s.scalar_value) > r.max) {
      return absl::StrCat(value, " is beyond the largest ", input.dtype, " (", r.max, ")");
    }
  }
  return "";
}

// Whether `source` gives input `input` of workload `w` exactly as the
// definition declares it; an error says what differs.
absl::Status CheckSource(const Definition& d, const Workload& w, const TensorSpec& input,
                         const InputSource& source) {
  if (source.type == "random") return absl::OkStatus();
  if (source.type == "scalar") {
    const std::string mismatch = ScalarMismatch(input, source);
    if (mismatch.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(mismatch);
  }
  if (source.type == "safetensors") {
    if (source.resolved_path.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "safetensors path ", source.path, " was not resolved against a dataset root"));
    }
    PTXB_ASSIGN_OR_RETURN(const auto axes, d.AxisValues(w));
    PTXB_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, TensorDims(input, axes));
    return CheckSafetensorsTensor(source.resolved_path, source.tensor_key, input.dtype, dims);
  }
  return absl::FailedPreconditionError(
      absl::StrCat("input source \"", source.type, "\" is not supported"));
}

}  // namespace

absl::Status CheckUsable(const Definition& definition) {
  PTXB_RETURN_IF_ERROR(CheckHarnessDtypes(definition, definition.inputs, "input"));
  PTXB_RETURN_IF_ERROR(CheckHarnessDtypes(definition, definition.outputs, "output"));
  if (definition.workloads.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "definition ", definition.name, " (dataset ", definition.dataset,
        ") has no workloads yet: add its lines to a workloads/**/*.jsonl file of the dataset"));
  }
  for (const Workload& w : definition.workloads) {
    for (const TensorSpec& input : definition.inputs) {
      auto source = w.inputs.find(input.name);
      absl::Status s = source == w.inputs.end()
                           ? absl::FailedPreconditionError("the workload gives no source")
                           : CheckSource(definition, w, input, source->second);
      if (s.ok()) continue;
      // The workload is refused rather than run on inputs it does not specify.
      return absl::FailedPreconditionError(absl::StrCat("definition ", definition.name,
                                                        ", workload ", w.uuid, ", input ",
                                                        input.name, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

std::string ScalarJson(const InputSource& s) {
  switch (s.scalar_kind) {
    case InputSource::ScalarKind::kBool:
      return s.scalar_int != 0 ? "true" : "false";
    case InputSource::ScalarKind::kInt:
      return absl::StrCat(s.scalar_int);
    case InputSource::ScalarKind::kFloat:
      break;
  }
  // The fewest significant digits that read back exactly: "0.1", not
  // 0.10000000000000001; never fewer, so the runner gets the dataset's value.
  for (int digits = 6;; ++digits) {
    const std::string text = absl::StrFormat("%.*g", digits, s.scalar_value);
    if (digits >= 17 || std::strtod(text.c_str(), nullptr) == s.scalar_value) return text;
  }
}

}  // namespace ptxbench::workloads
