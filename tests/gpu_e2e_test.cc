// End to end on a GPU: scheduler + real worker + a gateway whose
// answers are kernel files written for the test. Turn 0 answers a kernel
// that leaves part of C unwritten, turn 1 a correct one: every trajectory
// ends, with real check and timing results in the database and in
// `ptxbench show`. Skips where there is no GPU.
#include <filesystem>

#include "common/data_dir.h"
#include "common/file.h"
#include "gtest/gtest.h"
#include "testing/require_gpu.h"
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

}  // namespace
}  // namespace ptxbench::testing
