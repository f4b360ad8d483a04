#include "cli/client/submit.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "experiment_spec/references.h"
#include "nlohmann/json.hpp"
#include "prompts/prompts.h"

namespace ptxbench::cli {
namespace {

// The name to show: --name, else the spec's "name", else empty.
std::string DisplayName(const v1::SubmitExperimentRequest& request,
                        const experiment_spec::SpecReferences& refs) {
  return request.name().empty() ? refs.name : request.name();
}

// The files the spec's items name, read here because the scheduler may run
// elsewhere: a relative path is looked up in the spec's folder, then in the
// current one (where PTXBench looks).
absl::Status AttachFiles(const std::string& spec_path, const experiment_spec::SpecReferences& refs,
                         v1::SubmitExperimentRequest& request) {
  const std::filesystem::path folder =
      spec_path == "-" ? std::filesystem::path(".") : std::filesystem::path(spec_path).parent_path();
  for (const experiment_spec::NamedFile& named : refs.files) {
    const std::string& path = named.path;
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
          "spec ", spec_path, ": ", named.where, " '", path,
          "' cannot be read (looked ",
          tries.size() > 1 ? absl::StrCat("in ", tries[0].string(), " and ") : "at ",
          tries.back().string(), ")"));
    }
    (*request.mutable_files())[path] = *std::move(text);
  }
  return absl::OkStatus();
}

// The hub's tags the spec names, each as the hub assembles it (its documents
// are here, not at the scheduler).
absl::Status AttachHubPrompts(const std::string& hub, const std::string& documents,
                              const experiment_spec::SpecReferences& refs,
                              v1::SubmitExperimentRequest& request) {
  PTXB_ASSIGN_OR_RETURN(
      std::unique_ptr<prompts::PromptRegistry> prompts,
      prompts::PromptRegistry::Load(prompts::PromptRegistry::BundledRoot(), hub, documents));
  for (const std::string& tag : refs.prompt_tags) {
    if (!prompts->IsHubTag(tag)) continue;  // ptxbench's own, or unknown: the scheduler judges
    PTXB_RETURN_IF_ERROR(prompts->CheckTarget(tag, refs.architectures, refs.language));
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
                                           std::ostream& out, std::ostream& err,
                                           const std::string& hub) {
  PTXB_ASSIGN_OR_RETURN(std::string spec, ReadSpecFile(path));
  const experiment_spec::SpecReferences refs = experiment_spec::ReferencesOf(spec);
  PTXB_RETURN_IF_ERROR(AttachFiles(path, refs, request));
  if (!hub.empty()) {
    PTXB_RETURN_IF_ERROR(AttachHubPrompts(hub, "", refs, request));
  } else if (!refs.hub.empty()) {
    // A PTXBench coding-agent experiment names its hub (and where the hub's
    // documents are) relative to PTXBench's checkout, where it is run from;
    // or else to the file's own folder.
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::error_code ec;
    const bool beside = std::filesystem::path(refs.hub).is_relative() &&
                        !std::filesystem::exists(refs.hub, ec) &&
                        std::filesystem::exists(folder / refs.hub, ec);
    auto resolve = [&](const std::string& p) {
      return beside && !p.empty() && std::filesystem::path(p).is_relative() ? (folder / p).string()
                                                                            : p;
    };
    PTXB_RETURN_IF_ERROR(
        AttachHubPrompts(resolve(refs.hub), resolve(refs.hub_documents), refs, request));
  }
  for (const std::string& ignored : refs.ignored) {
    err << "note: " << path << ": ignored " << ignored << "\n";
  }
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
  std::string name = DisplayName(request, refs);
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
