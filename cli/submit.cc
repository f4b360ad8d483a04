#include "cli/submit.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "common/gpu_arch.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "prompts/prompts.h"

namespace ptxbench::cli {
namespace {

// The name to show: --name, else the spec's "name", else empty.
std::string DisplayName(const v1::SubmitExperimentRequest& request) {
  if (!request.name().empty()) return request.name();
  nlohmann::json spec =
      nlohmann::json::parse(request.spec_json(), nullptr, /*allow_exceptions=*/false);
  if (spec.is_object() && spec.contains("name") && spec["name"].is_string()) {
    return spec["name"].get<std::string>();
  }
  return "";
}

// A list config's items, or a PTXBench plan.json's; anything else as it is
// (the scheduler judges the spec, these only find what must travel with it).
const nlohmann::json& ListItems(const nlohmann::json& spec) {
  return spec.is_object() && spec.contains("plan") ? spec["plan"] : spec;
}

// The files a list-form spec's items name (test_path, and a fix-it item's
// error_kernel_path and error_log_path), read here because the scheduler may
// run elsewhere: a relative path is looked up in the spec's folder, then in
// the current one (where PTXBench looks).
absl::Status AttachFiles(const std::string& spec_path, const nlohmann::json& spec,
                         v1::SubmitExperimentRequest& request) {
  const nlohmann::json& doc = ListItems(spec);
  if (!doc.is_array()) return absl::OkStatus();
  const std::filesystem::path folder =
      spec_path == "-" ? std::filesystem::path(".") : std::filesystem::path(spec_path).parent_path();
  for (size_t i = 0; i < doc.size(); ++i) {
    for (const char* field : {"test_path", "error_kernel_path", "error_log_path"}) {
      if (!doc[i].is_object() || !doc[i].contains(field) || !doc[i][field].is_string()) continue;
      const std::string path = doc[i][field].get<std::string>();
      if (request.files().contains(path)) continue;
      std::vector<std::filesystem::path> tries = {path};
      if (std::filesystem::path(path).is_relative()) tries.insert(tries.begin(), folder / path);
      std::optional<std::string> text;
      for (const std::filesystem::path& p : tries) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(p, ec)) continue;
        absl::StatusOr<std::string> read = ReadFile(p.string());
        if (read.ok()) text = *std::move(read);
        break;
      }
      if (!text) {
        return absl::NotFoundError(absl::StrCat(
            "spec ", spec_path, ": item [", i, "]: ", field, " '", path, "' cannot be read (looked ",
            tries.size() > 1 ? absl::StrCat("in ", tries[0].string(), " and ") : "at ",
            tries.back().string(), ")"));
      }
      (*request.mutable_files())[path] = *std::move(text);
    }
  }
  return absl::OkStatus();
}

// The GPU architectures a matrix spec targets; the default when it names
// none, or names them badly (the scheduler then says what is wrong).
std::vector<std::string> SpecArchitectures(const nlohmann::json& parsed) {
  if (!parsed.is_object() || !parsed.contains("architectures") ||
      !parsed["architectures"].is_array()) {
    return DefaultArchitectures();
  }
  std::vector<std::string> names;
  for (const nlohmann::json& name : parsed["architectures"]) {
    if (!name.is_string()) return DefaultArchitectures();
    names.push_back(name.get<std::string>());
  }
  absl::StatusOr<std::vector<std::string>> architectures = ParseArchitectures(names);
  return architectures.ok() ? *std::move(architectures) : DefaultArchitectures();
}

// The hub's tags the spec names (a matrix's prompt_tags, a list's or a
// plan.json's items' prompt_tag), each as the hub assembles it.
absl::Status AttachHubPrompts(const std::string& hub, const nlohmann::json& parsed,
                              v1::SubmitExperimentRequest& request) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<prompts::PromptRegistry> prompts,
                        prompts::PromptRegistry::Load(prompts::PromptRegistry::BundledRoot(), hub));
  std::set<std::string> tags;
  auto note = [&tags](const nlohmann::json& v) {
    if (v.is_string()) tags.insert(v.get<std::string>());
  };
  if (parsed.is_object() && parsed.contains("prompt_tags") && parsed["prompt_tags"].is_array()) {
    for (const nlohmann::json& tag : parsed["prompt_tags"]) note(tag);
  }
  const nlohmann::json& items = ListItems(parsed);
  if (items.is_array()) {
    for (const nlohmann::json& item : items) {
      if (item.is_object() && item.contains("prompt_tag")) note(item["prompt_tag"]);
    }
  }
  for (const std::string& tag : tags) {
    if (!prompts->IsHubTag(tag)) continue;  // ptxbench's own, or unknown: the scheduler judges
    // Its documents are here, not there.
    PTXB_RETURN_IF_ERROR(prompts->CheckTarget(tag, SpecArchitectures(parsed)));
    PTXB_ASSIGN_OR_RETURN((*request.mutable_prompts())[tag], prompts->TagText(tag));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadSpecFile(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read spec file '", path, "': it is a directory"));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat("cannot read spec file '", path, "': ", std::strerror(errno)));
  }
  text << file.rdbuf();
  if (file.bad()) {
    return absl::DataLossError(absl::StrCat("cannot read spec file '", path, "': read failed"));
  }
  return text.str();
}

absl::StatusOr<std::string> SubmitSpecFile(SchedulerClient& client, const std::string& path,
                                           v1::SubmitExperimentRequest request, bool json,
                                           std::ostream& out, const std::string& hub) {
  PTXB_ASSIGN_OR_RETURN(std::string spec, ReadSpecFile(path));
  const nlohmann::json parsed = nlohmann::json::parse(spec, nullptr, /*allow_exceptions=*/false);
  PTXB_RETURN_IF_ERROR(AttachFiles(path, parsed, request));
  if (!hub.empty()) PTXB_RETURN_IF_ERROR(AttachHubPrompts(hub, parsed, request));
  request.set_spec_json(std::move(spec));
  request.set_spec_path(path == "-" ? "<stdin>" : path);
  PTXB_ASSIGN_OR_RETURN(v1::SubmitExperimentResponse response, client.SubmitExperiment(request));

  if (json) {
    nlohmann::json result = {{"experiment", response.experiment_id()},
                             {"created", response.created()},
                             {"trajectories", response.trajectories()}};
    if (request.dry_run()) result["dry_run"] = true;
    out << result.dump(2) << "\n";
    return response.experiment_id();
  }
  std::string name = DisplayName(request);
  if (name.empty()) name = response.experiment_id();
  if (request.dry_run()) {
    out << "spec " << request.spec_path() << " is valid: experiment '" << name << "' would have "
        << response.trajectories() << " trajectories (dry run: nothing created)\n";
  } else if (response.created()) {
    out << "submitted experiment '" << name << "' from " << request.spec_path() << ": "
        << response.trajectories() << " trajectories\n"
        << "follow it with: ptxbench status " << response.experiment_id() << " --watch\n";
  } else {
    out << "experiment " << name << " already exists with the same spec; nothing new created\n";
  }
  if (!response.experiment_id().empty()) out << response.experiment_id() << "\n";
  return response.experiment_id();
}

}  // namespace ptxbench::cli
