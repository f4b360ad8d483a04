#include "worker/profile/ncu_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace ptxbench::worker {
namespace {

// A raw page as `ncu --import R --csv --page raw --print-units base` writes
// it (the fixed columns of Nsight Compute 2025.3, then the metrics).
std::string Page(const std::vector<std::vector<std::string>>& launches) {
  std::vector<std::string> header = {"ID", "Process ID", "Process Name", "Host Name",
                                     "Kernel Name", "Context", "Stream", "Block Size",
                                     "Grid Size", "Device", "CC"};
  std::vector<std::string> units(header.size(), "");
  const std::vector<std::pair<std::string, std::string>> metrics = {
      {"gpu__time_duration.sum", "nsecond"},
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"},
      {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%"},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", "%"},
      {"sm__maximum_warps_per_active_cycle_pct", "%"},
      {"launch__occupancy_limit_registers", "block"},
      {"launch__occupancy_limit_shared_mem", "block"},
      {"launch__occupancy_limit_warps", "block"},
      {"launch__registers_per_thread", "register/thread"},
      {"launch__shared_mem_per_block_static", "byte/block"},
      {"launch__shared_mem_per_block_dynamic", "byte/block"},
      {"launch__block_size", ""},
      {"launch__grid_size", ""},
      {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", ""},
      {"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", ""},
      {"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", ""},
      {"smsp__average_warps_issue_stalled_selected_per_issue_active.ratio", ""},
      {"smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio", ""},
  };
  for (const auto& [m, u] : metrics) {
    header.push_back(m);
    units.push_back(u);
  }
  auto quote = [](const std::vector<std::string>& cells) {
    std::vector<std::string> q;
    for (const std::string& c : cells) {
      q.push_back(absl::StrCat("\"", absl::StrReplaceAll(c, {{"\"", "\"\""}}), "\""));
    }
    return absl::StrJoin(q, ",");
  };
  std::string page = absl::StrCat(quote(header), "\n", quote(units), "\n");
  int id = 0;
  for (const auto& l : launches) {
    std::vector<std::string> row = {std::to_string(id++), "645", "ptxbench-candidate-host",
                                    "127.0.0.1", l[0], "1", "7", "(256, 1, 1)", "(1024, 1, 1)",
                                    "0", "9.0"};
    row.insert(row.end(), l.begin() + 1, l.end());
    page += quote(row) + "\n";
  }
  return page;
}

std::vector<std::string> Launch(const std::string& name, const std::string& ns) {
  return {name, ns, "41.25", "60.1", "45.1", "50", "2", "3", "8", "128", "16,384",
          "32,768", "256", "1,024", "12.4", "3.1", "0.5", "9.9", "1.2"};
}

TEST(NcuSummaryTest, EachKernelIsSummedOverItsLaunchesAndNamesWhatLimitsIt) {
  absl::StatusOr<NcuSummary> s = SummarizeNcuCsv(
      Page({Launch("gemm_kernel", "800,000"), Launch("epilogue", "1,500"),
            Launch("gemm_kernel", "812,340")}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->launches, 3);
  EXPECT_EQ(s->kernels_profiled, 2);
  ASSERT_EQ(s->kernels.size(), 2u);
  const v1::KernelProfile& k = s->kernels[0];
  EXPECT_EQ(k.name(), "gemm_kernel");
  EXPECT_EQ(k.launches(), 2);
  EXPECT_NEAR(k.duration_us(), 1612.34, 1e-9);  // nanoseconds, thousands separated
  EXPECT_DOUBLE_EQ(k.sm_throughput_pct(), 41.25);
  EXPECT_DOUBLE_EQ(k.dram_throughput_pct(), 60.1);
  EXPECT_DOUBLE_EQ(k.memory_throughput_pct(), -1);  // not collected here
  EXPECT_DOUBLE_EQ(k.tensor_pipe_pct(), -1);
  EXPECT_EQ(k.occupancy_limiter(), "registers");
  EXPECT_EQ(k.registers_per_thread(), 128);
  EXPECT_EQ(k.shared_memory_per_block_bytes(), 16384 + 32768);
  EXPECT_EQ(k.block_size(), 256);
  EXPECT_EQ(k.grid_size(), 1024);
  // The three largest stalls; "selected" (issuing) is not one.
  ASSERT_EQ(k.stalls_size(), 3);
  EXPECT_EQ(k.stalls(0).reason(), "long_scoreboard");
  EXPECT_EQ(k.stalls(1).reason(), "barrier");
  EXPECT_EQ(k.stalls(2).reason(), "mio_throttle");
  EXPECT_EQ(s->kernels[1].name(), "epilogue");
}

TEST(NcuSummaryTest, PtxbenchsOwnKernelsAreLeftOutAndAtMostEightAreKept) {
  std::vector<std::vector<std::string>> launches = {Launch("SpinKernel", "5,000")};
  for (int i = 0; i < 12; ++i) launches.push_back(Launch(absl::StrCat("k", i), absl::StrCat(1000 + i)));
  absl::StatusOr<NcuSummary> s = SummarizeNcuCsv(Page(launches), {"SpinKernel"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->kernels_profiled, 12);
  ASSERT_EQ(s->kernels.size(), static_cast<size_t>(kMaxProfiledKernels));
  EXPECT_EQ(s->kernels[0].name(), "k11");  // the longest first
}

TEST(NcuSummaryTest, TheKernelControlsItsNameAndItIsCleaned) {
  absl::StatusOr<NcuSummary> s =
      SummarizeNcuCsv(Page({Launch("void f<\"x\",\n\x1b[31m>(int)" + std::string(300, 'a'), "10")}));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->kernels.size(), 1u);
  EXPECT_EQ(s->kernels[0].name().substr(0, 20), "void f<\"x\",??[31m>(i");
  EXPECT_EQ(s->kernels[0].name().size(), 200u);
}

TEST(NcuSummaryTest, AnEmptyPageIsNoKernelAndAnotherTextIsRefused) {
  absl::StatusOr<NcuSummary> empty = SummarizeNcuCsv("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->kernels_profiled, 0);
  EXPECT_THAT(SummarizeNcuCsv("==ERROR== LaunchFailed\n").status().message(),
              testing::HasSubstr("no \"ID\" and \"Kernel Name\" columns"));
  absl::StatusOr<NcuSummary> header_only = SummarizeNcuCsv(Page({}));
  ASSERT_TRUE(header_only.ok());
  EXPECT_TRUE(header_only->kernels.empty());
}

TEST(NcuSummaryTest, TheMetricsAskedForAreTheOnesRead) {
  const std::vector<std::string>& m = NcuMetrics();
  EXPECT_NE(std::find(m.begin(), m.end(), "gpu__time_duration.sum"), m.end());
  EXPECT_NE(std::find(m.begin(), m.end(),
                      "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio"),
            m.end());
  EXPECT_EQ(std::find(m.begin(), m.end(),
                      "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio"),
            m.end());
}

}  // namespace
}  // namespace ptxbench::worker
