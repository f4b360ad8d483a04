#include "sandbox/limiter.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file.h"

namespace ptxbench::sandbox {

int MakeCgroupDir(const std::string& dir, bool may_exist) {
  if (mkdir(dir.c_str(), 0755) != 0 && !(may_exist && errno == EEXIST)) return errno;
  chmod(dir.c_str(), 0755);
  return 0;
}

std::string CpuMaxValue(double cpus) {
  constexpr int64_t kPeriodUs = 100000;
  // The kernel takes quotas from 1 ms up.
  const double quota = std::clamp(cpus * kPeriodUs, 1000.0, 1e12);
  return absl::StrCat(std::llround(quota), " ", kPeriodUs);
}

namespace {

// The value of `key` in a flat-keyed cgroup file ("key value" lines).
int64_t KeyedValue(const std::string& text, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, ' ');
    int64_t value = 0;
    if (kv.first == key && absl::SimpleAtoi(kv.second, &value)) return value;
  }
  return 0;
}

std::vector<pid_t> Children(pid_t pid) {
  std::vector<pid_t> out;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string text =
        ReadFile(absl::StrCat(tasks, "/", e->d_name, "/children")).value_or("");
    for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipWhitespace())) {
      pid_t child = 0;
      if (absl::SimpleAtoi(word, &child)) out.push_back(child);
    }
  }
  closedir(dir);
  return out;
}

uint64_t ResidentBytes(pid_t pid) {
  const std::string statm = ReadFile(absl::StrCat("/proc/", pid, "/statm")).value_or("");
  std::vector<absl::string_view> fields = absl::StrSplit(statm, ' ');
  uint64_t pages = 0;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &pages)) return 0;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

class Watchdog final : public Limiter {
 public:
  explicit Watchdog(const Policy& policy)
      : memory_bytes_(policy.memory_bytes), max_processes_(policy.max_processes) {}
  absl::Status Attach(pid_t) override { return absl::OkStatus(); }
  bool Exceeded(pid_t init, Outcome* outcome) override {
    if (memory_bytes_ == 0 && max_processes_ == 0) return false;
    const TreeUsage usage = MeasureTree(init);
    peak_ = std::max(peak_, usage.resident_bytes);
    outcome->peak_memory_bytes = peak_;
    if (memory_bytes_ > 0 && usage.resident_bytes > memory_bytes_) {
      outcome->memory_exceeded = true;
      return true;
    }
    // The init itself is one of the processes.
    if (max_processes_ > 0 && usage.processes - 1 > max_processes_) {
      outcome->processes_exceeded = true;
      return true;
    }
    return false;
  }
  void Finish(Outcome* outcome) override { outcome->peak_memory_bytes = peak_; }
  absl::Duration CpuTime(pid_t init) override { return TreeCpuTime(init); }
  std::string Describe() const override { return "watchdog"; }

 private:
  const uint64_t memory_bytes_;
  const int max_processes_;
  uint64_t peak_ = 0;
};

class CgroupLimiter final : public Limiter {
 public:
  static absl::StatusOr<std::unique_ptr<Limiter>> Create(const Policy& policy) {
    std::random_device random;
    const std::string dir =
        absl::StrCat(policy.cgroup_parent, "/sb-", getpid(), "-", random() % 1000000000);
    if (const int error = MakeCgroupDir(dir, false); error != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create the sandbox cgroup ", dir, ": ", strerror(error)));
    }
    auto limiter = std::unique_ptr<CgroupLimiter>(new CgroupLimiter(dir));
    if (policy.cpus > 0) {
      // Where the parent may give its children the cpu controller; otherwise
      // the share is not enforced (ProbeProtections reports that).
      (void)WriteFile(policy.cgroup_parent + "/cgroup.subtree_control", "+cpu");
      (void)WriteFile(dir + "/cpu.max", CpuMaxValue(policy.cpus));
    }
    if (policy.memory_bytes > 0) {
      if (!WriteFile(dir + "/memory.max", std::to_string(policy.memory_bytes)).ok() ||
          !WriteFile(dir + "/memory.oom.group", "1").ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot set memory.max in ", dir, " (memory controller not enabled?)"));
      }
      (void)WriteFile(dir + "/memory.swap.max", "0");  // absent without swap accounting
    }
    if (policy.max_processes > 0 &&
        !WriteFile(dir + "/pids.max", std::to_string(policy.max_processes + 1)).ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot set pids.max in ", dir, " (pids controller not enabled?)"));
    }
    return std::unique_ptr<Limiter>(std::move(limiter));
  }

