#include "sandbox/protections.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "sandbox/command.h"
#include "sandbox/limiter.h"
#include "sandbox/view.h"

namespace ptxbench::sandbox {

std::string PrepareCgroupRoot(const std::string& root, std::string* why_not) {
  const std::string controllers = ReadFile("/sys/fs/cgroup/cgroup.controllers").value_or("");
  if (!absl::StrContains(controllers, "memory") || !absl::StrContains(controllers, "pids")) {
    *why_not = "no cgroup v2 with the memory and pids controllers at /sys/fs/cgroup";
    return "";
  }
  if (const int error = MakeCgroupDir(root, true); error != 0) {
    *why_not = absl::StrCat("cannot create ", root, ": ", strerror(error));
    return "";
  }
  if (!WriteFile(root + "/cgroup.subtree_control", "+memory +pids").ok()) {
    *why_not = absl::StrCat("cannot enable the memory and pids controllers in ", root);
    return "";
  }
  return root;
}

std::string ProbeSandbox(unsigned uid) {
  ViewBuilder view;
  view.AddHostPath("/usr/bin", Mount::Kind::kReadOnly);
  view.AddHostPath("/usr/lib", Mount::Kind::kReadOnly);
  view.AddHostPath("/lib64/ld-linux-x86-64.so.2", Mount::Kind::kReadOnly);
  CommandOptions probe;
  probe.policy.mounts = view.mounts();
  probe.policy.uid = uid;
  probe.policy.gid = uid;
  probe.argv = {"/usr/bin/true"};
  probe.deadline = absl::Seconds(20);
  absl::StatusOr<CommandResult> ran = RunCommand(probe);
  if (ran.ok() && ran->ok()) return "";
  if (!ran.ok()) return std::string(ran.status().message());
  return ran->outcome.setup_error.empty() ? ran->output : ran->outcome.setup_error;
}

Protections ProbeProtections(const std::string& cgroup_root, unsigned uid) {
  Protections p;
  const bool root = geteuid() == 0;
  // A process in a full sandbox: namespaces, view, seccomp, dropped ids.
  const std::string why_no_sandbox = ProbeSandbox(uid);
  p.sandbox_works = why_no_sandbox.empty();
  if (p.sandbox_works) {
    p.active.push_back(
        "own PID, network, mount, IPC, UTS and cgroup namespaces per sandbox, which dies with "
        "its caller");
    p.active.push_back("filesystem view: toolchain or host libraries read-only, own directory");
    p.active.push_back("no capabilities, no_new_privs, seccomp filter");
  } else {
    p.warnings.push_back(absl::StrCat("no sandbox (", why_no_sandbox,
                                      "): compilers run unsandboxed and GPU evaluations fail"));
  }
  if (root) {
    p.active.push_back(absl::StrCat("submitted code runs as uid ", uid));
  } else {
    p.warnings.push_back(absl::StrCat("not root: submitted code runs as the worker's own uid ",
                                      geteuid(), " (in a user namespace)"));
  }
  std::string why_not;
  p.cgroup_root = PrepareCgroupRoot(cgroup_root, &why_not);
  if (!p.cgroup_root.empty()) {
    p.active.push_back(absl::StrCat("memory and process limits: cgroup v2 (", p.cgroup_root, ")"));
  } else {
    p.warnings.push_back(absl::StrCat(why_not, ": memory and process limits by a watchdog "
                                               "polling every 5 ms"));
  }
  // CPU shares (Policy::cpus) need the cpu controller; sandboxes without it
  // run with none, so say so here.
  if (!p.cgroup_root.empty() && WriteFile(p.cgroup_root + "/cgroup.subtree_control", "+cpu").ok()) {
    p.active.push_back(absl::StrCat("CPU shares: cgroup v2 cpu.max (", p.cgroup_root, ")"));
  } else {
    p.warnings.push_back(absl::StrCat(
        p.cgroup_root.empty() ? "no cgroup v2" : "no cpu controller in " + p.cgroup_root,
        ": CPU shares (cpu.max) are not enforced; CPU time limits (RLIMIT_CPU) are"));
  }
  p.active.push_back("daemons non-dumpable (PR_SET_DUMPABLE 0)");
  return p;
}

}  // namespace ptxbench::sandbox
