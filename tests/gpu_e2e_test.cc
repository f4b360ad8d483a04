// End to end on a GPU: scheduler + real worker + a gateway whose
// answers are kernel files written for the test. Turn 0 answers a kernel
// that leaves part of C unwritten, turn 1 a correct one: every trajectory
// ends, with real check and timing results in the database and in
// `ptxbench show`. Skips where there is no GPU.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/data_dir.h"
#include "common/file.h"
#include "gtest/gtest.h"
#include "testing/require_gpu.h"
#include "worker/profile/testing/node_ncu.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

TEST(GpuEndToEndTest, ScriptedKernelsAreCheckedAndTimedOnTheGpu) {
  PTXB_REQUIRE_GPU();
  Cluster c("e2e_gpu");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  const std::string kernels = DataDir() + "/worker/testdata/gemm/";
  c.WriteFile("answers/gemm_n7168_k5120/turn0.cu", ReadFile(kernels + "skip_rows.cu").value_or(""));
  c.WriteFile("answers/gemm_n7168_k5120/turn1.cu", ReadFile(kernels + "correct.cu").value_or(""));
  // Fewer timed calls than the default: the simple kernel takes ~0.1 s at
  // M=8192 and this test is about the flow, not the figures.
  c.AddRealWorker({"--slots", "2", "--timed-calls", "10", "--warmup-calls", "2"});
  c.AddGateway({"--latency-ms", "5", "--answers-dir", c.dir() + "/answers"});
  // A target no simple kernel meets, so both turns run.
  std::string exp = c.Submit(c.WriteFile("spec.json", R"({"name": "gpu-e2e",
    "models": ["scripted"], "definitions": ["gemm_n7168_k5120"],
    "prompt_tags": ["ptxb-no-hint"], "samples": 2, "num_turns": 2, "target_speedup": 100.0})"));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();

  nlohmann::json status = c.WaitFinished(exp, 240);
  std::cout << status.dump(2) << "\n";
  ASSERT_EQ(status["trajectories"]["terminal"], 2) << status.dump() << Tail(c.dir() + "/worker0.log");
  // eval_status: 4 INCORRECT_NUMERICAL, 1 PASSED.
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE turn = 0 AND eval_status = 4"), 2);
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE turn = 1 AND eval_status = 1"), 2);

  std::string trajectory;
  {
    auto db = c.OpenDatabase();
    auto s = db->Prepare("SELECT id FROM trajectories ORDER BY rowid LIMIT 1");
    ASSERT_TRUE(s.ok() && *s->Step());
    trajectory = s->ColumnText(0);
  }
  CommandResult show = c.Cli({"show", trajectory});
  std::cout << show.out << "\n";
  ASSERT_EQ(show.exit_code, 0) << show.out;
  CommandResult json = c.Cli({"show", trajectory, "--output", "json", "--full"});
  ASSERT_EQ(json.exit_code, 0);
  nlohmann::json t = nlohmann::json::parse(json.out);
  ASSERT_EQ(t["turns"].size(), 2u) << json.out;
  EXPECT_NE(t["turns"][0].value("feedback", "").find("NaN"), std::string::npos)
      << t["turns"][0].value("feedback", "");
  EXPECT_EQ(t["turns"][0].value("feedback", "").find("SIMULATED"), std::string::npos);
  std::cout << "turn 1 feedback:\n" << t["turns"][1].value("feedback", "") << "\n";
}

