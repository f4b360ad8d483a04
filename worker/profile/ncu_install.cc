#include "worker/profile/ncu_install.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "process/run.h"

namespace ptxbench::worker {
namespace {

namespace fs = std::filesystem;

// The program of an installation: <root>/target/<platform>/ncu.
std::string ProgramIn(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root / "target", ec)) return "";
  std::vector<fs::path> platforms;
  for (const auto& entry : fs::directory_iterator(root / "target", ec)) platforms.push_back(entry.path());
  std::sort(platforms.begin(), platforms.end());
  for (const fs::path& p : platforms) {
    const fs::path program = p / "ncu";
    if (IsElf(program.string()) && access(program.c_str(), X_OK) == 0) return fs::canonical(program, ec).string();
  }
  return "";
}

// Installation directories under `parent` named `prefix`*, newest first.
std::vector<fs::path> Installs(const fs::path& parent, absl::string_view prefix) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    if (absl::StartsWith(entry.path().filename().string(), prefix)) found.push_back(entry.path());
  }
  std::sort(found.rbegin(), found.rend());
  return found;
}

}  // namespace

bool IsElf(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

absl::StatusOr<std::string> ToolVersion(const std::string& executable) {
  process::RunOptions run;
  run.argv = {executable, "--version"};
  run.output = process::SpawnOptions::Output::kCapture;
  run.deadline = absl::Seconds(30);
  absl::StatusOr<process::RunResult> answered = process::Run(run);
  if (!answered.ok() || !answered->exited || answered->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(executable, " --version failed",
                     answered.ok() ? absl::StrCat(": ", answered->output.substr(0, 300)) : ""));
  }
  for (absl::string_view line : absl::StrSplit(answered->output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "Version ")) return std::string(line.substr(0, line.find(' ')));
  }
  return absl::FailedPreconditionError(absl::StrCat(executable, " --version names no version"));
}

std::string NcuInstall::Describe(const std::string& configured) const {
  return absl::StrCat("Nsight Compute ", version, " at ", configured);
}

absl::StatusOr<NcuInstall> FindNcu(const std::string& configured, const std::string& opt_root) {
  std::error_code ec;
  const fs::path file = fs::canonical(configured, ec);
  if (ec || !fs::is_regular_file(file)) {
    return absl::NotFoundError(absl::StrCat("no ncu at ", configured));
  }
  NcuInstall install;
  if (IsElf(file.string())) {
    install.executable = file.string();
    // <root>/target/<platform>/ncu, or a program of its own directory.
    const fs::path up = file.parent_path().parent_path().parent_path();
    install.root = ProgramIn(up) == install.executable ? up.string() : file.parent_path().string();
  } else {
    std::vector<fs::path> roots = {file.parent_path()};
    for (const fs::path& r : Installs(file.parent_path().parent_path(), "nsight-compute")) roots.push_back(r);
    for (const fs::path& r : Installs(opt_root, "")) roots.push_back(r);
    for (const fs::path& root : roots) {
      if (std::string program = ProgramIn(root); !program.empty()) {
        install.executable = program;
        install.root = fs::canonical(root, ec).string();
        break;
      }
    }
    if (install.executable.empty()) {
      return absl::NotFoundError(absl::StrCat(
          configured, " is a script and no Nsight Compute installation with its program "
                      "(target/<platform>/ncu) was found beside it, in the toolkit or under ",
          opt_root));
    }
  }
  absl::StatusOr<std::string> version = ToolVersion(install.executable);
  if (!version.ok()) return version.status();
  install.version = *version;
  return install;
}

}  // namespace ptxbench::worker