  ~CgroupLimiter() override {
    (void)WriteFile(dir_ + "/cgroup.kill", "1");
    // The killed processes leave the cgroup asynchronously.
    for (int i = 0; i < 200 && rmdir(dir_.c_str()) != 0 && errno == EBUSY; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  absl::Status Attach(pid_t init) override {
    if (!WriteFile(dir_ + "/cgroup.procs", std::to_string(init)).ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot move the sandbox into ", dir_, ": ", strerror(errno)));
    }
    return absl::OkStatus();
  }
  bool Exceeded(pid_t, Outcome* outcome) override {
    if (KeyedValue(ReadFile(dir_ + "/memory.events").value_or(""), "oom_kill") > 0) {
      outcome->memory_exceeded = true;
    }
    if (KeyedValue(ReadFile(dir_ + "/pids.events").value_or(""), "max") > 0) {
      outcome->processes_exceeded = true;
    }
    return outcome->memory_exceeded || outcome->processes_exceeded;
  }
  void Finish(Outcome* outcome) override {
    Exceeded(0, outcome);
    uint64_t peak = 0;
    const std::string text = ReadFile(dir_ + "/memory.peak").value_or("");
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &peak)) {
      outcome->peak_memory_bytes = peak;
    }
  }
  absl::Duration CpuTime(pid_t) override {
    const int64_t us = KeyedValue(ReadFile(dir_ + "/cpu.stat").value_or(""), "usage_usec");
    return absl::Microseconds(us);
  }
  std::string Describe() const override { return absl::StrCat("cgroup v2 (", dir_, ")"); }

 private:
  explicit CgroupLimiter(std::string dir) : dir_(std::move(dir)) {}
  const std::string dir_;
};

// The processes of the tree under `root`, bounded so that a fork bomb cannot
// make one measurement run away.
template <typename ChildrenOf, typename ResidentOf>
TreeUsage Walk(pid_t root, ChildrenOf children_of, ResidentOf resident_of) {
  TreeUsage usage;
  std::vector<pid_t> pending = {root};
  while (!pending.empty() && usage.processes < 100000) {
    const pid_t pid = pending.back();
    pending.pop_back();
    ++usage.processes;
    usage.resident_bytes += resident_of(pid);
    for (pid_t child : children_of(pid)) pending.push_back(child);
  }
  return usage;
}

// /proc/<pid>/stat from its third field on (the command's name before it may
// hold spaces: it ends at the last ')'); readable even for a process whose
// other entries are closed to us. Empty when the process is gone.
std::vector<std::string> StatFields(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat")).value_or("");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 > stat.size()) return {};
  return absl::StrSplit(absl::string_view(stat).substr(paren + 2), ' ');
}

// The parent and the resident pages (fields 4 and 24).
bool ParentAndResident(pid_t pid, pid_t* parent, uint64_t* resident_bytes) {
  const std::vector<std::string> f = StatFields(pid);
  uint64_t pages = 0;
  if (f.size() < 22 || !absl::SimpleAtoi(f[1], parent) || !absl::SimpleAtoi(f[21], &pages)) {
    return false;
  }
  *resident_bytes = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return true;
}

// User and system CPU time in clock ticks (fields 14 and 15).
uint64_t CpuTicks(pid_t pid) {
  const std::vector<std::string> f = StatFields(pid);
  uint64_t user = 0, system = 0;
  if (f.size() < 13 || !absl::SimpleAtoi(f[11], &user) || !absl::SimpleAtoi(f[12], &system)) {
    return 0;
  }
  return user + system;
}

// Whether the tree under `root` can be followed by its children links: not
// for a sandbox init that dropped to the same unprivileged uid (it is not
// dumpable).
bool ChildrenReadable(pid_t root) {
  return static_cast<bool>(std::ifstream(absl::StrCat("/proc/", root, "/task/", root, "/children")));
}

// Every process's children from its parent link, for a tree whose children
// links we may not read, and (where asked) each one's resident bytes.
std::map<pid_t, std::vector<pid_t>> ChildrenByScan(std::map<pid_t, uint64_t>* resident) {
  std::map<pid_t, std::vector<pid_t>> children;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return children;
  while (dirent* e = readdir(dir)) {
    pid_t pid = 0, parent = 0;
    uint64_t bytes = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid) || !ParentAndResident(pid, &parent, &bytes)) continue;
    children[parent].push_back(pid);
    if (resident != nullptr) (*resident)[pid] = bytes;
  }
  closedir(dir);
  return children;
}

}  // namespace

TreeUsage MeasureTree(pid_t root) {
  if (ChildrenReadable(root)) return Walk(root, Children, ResidentBytes);
  std::map<pid_t, uint64_t> resident;
  std::map<pid_t, std::vector<pid_t>> children = ChildrenByScan(&resident);
  return Walk(root, [&](pid_t pid) { return children[pid]; },
              [&](pid_t pid) { return resident[pid]; });
}

absl::Duration TreeCpuTime(pid_t root) {
  static const int64_t ticks = sysconf(_SC_CLK_TCK);
  uint64_t total = 0;
  auto add_cpu = [&total](pid_t pid) {
    total += CpuTicks(pid);
    return uint64_t{0};
  };
  if (ChildrenReadable(root)) {
    Walk(root, Children, add_cpu);
  } else {
    std::map<pid_t, std::vector<pid_t>> children = ChildrenByScan(nullptr);
    Walk(root, [&](pid_t pid) { return children[pid]; }, add_cpu);
  }
  return absl::Seconds(static_cast<double>(total) / static_cast<double>(ticks > 0 ? ticks : 100));
}

absl::StatusOr<std::unique_ptr<Limiter>> Limiter::Create(const Policy& policy) {
  const bool limits = policy.memory_bytes > 0 || policy.max_processes > 0 || policy.cpus > 0;
  if (limits && !policy.cgroup_parent.empty()) return CgroupLimiter::Create(policy);
  return std::unique_ptr<Limiter>(new Watchdog(policy));
}

}  // namespace ptxbench::sandbox
