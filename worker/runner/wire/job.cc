#include "worker/runner/wire/job.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "worker/runner/wire/protocol.h"
#include "workloads/native_reference.h"

namespace ptxbench::runner {

using nlohmann::json;

namespace {

constexpr const char* kReferenceChoices[] = {"auto", "native", "pytorch"};

json ToJson(const KnownReference& k) {
  return {{"workload_uuid", k.workload_uuid}, {"name", k.name}, {"ms", k.ms}, {"log", k.log}};
}

// nullopt for anything but a well-formed entry with a positive figure.
std::optional<KnownReference> KnownReferenceFromJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  KnownReference k;
  try {
    k.workload_uuid = j.at("workload_uuid").get<std::string>();
    k.name = j.at("name").get<std::string>();
    k.ms = j.at("ms").get<double>();
    k.log = j.at("log").get<std::string>();
  } catch (const json::exception&) {
    return std::nullopt;
  }
  if (!(k.ms > 0) || !std::isfinite(k.ms) || k.workload_uuid.empty()) return std::nullopt;
  return k;
}

}  // namespace

std::string SerializeJob(const RunnerJob& job) {
  json workloads = json::array();
  for (const WorkloadSpec& w : job.workloads) {
    json fixed = json::array();
    for (const FixedInput& f : w.fixed) {
      fixed.push_back({{"name", f.name}, {"scalar_json", f.scalar_json}, {"path", f.path},
                       {"tensor_key", f.tensor_key}});
    }
    workloads.push_back({{"uuid", w.uuid}, {"axes", w.axes}, {"fixed", fixed}});
  }
  json known = json::array();
  for (const KnownReference& k : job.known_references) known.push_back(ToJson(k));
  return json{{"artifact", job.artifact},
              {"language", job.language},
              {"source", job.source},
              {"launch_spec", job.launch_spec},
              {"definition_json", job.definition_json},
              {"workloads", workloads},
              {"seed", job.seed},
              {"seed_fixed", job.seed_fixed},
              {"trials", job.trials},
              {"warmup_calls", job.warmup_calls},
              {"timed_calls", job.timed_calls},
              {"reference_only", job.reference_only},
              {"compare_references", job.compare_references},
              {"calibration_survey", job.calibration_survey},
              {"census", job.census},
              {"calls_per_bracket", job.calls_per_bracket},
              {"known_references", known},
              {"profile",
               {{"ncu", job.profile.ncu},
                {"ncu_root", job.profile.ncu_root},
                {"launch_count", job.profile.launch_count},
                {"metrics", job.profile.metrics}}},
              {"sanitize",
               {{"sanitizer", job.sanitize.sanitizer},
                {"sanitizer_root", job.sanitize.sanitizer_root},
                {"print_limit", job.sanitize.print_limit},
                {"debug", job.sanitize.debug}}},
              {"reference", kReferenceChoices[static_cast<int>(job.reference)]},
              {"torch",
               {{"python", job.torch.python},
                {"script", job.torch.script},
                {"library", job.torch.library}}},
              {"isolation",
               {{"candidate_host", job.isolation.candidate_host},
                {"uid", job.isolation.uid},
                {"gid", job.isolation.gid},
                {"candidate_uid", job.isolation.candidate_uid},
                {"candidate_gid", job.isolation.candidate_gid},
                {"memory_bytes", job.isolation.memory_bytes},
                {"disk_bytes", job.isolation.disk_bytes},
                {"cpus", job.isolation.cpus},
                {"cpu_seconds", job.isolation.cpu_seconds},
                {"max_processes", job.isolation.max_processes},
                {"cgroup_parent", job.isolation.cgroup_parent},
                {"device_minor", job.isolation.device_minor},
                {"call_deadline_s", job.isolation.call_deadline_s}}}}
      .dump();
}

