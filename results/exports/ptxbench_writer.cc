#include "results/exports/ptxbench_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "results/exports/definitions.h"
#include "results/exports/file_sink.h"
#include "results/exports/folder_writer.h"
#include "results/exports/ptxbench_messages.h"
#include "results/exports/text.h"
#include "results/exports/turn_facts.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = StrictJson;

constexpr char kResultsPart[] = ".summary-results.partial";

// What PTXBench's launcher would have recorded for the trajectory's run
// (its result "status"): the runner completed ("success"), or how it did not.
std::string RunStatus(const v1::TrajectorySummary& s) {
  switch (s.state()) {
    case v1::SUBMITTED:
    case v1::LIMITS_EXCEEDED:
      return "success";
    case v1::FAILED:
      return s.failure_class() == v1::INFRA       ? "infra_failed"
             : s.failure_class() == v1::MODEL_API ? "api_failed"
                                                  : "failed";
    case v1::CANCELLED:
      return "error";
    default:
      return "unknown";  // still running when exported
  }
}

// PTXBench's per-status counts, in its key order.
struct Counts {
  std::map<std::string, int64_t> by_status;
  int64_t total = 0, correct_trajectory = 0, correct_kernel_versions = 0, target_met = 0;

  int64_t Of(const std::string& status) const {
    auto it = by_status.find(status);
    return it == by_status.end() ? 0 : it->second;
  }
  Json ToJson() const {
    Json out = {{"total", total}};
    for (const char* status :
         {"success", "failed", "infra_failed", "api_failed", "timeout", "error"}) {
      out[status] = Of(status);
    }
    if (Of("unknown") > 0) out["unknown"] = Of("unknown");
    out["correct_trajectory"] = correct_trajectory;
    out["correct_kernel_versions"] = correct_kernel_versions;
    out["target_met"] = target_met;
    return out;
  }
};

// How a list-form spec's items map to sample indices (items own consecutive
// indices in file order), or a matrix spec's sample count: what plan.json's
// num_trajectories and test_path come from.
struct PlanSource {
  struct Item {
    int64_t count = 0;
    std::string test_path;
  };
  std::vector<Item> items;  // list form
  std::optional<int64_t> samples;  // matrix form

  static PlanSource FromSpec(const std::string& spec_json) {
    PlanSource out;
    const Json spec = Json::parse(spec_json, nullptr, /*allow_exceptions=*/false);
    if (!spec.is_object()) return out;
    if (auto samples = spec.find("samples"); samples != spec.end() && samples->is_number_integer()) {
      out.samples = samples->get<int64_t>();
    }
    if (auto items = spec.find("items"); items != spec.end() && items->is_array()) {
      for (const Json& item : *items) {
        Item parsed;
        if (auto n = item.find("num_trajectories"); n != item.end() && n->is_number_integer()) {
          parsed.count = n->get<int64_t>();
        }
        if (auto path = item.find("test_path"); path != item.end() && path->is_string()) {
          parsed.test_path = path->get<std::string>();
        }
        out.items.push_back(std::move(parsed));
      }
    }
    return out;
  }

  // The item that owns `sample` (list form), or null.
  const Item* ItemOf(int64_t sample) const {
    for (const Item& item : items) {
      if (sample < item.count) return &item;
      sample -= item.count;
    }
    return nullptr;
  }
};

// The trajectory's wall time in seconds: from its first turn's start to its
// last turn's end (0 without a finished turn).
double DurationSeconds(const v1::Trajectory& t) {
  int64_t first = 0, last = 0;
  for (const v1::Turn& turn : t.turns()) {
    if (turn.started_unix_ms() > 0 && (first == 0 || turn.started_unix_ms() < first)) {
      first = turn.started_unix_ms();
    }
    last = std::max(last, turn.finished_unix_ms());
  }
  return first > 0 && last > first ? static_cast<double>(last - first) / 1000 : 0;
}

double Round2(double x) { return std::round(x * 100) / 100; }

std::string KernelExtension(absl::string_view language) {
  if (language == "ptx") return ".ptx";
  if (language == "solution") return ".json";
  if (language == "triton") return ".py";
  return ".cu";
}

class PtxbenchWriter : public FolderWriter {
 public:
  PtxbenchWriter(std::unique_ptr<OutputDir> dir, const Options& options)
      : FolderWriter(std::move(dir), "ptxbench", /*one_experiment=*/true), options_(options) {}