// Profile feedback from a real profiler: a worker started with --ncu
// profiles every evaluation of an experiment that asks (the ptxb-profile
// tag); the model's feedback carries Nsight Compute's figures and the SASS
// census, `show` prints them, and the report comes back as Nsight Compute
// wrote it. Skips where there is no Nsight Compute.
TEST(GpuEndToEndTest, AProfiledExperimentFeedsNsightComputeFiguresToTheModel) {
  PTXB_REQUIRE_GPU();
  const std::string ncu = worker::NodeNcuPath();
  if (!std::filesystem::exists(ncu)) GTEST_SKIP() << "no Nsight Compute at " << ncu;
  Cluster c("e2e_gpu_profile");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  const std::string kernels = DataDir() + "/worker/testdata/gemm/";
  c.WriteFile("answers/gemm_n7168_k5120/turn0.cu", ReadFile(kernels + "correct.cu").value_or(""));
  c.WriteFile("answers/gemm_n7168_k5120/turn1.cu", ReadFile(kernels + "correct.cu").value_or(""));
  c.AddRealWorker({"--slots", "1", "--timed-calls", "5", "--warmup-calls", "1", "--ncu", ncu});
  c.AddGateway({"--latency-ms", "5", "--answers-dir", c.dir() + "/answers"});
  // Submit refuses a profiled experiment until the worker said it can profile.
  const std::string spec = c.WriteFile("spec.json", R"({"name": "gpu-profile",
    "models": ["scripted"], "definitions": ["gemm_n7168_k5120"],
    "prompt_tags": ["ptxb-profile"], "samples": 1, "num_turns": 2, "target_speedup": 100.0})");
  std::string exp;
  for (int i = 0; i < 100 && exp.empty(); ++i) {
    if (c.Cli({"workers"}).out.find("Nsight Compute") != std::string::npos) exp = c.Submit(spec);
    if (exp.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_FALSE(exp.empty()) << c.Cli({"workers"}).out << Tail(c.dir() + "/worker0.log");
  const nlohmann::json status = c.WaitFinished(exp, 480);
  ASSERT_EQ(status["trajectories"]["terminal"], 1)
      << status.dump() << Tail(c.dir() + "/worker0.log");

  std::string trajectory;
  {
    auto db = c.OpenDatabase();
    auto s = db->Prepare("SELECT id FROM trajectories LIMIT 1");
    ASSERT_TRUE(s.ok() && *s->Step());
    trajectory = s->ColumnText(0);
  }
  const CommandResult json = c.Cli({"show", trajectory, "--output", "json", "--full"});
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const nlohmann::json t = nlohmann::json::parse(json.out);
  ASSERT_EQ(t["turns"].size(), 2u) << json.out;
  for (const auto& turn : t["turns"]) {
    const std::string feedback = turn.value("feedback", "");
    std::cout << "turn " << turn["index"] << " feedback:\n" << feedback << "\n";
    EXPECT_NE(feedback.find("Profile (Nsight Compute "), std::string::npos) << feedback;
    EXPECT_NE(feedback.find("gemm_tiled"), std::string::npos) << "the kernel is not named";
    EXPECT_NE(feedback.find("SASS (cuobjdump): "), std::string::npos) << feedback;
    EXPECT_EQ(feedback.find("SIMULATED"), std::string::npos);
    ASSERT_TRUE(turn.contains("profile")) << turn.dump();
    EXPECT_EQ(turn["profile"]["status"], "PASSED") << turn["profile"].dump();
    EXPECT_EQ(turn["profile"]["axes"]["M"], "8192");  // the largest workload
  }
  const CommandResult text = c.Cli({"show", trajectory});
  std::cout << text.out << "\n";
  EXPECT_NE(text.out.find("SASS (cuobjdump): "), std::string::npos);
  const CommandResult exported =
      c.Cli({"show", trajectory, "--profile-reports", c.dir() + "/reports"});
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  std::cout << exported.out;
  const absl::StatusOr<std::string> report =
      ReadFile(c.dir() + "/reports/" + trajectory + ".turn0.ncu-rep");
  ASSERT_TRUE(report.ok()) << exported.out;
  EXPECT_GT(report->size(), 1000u);
  if (const char* keep = std::getenv("PTXB_KEEP_REPORTS")) {
    ASSERT_TRUE(WriteFile(std::string(keep) + "/e2e_turn0.ncu-rep", *report).ok());
  }
}

}  // namespace
}  // namespace ptxbench::testing