absl::StatusOr<RunnerJob> ParseJob(absl::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("job: not a JSON object");
  RunnerJob job;
  try {
    job.artifact = j.at("artifact").get<std::string>();
    job.definition_json = j.at("definition_json").get<std::string>();
    job.language = j.at("language").get<std::string>();
    job.source = j.at("source").get<std::string>();
    job.launch_spec = j.at("launch_spec").get<std::string>();
    for (const json& w : j.at("workloads")) {
      WorkloadSpec spec{w.at("uuid").get<std::string>(),
                        w.at("axes").get<std::map<std::string, int64_t>>(),
                        {}};
      for (const json& f : w.at("fixed")) {
        spec.fixed.push_back({f.at("name").get<std::string>(), f.at("scalar_json").get<std::string>(),
                              f.at("path").get<std::string>(),
                              f.at("tensor_key").get<std::string>()});
      }
      job.workloads.push_back(std::move(spec));
    }
    job.seed = j.at("seed").get<uint64_t>();
    job.seed_fixed = j.value("seed_fixed", false);
    job.trials = j.at("trials").get<int>();
    job.warmup_calls = j.at("warmup_calls").get<int>();
    job.timed_calls = j.at("timed_calls").get<int>();
    job.reference_only = j.value("reference_only", false);
    job.compare_references = j.value("compare_references", false);
    job.calibration_survey = j.value("calibration_survey", false);
    job.census = j.value("census", false);
    job.calls_per_bracket = j.value("calls_per_bracket", 1);
    if (j.contains("known_references")) {
      for (const json& k : j.at("known_references")) {
        std::optional<KnownReference> known = KnownReferenceFromJson(k);
        if (!known) return absl::InvalidArgumentError("job: a malformed known_references entry");
        job.known_references.push_back(*std::move(known));
      }
    }
    if (j.contains("profile")) {
      job.profile.ncu = j.at("profile").at("ncu").get<std::string>();
      job.profile.ncu_root = j.at("profile").at("ncu_root").get<std::string>();
      job.profile.launch_count = j.at("profile").at("launch_count").get<int>();
      job.profile.metrics = j.at("profile").at("metrics").get<std::string>();
    }
    if (j.contains("sanitize")) {
      const json& sanitize = j.at("sanitize");
      job.sanitize.sanitizer = sanitize.at("sanitizer").get<std::string>();
      job.sanitize.sanitizer_root = sanitize.at("sanitizer_root").get<std::string>();
      job.sanitize.print_limit = sanitize.at("print_limit").get<int>();
      job.sanitize.debug = sanitize.at("debug").get<bool>();
    }
    const std::string reference = j.at("reference").get<std::string>();
    const auto* choice = std::find(std::begin(kReferenceChoices), std::end(kReferenceChoices), reference);
    if (choice == std::end(kReferenceChoices)) {
      return absl::InvalidArgumentError(absl::StrCat("job: unknown reference \"", reference, "\""));
    }
    job.reference = static_cast<ReferenceChoice>(choice - std::begin(kReferenceChoices));
    const json& torch = j.at("torch");
    job.torch.python = torch.at("python").get<std::string>();
    job.torch.script = torch.at("script").get<std::string>();
    job.torch.library = torch.at("library").get<std::string>();
    const json& iso = j.at("isolation");
    job.isolation.candidate_host = iso.at("candidate_host").get<std::string>();
    job.isolation.uid = iso.at("uid").get<uint32_t>();
    job.isolation.gid = iso.at("gid").get<uint32_t>();
    job.isolation.candidate_uid = iso.at("candidate_uid").get<uint32_t>();
    job.isolation.candidate_gid = iso.at("candidate_gid").get<uint32_t>();
    job.isolation.memory_bytes = iso.at("memory_bytes").get<uint64_t>();
    job.isolation.disk_bytes = iso.at("disk_bytes").get<uint64_t>();
    job.isolation.cpus = iso.at("cpus").get<double>();
    job.isolation.cpu_seconds = iso.at("cpu_seconds").get<uint64_t>();
    job.isolation.max_processes = iso.at("max_processes").get<int>();
    job.isolation.cgroup_parent = iso.at("cgroup_parent").get<std::string>();
    job.isolation.device_minor = iso.at("device_minor").get<int>();
    job.isolation.call_deadline_s = iso.at("call_deadline_s").get<int>();
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("job: ", e.what()));
  }
  if (job.workloads.empty()) return absl::InvalidArgumentError("job: no workloads");
  if (job.language != "cuda" && job.language != "ptx" && job.language != "triton") {
    return absl::InvalidArgumentError("job: language must be cuda, ptx or triton");
  }
  if (job.language == "triton" && job.torch.python.empty() && !job.reference_only) {
    return absl::InvalidArgumentError("job: a triton candidate needs torch.python");
  }
  if (job.isolation.disk_bytes < (uint64_t{1} << 20)) {
    return absl::InvalidArgumentError("job: isolation.disk_bytes must be at least 1 MiB");
  }
  if (job.isolation.call_deadline_s < 1) {
    return absl::InvalidArgumentError("job: isolation.call_deadline_s must be >= 1");
  }
  if (!job.known_references.empty() && job.reference_only) {
    return absl::InvalidArgumentError("job: known_references and reference_only exclude each other");
  }
  if (job.compare_references && !job.reference_only) {
    return absl::InvalidArgumentError("job: compare_references needs reference_only");
  }
  if (job.calibration_survey && !job.reference_only) {
    return absl::InvalidArgumentError("job: calibration_survey needs reference_only");
  }
  if (job.calls_per_bracket < 1 || job.calls_per_bracket > protocol::kMaxCallsPerBracket ||
      (job.calls_per_bracket > 1 && !job.reference_only)) {
    return absl::InvalidArgumentError("job: calls_per_bracket is 1 to 64, above 1 reference_only");
  }
  if (!job.profile.ncu.empty() && (job.workloads.size() != 1 || job.reference_only ||
                                  job.profile.launch_count < 1)) {
    return absl::InvalidArgumentError(
        "job: a profile runs one workload of a candidate, at least one launch");
  }
  if (!job.sanitize.sanitizer.empty() &&
      (job.workloads.size() != 1 || job.reference_only || !job.profile.ncu.empty() ||
       job.sanitize.print_limit < 1 || job.sanitize.sanitizer_root.empty())) {
    return absl::InvalidArgumentError(
        "job: a sanitize run runs one workload of a candidate, not profiled, with its "
        "sanitizer's root and a print limit of at least 1");
  }
  if (job.trials < 0 || job.warmup_calls < 0 || job.timed_calls < 1) {
    return absl::InvalidArgumentError("job: trials/warmup_calls must be >= 0, timed_calls >= 1");
  }
  return job;
}

