#include "workloads/importers/importer.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "process/run.h"
#include "workloads/definition.h"

namespace ptxbench::workloads::importers {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // keeps the inputs' order: run()'s argument order

constexpr char kMarker[] = "PTXB-PROBE ";
constexpr size_t kMaxAnswer = 4 << 20;  // a definition holds the task's source

// The folder that holds the category folders: the suite's task folder inside a
// repository root, else `source` itself.
fs::path TaskRoot(Suite suite, const fs::path& source) {
  const fs::path inner = suite == Suite::kKernelBench ? source / "KernelBench"
                                                      : source / "data" / "kernelbenchx";
  std::error_code ec;
  return fs::is_directory(inner, ec) ? inner : source;
}

bool IsTask(const fs::path& p) {
  std::error_code ec;
  const std::string stem = p.stem().string();
  return p.extension() == ".py" && fs::is_regular_file(p, ec) && !stem.empty() &&
         stem[0] != '_';
}

// <root>/<category>/<task>.py, sorted; or <root>/<task>.py when the root is one
// category's folder (its name the category).
std::vector<std::pair<fs::path, std::string>> FindTasks(const fs::path& root) {
  std::vector<std::pair<fs::path, std::string>> tasks;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(root, ec)) {
    if (!dir.is_directory(ec) || dir.path().filename().string()[0] == '.') continue;
    for (const auto& f : fs::directory_iterator(dir.path(), ec)) {
      if (IsTask(f.path())) tasks.push_back({f.path(), dir.path().filename().string()});
    }
  }
  if (tasks.empty()) {
    for (const auto& f : fs::directory_iterator(root, ec)) {
      if (IsTask(f.path())) {
        tasks.push_back({f.path(), fs::absolute(root).lexically_normal().filename().string()});
      }
    }
  }
  std::sort(tasks.begin(), tasks.end());
  return tasks;
}

std::string Sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out;
}

// A deterministic workload id: the dashed hex of a hash of definition and index.
std::string WorkloadUuid(const std::string& definition, size_t index) {
  const std::string h = Sha256Hex(absl::StrCat("ptxbench-import\n", definition, "\n", index));
  return absl::StrCat(h.substr(0, 8), "-", h.substr(8, 4), "-", h.substr(12, 4), "-",
                      h.substr(16, 4), "-", h.substr(20, 12));
}

}  // namespace

absl::StatusOr<Suite> ParseSuite(const std::string& name) {
  if (name == "kernelbench") return Suite::kKernelBench;
  if (name == "kernelbenchx") return Suite::kKernelBenchX;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown suite '", name, "' (known: kernelbench, kernelbenchx)"));
}

std::string ImportReport::Summary() const {
  int refused_total = 0;
  std::vector<std::string> parts;
  for (const auto& [reason, n] : refused) {
    refused_total += n;
    parts.push_back(absl::StrCat(reason, " ", n));
  }
  std::string s = absl::StrCat("imported ", imported, " of ", tasks.size(), " tasks; refused ",
                               refused_total, parts.empty() ? "" : ": ",
                               absl::StrJoin(parts, ", "), "\n");
  for (const TaskOutcome& t : tasks) {
    if (!t.imported) absl::StrAppend(&s, "  ", t.file, ": ", t.reason, ": ", t.detail, "\n");
  }
  return s;
}

absl::StatusOr<ImportedFiles> FilesFromAnswer(const std::string& answer, TaskOutcome& outcome) {
  auto refuse = [&](const std::string& reason, const std::string& detail) {
    outcome.imported = false;
    outcome.reason = reason;
    outcome.detail = detail.substr(0, 1000);
    return absl::FailedPreconditionError(absl::StrCat(outcome.file, ": ", reason, ": ", detail));
  };
  Json j = Json::parse(answer, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean()) {
    return refuse("probe-failed", "the probe's answer is not its JSON");
  }
  if (!j["ok"].get<bool>()) {
    const Json& r = j["reason"];
    const Json& d = j["detail"];
    return refuse(r.is_string() ? r.get<std::string>() : "probe-failed",
                  d.is_string() ? d.get<std::string>() : "");
  }
  if (!j["definition"].is_object() || !j["workloads"].is_array() || j["workloads"].empty()) {
    return refuse("probe-failed", "the probe's answer has no definition or no workload");
  }
  j["definition"]["name"] = outcome.name;
  j["definition"]["op_type"] = outcome.category;
  ImportedFiles files;
  files.definition_json = j["definition"].dump(2) + "\n";
  absl::StatusOr<Definition> definition = ParseDefinition(files.definition_json, outcome.file);
  if (!definition.ok()) return refuse("probe-failed", std::string(definition.status().message()));
  size_t index = 0;
  for (const Json& w : j["workloads"]) {
    Json inputs = Json::object();
    for (const TensorSpec& t : definition->inputs) inputs[t.name] = {{"type", "random"}};
    const Json line = {{"definition", outcome.name},
                       {"solution", nullptr},
                       {"workload",
                        {{"uuid", WorkloadUuid(outcome.name, index)},
                         {"axes", w.contains("axes") ? w["axes"] : Json::object()},
                         {"inputs", inputs}}},
                       {"evaluation", nullptr}};
    const std::string text = line.dump();
    absl::StatusOr<WorkloadRecord> record =
        ParseWorkloadRecord(text, absl::StrCat(outcome.file, ":", index + 1));
    if (!record.ok()) return refuse("probe-failed", std::string(record.status().message()));
    absl::Status valid = ValidateWorkload(*definition, record->workload, outcome.file);
    if (!valid.ok()) return refuse("probe-failed", std::string(valid.message()));
    definition->workloads.push_back(record->workload);
    absl::StrAppend(&files.workloads_jsonl, text, "\n");
    ++index;
  }
  absl::Status usable = CheckUsable(*definition);
  if (!usable.ok()) return refuse("unsupported-dtype", std::string(usable.message()));
  outcome.imported = true;
  outcome.workloads = static_cast<int>(index);
  return files;
}

