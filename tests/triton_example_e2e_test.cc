// The bundled Triton example (examples/quickstart_triton.json and its scripted
// model) as `ptxbench up` runs it, on a machine without a GPU or Triton: the
// real scheduler, a real gateway serving the bundled registry file, and a
// simulated worker, which counts as one that runs Triton (tests/e2e_test.cc,
// ATritonExperimentRunsOnlyWhereTritonRuns). scripts/device/triton_example.sh
// runs the same example on a GPU machine with a real worker.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "nlohmann/json.hpp"
#include "ptxbench/v1/common.pb.h"
#include "scheduler/feedback/extract.h"
#include "testing/child_process.h"
#include "tests/cluster.h"
#include "tests/testing/simulated_outcome.h"

namespace ptxbench::testing {
namespace {

namespace v1 = ::ptxbench::v1;

// The Triton kernel of the scripted model's answer at `turn`, as the
// scheduler extracts it.
std::optional<std::string> ScriptedKernel(int turn) {
  absl::StatusOr<std::string> answer =
      ReadFile(absl::StrCat(DataDir(), "/examples/quickstart_triton/answers/gemm_n7168_k5120/turn",
                            turn, ".md"));
  if (!answer.ok()) return std::nullopt;
  return scheduler::ExtractKernel(*answer, "triton");
}

// Both answers hold a kernel.py the Triton extraction takes, destination-
// passing, and the fix differs from the first answer only where it should.
TEST(TritonExampleTest, TheScriptedAnswersAreTritonKernels) {
  for (int turn : {0, 1}) {
    std::optional<std::string> kernel = ScriptedKernel(turn);
    ASSERT_TRUE(kernel.has_value()) << "turn " << turn << ": no ```python block with a kernel";
    EXPECT_NE(kernel->find("@triton.jit"), std::string::npos);
    EXPECT_NE(kernel->find("def run(A, B, C):"), std::string::npos) << "inputs, then the output";
  }
  // Each is Python that parses, where a python3 is here to say so (the GPU
  // run, scripts/device/triton_example.sh, compiles and runs them).
  if (std::filesystem::exists("/usr/bin/python3")) {
    for (int turn : {0, 1}) {
      const std::string path = absl::StrCat(::testing::TempDir(), "/triton_turn", turn, ".py");
      ASSERT_TRUE(WriteFile(path, *ScriptedKernel(turn)).ok());
      const CommandResult parsed = RunCommand(
          {"/usr/bin/python3", "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", path},
          /*merge_stderr=*/true);
      EXPECT_EQ(parsed.exit_code, 0) << "turn " << turn << ": " << parsed.out;
    }
  }
  EXPECT_NE(ScriptedKernel(0)->find("grid = (M // BLOCK_M,"), std::string::npos)
      << "turn 0's bug: the grid rounds M down";
  EXPECT_NE(ScriptedKernel(1)->find("grid = (triton.cdiv(M, BLOCK_M),"), std::string::npos)
      << "turn 1's fix: the grid rounds M up";
}

// The example through the scheduler: each turn's kernel reaches the worker
// as extracted, its verdict is the simulated evaluator's (under a seed that
// makes the first answer INCORRECT and the fix PASSED, as the answers tell),
// and the trajectory ends after the fix.
TEST(TritonExampleTest, TheBundledTritonExampleRunsToTheEvaluatorsVerdicts) {
  const std::optional<std::string> wrong = ScriptedKernel(0), fixed = ScriptedKernel(1);
  ASSERT_TRUE(wrong && fixed);
  const uint64_t seed = SeedFor({{*wrong, v1::INCORRECT_NUMERICAL}, {*fixed, v1::PASSED}});
  ASSERT_NE(seed, 0u) << "no seed makes the simulated evaluator tell the answers' story";

  Cluster c("e2e_triton_example");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  const std::string examples = DataDir() + "/examples";
  c.AddRealGateway({"--models", examples + "/quickstart_triton/models.json"});
  c.AddWorker({"--latency-ms", "5", "--seed", absl::StrCat(seed), "--name", "simulated"});
  // Submit refuses a Triton experiment until a worker that runs Triton is
  // active: wait for it by its name and status.
  bool active = false;
  for (int i = 0; i < 100 && !active; ++i) {
    const nlohmann::json workers = nlohmann::json::parse(
        c.Cli({"workers", "--output", "json"}).out, nullptr, /*allow_exceptions=*/false);
    if (workers.is_object()) {
      for (const nlohmann::json& e : workers.value("executors", nlohmann::json::array())) {
        active = active || (e.value("name", "") == "simulated" && e.value("status", "") == "active");
      }
    }
    if (!active) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(active);
  const std::string exp = c.Submit(examples + "/quickstart_triton.json");
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  const nlohmann::json status = c.WaitFinished(exp, 60);
  ASSERT_EQ(status["trajectories"]["terminal"], 1) << status.dump() << c.SchedulerLogTail();

  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments WHERE language = 'triton'"), 1);
  ASSERT_EQ(c.QueryInt("SELECT count(*) FROM turns"), 2);
  EXPECT_EQ(c.QueryText("SELECT kernel_sha256 FROM turns WHERE turn = 0"), Sha256Hex(*wrong));
  EXPECT_EQ(c.QueryText("SELECT kernel_sha256 FROM turns WHERE turn = 1"), Sha256Hex(*fixed));
  EXPECT_EQ(c.QueryInt("SELECT eval_status FROM turns WHERE turn = 0"), v1::INCORRECT_NUMERICAL);
  EXPECT_EQ(c.QueryInt("SELECT eval_status FROM turns WHERE turn = 1"), v1::PASSED);
  // Two turns were the limit: the trajectory is SUBMITTED when the fix met
  // the target speedup (1.0), else LIMITS_EXCEEDED.
  const bool met = c.QueryInt("SELECT count(*) FROM turns WHERE turn = 1 AND speedup >= 1.0") == 1;
  EXPECT_EQ(c.QueryInt("SELECT state FROM trajectories"),
            met ? v1::SUBMITTED : v1::LIMITS_EXCEEDED);
  // The answers came from the scripted model of the bundled registry.
  EXPECT_NE(c.Cli({"show", c.QueryText("SELECT id FROM trajectories")}).out.find(
                "quickstart-triton-scripted"),
            std::string::npos);
}

}  // namespace
}  // namespace ptxbench::testing