absl::StatusOr<bool> UsesPyTorch(const RunnerJob& job, const workloads::Definition& definition) {
  if (job.reference == ReferenceChoice::kPyTorch || job.compare_references) {
    if (definition.reference.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("definition ", definition.name, " has no PyTorch reference"));
    }
    return true;
  }
  if (job.reference == ReferenceChoice::kNative) return false;
  absl::StatusOr<workloads::ReferenceKind> kind = workloads::ChooseReference(definition);
  if (!kind.ok()) return kind.status();
  return *kind == workloads::ReferenceKind::kPyTorch;
}

std::string StartedLine(absl::string_view uuid) {
  return json{{"started", std::string(uuid)}}.dump() + "\n";
}

std::string ReferenceLine(const KnownReference& reference) {
  return json{{"reference", ToJson(reference)}}.dump() + "\n";
}

std::string TraceLine(const ptxbench::v1::WorkloadTrace& trace) {
  std::string body;
  // Cannot fail for a message without Any fields.
  (void)google::protobuf::util::MessageToJsonString(trace, &body);
  return absl::StrCat("{\"trace\":", body, "}\n");
}

RunnerOutput ParseRunnerOutput(absl::string_view text) {
  RunnerOutput out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (j.contains("started") && j["started"].is_string()) {
      out.unfinished = j["started"].get<std::string>();
    } else if (j.contains("reference")) {
      if (std::optional<KnownReference> k = KnownReferenceFromJson(j["reference"])) {
        out.references.push_back(*std::move(k));
      }
    } else if (j.contains("trace")) {
      ptxbench::v1::WorkloadTrace trace;
      if (!google::protobuf::util::JsonStringToMessage(j["trace"].dump(), &trace).ok()) continue;
      out.traces.push_back(std::move(trace));
      out.unfinished.clear();
    }
  }
  return out;
}

}  // namespace ptxbench::runner
