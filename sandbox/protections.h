#ifndef PTXBENCH_SANDBOX_PROTECTIONS_H_
#define PTXBENCH_SANDBOX_PROTECTIONS_H_

// What this machine lets the sandbox do, found by trying it (a worker checks
// at start, logs it and registers it, so `ptxbench workers` shows it for
// every node). A missing protection is a warning naming what is then not
// protected.

#include <string>
#include <vector>

namespace ptxbench::sandbox {

struct Protections {
  bool sandbox_works = false;  // namespaces, view, seccomp: a process ran in one
  // The cgroup v2 directory sandboxes may create their cgroups in (memory and
  // pids controllers enabled, cpu where the machine has it); empty: limits
  // by the watchdog.
  std::string cgroup_root;
  std::vector<std::string> active;
  std::vector<std::string> warnings;
};

// `cgroup_root`: where to make the sandboxes' cgroups (created, with the
// memory and pids controllers enabled, and cpu, when the machine allows);
// `uid`: the sandbox uid when running as root.
Protections ProbeProtections(const std::string& cgroup_root, unsigned uid);

// The two probes of ProbeProtections, for a daemon that words its own
// protections (a gateway with agent slots):
// - whether a process runs in a full sandbox (namespaces, view, seccomp,
//   dropped ids, as `uid` when root): "" when it does, else why not;
std::string ProbeSandbox(unsigned uid);
// - `root` made a cgroup whose children get memory.max and pids.max: `root`,
//   or "" with `why_not` said.
std::string PrepareCgroupRoot(const std::string& root, std::string* why_not);

}  // namespace ptxbench::sandbox

#endif  // PTXBENCH_SANDBOX_PROTECTIONS_H_
