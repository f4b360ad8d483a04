#include "sandbox/sandboxed_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "sandbox/child.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/view.h"

namespace ptxbench::sandbox {
namespace {

using internal::ChildPlan;
using internal::PlannedMount;
using internal::StatusMessage;

// How long the init may take to build the view and report.
constexpr absl::Duration kSetupTimeout = absl::Seconds(20);

absl::Status Pipe(int* read_end, int* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe2: ", strerror(errno)));
  *read_end = fds[0];
  *write_end = fds[1];
  return absl::OkStatus();
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

absl::Status WriteProcFile(pid_t pid, const char* name, const std::string& text) {
  absl::Status s = WriteFile(absl::StrCat("/proc/", pid, "/", name), text);
  return s.ok() ? s : absl::FailedPreconditionError(s.message());
}

absl::StatusOr<PlannedMount> PlanMount(const Mount& m, const std::string& root) {
  if (!absl::StartsWith(m.target, "/") || absl::StrContains(m.target, "..")) {
    return absl::InvalidArgumentError(absl::StrCat("sandbox mount target must be absolute: ", m.target));
  }
  PlannedMount p;
  p.kind = m.kind;
  p.source = m.source;
  p.target = root + m.target;
  p.view_path = m.target;
  // Every directory on the way to the target.
  std::string dir = root;
  std::vector<std::string> parts = absl::StrSplit(m.target, '/', absl::SkipEmpty());
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    absl::StrAppend(&dir, "/", parts[i]);
    p.parents.push_back(dir);
  }
  switch (m.kind) {
    case Mount::Kind::kReadOnly:
    case Mount::Kind::kReadWrite:
    case Mount::Kind::kReadWriteExec:
    case Mount::Kind::kDevice: {
      struct stat st;
      if (stat(m.source.c_str(), &st) != 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("sandbox: cannot bind ", m.source, ": ", strerror(errno)));
      }
      p.source_is_dir = S_ISDIR(st.st_mode);
      break;
    }
    case Mount::Kind::kTmpfs:
      p.source_is_dir = true;
      p.read_only_after_setup = m.target == "/dev";
      p.options = m.target == "/dev" ? TmpfsOptions(64 << 10, "mode=0755")
                                     : TmpfsOptions(64 << 20, "mode=1777");
      break;
    case Mount::Kind::kSymlink:
    case Mount::Kind::kMask:
      break;
  }
  return p;
}

// Where this process's argv and environment strings lie (child.h says why
// the init wants them): fields 48 to 51 of /proc/self/stat, after the
// command's name, which may hold anything but ends at the last ')'. They do
// not move while the process lives: read once, not at every sandbox start.
struct ArgumentAreas {
  uint64_t arg_start = 0, arg_end = 0, env_start = 0, env_end = 0;
};

ArgumentAreas ReadArgumentAreas() {
  const std::string stat = ReadFile("/proc/self/stat").value_or("");
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return {};
  const std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(stat).substr(name_end + 1), ' ', absl::SkipEmpty());
  constexpr size_t kArgStart = 48 - 3;  // the list starts at field 3
  uint64_t v[4] = {};
  if (fields.size() < kArgStart + 4) return {};
  for (size_t i = 0; i < 4; ++i) {
    if (!absl::SimpleAtoi(fields[kArgStart + i], &v[i])) return {};
  }
  return {v[0], v[1], v[2], v[3]};
}

void FindCallersArguments(ChildPlan* plan) {
  static const ArgumentAreas areas = ReadArgumentAreas();
  plan->arg_start = areas.arg_start;
  plan->arg_end = areas.arg_end;
  plan->env_start = areas.env_start;
  plan->env_end = areas.env_end;
}

