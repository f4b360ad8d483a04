#ifndef PTXBENCH_TESTING_REQUIRE_GPU_H_
#define PTXBENCH_TESTING_REQUIRE_GPU_H_

// For GPU tests: skip with "no CUDA GPU: <reason>" where discovery finds none,
// so CPU-only machines (CI) report a skip that says why, not a failure.

#include <gtest/gtest.h>

#include <string>

#include "worker/gpu/device_info.h"

namespace ptxbench::testing {

// Empty when a GPU is usable, else the reason there is none.
inline std::string NoGpuReason() {
  absl::StatusOr<gpu::GpuInventory> inv = gpu::DiscoverGpus();
  if (!inv.ok()) return std::string(inv.status().message());
  if (inv->gpus.empty()) return inv->why_none;
  return "";
}

}  // namespace ptxbench::testing

// First statement of every GPU test.
#define PTXB_REQUIRE_GPU()                                                      \
  do {                                                                          \
    const std::string ptxb_no_gpu_ = ::ptxbench::testing::NoGpuReason();        \
    if (!ptxb_no_gpu_.empty()) GTEST_SKIP() << "no CUDA GPU: " << ptxb_no_gpu_; \
  } while (0)

#endif  // PTXBENCH_TESTING_REQUIRE_GPU_H_
