#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_AGENT_HOST_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_AGENT_HOST_H_

// What a gateway with agent slots takes of its machine before its first
// session (docs/AGENTS.md, "Supervision"), so that nothing of a session
// outlives the gateway and a restarted gateway finds nothing of an earlier
// one:
//  - its sessions directory, locked (flock) for as long as it lives, and
//    emptied of what an earlier gateway left there;
//  - as root, a mount namespace of its own (every mount of a session's
//    tmpfs is then the gateway's and goes with it, kill -9 included);
//  - as root, a block of uids no other gateway of the machine has (one per
//    slot, sandbox::UidBlock), swept of the processes an earlier owner left.
// A session itself dies with the gateway through its sandbox's init
// (sandbox/sandboxed_process.h).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "sandbox/policy.h"
#include "sandbox/protections.h"
#include "sandbox/uid_range.h"

namespace ptxbench::agent_gateway {

// The default block of session uids is the first free one from here (below
// nobody, the sandboxes' default uid; the worker's candidate hosts take
// 65000..65015).
inline constexpr uint32_t kFirstSessionUid = 65100;
inline constexpr uint32_t kSessionUidEnd = sandbox::kDefaultUid;

class SessionsDirectory {
 public:
  // Makes `dir` (0711: a session's uid passes through to its own directory
  // and lists nothing) and takes its lock, held until this is destroyed
  // (or the process ends). kFailedPrecondition, naming the directory, when
  // another gateway holds it.
  static absl::StatusOr<SessionsDirectory> Take(const std::string& dir);
  SessionsDirectory(SessionsDirectory&& other) noexcept;
  SessionsDirectory& operator=(SessionsDirectory&&) = delete;
  ~SessionsDirectory();

  const std::string& path() const { return path_; }
  // Removes what an earlier gateway left: each session's directory (named
  // <task>-<session>), its mounts first (a gateway of an earlier version
  // mounted them where every process sees them). Returns how many. Run it
  // once the processes that could still write there are gone
  // (ClaimSessionUids), and before EnterOwnMountNamespace, which puts the
  // host's mounts out of reach.
  int RemoveLeftovers();

 private:
  SessionsDirectory(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

// As root: the mounts this process makes from now on are its own (a mount
// namespace, the host's mounts still reaching it as a slave). Must run while
// the process has one thread (a thread made before keeps the host's mounts):
// kFailedPrecondition otherwise, or where the kernel refuses.
absl::Status EnterOwnMountNamespace();

// The sessions' uids, as root: the block [base, base + slots), or with base
// 0 the first free block from kFirstSessionUid; what runs as its uids (left
// by an earlier gateway) is killed first. kFailedPrecondition names why a
// block cannot be had.
absl::StatusOr<sandbox::UidBlock> ClaimSessionUids(uint32_t base, int slots);

// The sessions' cgroup (--agent-cgroup DIR): made, and its children given the
// memory and pids controllers. Where DIR is the gateway's own cgroup (a
// systemd unit with Delegate=yes: docs/AGENTS.md), the gateway first moves
// into a child of it, DIR/gateway, since a cgroup that holds a process
// cannot give its children controllers. kFailedPrecondition says what
// DIR lacks.
absl::Status PrepareSessionsCgroup(const std::string& dir);

struct SessionLimits {
  const sandbox::UidBlock* uids = nullptr;  // null: not root
  uint64_t disk_bytes = 0;
  uint64_t open_files = 0;
  std::string cgroup;  // prepared (sandbox::PrepareCgroupRoot), "" = none
};

// What this gateway's sessions are protected by, and what not, in words
// (logged at start and registered: `ptxbench workers` shows them).
sandbox::Protections SessionProtections(const SessionLimits& limits);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_AGENT_HOST_H_
