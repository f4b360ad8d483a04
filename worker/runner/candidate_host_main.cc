// ptxbench-candidate-host: the process in which a submission runs
// (host_loop.h), started by the harness inside a sandbox; not a user
// command. It has no vendor library and never sees the harness's memory.
//   ptxbench-candidate-host --channel FD
// A profile run (profile_driver.h) starts it with the profiler's settings
// too; it then runs Nsight Compute with itself, plain, as the target:
//   ptxbench-candidate-host --channel FD --profile-with NCU
//       --profile-launches N --profile-metrics M --profile-out PREFIX
// A sanitize run (sanitize_driver.h) likewise, with compute-sanitizer:
//   ptxbench-candidate-host --channel FD --sanitize-with SANITIZER
//       --sanitize-print-limit N --sanitize-log FILE
#include <cstdlib>
#include <cstring>
#include <string>

#include "worker/runner/hosts/candidate.h"
#include "worker/runner/hosts/host_loop.h"
#include "worker/runner/hosts/profile_driver.h"
#include "worker/runner/hosts/sanitize_driver.h"
#include "workloads/launch_spec.h"

int main(int argc, char** argv) {
  namespace runner = ptxbench::runner;
  int fd = -1;
  runner::ProfileDriverArgs profile;
  runner::SanitizeDriverArgs sanitize;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--channel") fd = std::atoi(value.c_str());
    if (flag == "--profile-with") profile.ncu = value;
    if (flag == "--profile-launches") profile.launches = std::atoi(value.c_str());
    if (flag == "--profile-metrics") profile.metrics = value;
    if (flag == "--profile-out") profile.out_prefix = value;
    if (flag == "--sanitize-with") sanitize.sanitizer = value;
    if (flag == "--sanitize-print-limit") sanitize.print_limit = std::atoi(value.c_str());
    if (flag == "--sanitize-log") sanitize.log_path = value;
  }
  if (fd < 0) return 2;
  if (!profile.ncu.empty()) {
    profile.target = {argv[0], "--channel", std::to_string(fd)};
    return runner::RunProfileDriver(profile);
  }
  if (!sanitize.sanitizer.empty()) {
    sanitize.target = {argv[0], "--channel", std::to_string(fd)};
    return runner::RunSanitizeDriver(sanitize);
  }
  return runner::RunHostLoop(
      fd, [](const runner::protocol::Request& r)
              -> absl::StatusOr<std::unique_ptr<runner::Candidate>> {
        if (r.language != "ptx") return runner::LoadCudaCandidate(r.artifact);
        absl::StatusOr<ptxbench::workloads::LaunchSpec> spec =
            ptxbench::workloads::ParseLaunchSpec(r.launch_spec);
        if (!spec.ok()) return spec.status();
        return runner::LoadPtxCandidate(r.artifact, *spec, r.axis_order);
      });
}
