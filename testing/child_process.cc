#include "testing/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "process/run.h"

namespace ptxbench::testing {

process::Process SpawnLogged(const std::vector<std::string>& argv, const std::string& log_path) {
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  process::SpawnOptions options;
  options.argv = argv;
  if (log_fd >= 0) {
    options.output = process::SpawnOptions::Output::kDescriptor;
    options.output_fd = log_fd;
  }
  options.new_process_group = false;
  absl::StatusOr<process::Process> child = process::Process::Spawn(options);
  if (!child.ok()) {
    const std::string why = absl::StrCat(child.status().message(), "\n");
    if (log_fd >= 0) (void)!write(log_fd, why.data(), why.size());
    std::cerr << why;
  }
  if (log_fd >= 0) close(log_fd);
  return child.ok() ? *std::move(child) : process::Process();
}

CommandResult RunCommand(const std::vector<std::string>& argv, bool merge_stderr) {
  process::RunOptions options;
  options.argv = argv;
  options.stderr_with_output = merge_stderr;
  options.deadline = absl::Minutes(10);
  options.max_output_bytes = size_t{64} << 20;
  absl::StatusOr<process::RunResult> run = process::Run(options);
  if (!run.ok()) return {-1, std::string(run.status().message())};
  return {run->ShellCode(), std::move(run->output)};
}

int SignalDescendants(pid_t root, int sig) {
  std::map<pid_t, pid_t> parent;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry.path().filename().c_str()));
    if (pid <= 0) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    parent[pid] = ppid;
  }
  int sent = 0;
  for (const auto& [pid, ppid] : parent) {
    for (pid_t up = ppid; up > 0; up = parent.count(up) ? parent[up] : 0) {
      if (up == root) {
        sent += kill(pid, sig) == 0;
        break;
      }
    }
  }
  return sent;
}

std::string Tail(const std::string& path, int n) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (static_cast<int>(lines.size()) > n) lines.pop_front();
  }
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace ptxbench::testing