absl::StatusOr<ImportReport> Import(const ImportOptions& options) {
  const fs::path root = TaskRoot(options.suite, options.source);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(options.source, " is not a folder"));
  }
  const auto tasks = FindTasks(root);
  if (tasks.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no task (<category>/<task>.py) under ", root.string()));
  }
  const fs::path out = options.out;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the output folder ", options.out, " is not empty"));
  }
  fs::create_directories(out, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", options.out, ": ", ec.message()));
  const std::string probe =
      options.probe.empty() ? DataDir() + "/workloads/importers/probe.py" : options.probe;
  if (!fs::is_regular_file(probe, ec)) {
    return absl::FailedPreconditionError(absl::StrCat("the importer's probe ", probe, " is missing"));
  }
  const fs::path scratch = out / ".scratch";
  const char* prefix = options.suite == Suite::kKernelBench ? "kb_" : "kbx_";

  // Probes run `jobs` at a time (each in its own scratch folder); their answers
  // are then read and written in file order, so the files do not depend on it.
  struct Probed {
    TaskOutcome outcome;
    absl::StatusOr<process::RunResult> result = absl::UnknownError("not run");
  };
  std::vector<Probed> probed(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto& [path, category] = tasks[i];
    TaskOutcome& outcome = probed[i].outcome;
    outcome.file = fs::relative(path, root, ec).string();
    outcome.category = Sanitize(category);
    outcome.name = absl::StrCat(prefix, outcome.category, "_", Sanitize(path.stem().string()));
  }
  std::atomic<size_t> next{0};
  auto worker = [&](int slot) {
    const fs::path dir = scratch / std::to_string(slot);
    for (size_t i = next++; i < tasks.size(); i = next++) {
      std::error_code err;
      fs::remove_all(dir, err);
      fs::create_directories(dir, err);
      const TaskOutcome& outcome = probed[i].outcome;
      process::RunOptions run;
      run.argv = {options.python, probe, "--suite",
                  options.suite == Suite::kKernelBench ? "kernelbench" : "kernelbenchx",
                  "--task", fs::absolute(tasks[i].first).string(), "--name", outcome.name,
                  "--category", outcome.category};
      run.cwd = dir.string();
      run.environment = std::vector<std::string>{
          "PATH=/usr/bin:/bin", "HOME=" + fs::absolute(dir).string(), "OMP_NUM_THREADS=1",
          "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0", "CUDA_VISIBLE_DEVICES="};
      run.rlimits = {{RLIMIT_AS, options.memory_bytes},
                     {RLIMIT_CPU, static_cast<uint64_t>(absl::ToInt64Seconds(options.deadline))},
                     {RLIMIT_FSIZE, 64ull << 20}};
      run.deadline = options.deadline;
      run.max_output_bytes = kMaxAnswer;
      probed[i].result = process::Run(run);
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, options.jobs); ++j) threads.emplace_back(worker, j);
  for (std::thread& t : threads) t.join();

  ImportReport report;
  Json index = Json::array();
  for (Probed& p : probed) {
    TaskOutcome outcome = std::move(p.outcome);
    if (!p.result.ok()) return p.result.status();
    const process::RunResult& result = *p.result;
    const size_t at = result.output.rfind(kMarker);
    if (at == std::string::npos || (at > 0 && result.output[at - 1] != '\n')) {
      outcome.reason = result.timed_out ? "timeout" : "probe-failed";
      std::string tail =
          result.output.substr(result.output.size() > 300 ? result.output.size() - 300 : 0);
      outcome.detail = absl::StrCat("the probe ", result.Describe(), ": ", tail);
    } else {
      std::string answer = result.output.substr(at + sizeof(kMarker) - 1);
      answer = answer.substr(0, answer.find('\n'));
      absl::StatusOr<ImportedFiles> files = FilesFromAnswer(answer, outcome);
      if (files.ok()) {
        const fs::path def = out / "definitions" / outcome.category / (outcome.name + ".json");
        const fs::path wl = out / "workloads" / outcome.category / (outcome.name + ".jsonl");
        fs::create_directories(def.parent_path(), ec);
        fs::create_directories(wl.parent_path(), ec);
        PTXB_RETURN_IF_ERROR(WriteFile(def.string(), files->definition_json));
        PTXB_RETURN_IF_ERROR(WriteFile(wl.string(), files->workloads_jsonl));
      }
    }
    if (outcome.imported) {
      ++report.imported;
    } else {
      ++report.refused[outcome.reason];
    }
    Json entry = {{"file", outcome.file}, {"name", outcome.name}, {"category", outcome.category},
                  {"imported", outcome.imported}};
    if (outcome.imported) {
      entry["workloads"] = outcome.workloads;
    } else {
      entry["reason"] = outcome.reason;
      entry["detail"] = outcome.detail;
    }
    index.push_back(std::move(entry));
    report.tasks.push_back(std::move(outcome));
  }
  fs::remove_all(scratch, ec);
  Json summary = {{"suite", options.suite == Suite::kKernelBench ? "kernelbench" : "kernelbenchx"},
                  {"imported", report.imported},
                  {"refused", report.refused},
                  {"tasks", index}};
  PTXB_RETURN_IF_ERROR(WriteFile((out / "import.json").string(), summary.dump(2) + "\n"));
  return report;
}

}  // namespace ptxbench::workloads::importers
