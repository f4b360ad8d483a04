#include "sandbox/uid_range.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/file.h"

namespace ptxbench::sandbox {

UidRange::UidRange(uint32_t first, int count)
    : first_(first), count_(std::clamp(count, 1, 65536)), busy_(static_cast<size_t>(count_)) {}

UidRange::Lease::Lease(Lease&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), uid_(other.uid_) {}

UidRange::Lease::~Lease() {
  if (owner_ != nullptr) owner_->Release(uid_);
}

int UidRange::FreeIndex() const {
  for (int i = 0; i < count_; ++i) {
    if (!busy_[static_cast<size_t>(i)]) return i;
  }
  return -1;
}

UidRange::Lease UidRange::Acquire() {
  absl::MutexLock lock(&mu_);
  const auto free = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return FreeIndex() >= 0; };
  mu_.Await(absl::Condition(&free));
  const int i = FreeIndex();
  busy_[static_cast<size_t>(i)] = true;
  return Lease(this, first_ + static_cast<uint32_t>(i));
}

void UidRange::Release(uint32_t uid) {
  absl::MutexLock lock(&mu_);
  busy_[uid - first_] = false;
}

namespace {

// The name of the account of `uid`, or "" when it has none.
std::string AccountOf(uint32_t uid) {
  passwd entry{};
  passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) != 0 || found == nullptr) return "";
  return found->pw_name;
}

// Locks [first, first + count) of the lock file open at `fd`: OK, or
// kFailedPrecondition saying who holds it.
absl::Status LockBlock(int fd, uint32_t first, int count, const std::string& lock_file) {
  const uint32_t last = first + static_cast<uint32_t>(count) - 1;
  for (uint32_t uid = first; uid <= last; ++uid) {
    if (const std::string name = AccountOf(uid); !name.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("uid ", uid, " belongs to the account '", name,
                       "': sandboxes must run as uids of no account"));
    }
  }
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = first;
  lock.l_len = count;
  if (fcntl(fd, F_OFD_SETLK, &lock) == 0) return absl::OkStatus();
  if (errno == EAGAIN || errno == EACCES) {
    return absl::FailedPreconditionError(
        absl::StrCat("uids ", first, "..", last, " are held by another process (", lock_file, ")"));
  }
  return absl::InternalError(absl::StrCat("cannot lock ", lock_file, ": ", strerror(errno)));
}

absl::StatusOr<int> OpenLockFile(const std::string& lock_file) {
  const int fd = open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot open ", lock_file, ": ", strerror(errno)));
  }
  return fd;
}

}  // namespace

absl::StatusOr<UidBlock> UidBlock::Claim(uint32_t first, int count, const std::string& lock_file) {
  if (count < 1 || first == 0 || uint64_t{first} + static_cast<uint64_t>(count) > 0xFFFFFFFFu) {
    return absl::InvalidArgumentError(absl::StrCat("no such block of uids: ", first, " + ", count));
  }
  absl::StatusOr<int> fd = OpenLockFile(lock_file);
  if (!fd.ok()) return fd.status();
  if (absl::Status locked = LockBlock(*fd, first, count, lock_file); !locked.ok()) {
    close(*fd);
    return locked;
  }
  return UidBlock(*fd, first, count);
}

absl::StatusOr<UidBlock> UidBlock::ClaimFree(uint32_t from, uint32_t to, int count,
                                             const std::string& lock_file) {
  for (uint64_t first = from; first + static_cast<uint64_t>(count) <= to; ++first) {
    absl::StatusOr<UidBlock> block = Claim(static_cast<uint32_t>(first), count, lock_file);
    if (block.ok() || block.status().code() != absl::StatusCode::kFailedPrecondition) return block;
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("no ", count, " free uids in ", from, "..", to - 1, " (", lock_file, ")"));
}

UidBlock::UidBlock(UidBlock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), first_(other.first_), count_(other.count_) {}

UidBlock& UidBlock::operator=(UidBlock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    first_ = other.first_;
    count_ = other.count_;
  }
  return *this;
}

UidBlock::~UidBlock() {
  if (fd_ >= 0) close(fd_);
}

int KillProcessesOfUids(uint32_t first, int count) {
  const auto in_block = [&](absl::string_view word) {
    uint32_t uid = 0;
    return absl::SimpleAtoi(word, &uid) && uid >= first &&
           uid - first < static_cast<uint32_t>(count);
  };
  std::set<pid_t> killed;  // a process that is dying may be seen again
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  for (bool found = true; found && absl::Now() < give_up;) {
    found = false;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) break;
    while (dirent* e = readdir(proc)) {
      pid_t pid = 0;
      if (!absl::SimpleAtoi(e->d_name, &pid) || pid == getpid()) continue;
      const std::string status = ReadFile(absl::StrCat("/proc/", pid, "/status")).value_or("");
      bool ours = false, dead = false;
      for (absl::string_view line : absl::StrSplit(status, '\n')) {
        // A zombie waits for its parent; a signal changes nothing.
        if (absl::StartsWith(line, "State:")) {
          const absl::string_view state = absl::StripLeadingAsciiWhitespace(line.substr(6));
          dead = !state.empty() && (state[0] == 'Z' || state[0] == 'X');
        }
        if (!absl::StartsWith(line, "Uid:")) continue;
        for (absl::string_view word : absl::StrSplit(line.substr(4), '\t', absl::SkipEmpty())) {
          ours |= in_block(word);
        }
      }
      if (!ours || dead) continue;
      if (kill(pid, SIGKILL) == 0) {
        killed.insert(pid);
        found = true;
      }
    }
    closedir(proc);
    if (found) absl::SleepFor(absl::Milliseconds(20));
  }
  return static_cast<int>(killed.size());
}

}  // namespace ptxbench::sandbox