 private:
  absl::Status OnBegin(const v1::Experiment& experiment,
                       const std::vector<v1::DefinitionDocument>& definitions) override {
    PTXB_RETURN_IF_ERROR(definitions_.Add(definitions).status());
    plan_source_ = PlanSource::FromSpec(experiment.spec_json());
    for (const char* folder : {"logs", "trajectories", "success"}) {
      PTXB_RETURN_IF_ERROR(dir().MakeDirs(folder));
    }
    PTXB_ASSIGN_OR_RETURN(plan_, FileSink::Create(dir().File("plan.json")));
    PTXB_ASSIGN_OR_RETURN(results_, FileSink::Create(dir().File(kResultsPart)));
    // The label PTXBench gives the config a plan came from.
    const std::string config =
        absl::StrCat("ptxbench experiment ", experiment.name(), " (", experiment.experiment_id(), ")");
    plan_->Append(absl::StrCat("{\n  \"config\": ", Json(config).dump(), ",\n  \"plan\": ["));
    return absl::OkStatus();
  }

  // Agent mode: what the session left (docs/AGENTS.md, "Records"), under
  // agent/<name>/, each file as the gateway named it. A name that would
  // leave that folder is skipped.
  absl::Status WriteAgentRecord(const v1::Trajectory& t, const std::string& name) {
    for (const v1::AgentRecord& r : t.agent().records()) {
      const std::filesystem::path path(r.name());
      const bool inside = !r.name().empty() && path.is_relative() &&
                          std::none_of(path.begin(), path.end(), [](const auto& part) {
                            return part == ".." || part == ".";
                          });
      if (!inside) continue;
      const std::string file = absl::StrCat("agent/", name, "/", r.name());
      PTXB_RETURN_IF_ERROR(dir().MakeDirs(std::filesystem::path(file).parent_path().string()));
      PTXB_RETURN_IF_ERROR(WriteFile(dir().File(file), r.content()));
    }
    return absl::OkStatus();
  }

  absl::Status OnAdd(const v1::Trajectory& t) override {
    const v1::TrajectorySummary& s = t.summary();
    const int64_t index = next_index_++;
    const std::string name = absl::StrFormat("exp_%03d", index);
    const std::string trajectory_file = absl::StrCat("trajectories/", name, ".json");

    PTXB_RETURN_IF_ERROR(WriteFile(
        dir().File(trajectory_file),
        TrajectoryDocument(experiment(), t, definitions_, options_.ptxbench_version)
                .dump(2, ' ', false, Json::error_handler_t::replace) +
            "\n"));
    PTXB_RETURN_IF_ERROR(WriteFile(dir().File(absl::StrCat("logs/", name, ".log")), Log(t, name)));
    PTXB_RETURN_IF_ERROR(WriteAgentRecord(t, name));
    PTXB_ASSIGN_OR_RETURN(const int64_t versions, WriteSuccess(t, name));

    bool simulated = false, generated = false;
    for (const v1::Turn& turn : t.turns()) {
      simulated |= IsSimulated(turn);
      generated |= !turn.kernel_sha256().empty();
    }
    simulated_ |= simulated;
    const std::string status = RunStatus(s);
    const bool target_met = s.state() == v1::SUBMITTED;
    const double duration = DurationSeconds(t);
    const PlanSource::Item* item = plan_source_.ItemOf(s.sample_index());

    Json plan_entry = {{"exp_index", index}};
    plan_entry["num_trajectories"] = item ? Json(item->count)
                                     : plan_source_.samples ? Json(*plan_source_.samples)
                                                            : Json();
    plan_entry["num_turns"] = s.num_turns();
    plan_entry["target_speedup"] = s.target_speedup();
    plan_entry["prompt_tag"] = s.prompt_tag();
    plan_entry["definition"] = s.definition();
    if (item && !item->test_path.empty()) plan_entry["test_path"] = item->test_path;
    // ptxbench's own keys start with "_", which PTXBench and ptxbench's plan
    // reader both skip: the plan stays one either can run again.
    plan_entry["_model"] = s.model();
    plan_entry["_trajectory_id"] = s.trajectory_id();
    plan_entry["_sample_index"] = s.sample_index();
    plan_->Append(absl::StrCat(index == 0 ? "\n    " : ",\n    ", Dump(plan_entry)));

    const std::string failed = status == "success" || status == "unknown" ? "" : s.reason();
    Json result = {{"exp_index", index},
                   {"exp_name", name},
                   {"gpu_id", nullptr},
                   {"prompt_tag", s.prompt_tag()},
                   {"definition", s.definition()},
                   {"test_path", item && !item->test_path.empty() ? Json(item->test_path) : Json()},
                   {"output_root", dir().final_path()},
                   {"num_turns", s.num_turns()},
                   {"target_speedup", s.target_speedup()},
                   {"status", status},
                   {"duration", duration},
                   {"returncode", nullptr},
                   {"error", failed.empty() ? Json() : Json(failed)},
                   {"trajectory", absl::StrCat(dir().final_path(), "/", trajectory_file)},
                   {"runner_completed", status == "success"},
                   {"generated_candidate", generated},
                   {"correct_kernel_count", versions},
                   {"target_met", target_met},
                   {"trajectory_id", s.trajectory_id()},
                   {"model", s.model()},
                   {"sample_index", s.sample_index()},
                   {"state", v1::TrajectoryState_Name(s.state())},
                   {"failure_class", s.state() == v1::FAILED
                                         ? Json(v1::FailureClass_Name(s.failure_class()))
                                         : Json()},
                   {"simulated", simulated}};
    results_->Append(absl::StrCat(index == 0 ? "\n    " : ",\n    ", Dump(result)));

    for (Counts* c : {&all_, &by_tag_[s.prompt_tag()]}) {
      ++c->total;
      ++c->by_status[status];
      c->correct_trajectory += versions > 0 ? 1 : 0;
      c->correct_kernel_versions += versions;
      c->target_met += target_met ? 1 : 0;
    }
    durations_.sum += duration;
    durations_.min = std::min(durations_.min, duration);
    durations_.max = std::max(durations_.max, duration);
    PTXB_RETURN_IF_ERROR(plan_->status());
    return results_->status();
  }

