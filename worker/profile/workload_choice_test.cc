#include "worker/profile/workload_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ptxbench::worker {
namespace {

workloads::Definition Gemm() {
  workloads::Definition d;
  d.name = "gemm";
  for (auto [uuid, m] : std::vector<std::pair<std::string, int64_t>>{
           {"m70", 70}, {"m8192", 8192}, {"m232", 232}, {"m8192b", 8192}}) {
    workloads::Workload w;
    w.uuid = uuid;
    w.axes = {{"M", m}, {"N", 7168}};
    d.workloads.push_back(w);
  }
  return d;
}

TEST(WorkloadChoiceTest, TheLargestEvaluatedWorkloadUnlessOneIsNamed) {
  const workloads::Definition d = Gemm();
  EXPECT_EQ((*ChooseProfileWorkload(d, {}, ""))->uuid, "m8192");  // the first of equals
  EXPECT_EQ((*ChooseProfileWorkload(d, {"m70", "m232"}, ""))->uuid, "m232");
  EXPECT_EQ((*ChooseProfileWorkload(d, {}, "m70"))->uuid, "m70");
  EXPECT_THAT(ChooseProfileWorkload(d, {"m232"}, "m70").status().message(),
              testing::HasSubstr("workload m70 to profile is not one of this evaluation's"));
  EXPECT_FALSE(ChooseProfileWorkload(d, {"nothing"}, "").ok());
}

}  // namespace
}  // namespace ptxbench::worker