absl::Status BuildPlan(const SandboxedProcess::Spec& spec, bool user_namespace, ChildPlan* plan) {
  const Policy& policy = spec.policy;
  if (spec.argv.empty()) return absl::InvalidArgumentError("sandbox: empty argv");
  std::string root = "/tmp/.ptxb-sandbox-XXXXXX";
  if (mkdtemp(root.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("sandbox: mkdtemp: ", strerror(errno)));
  }
  plan->root_dir = root;
  plan->root_options = TmpfsOptions(1 << 20, "mode=0755");
  plan->empty_file = root + "/.ptxb-empty";
  plan->old_root = root + "/.ptxb-old";
  plan->proc_dir = root + "/proc";
  std::vector<Mount> mounts;
  bool has_dev = false;
  for (const Mount& m : policy.mounts) has_dev |= m.target == "/dev";
  if (!has_dev) {
    mounts.push_back({Mount::Kind::kTmpfs, "", "/dev"});
    mounts.push_back({Mount::Kind::kDevice, "/dev/null", "/dev/null"});
  }
  mounts.insert(mounts.end(), policy.mounts.begin(), policy.mounts.end());
  for (const Mount& m : mounts) {
    PTXB_ASSIGN_OR_RETURN(PlannedMount p, PlanMount(m, root));
    plan->mounts.push_back(std::move(p));
  }
  plan->cwd = policy.cwd;
  plan->argv_storage = spec.argv;
  plan->env_storage = policy.env;
  for (std::string& a : plan->argv_storage) plan->argv.push_back(a.data());
  plan->argv.push_back(nullptr);
  for (std::string& e : plan->env_storage) plan->envp.push_back(e.data());
  plan->envp.push_back(nullptr);
  plan->fds = spec.fds;
  plan->rlimits = policy.rlimits;
  plan->user_namespace = user_namespace;
  plan->uid = policy.uid;
  plan->loopback = policy.loopback;
  plan->gid = policy.gid;
  plan->keeper_uid =
      policy.keeper_uid == Policy::kSameUid || user_namespace ? policy.uid : policy.keeper_uid;
  plan->suspended = spec.suspended;
  FindCallersArguments(plan);
  // Of this process, not of the calling thread: the init checks it once
  // (child.h). A kernel without pidfds (before 5.3) leaves the parent-death
  // signal alone to it.
  plan->parent_pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (policy.seccomp) {
    PTXB_ASSIGN_OR_RETURN(plan->filter, CompileSeccompFilter(policy));
  }
  PTXB_RETURN_IF_ERROR(Pipe(&plan->sync_read, &plan->sync_write));
  PTXB_RETURN_IF_ERROR(Pipe(&plan->status_read, &plan->status_write));
  PTXB_RETURN_IF_ERROR(Pipe(&plan->release_read, &plan->release_write));
  return absl::OkStatus();
}

void ClosePlanPipes(ChildPlan* plan) {
  for (int* fd : {&plan->sync_read, &plan->sync_write, &plan->status_read, &plan->status_write,
                  &plan->release_read, &plan->release_write, &plan->parent_pidfd}) {
    CloseFd(fd);
  }
}

// Reads one status message, waiting at most until `deadline`.
bool ReadMessage(int fd, absl::Time deadline, StatusMessage* m) {
  size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(m);
  while (got < sizeof(*m)) {
    const int64_t wait_ms = std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now()));
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(wait_ms, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      if (absl::Now() >= deadline) return false;
      continue;
    }
    const ssize_t n = read(fd, bytes + got, sizeof(*m) - got);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  m->text[sizeof(m->text) - 1] = '\0';
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SandboxedProcess>> SandboxedProcess::Start(const Spec& spec) {
  const bool user_namespace = geteuid() != 0 || spec.policy.force_user_namespace;
  ChildPlan plan;
  auto process = std::unique_ptr<SandboxedProcess>(new SandboxedProcess);
  absl::Status built = BuildPlan(spec, user_namespace, &plan);
  process->root_dir_ = plan.root_dir;
  if (!built.ok()) {
    ClosePlanPipes(&plan);
    return built;
  }
  absl::StatusOr<std::unique_ptr<Limiter>> limiter = Limiter::Create(spec.policy);
  if (!limiter.ok()) {
    ClosePlanPipes(&plan);
    return limiter.status();
  }
  process->limiter_ = *std::move(limiter);

  unsigned long flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;
  if (user_namespace) flags |= CLONE_NEWUSER;
  // A raw clone behaves like fork (same stack, copied); the child only
  // makes system calls (child.h).
  const long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) internal::InitMain(plan);
  if (pid < 0) {
    const int err = errno;
    ClosePlanPipes(&plan);
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create the sandbox's namespaces (", user_namespace ? "user, " : "",
        "PID, network, mount, IPC, UTS): ", strerror(err)));
  }
  process->init_pid_ = static_cast<pid_t>(pid);
  CloseFd(&plan.parent_pidfd);
  CloseFd(&plan.sync_read);
  CloseFd(&plan.status_write);
  CloseFd(&plan.release_read);
  process->status_fd_ = plan.status_read;
  process->release_fd_ = plan.release_write;
  plan.status_read = plan.release_write = -1;

  absl::Status status;
  if (user_namespace) {
    status = WriteProcFile(process->init_pid_, "setgroups", "deny");
    if (status.ok()) {
      status = WriteProcFile(process->init_pid_, "uid_map",
                             absl::StrCat(spec.policy.uid, " ", geteuid(), " 1\n"));
    }
    if (status.ok()) {
      status = WriteProcFile(process->init_pid_, "gid_map",
                             absl::StrCat(spec.policy.gid, " ", getegid(), " 1\n"));
    }
  }
  if (status.ok()) status = process->limiter_->Attach(process->init_pid_);
  if (!status.ok()) {
    CloseFd(&plan.sync_write);
    return status;  // the destructor kills the init
  }
  (void)!write(plan.sync_write, "g", 1);
  CloseFd(&plan.sync_write);

  // The init reports when the view is built and the payload waits or runs.
  StatusMessage m;
  if (!ReadMessage(process->status_fd_, absl::Now() + kSetupTimeout, &m)) {
    return absl::InternalError("sandbox: the init did not report (it died or hung during setup)");
  }
  if (m.kind == StatusMessage::kSetupError) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox setup failed: ", m.text, ": ", strerror(m.value)));
  }
  fcntl(process->status_fd_, F_SETFL, fcntl(process->status_fd_, F_GETFL) | O_NONBLOCK);
  return process;
}