  absl::Status OnFinish() override {
    if (experiments_begun() == 0) {
      return absl::FailedPreconditionError("the ptxbench format needs an experiment; none was begun");
    }
    plan_->Append("\n  ]\n}\n");
    PTXB_RETURN_IF_ERROR(plan_->Close());
    PTXB_RETURN_IF_ERROR(results_->Close());

    const int64_t total = all_.total;
    Json summary = {
        {"timestamp", absl::FormatTime("%Y-%m-%dT%H:%M:%E6S+00:00", options_.now,
                                       absl::UTCTimeZone())},
        {"total", total},
        {"completed", all_.Of("success")},
        {"correct_trajectory", all_.correct_trajectory},
        {"correct_kernel_versions", all_.correct_kernel_versions},
        {"target_met", all_.target_met},
        {"success", all_.Of("success")},
        {"failed", all_.Of("failed")},
        {"infra_failed", all_.Of("infra_failed")},
        {"api_failed", all_.Of("api_failed")},
        {"timeout", all_.Of("timeout")},
        {"error", all_.Of("error")},
        {"avg_duration", Round2(total > 0 ? durations_.sum / total : 0)},
        {"min_duration", Round2(total > 0 ? durations_.min : 0)},
        {"max_duration", Round2(total > 0 ? durations_.max : 0)},
    };
    Json by_tag = Json::object();
    for (const auto& [tag, counts] : by_tag_) by_tag[tag] = counts.ToJson();
    summary["by_prompt_tag"] = std::move(by_tag);
    summary["unknown"] = all_.Of("unknown");
    summary["simulated"] = simulated_;
    summary["experiment_id"] = experiment().experiment_id();
    summary["experiment"] = experiment().name();
    summary["ptxbench_version"] = options_.ptxbench_version;

    // results[] comes last and from the part file, so the summary never
    // holds every trajectory's result in memory.
    std::string head = summary.dump(2, ' ', false, Json::error_handler_t::replace);
    head.pop_back();  // the closing brace
    while (!head.empty() && head.back() == '\n') head.pop_back();
    PTXB_ASSIGN_OR_RETURN(std::unique_ptr<FileSink> out,
                          FileSink::Create(dir().File("summary.json")));
    out->Append(absl::StrCat(head, ",\n  \"results\": ["));
    std::ifstream part(dir().File(kResultsPart), std::ios::binary);
    std::vector<char> chunk(1 << 20);
    while (part) {
      part.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      out->Append(absl::string_view(chunk.data(), static_cast<size_t>(part.gcount())));
    }
    if (part.bad()) return absl::InternalError(absl::StrCat("cannot read ", dir().File(kResultsPart)));
    out->Append(total > 0 ? "\n  ]\n}\n" : "]\n}\n");
    PTXB_RETURN_IF_ERROR(out->Close());
    std::error_code ec;
    std::filesystem::remove(dir().File(kResultsPart), ec);
    return absl::OkStatus();
  }

