#include "experiment_spec/spec_reader.h"

#include <cmath>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "workloads/native_reference.h"

namespace ptxbench::experiment_spec::spec_internal {
namespace {

bool IsModelName(absl::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && !absl::StrContains("._:/@+-", c)) return false;
  }
  return true;
}

// The string of a line `NAME = "value"` (or 'value') of a Python script.
std::optional<std::string> ScriptConstant(absl::string_view script, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(script, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, name)) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "=")) continue;
    line = absl::StripAsciiWhitespace(line);
    if (line.size() < 2 || (line.front() != '"' && line.front() != '\'')) continue;
    const size_t end = line.find(line.front(), 1);
    if (end == absl::string_view::npos) continue;
    return std::string(line.substr(1, end - 1));
  }
  return std::nullopt;
}

}  // namespace

bool IsExperimentName(absl::string_view name) {
  if (name.empty() || name.size() > 100) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

absl::StatusOr<double> SpecReader::Speedup(const Json& value, absl::string_view field) const {
  PTXB_ASSIGN_OR_RETURN(const double x, json_.Number(value, field));
  if (!(x > 0) || !std::isfinite(x)) return Error(field, value, "a number greater than 0");
  return x;
}

absl::StatusOr<int64_t> SpecReader::Seconds(const Json& value, absl::string_view field,
                                            absl::Duration min, absl::Duration max,
                                            bool numbers) const {
  const std::string expected =
      absl::StrCat("a duration such as \"90s\", \"10m\" or \"24h\"",
                   numbers ? " or a number of seconds" : "", ", from ", absl::FormatDuration(min),
                   " to ", absl::FormatDuration(max));
  absl::Duration d;
  if (numbers && value.is_number() && std::isfinite(value.get<double>())) {
    d = absl::Seconds(value.get<double>());
  } else if (!value.is_string() || !absl::ParseDuration(value.get<std::string>(), &d)) {
    return Error(field, value, expected);
  }
  if (d < min || d > max) return Error(field, value, expected);
  return absl::ToInt64Seconds(d);
}

absl::Status SpecReader::CheckModel(const Json& value, absl::string_view field) const {
  PTXB_ASSIGN_OR_RETURN(std::string model, String(value, field));
  if (!IsModelName(model)) {
    return Error(field, value, "a model name of [A-Za-z0-9._:/@+-]{1,128}");
  }
  return absl::OkStatus();
}

absl::Status SpecReader::CheckDefinition(const Json& value, absl::string_view field) const {
  PTXB_ASSIGN_OR_RETURN(std::string name, String(value, field));
  auto found = definitions_.Find(name);
  if (!found.ok()) return Error(field, value, "a known definition", found.status().message());
  if (absl::Status s = workloads::CheckUsable(**found); !s.ok()) {
    return Error(field, value, "a definition ptxbench can evaluate", s.message());
  }
  return absl::OkStatus();
}

absl::Status SpecReader::CheckPromptTag(const Json& value, absl::string_view field) const {
  PTXB_ASSIGN_OR_RETURN(std::string tag, String(value, field));
  if (input_.prompts.contains(tag)) {  // the submission brought it (submit --prompts)
    if (prompts_.Check(tag).ok() && !prompts_.IsHubTag(tag)) {
      return Error(field, value, "a tag that is not one of ptxbench's own",
                   "a submission cannot bring another text for it");
    }
  } else if (absl::Status s = prompts_.Check(tag); !s.ok()) {
    return Error(field, value, "a known prompt tag", s.message());
  }
  return absl::OkStatus();
}

absl::Status SpecReader::CheckPromptTarget(const Json& value, absl::string_view field,
                                           const std::vector<std::string>& architectures,
                                           absl::string_view language) const {
  if (absl::Status s = prompts_.CheckTarget(value.get<std::string>(), architectures, language);
      !s.ok()) {
    return Error(field, value,
                 absl::StrCat("a tag for ", language, " kernels ptxbench evaluates on these GPUs"),
                 s.message());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SpecReader::Name(const Json* in_spec,
                                             absl::string_view fallback) const {
  if (!input_.name.empty()) {
    if (!IsExperimentName(input_.name)) {
      return Error("name", Json(input_.name), kExperimentName, "given on the command line");
    }
    return input_.name;
  }
  if (in_spec != nullptr) {
    PTXB_ASSIGN_OR_RETURN(std::string name, String(*in_spec, "name"));
    if (!IsExperimentName(name)) return Error("name", *in_spec, kExperimentName);
    return name;
  }
  if (!fallback.empty() && IsExperimentName(fallback)) return std::string(fallback);
  return json_.Missing("name", "a value (the key is required)");
}

absl::StatusOr<Options> SpecReader::ReadOptions(const Json& object) const {
  Options o;
  if (const Json* v = JsonReader::Member(object, "context_policy")) {
    PTXB_ASSIGN_OR_RETURN(o.context_policy, json_.Enum(*v, "context_policy",
                                                       {"full", "latest-pair", "single-user"}));
  }
  if (const Json* v = JsonReader::Member(object, "language")) {
    PTXB_ASSIGN_OR_RETURN(o.language, Language(*v));
  }
  if (const Json* v = JsonReader::Member(object, "eval")) {
    PTXB_ASSIGN_OR_RETURN(o.eval, json_.Enum(*v, "eval", {"full", "compile-only"}));
  }
  if (const Json* v = JsonReader::Member(object, "priority")) {
    PTXB_ASSIGN_OR_RETURN(o.priority, Count(*v, "priority", kMaxCount));
  }
  if (const Json* v = JsonReader::Member(object, "max_cost_usd")) {
    if (!v->is_number() || !(v->get<double>() >= 0) || !std::isfinite(v->get<double>())) {
      return Error("max_cost_usd", *v, "a number of at least 0 (0 = no limit)");
    }
    o.max_cost_usd = v->get<double>();
  }
  if (const Json* v = JsonReader::Member(object, "architectures")) {
    constexpr char kExpected[] = "a non-empty list of GPU families or architectures";
    if (!v->is_array() || v->empty()) return Error("architectures", *v, kExpected);
    std::vector<std::string> names;
    for (const Json& name : *v) {
      if (!name.is_string()) return Error("architectures", *v, kExpected);
      names.push_back(name.get<std::string>());
    }
    absl::StatusOr<std::vector<std::string>> parsed = ParseArchitectures(names);
    if (!parsed.ok()) return Error("architectures", *v, kExpected, parsed.status().message());
    o.architectures = *std::move(parsed);
  }
  if (const Json* v = JsonReader::Member(object, "profile")) {
    if (!v->is_boolean()) return Error("profile", *v, "true or false");
    o.profile = v->get<bool>();
  }
  if (const Json* v = JsonReader::Member(object, "memcheck")) {
    if (!v->is_boolean()) return Error("memcheck", *v, "true or false");
    o.memcheck = v->get<bool>();
  }
  if (const Json* v = JsonReader::Member(object, "held_out_workloads")) {
    constexpr char kExpected[] =
        "a number of workloads per definition (at least 1) or a non-empty list of workload uuids";
    HeldOutRequest h;
    if (v->is_number_integer()) {
      PTXB_ASSIGN_OR_RETURN(h.count, json_.Integer(*v, "held_out_workloads", 1, kMaxCount));
    } else if (v->is_array() && !v->empty()) {
      for (size_t i = 0; i < v->size(); ++i) {
        const Json& uuid = (*v)[i];
        const std::string field = JsonIndex("held_out_workloads", i);
        if (!uuid.is_string() || uuid.get<std::string>().empty()) {
          return Error(field, uuid, "a workload uuid");
        }
        if (std::find(h.uuids.begin(), h.uuids.end(), uuid.get<std::string>()) != h.uuids.end()) {
          return Error(field, uuid, "each workload once");
        }
        h.uuids.push_back(uuid.get<std::string>());
      }
    } else {
      return Error("held_out_workloads", *v, kExpected);
    }
    o.held_out = std::move(h);
  }
  return o;
}

absl::StatusOr<std::string> SpecReader::Language(const Json& value) const {
  return json_.Enum(value, "language", {"cuda", "ptx", "solution", "triton"});
}

absl::StatusOr<std::string> SpecReader::SentFile(const Json& value, absl::string_view field) const {
  PTXB_ASSIGN_OR_RETURN(std::string path, String(value, field));
  auto file = input_.files.find(path);
  if (file == input_.files.end()) {
    return Error(field, value, "a file sent with the spec",
                 "ptxbench submit reads it, relative to the spec's folder");
  }
  return file->second;
}

absl::StatusOr<std::string> SpecReader::TestScriptWorkload(const Json& value,
                                                           absl::string_view field,
                                                           const std::string& definition) const {
  PTXB_ASSIGN_OR_RETURN(std::string script, SentFile(value, field));
  const std::string expected = absl::StrCat("a test script of a workload of ", definition);
  const std::optional<std::string> uuid = ScriptConstant(script, "WORKLOAD_UUID");
  if (!uuid || uuid->empty()) {
    return Error(field, value, expected,
                 "the script names no workload (no WORKLOAD_UUID = \"...\" line)");
  }
  const std::optional<std::string> named = ScriptConstant(script, "DEFINITION_NAME");
  if (named && *named != definition) {
    return Error(field, value, expected,
                 absl::StrCat("the script is for definition '", *named, "'"));
  }
  const workloads::Definition* d = *definitions_.Find(definition);
  const bool known = std::any_of(d->workloads.begin(), d->workloads.end(),
                                 [&](const workloads::Workload& w) { return w.uuid == *uuid; });
  if (!known) {
    return Error(field, value, expected, absl::StrCat("the script's workload ", *uuid, " is not one"));
  }
  return *uuid;
}

absl::Status CheckLimit(const SpecReader& r, absl::string_view field, const Json& value,
                        int64_t total, absl::string_view how, const SpecLimits& limits) {
  if (total <= limits.max_trajectories) return absl::OkStatus();
  return r.Error(field, value,
                 absl::StrCat("at most ", limits.max_trajectories, " trajectories in all"),
                 absl::StrCat(how, " = ", total, " trajectories"));
}

void FillOptions(const Options& o, nlohmann::json& normalized, ExpandedExperiment& out) {
  normalized["context_policy"] = o.context_policy;
  normalized["language"] = o.language;
  normalized["eval"] = o.eval;
  normalized["priority"] = o.priority;
  normalized["max_cost_usd"] = o.max_cost_usd;
  // Only when not the default, so that specs from before the field keep
  // their hash (and an identical resubmission stays "the same").
  if (o.architectures != DefaultArchitectures()) normalized["architectures"] = o.architectures;
  if (o.profile) normalized["profile"] = true;
  // The gate runs the kernel: never in a compile-only experiment.
  out.memcheck = o.memcheck.value_or(false) && o.eval != "compile-only";
  if (out.memcheck) normalized["memcheck"] = true;
  if (o.held_out) {
    normalized["held_out_workloads"] =
        o.held_out->count > 0 ? nlohmann::json(o.held_out->count) : nlohmann::json(o.held_out->uuids);
  }
  out.architectures = o.architectures;
  out.profile = o.profile;
  out.context_policy = o.context_policy;
  out.language = o.language;
  out.eval_mode =
      o.eval == "compile-only" ? ptxbench::v1::COMPILE_ONLY : ptxbench::v1::FULL;
  out.priority = static_cast<int32_t>(o.priority);
  out.max_cost_usd = o.max_cost_usd;
}

}  // namespace ptxbench::experiment_spec::spec_internal
