#include "cli/submit.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

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
                                           std::ostream& out) {
  PTXB_ASSIGN_OR_RETURN(std::string spec, ReadSpecFile(path));
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