  static std::string Dump(const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }

  // success/exp_NNN/: every correct kernel, in turn order, and record.json;
  // nothing when there is none. The number of versions.
  absl::StatusOr<int64_t> WriteSuccess(const v1::Trajectory& t, const std::string& name) {
    const v1::TrajectorySummary& s = t.summary();
    const std::string folder = absl::StrCat("success/", name);
    const std::string ext = KernelExtension(experiment().language());
    Json records = Json::array();
    for (const v1::Turn& turn : t.turns()) {
      if (!IsCorrect(turn)) continue;
      const int64_t version = static_cast<int64_t>(records.size());
      if (version == 0) PTXB_RETURN_IF_ERROR(dir().MakeDirs(folder));
      PTXB_RETURN_IF_ERROR(WriteFile(dir().File(absl::StrCat(folder, "/kernel_v", version, ext)),
                                     turn.kernel_source()));
      records.push_back({{"version", version},
                         {"turn", turn.index()},
                         {"timestamp", Rfc3339Millis(turn.finished_unix_ms())},
                         {"traces", PtxbenchTraces(s, turn, definitions_)},
                         {"kernel_sha256", turn.kernel_sha256()},
                         {"speedup", CorrectSpeedup(turn)},
                         {"simulated", IsSimulated(turn)}});
    }
    if (!records.empty()) {
      PTXB_RETURN_IF_ERROR(
          WriteFile(dir().File(absl::StrCat(folder, "/record.json")),
                    records.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"));
    }
    return static_cast<int64_t>(records.size());
  }

  // ptxbench's own account: where PTXBench logs its runner's command and
  // output, this lists the trajectory and, per turn, what was evaluated.
  static std::string Log(const v1::Trajectory& t, const std::string& name) {
    const v1::TrajectorySummary& s = t.summary();
    std::string out = absl::StrCat(
        "=== TRAJECTORY ===\n", name, " ", s.trajectory_id(), "\nmodel: ", s.model(),
        "\ndefinition: ", s.definition(), "\nprompt_tag: ", s.prompt_tag(),
        "\nsample: ", s.sample_index(), "\nstate: ", v1::TrajectoryState_Name(s.state()));
    if (s.state() == v1::FAILED) {
      absl::StrAppend(&out, " (", v1::FailureClass_Name(s.failure_class()), ")");
    }
    if (!s.reason().empty()) absl::StrAppend(&out, "\nreason: ", s.reason());
    absl::StrAppend(&out, "\nturns: ", t.turns_size(), " of ", s.num_turns(), "\n");
    for (const v1::Turn& turn : t.turns()) {
      absl::StrAppend(&out, "\n=== TURN ", turn.index(), " (", turn.state(), ") ===\n");
      if (IsSimulated(turn)) absl::StrAppend(&out, "[SIMULATED]\n");
      absl::StrAppend(&out, "kernel: ",
                      turn.kernel_sha256().empty() ? "none extracted" : turn.kernel_sha256(), "\n");
      if (!turn.has_eval()) continue;
      const v1::EvalResult& e = turn.eval();
      absl::StrAppend(&out, "evaluation: ", StatusName(e.status()), ", min_speedup ",
                      e.min_speedup(), ", ", e.wall_time_ms(), " ms on ",
                      e.gpu_model().empty() ? "no GPU" : e.gpu_model(), "\n");
      if (!e.error().empty()) absl::StrAppend(&out, "=== ERROR ===\n", e.error(), "\n");
      if (!e.compile_log().empty()) {
        absl::StrAppend(&out, "=== COMPILE LOG ===\n", e.compile_log(), "\n");
      }
    }
    return out;
  }

  const Options options_;
  DefinitionIndex definitions_;
  PlanSource plan_source_;
  std::unique_ptr<FileSink> plan_;
  std::unique_ptr<FileSink> results_;
  int64_t next_index_ = 0;
  Counts all_;
  std::map<std::string, Counts> by_tag_;
  struct {
    double sum = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = 0;
  } durations_;
  bool simulated_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Writer>> MakePtxbenchWriter(std::unique_ptr<OutputDir> dir,
                                                           const Options& options) {
  return std::unique_ptr<Writer>(new PtxbenchWriter(std::move(dir), options));
}

}  // namespace ptxbench::exports
