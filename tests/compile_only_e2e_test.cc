// A real worker on a machine without a GPU evaluates compile-only: an
// experiment with `eval: compile-only` runs to the end with real nvcc
// results, and nothing is ever reported as PASSED or correct.
#include <filesystem>
#include <thread>

#include "common/data_dir.h"
#include "common/file.h"

#include "gtest/gtest.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

// `show --full --output json` of the experiment's first trajectory; null if
// there is none.
nlohmann::json ShowFirstTrajectory(const Cluster& c) {
  std::string trajectory;
  {
    auto db = c.OpenDatabase();
    auto s = db->Prepare("SELECT id FROM trajectories ORDER BY rowid LIMIT 1");
    if (!s.ok() || !*s->Step()) return nullptr;
    trajectory = s->ColumnText(0);
  }
  CommandResult show = c.Cli({"show", trajectory, "--output", "json", "--full"});
  EXPECT_EQ(show.exit_code, 0) << show.out;
  return show.exit_code == 0 ? nlohmann::json::parse(show.out) : nlohmann::json(nullptr);
}

TEST(CompileOnlyEndToEndTest, RealCompilerResultsFlowBackAsFeedback) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) {
    GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc: compile-only evaluation "
                    "cannot run here";
  }
  Cluster c("e2e_compile_only");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddRealWorker({"--slots", "2"});
  c.AddGateway({"--latency-ms", "5"});
  std::string exp = c.Submit(c.WriteFile("spec.json", R"({"name": "compile-only",
    "models": ["m"], "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["ptxb-no-hint"],
    "samples": 2, "num_turns": 2, "target_speedup": 1.0, "eval": "compile-only"})"));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();

  nlohmann::json status = c.WaitFinished(exp, 240);
  ASSERT_EQ(status["trajectories"]["terminal"], 2) << status.dump() << Tail(c.dir() + "/worker0.log");
  EXPECT_EQ(status["trajectories"]["by_state"].value("LIMITS_EXCEEDED", 0), 2)
      << "compile-only can never meet a speed target";
  EXPECT_EQ(status["correct"], 0) << "nothing ran, so nothing is correct";
  const int64_t evaluated = c.QueryInt("SELECT count(*) FROM turns WHERE eval_status IS NOT NULL");
  EXPECT_GT(evaluated, 0);
  // Every evaluated turn has a real compile status (COMPILED, COMPILE_ERROR or
  // LIBRARY_FALLBACK), never PASSED.
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE eval_status IN (6, 8, 10)"), evaluated);
  // The simulated gateway's kernels do not follow the kernel ABI, so they fail
  // to build; the feedback the model gets carries the compiler's words and
  // the run() signature the definition expects.
  const nlohmann::json t = ShowFirstTrajectory(c);
  ASSERT_TRUE(t.is_object());
  ASSERT_FALSE(t["turns"].empty());
  const std::string feedback = t["turns"][0].value("feedback", "");
  EXPECT_NE(feedback.find("run("), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("SIMULATED RESULT"), std::string::npos)
      << "a real compile result is not labelled simulated";
}

// `ptxbench eval` with a scheduler set runs there, as a one-turn experiment
// of its own; with no GPU worker registered it is compile-only and says so.
TEST(CompileOnlyEndToEndTest, EvalCommandRunsThroughTheScheduler) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) {
    GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc";
  }
  Cluster c("e2e_eval_via_scheduler");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  const std::string kernel = DataDir() + "/worker/testdata/gemm/correct.cu";
  CommandResult none = c.Cli({"eval", kernel, "--definition", "gemm_n7168_k5120"});
  EXPECT_EQ(none.exit_code, 2) << "no worker registered: an infrastructure problem";

  c.AddRealWorker({"--slots", "1"});
  // Wait for the worker to register.
  for (int i = 0; i < 100 && c.Cli({"workers", "--output", "json"}).out.find("\"worker\"") ==
                                 std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CommandResult r = c.Cli({"eval", kernel, "--definition", "gemm_n7168_k5120", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << Tail(c.dir() + "/worker0.log");
  nlohmann::json e = nlohmann::json::parse(r.out);
  EXPECT_EQ(e["status"], "COMPILED");
  EXPECT_EQ(e["all_passed"], false);
  ASSERT_TRUE(e["task_id"].is_string());
  const std::string trajectory = e["task_id"];
  EXPECT_EQ(trajectory.rfind("tr_", 0), 0u) << trajectory;
  // It is an experiment like any other: visible, one turn, answered by the file.
  CommandResult show = c.Cli({"show", trajectory, "--output", "json"});
  ASSERT_EQ(show.exit_code, 0) << show.out;
  EXPECT_NE(show.out.find("\"file\""), std::string::npos) << show.out;

  CommandResult workload = c.Cli({"eval", kernel, "--definition", "gemm_n7168_k5120",
                                  "--workload", "729b8d2e-8307-57e0-b6f5-d50957348534"});
  EXPECT_EQ(workload.exit_code, 2);
}

// An experiment in the "solution" language: the model is asked for a
// FlashInfer-Trace solution JSON, and the ```json block of its answer is built
// as one (sources, entry point, TVM-FFI binding), here compile-only.
TEST(CompileOnlyEndToEndTest, ASolutionAnswerIsBuiltAsOne) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) {
    GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc";
  }
  Cluster c("e2e_solution");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddRealWorker({"--slots", "1"});
  const nlohmann::json solution = {
      {"name", "tma_gemm"},
      {"definition", "gemm_n7168_k5120"},
      {"author", "test"},
      {"spec",
       {{"language", "cuda"},
        {"target_hardware", {"H200"}},
        {"entry_point", "kernel.cu::run"},
        {"dependencies", nlohmann::json::array()},
        {"destination_passing_style", true},
        {"binding", "tvm-ffi"}}},
      {"sources",
       {{{"path", "kernel.cu"},
         {"content", *ReadFile(DataDir() + "/worker/testdata/tvm_ffi/tma_gemm.cu")}}}}};
  c.WriteFile("answers/gemm_n7168_k5120/turn0.md",
              "The solution:\n\n```json\n" + solution.dump(2) + "\n```\n");
  c.AddGateway({"--latency-ms", "5", "--answers-dir", c.dir() + "/answers"});
  std::string exp = c.Submit(c.WriteFile("spec.json", R"({"name": "solution",
    "models": ["m"], "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["ptxb-no-hint"],
    "samples": 1, "num_turns": 1, "target_speedup": 1.0, "eval": "compile-only",
    "language": "solution"})"));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  nlohmann::json status = c.WaitFinished(exp, 240);
  ASSERT_EQ(status["trajectories"]["terminal"], 1) << status.dump() << Tail(c.dir() + "/worker0.log");
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE eval_status = 10"), 1)  // COMPILED
      << Tail(c.dir() + "/worker0.log");
  // The model was asked for one.
  const nlohmann::json t = ShowFirstTrajectory(c);
  ASSERT_TRUE(t.is_object());
  EXPECT_NE(t["system_prompt"].get<std::string>().find("TVM_FFI_DLL_EXPORT_TYPED_FUNC"),
            std::string::npos);
}

}  // namespace
}  // namespace ptxbench::testing
