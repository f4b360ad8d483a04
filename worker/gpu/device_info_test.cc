#include "worker/gpu/device_info.h"

#include <gtest/gtest.h>

namespace ptxbench::gpu {
namespace {

TEST(SmArchTest, JoinsMajorAndMinor) {
  EXPECT_EQ(SmArch(9, 0), "sm_90");
  EXPECT_EQ(SmArch(8, 6), "sm_86");
  EXPECT_EQ(SmArch(10, 0), "sm_100");
}

// Runs everywhere: on a machine without a driver the inventory is empty and
// says why; with a driver it may fail, but only with kUnavailable and the
// driver's words; with GPUs every entry is filled in.
TEST(DeviceInfoTest, DiscoveryNeverCrashesAndExplainsAnAbsentGpu) {
  absl::StatusOr<GpuInventory> inv = DiscoverGpus();
  if (!inv.ok()) {
    EXPECT_EQ(inv.status().code(), absl::StatusCode::kUnavailable) << inv.status();
    EXPECT_NE(inv.status().message().find("CUDA driver call"), absl::string_view::npos);
    return;
  }
  if (inv->gpus.empty()) {
    EXPECT_FALSE(inv->why_none.empty());
    return;
  }
  for (const GpuInfo& g : inv->gpus) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_EQ(g.sm_arch, SmArch(g.cc_major, g.cc_minor));
    EXPECT_GT(g.total_memory_bytes, 0u);
    EXPECT_GT(g.l2_cache_bytes, 0);
    EXPECT_GT(g.sm_count, 0);
  }
}

TEST(DeviceInfoTest, RepeatedDiscoveryAgrees) {
  absl::StatusOr<GpuInventory> a = DiscoverGpus();
  absl::StatusOr<GpuInventory> b = DiscoverGpus();
  ASSERT_EQ(a.ok(), b.ok());
  if (a.ok()) {
    EXPECT_EQ(a->gpus.size(), b->gpus.size());
  }
}

}  // namespace
}  // namespace ptxbench::gpu
