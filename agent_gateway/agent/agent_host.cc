#include "agent_gateway/agent/agent_host.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file.h"
#include "common/log.h"
#include "sandbox/limiter.h"

namespace ptxbench::agent_gateway {
namespace {

namespace fs = std::filesystem;

// A session's directory (session_setup.h, SessionDirectory): <task>-<n>,
// the task's id of letters, digits and '_'.
bool IsSessionDirectoryName(absl::string_view name) {
  const size_t dash = name.rfind('-');
  if (dash == absl::string_view::npos || dash == 0 || dash + 1 == name.size()) return false;
  const absl::string_view task = name.substr(0, dash), session = name.substr(dash + 1);
  return std::all_of(task.begin(), task.end(),
                     [](char c) {
                       return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
                     }) &&
         std::all_of(session.begin(), session.end(),
                     [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); });
}

int ThreadCount() {
  int n = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

absl::StatusOr<SessionsDirectory> SessionsDirectory::Take(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || chmod(dir.c_str(), 0711) != 0) {
    return absl::InternalError(absl::StrCat("cannot make the sessions directory ", dir));
  }
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot open the sessions directory ", dir, ": ", strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("another ptxbench-gateway runs its sessions in ", dir,
                       ": give each gateway its own --agent-dir"));
    }
    return absl::InternalError(absl::StrCat("cannot lock ", dir, ": ", strerror(error)));
  }
  return SessionsDirectory(dir, fd);
}

int SessionsDirectory::RemoveLeftovers() {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(path_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_error;
    if (!IsSessionDirectoryName(name) || !it->is_directory(type_error) ||
        it->is_symlink(type_error)) {
      continue;
    }
    const std::string path = it->path().string();
    // Stacked mounts come off one at a time; EINVAL: none is left.
    if (geteuid() == 0) {
      for (int i = 0; i < 16 && umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0; ++i) {
      }
    }
    std::error_code remove_error;
    fs::remove_all(path, remove_error);
    if (remove_error) {
      LogWarning("cannot remove an earlier session's directory",
                 {{"dir", path}, {"why", remove_error.message()}});
      continue;
    }
    ++removed;
  }
  return removed;
}

SessionsDirectory::SessionsDirectory(SessionsDirectory&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

SessionsDirectory::~SessionsDirectory() {
  if (fd_ >= 0) close(fd_);
}

absl::Status EnterOwnMountNamespace() {
  if (const int threads = ThreadCount(); threads != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("the gateway must enter its own mount namespace before any thread exists (",
                     threads, " threads)"));
  }
  if (unshare(CLONE_NEWNS) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot make the gateway a mount namespace of its own: ", strerror(errno)));
  }
  // The host's mounts still reach it (a GPU driver's, a new disk); its own
  // (each session's tmpfs) reach nobody and go when it ends.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot make the gateway's mounts its own: ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status PrepareSessionsCgroup(const std::string& dir) {
  std::string own;
  for (absl::string_view line : absl::StrSplit(ReadFile("/proc/self/cgroup").value_or(""), '\n')) {
    if (absl::StartsWith(line, "0::")) own = absl::StrCat("/sys/fs/cgroup", line.substr(3));
  }
  std::error_code ec;
  if (!own.empty() && fs::weakly_canonical(own, ec) == fs::weakly_canonical(dir, ec)) {
    const std::string gateway = dir + "/gateway";
    if (const int error = sandbox::MakeCgroupDir(gateway, true); error != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create ", gateway, ": ", strerror(error)));
    }
    if (absl::Status moved = WriteFile(gateway + "/cgroup.procs", std::to_string(getpid()));
        !moved.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot move the gateway into ", gateway, ": ", moved.message()));
    }
  }
  std::string why_not;
  if (sandbox::PrepareCgroupRoot(dir, &why_not).empty()) {
    return absl::FailedPreconditionError(why_not);
  }
  return absl::OkStatus();
}

absl::StatusOr<sandbox::UidBlock> ClaimSessionUids(uint32_t base, int slots) {
  absl::StatusOr<sandbox::UidBlock> block =
      base != 0 ? sandbox::UidBlock::Claim(base, slots)
                : sandbox::UidBlock::ClaimFree(kFirstSessionUid, kSessionUidEnd, slots);
  if (!block.ok()) return block.status();
  if (const int killed = sandbox::KillProcessesOfUids(block->first(), block->count()); killed > 0) {
    LogWarning("killed what an earlier gateway's sessions left",
               {{"processes", std::to_string(killed)},
                {"uids", absl::StrCat(block->first(), "..", block->first() + block->count() - 1)}});
  }
  return block;
}

sandbox::Protections SessionProtections(const SessionLimits& limits) {
  sandbox::Protections p;
  p.sandbox_works = true;
  p.cgroup_root = limits.cgroup;
  p.active.push_back(
      "each session in PID, network (only lo), mount, IPC, UTS and cgroup namespaces of its "
      "own, with no capabilities, no_new_privs and a seccomp filter; vendor libraries masked");
  p.active.push_back(
      "a session dies with the gateway (kill -9 included), and so does all it started");
  if (limits.uids != nullptr) {
    p.active.push_back(absl::StrCat("each session runs as its own uid of ", limits.uids->first(),
                                    "..", limits.uids->first() + limits.uids->count() - 1,
                                    " (gid = uid), so per-uid kernel limits are its own"));
    p.active.push_back(absl::StrCat(
        "each session's directory is a tmpfs of ", limits.disk_bytes >> 20,
        " MiB, mounted in the gateway's own mount namespace: a gateway that dies leaves none"));
  } else {
    p.warnings.push_back(absl::StrCat(
        "not root: every session runs as the gateway's own uid ", geteuid(),
        " (a user namespace), sharing its per-uid kernel limits, and its directory is no disk "
        "of its own"));
  }
  p.active.push_back(
      absl::StrCat(limits.open_files, " open files per process of a session (RLIMIT_NOFILE)"));
  if (!limits.cgroup.empty()) {
    p.active.push_back(absl::StrCat(
        "memory (kernel memory of sockets, pipes and inotify included) and processes of each "
        "session: cgroup v2 (",
        limits.cgroup, ")"));
  } else {
    p.warnings.push_back(absl::StrCat(
        "no --agent-cgroup: nothing bounds a session's kernel memory (socket buffers, pipes, "
        "inotify) but ",
        limits.open_files,
        " open files per process, nor its CPU share; its memory and processes are limited by a "
        "watchdog polling every 50 ms (docs/AGENTS.md: delegate a cgroup with systemd)"));
  }
  return p;
}

}  // namespace ptxbench::agent_gateway