SandboxedProcess::~SandboxedProcess() {
  if (init_pid_ > 0 && !ended_) {
    KillInit();
    int status = 0;
    while (waitpid(init_pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  CloseFd(&status_fd_);
  CloseFd(&release_fd_);
  limiter_.reset();  // removes a cgroup
  if (!root_dir_.empty()) rmdir(root_dir_.c_str());
}

absl::Status SandboxedProcess::Release() {
  if (release_fd_ < 0 || write(release_fd_, "r", 1) != 1) {
    return absl::FailedPreconditionError("the sandboxed process already ended or was released");
  }
  CloseFd(&release_fd_);
  return absl::OkStatus();
}

void SandboxedProcess::Kill(KillReason why) {
  if (ended_ || init_pid_ <= 0) return;
  if (why == KillReason::kDeadline) outcome_.timed_out = true;
  KillInit();
}

void SandboxedProcess::KillInit() {
  const absl::Time give_up = absl::Now() + absl::Seconds(2);
  while (kill(init_pid_, SIGKILL) != 0 && errno == EPERM && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
}

void SandboxedProcess::ReadStatus() {
  StatusMessage m;
  while (true) {
    const ssize_t n = read(status_fd_, &m, sizeof(m));
    if (n != static_cast<ssize_t>(sizeof(m))) return;
    m.text[sizeof(m.text) - 1] = '\0';
    switch (m.kind) {
      case StatusMessage::kSetupError:
        if (outcome_.setup_error.empty()) {
          outcome_.setup_error = absl::StrCat(m.text, ": ", strerror(m.value));
        }
        break;
      case StatusMessage::kExited:
        outcome_.exited = true;
        outcome_.exit_code = m.value;
        break;
      case StatusMessage::kSignaled:
        outcome_.term_signal = m.value;
        break;
      case StatusMessage::kCpuTimeExceeded:
        outcome_.cpu_time_exceeded = true;
        break;
      default:
        break;
    }
  }
}

bool SandboxedProcess::Poll() {
  if (ended_) return true;
  if (limiter_->Exceeded(init_pid_, &outcome_)) KillInit();
  int status = 0;
  const pid_t r = waitpid(init_pid_, &status, WNOHANG);
  if (r != init_pid_) {
    ReadStatus();
    return false;
  }
  ended_ = true;
  ReadStatus();
  // The init killed (deadline, limit, caller) without a word about the
  // payload: everything in the namespace died with it.
  if (!outcome_.exited && outcome_.term_signal == 0 && WIFSIGNALED(status)) {
    outcome_.term_signal = WTERMSIG(status);
  }
  limiter_->Finish(&outcome_);
  CloseFd(&status_fd_);
  CloseFd(&release_fd_);
  return true;
}

absl::Duration SandboxedProcess::CpuTime() const {
  if (ended_ || init_pid_ <= 0) return absl::ZeroDuration();
  return limiter_->CpuTime(init_pid_);
}

}  // namespace ptxbench::sandbox
