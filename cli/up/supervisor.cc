#include "cli/up/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace ptxbench::cli {
namespace {

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

Supervisor::~Supervisor() { StopAll(absl::Seconds(10)); }

absl::StatusOr<pid_t> Supervisor::Start(const ChildSpec& spec) {
  const int log_fd = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open log file ", spec.log_path, ": ", std::strerror(errno)));
  }
  process::SpawnOptions options;
  options.argv = {spec.binary};
  options.argv.insert(options.argv.end(), spec.args.begin(), spec.args.end());
  WriteAll(log_fd,
           absl::StrCat("==== ptxbench up: ",
                        absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::Now(), absl::LocalTimeZone()),
                        " starting ", absl::StrJoin(options.argv, " "), "\n"));
  options.output = process::SpawnOptions::Output::kDescriptor;
  options.output_fd = log_fd;
  options.parent_death_signal = SIGTERM;
  absl::StatusOr<process::Process> child = process::Process::Spawn(options);
  close(log_fd);
  if (!child.ok()) {
    return absl::Status(child.status().code(),
                        absl::StrCat("cannot start ", spec.name, ": ", child.status().message()));
  }
  const pid_t pid = child->pid();
  children_.push_back(Child{spec, *std::move(child)});
  return pid;
}

std::vector<Supervisor::Ended> Supervisor::Reap() {
  std::vector<Ended> ended;
  for (Child& child : children_) {
    if (std::optional<process::ExitStatus> status = child.process.TryWait()) {
      ended.push_back({child.spec.name, child.spec.log_path, status->Describe()});
    }
  }
  return ended;
}

bool Supervisor::Running(const std::string& name) const {
  for (const Child& child : children_) {
    if (child.spec.name == name && child.process.running()) return true;
  }
  return false;
}

int Supervisor::running_count() const {
  int n = 0;
  for (const Child& child : children_) n += child.process.running() ? 1 : 0;
  return n;
}

void Supervisor::WaitFor(const std::vector<Child*>& which, absl::Time deadline) {
  while (true) {
    bool any = false;
    for (Child* child : which) {
      if (child->process.running() && !child->process.TryWait().has_value()) any = true;
    }
    if (!any || absl::Now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<std::string> Supervisor::StopAll(absl::Duration grace) {
  const absl::Time deadline = absl::Now() + grace;
  for (bool last_tier : {false, true}) {
    std::vector<Child*> tier;
    for (Child& child : children_) {
      if (!child.process.running() || child.spec.stop_last != last_tier) continue;
      child.process.SignalGroup(SIGTERM);
      tier.push_back(&child);
    }
    WaitFor(tier, deadline);
  }
  std::vector<std::string> killed;
  for (Child& child : children_) {
    if (!child.process.running()) continue;
    child.process.Kill();
    killed.push_back(child.spec.name);
  }
  return killed;
}

}  // namespace ptxbench::cli
