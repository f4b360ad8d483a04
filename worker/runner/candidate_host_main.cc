// ptxbench-candidate-host: the process in which a submission runs
// (host_loop.h), started by the harness inside a sandbox; not a user
// command. It has no vendor library and never sees the harness's memory.
//   ptxbench-candidate-host --channel FD
#include <cstdlib>
#include <cstring>

#include "worker/runner/candidate.h"
#include "worker/runner/host_loop.h"
#include "workloads/launch_spec.h"

int main(int argc, char** argv) {
  int fd = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--channel") == 0) fd = std::atoi(argv[i + 1]);
  }
  if (fd < 0) return 2;
  namespace runner = ptxbench::runner;
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
