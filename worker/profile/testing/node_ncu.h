#ifndef PTXBENCH_WORKER_PROFILE_TESTING_NODE_NCU_H_
#define PTXBENCH_WORKER_PROFILE_TESTING_NODE_NCU_H_

// Where the GPU tests look for Nsight Compute: $PTXB_NCU, else the CUDA
// toolkit's (where the GPU machines have it). A test without one skips,
// saying so.

#include <cstdlib>
#include <string>

namespace ptxbench::worker {

inline std::string NodeNcuPath() {
  const char* configured = std::getenv("PTXB_NCU");
  return configured != nullptr ? configured : "/usr/local/cuda/bin/ncu";
}

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_PROFILE_TESTING_NODE_NCU_H_
