// End to end over real processes: scheduler + simulated workers and gateways
// + the CLI, on loopback. Also the crash tests: kill -9 of the scheduler in
// the middle of a run, and of a worker that holds a lease.
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "auth/channel.h"
#include "auth/token.h"
#include "common/file.h"
#include "common/hash.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "ptxbench/v1/common.pb.h"
#include "ptxbench/v1/executor.grpc.pb.h"
#include "scheduler/store/schema.h"
#include "storage/maintenance.h"
#include "testing/notify_socket.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

using scheduler::SqlValue;
using scheduler::StepKind;
using scheduler::TaskState;

// 2 models x 3 definitions x 2 tags x 4 samples = 48 trajectories, 5 turns.
std::string MatrixSpec(const std::string& name) {
  return absl::StrCat(R"({"name": ")", name, R"(",
    "models": ["sim-model-a", "sim-model-b"],
    "definitions": ["gemm_n7168_k5120", "mha_with_lse_d128", "mha_bwd_d128"],
    "prompt_tags": ["ptxb-no-hint", "ptxb-basic"],
    "samples": 4, "num_turns": 5, "target_speedup": 1.0})");
}

// Fast expiry so that lost leases come back within the test's time.
const std::vector<std::string> kFastLeases = {"--lease-ttl-ms", "3000", "--heartbeat-ms", "500",
                                              "--backoff-base-ms", "200"};

// Every trajectory's turns are 0..turns_completed-1, each recorded once.
void ExpectTurnsConsistent(const Cluster& c) {
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns"),
            c.QueryInt("SELECT sum(turns_completed) FROM trajectories"))
      << "turns recorded vs counted";
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM (SELECT trajectory FROM turns GROUP BY trajectory "
                       "HAVING max(turn) + 1 != count(*))"),
            0)
      << "a trajectory has a gap in its turns";
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE state != 'done'"), 0);
}

// Counts of the status JSON agree with the database.
void ExpectStatusMatchesDatabase(const Cluster& c, const nlohmann::json& status) {
  ASSERT_TRUE(status.is_object()) << status;
  const auto& t = status["trajectories"];
  EXPECT_EQ(t["total"].get<int64_t>(), c.QueryInt("SELECT count(*) FROM trajectories"));
  EXPECT_EQ(t["terminal"].get<int64_t>(), t["total"].get<int64_t>()) << status.dump();
  int64_t sum = 0;
  for (const auto& [state, n] : t["by_state"].items()) sum += n.get<int64_t>();
  EXPECT_EQ(sum, t["total"].get<int64_t>());
  EXPECT_EQ(status["turns"]["completed"].get<int64_t>(), c.QueryInt("SELECT count(*) FROM turns"));
  EXPECT_EQ(status["tasks"]["queued"].get<int64_t>(), 0);
  EXPECT_EQ(status["tasks"]["leased"].get<int64_t>(), 0);
  EXPECT_EQ(t["by_state"].value("SUBMITTED", 0),
            c.QueryInt(absl::StrCat("SELECT count(*) FROM trajectories WHERE state = ",
                                    SqlValue(ptxbench::v1::SUBMITTED))));
}

TEST(EndToEndTest, MatrixRunsToTheEnd) {
  Cluster c("e2e_matrix");
  ASSERT_TRUE(c.StartScheduler(kFastLeases)) << c.SchedulerLogTail();
  for (int i = 0; i < 4; ++i) c.AddWorker({"--latency-ms", "5", "--seed", "1"});
  for (int i = 0; i < 2; ++i) c.AddGateway({"--latency-ms", "5", "--seed", "7"});
  std::string exp = c.Submit(c.WriteFile("matrix.json", MatrixSpec("e2e-matrix")));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();

  nlohmann::json status = c.WaitFinished(exp, 180);
  ExpectStatusMatchesDatabase(c, status);
  EXPECT_EQ(status["trajectories"]["total"], 48);
  EXPECT_TRUE(status["simulated"].get<bool>()) << "simulated results are labelled";
  ExpectTurnsConsistent(c);
  // Some trajectories met the target, some ran out of turns: both paths ran.
  EXPECT_GT(status["trajectories"]["by_state"].value("SUBMITTED", 0), 0) << status.dump();
  EXPECT_GT(status["trajectories"]["by_state"].value("LIMITS_EXCEEDED", 0), 0) << status.dump();

  // Resubmitting the same spec creates nothing.
  CommandResult again = c.Cli({"submit", c.dir() + "/matrix.json", "--output", "json"});
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(again.out)["created"], false);
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM trajectories"), 48);
}

// Submits a PTXBench list config (model and definition on the command line)
// and returns `list --output json` of the experiment; null when either failed.
nlohmann::json SubmitListSpec(const Cluster& c, const std::string& spec,
                              std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"submit", spec, "--model", "sim-model-a", "--definition",
                                   "gemm_n7168_k5120", "--output", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  CommandResult submitted = c.Cli(args);
  EXPECT_EQ(submitted.exit_code, 0) << submitted.out;
  if (submitted.exit_code != 0) return nullptr;
  CommandResult listed = c.Cli(
      {"list", nlohmann::json::parse(submitted.out)["experiment"].get<std::string>(), "--output", "json"});
  EXPECT_EQ(listed.exit_code, 0) << listed.out;
  return listed.exit_code == 0 ? nlohmann::json::parse(listed.out) : nlohmann::json(nullptr);
}

// A PTXBench list config whose item names a test script: the CLI reads the
// script beside the config, and the item's trajectories are held to the one
// workload it names, which `list` and `show` report.
TEST(EndToEndTest, APtxbenchTestPathSelectsItsWorkload) {
  Cluster c("e2e_test_path");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  const std::string m8192 = "242ddd1a-ee21-5a9c-b2f7-9867cc517890";
  c.WriteFile("gemm-problems/gemm_n7168_k5120_m8192.py",
              absl::StrCat("DEFINITION_NAME = \"gemm_n7168_k5120\"\nWORKLOAD_UUID = \"", m8192, "\"\n"));
  const std::string spec = c.WriteFile("sweep.json", R"([
    {"num_trajectories": 2, "num_turns": 1, "target_speedup": 1.0, "prompt_tag": "ptxb-no-hint",
     "test_path": "gemm-problems/gemm_n7168_k5120_m8192.py"},
    {"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0, "prompt_tag": "ptxb-no-hint"}])");
  const nlohmann::json list = SubmitListSpec(c, spec);
  ASSERT_TRUE(list.is_object());
  ASSERT_EQ(list["trajectories"].size(), 3u) << list.dump();
  int held = 0, all = 0;
  std::string held_id;
  for (const auto& t : list["trajectories"]) {
    if (t["workloads"].is_null()) {
      ++all;
    } else {
      EXPECT_EQ(t["workloads"], nlohmann::json::array({m8192}));
      ++held;
      held_id = t["trajectory"].get<std::string>();
    }
  }
  EXPECT_EQ(held, 2);
  EXPECT_EQ(all, 1);
  CommandResult shown = c.Cli({"show", held_id});
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_NE(shown.out.find(absl::StrCat("workloads   ", m8192, " only")), std::string::npos)
      << shown.out;

  // A script that is not there: refused, nothing created.
  const std::string missing = c.WriteFile("missing.json", R"([{"num_trajectories": 1,
    "num_turns": 1, "target_speedup": 1.0, "prompt_tag": "ptxb-no-hint", "test_path": "nope.py"}])");
  CommandResult refused = c.Cli({"submit", missing, "--model", "sim-model-a", "--definition",
                                 "gemm_n7168_k5120"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM trajectories"), 3);
}

// A PTXBench fix-it item: the CLI reads the broken kernel and its log beside
// the config, and the trajectory's task prompt carries both.
TEST(EndToEndTest, AFixItItemStartsFromItsBrokenKernel) {
  Cluster c("e2e_fixit");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.WriteFile("broken/kernel.cu", "__global__ void broken_gemm_marker() {}\n");
  c.WriteFile("broken/error.log", "cudaErrorIllegalAddress at broken_gemm_marker\n");
  const std::string spec = c.WriteFile("fixit.json", R"([
    {"num_trajectories": 1, "num_turns": 2, "target_speedup": 1.0, "prompt_tag": "ptxb-no-hint",
     "error_kernel_path": "broken/kernel.cu", "error_log_path": "broken/error.log"}])");
  const nlohmann::json list = SubmitListSpec(c, spec);
  ASSERT_TRUE(list.is_object());
  ASSERT_EQ(list["trajectories"].size(), 1u) << list.dump();
  CommandResult shown =
      c.Cli({"show", list["trajectories"][0]["trajectory"].get<std::string>(), "--full"});
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_NE(shown.out.find("__global__ void broken_gemm_marker() {}"), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("cudaErrorIllegalAddress at broken_gemm_marker"), std::string::npos);
  EXPECT_NE(shown.out.find("smallest change"), std::string::npos);
}

// Triton (docs/FORMATS.md, "Triton"), as CI can run it (no GPU, no
// Triton): refused at submit while the only worker runs no Triton (a
// compile-only one), then run by a simulated worker, which counts as one
// that does: the simulated model answers in Triton, the kernel.py is
// extracted and evaluated, and no evaluation goes to the other worker.
TEST(EndToEndTest, ATritonExperimentRunsOnlyWhereTritonRuns) {
  Cluster c("e2e_triton");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddGateway({"--latency-ms", "5", "--seed", "4"});
  c.AddRealWorker({"--name", "compile-only"});
  auto registered = [&](const std::string& what) {
    for (int i = 0; i < 100; ++i) {
      if (c.Cli({"workers", "--output", "json"}).out.find(what) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  ASSERT_TRUE(registered("\"worker\""));
  const std::string spec = c.WriteFile("triton.json", R"({"name": "triton-gemm",
    "models": ["sim-model"], "definitions": ["gemm_n7168_k5120"], "language": "triton",
    "prompt_tags": ["ptxb-triton"], "samples": 3, "num_turns": 2, "target_speedup": 1.0})");
  CommandResult refused = c.Cli({"submit", spec}, /*merge_stderr=*/true);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.out, ::testing::HasSubstr(
                               "experiment 'triton-gemm' is in Triton (\"language\": \"triton\"), "
                               "and no registered GPU worker of its architectures runs Triton"));
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments"), 0);

  c.AddWorker({"--latency-ms", "5", "--seed", "4", "--name", "simulated"});
  // By its name, active: every worker's entry has a "simulated" field.
  auto active = [&](const std::string& name) {
    for (int i = 0; i < 100; ++i) {
      const nlohmann::json workers = nlohmann::json::parse(
          c.Cli({"workers", "--output", "json"}).out, nullptr, /*allow_exceptions=*/false);
      if (workers.is_object()) {
        for (const nlohmann::json& e : workers.value("executors", nlohmann::json::array())) {
          if (e.value("name", "") == name && e.value("status", "") == "active") return true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  ASSERT_TRUE(active("simulated"));
  const std::string exp = c.Submit(spec);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  const nlohmann::json status = c.WaitFinished(exp, 60);
  ASSERT_EQ(status["trajectories"]["terminal"], 3) << status.dump();
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments WHERE language = 'triton'"), 1);
  EXPECT_GT(c.QueryInt(absl::StrCat("SELECT count(*) FROM tasks WHERE kind = ",
                                    SqlValue(StepKind::kEval))),
            0)
      << "no Triton answer was extracted and evaluated";
  EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT count(*) FROM tasks t JOIN executors e ON "
                                    "t.executor = e.id WHERE e.name = 'compile-only' AND "
                                    "t.kind = ",
                                    SqlValue(StepKind::kEval))),
            0)
      << "an evaluation went to the worker that runs no Triton";
}

// Proof of what ran, through the whole system (issue 50): a scripted answer
// that calls cuBLAS is, on a simulated worker (docs/FORMATS.md, "Simulated
// evaluations"), a LIBRARY_FALLBACK whose outputs passed the checks; the
// model is told which library kernel ran, and the report counts it as
// correct by checks only.
TEST(EndToEndTest, ALibraryCallIsAFallbackNamedToTheModelAndCountedApart) {
  Cluster c("e2e_fallback");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.WriteFile("answers/gemm_n7168_k5120/turn0.cu",
              "#include <cuda_runtime.h>\n"
              "__global__ void unused_gemm(const float* a, float* c) { c[0] = a[0]; }\n"
              "extern \"C\" void run(const void* a, const void* b, void* c, cudaStream_t s) {\n"
              "  cublasGemmEx(handle, a, b, c);  // the library does the work\n"
              "}\n");
  c.AddWorker({"--latency-ms", "5", "--seed", "4"});
  c.AddGateway({"--latency-ms", "5", "--answers-dir", c.dir() + "/answers"});
  const std::string exp = c.Submit(c.WriteFile("spec.json", R"({"name": "fallback-e2e",
    "models": ["scripted"], "definitions": ["gemm_n7168_k5120"],
    "prompt_tags": ["ptxb-no-hint"], "samples": 2, "num_turns": 1, "target_speedup": 1.0})"));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  const nlohmann::json status = c.WaitFinished(exp, 60);
  ASSERT_EQ(status["trajectories"]["terminal"], 2) << status.dump();
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE fallback_correct = 1"), 2);

  const nlohmann::json list =
      nlohmann::json::parse(c.Cli({"list", exp, "--output", "json"}).out, nullptr, false);
  ASSERT_TRUE(list.is_object());
  const std::string id = list["trajectories"][0]["trajectory"].get<std::string>();
  const nlohmann::json shown =
      nlohmann::json::parse(c.Cli({"show", id, "--full", "--output", "json"}).out, nullptr, false);
  ASSERT_TRUE(shown.is_object()) << id;
  const std::string feedback = shown["turns"][0]["feedback"].get<std::string>();
  EXPECT_THAT(feedback, ::testing::HasSubstr("LIBRARY_FALLBACK — the timed call ran library "
                                             "kernels: sm90_xmma_gemm_"));
  EXPECT_THAT(feedback, ::testing::HasSubstr("(the outputs passed the checks)"));
  EXPECT_THAT(feedback, ::testing::HasSubstr("_cublas (library) "));
  EXPECT_THAT(c.Cli({"show", id}).out, ::testing::HasSubstr("kernels that ran (per timed call)"));

  const nlohmann::json report = nlohmann::json::parse(
      c.Cli({"report", exp, "--output", "json"}).out, nullptr, false);
  ASSERT_TRUE(report.is_object());
  const nlohmann::json& total = report["experiments"][0]["total"];
  EXPECT_EQ(total["correct"], "0");
  EXPECT_EQ(total["correct_by_checks"], "2");
  EXPECT_EQ(total["fallback_correct_turns"], "2");
  EXPECT_EQ(total["fallback_share"], 1.0);
  EXPECT_THAT(c.Cli({"report", exp}).out, ::testing::HasSubstr("\nfallbacks by model\n"));
}

// Profile feedback (docs/MEASUREMENT.md, "Profiles"): refused at submit
// while no worker can profile (a compile-only one cannot), then every turn's
// feedback carries the profile section, labelled simulated, and `show`
// prints it with the SASS census and the report's blob.
TEST(EndToEndTest, AProfiledExperimentTellsTheModelWhereTheTimeWent) {
  Cluster c("e2e_profile");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddGateway({"--latency-ms", "5", "--seed", "3"});
  c.AddRealWorker({"--name", "compile-only"});  // no GPU here, no profiler
  auto registered = [&](const std::string& what) {
    for (int i = 0; i < 100; ++i) {
      if (c.Cli({"workers", "--output", "json"}).out.find(what) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  ASSERT_TRUE(registered("\"worker\""));
  const std::string spec = c.WriteFile("profile.json", R"({"name": "profiled",
    "models": ["sim-model"], "definitions": ["gemm_n7168_k5120"],
    "prompt_tags": ["ptxb-profile"], "samples": 3, "num_turns": 2, "target_speedup": 1.0})");
  CommandResult refused = c.Cli({"submit", spec}, /*merge_stderr=*/true);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.out, ::testing::HasSubstr(
                               "experiment 'profiled' asks for profiles, and no registered GPU "
                               "worker of its architectures can profile"));
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments"), 0);

  c.AddWorker({"--latency-ms", "5", "--seed", "3", "--name", "simulated"});
  ASSERT_TRUE(registered("simulated (made-up profiles"));
  const std::string exp = c.Submit(spec);
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  const nlohmann::json status = c.WaitFinished(exp, 60);
  ASSERT_EQ(status["trajectories"]["terminal"], 3) << status.dump();
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments WHERE profile = 1"), 1);
  EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT count(*) FROM tasks t JOIN executors e ON "
                                    "t.executor = e.id WHERE e.name = 'compile-only' AND "
                                    "t.kind = ",
                                    SqlValue(StepKind::kEval))),
            0)
      << "an evaluation went to the worker that cannot profile";

  // Every evaluated turn that compiled told the model about its profile.
  int profiled = 0, profiled_turn = -1;
  std::string profiled_id;
  const nlohmann::json list =
      nlohmann::json::parse(c.Cli({"list", exp, "--output", "json"}).out, nullptr, false);
  ASSERT_TRUE(list.is_object());
  for (const auto& t : list["trajectories"]) {
    const std::string id = t["trajectory"].get<std::string>();
    const nlohmann::json shown =
        nlohmann::json::parse(c.Cli({"show", id, "--full", "--output", "json"}).out, nullptr, false);
    ASSERT_TRUE(shown.is_object()) << id;
    for (const auto& turn : shown["turns"]) {
      if (!turn.contains("profile")) continue;
      ++profiled;
      profiled_id = id;
      profiled_turn = turn["index"].get<int>();
      EXPECT_EQ(turn["profile"]["status"], "PASSED");
      EXPECT_EQ(turn["profile"]["axes"]["M"], "8192");  // the largest workload (int64: a string)
      EXPECT_EQ(turn["profile"]["report"], "");  // a blob of its own
      EXPECT_EQ(turn["profile"]["report_blob"].get<std::string>().size(), 64u);
      EXPECT_THAT(turn["feedback"].get<std::string>(),
                  ::testing::HasSubstr("[SIMULATED PROFILE — not a measurement]\nProfile "
                                       "(simulated profiler; workload [M=8192]; 1 kernel "
                                       "profiled):\n"));
    }
  }
  EXPECT_GT(profiled, 0) << "no turn was profiled";
  ASSERT_FALSE(profiled_id.empty());
  const CommandResult text = c.Cli({"show", profiled_id});
  EXPECT_THAT(text.out, ::testing::HasSubstr("  Profile (simulated profiler; workload"));
  // The reports come back byte for byte, one file per profiled turn.
  const CommandResult exported =
      c.Cli({"show", profiled_id, "--profile-reports", c.dir() + "/reports"});
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  const std::string name = absl::StrCat(profiled_id, ".turn", profiled_turn, ".ncu-rep");
  EXPECT_THAT(exported.out, ::testing::HasSubstr(name + "  "));
  EXPECT_THAT(exported.out, ::testing::HasSubstr("simulated, not a real report)"));
  const absl::StatusOr<std::string> report = ReadFile(c.dir() + "/reports/" + name);
  ASSERT_TRUE(report.ok()) << exported.out;
  EXPECT_THAT(*report, ::testing::StartsWith("PTXBENCH SIMULATED PROFILE REPORT"));
}

// `submit --prompts HUB`: a PTXBench config naming its hub's tags runs on a
// scheduler that has no hub; each trajectory's system prompt is the hub's
// text, then ptxbench's ABI description.
TEST(EndToEndTest, ASubmissionBringsItsPromptHub) {
  Cluster c("e2e_prompts");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.WriteFile("prompts/hub.json", R"({"hopper-no-hint": ["fragments_marker/knowledge.md"]})");
  c.WriteFile("prompts/fragments/fragments_marker/knowledge.md", "HUB KNOWLEDGE MARKER");
  const std::string spec = c.WriteFile("hub_sweep.json", R"([
    {"num_trajectories": 1, "num_turns": 1, "target_speedup": 1.0, "prompt_tag": "hopper-no-hint"}])");
  // Without the hub the scheduler cannot know the tag.
  CommandResult refused = c.Cli({"submit", spec, "--model", "sim-model-a", "--definition",
                                 "gemm_n7168_k5120"},
                                /*merge_stderr=*/true);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find("unknown prompt tag 'hopper-no-hint'"), std::string::npos)
      << refused.out;
  const nlohmann::json list = SubmitListSpec(c, spec, {"--prompts", c.dir() + "/prompts"});
  ASSERT_TRUE(list.is_object());
  ASSERT_EQ(list["trajectories"].size(), 1u) << list.dump();
  CommandResult shown = c.Cli({"show", list["trajectories"][0]["trajectory"].get<std::string>(),
                               "--full", "--output", "json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  const std::string system = nlohmann::json::parse(shown.out)["system_prompt"].get<std::string>();
  EXPECT_EQ(system.rfind("HUB KNOWLEDGE MARKER\n\n", 0), 0u) << system;
  EXPECT_NE(system.find("ptxb::Tensor"), std::string::npos) << "the ABI follows";
}

// PTXBench's coding-agent experiment.json through `ptxbench submit`: its hub
// (beside it, as in PTXBench's checkout) and TVM-FFI example go with it, the
// fields ptxbench ignores are noted, agy needs --agent-cli, and without an
// agent gateway for its CLI nothing is created.
TEST(EndToEndTest, APtxbenchAgentExperimentIsReadAsItIs) {
  Cluster c("e2e_ptxb_agent");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.WriteFile("eval/examples/context/hub.json",
              R"({"hopper-no-hint": ["docs/role.md"], "hopper-05": ["hopper-no-hint", "docs/ws.md"]})");
  c.WriteFile("eval/examples/context/docs/role.md", "ROLE MARKER");
  c.WriteFile("eval/examples/context/docs/ws.md", "WARP SPECIALIZATION MARKER");
  c.WriteFile("eval/examples/wrapper.cu", "// TVM-FFI WRAPPER MARKER");
  const std::string experiment = R"({
    "experiment_root": "runs/gpt56", "watch_interval": 0.2, "agent": "AGENT",
    "task_id": "gemm_m70", "definition": "gemm_n7168_k5120",
    "workload_uuid": "729b8d2e-8307-57e0-b6f5-d50957348534", "language": "cuda",
    "binding": "tvm-ffi", "target_hardware": ["H100"], "target_speedup": 0,
    "prompt_hub": "../context/hub.json", "tvm_ffi_example": "../wrapper.cu",
    "model": "sim-model-a", "token_budget": 500000, "max_turns": 3, "disable_web": true,
    "runs": [{"run_id": "a", "prompt_tag": "hopper-no-hint"},
             {"run_id": "b", "prompt_tag": "hopper-no-hint", "extra_user_prompt_tag": "hopper-05"}]})";
  auto with_agent = [&](const std::string& agent) {
    std::string text = experiment;
    text.replace(text.find("AGENT"), 5, agent);
    return c.WriteFile("eval/examples/gpt56/experiment.json", text);
  };
  const std::string codex = with_agent("codex");
  CommandResult dry = c.Cli({"submit", codex, "--dry-run"}, /*merge_stderr=*/true);
  ASSERT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_NE(dry.out.find("would have 2 trajectories"), std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find("ignored experiment_root: "), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("ignored watch_interval: "), std::string::npos) << dry.out;
  // Nothing runs codex here: refused, naming why, and nothing created.
  CommandResult refused = c.Cli({"submit", codex}, /*merge_stderr=*/true);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("codex"), std::string::npos) << refused.out;
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM trajectories"), 0);
  // agy cannot run here but with another CLI, recorded as a substitution.
  const std::string agy = with_agent("agy");
  CommandResult no_agy = c.Cli({"submit", agy, "--dry-run"}, /*merge_stderr=*/true);
  EXPECT_EQ(no_agy.exit_code, 1);
  EXPECT_NE(no_agy.out.find("--agent-cli gemini-cli"), std::string::npos) << no_agy.out;
  CommandResult substituted =
      c.Cli({"submit", agy, "--dry-run", "--agent-cli", "gemini-cli"}, /*merge_stderr=*/true);
  EXPECT_EQ(substituted.exit_code, 0) << substituted.out;
  // A hub that is not there is named.
  c.WriteFile("eval/examples/context/hub.json", R"({"hopper-no-hint": ["docs/gone.md"]})");
  CommandResult no_doc = c.Cli({"submit", codex, "--dry-run"}, /*merge_stderr=*/true);
  EXPECT_EQ(no_doc.exit_code, 1);
  EXPECT_NE(no_doc.out.find("docs/gone.md not found"), std::string::npos) << no_doc.out;
}

// A pipeline's first stages over a finished simulated experiment. select:
// its rows are the failed judged turns of the database, at most the cap per
// definition, and its manifest hashes its file. derive: each row a fix-it
// trajectory of a new experiment starting from that turn's kernel and
// feedback. pairs: refused while that experiment runs, then each repaired
// kernel with its first fix. A second run recomputes nothing; a kind that
// does not run yet says so.
TEST(EndToEndTest, APipelineSelectsAndDerivesOnceIntoItsFolders) {
  Cluster c("e2e_pipeline");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  std::vector<process::Process*> executors = {&c.AddWorker({"--latency-ms", "2", "--seed", "3"}),
                                              &c.AddGateway({"--latency-ms", "2", "--seed", "5"})};
  const std::string exp = c.Submit(c.WriteFile("matrix.json", MatrixSpec("e2e-pipe")));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  ExpectStatusMatchesDatabase(c, c.WaitFinished(exp, 180));
  // Nothing runs the derived experiment until the executors come back: the
  // pairs stage finds it running.
  for (process::Process* p : executors) p->Kill();
  const std::string pipeline = c.WriteFile("fixit.json", R"({"name": "fixit", "stages": [
      {"name": "failed", "kind": "select", "experiments": ["e2e-pipe"], "rows": "failed",
       "max_turn": 3, "per_definition_cap": 4},
      {"name": "repairs", "kind": "derive", "from": "failed", "model": "sim-model-a",
       "prompt_tag": "ptxb-no-hint", "num_turns": 2},
      {"name": "pairs", "kind": "pairs", "from": "repairs"},
      {"name": "repaired", "kind": "select", "from": "repairs", "rows": "correct"},
      {"name": "reasoning", "kind": "synthesize", "from": "pairs", "model": "sim-model-b",
       "template": "fixit", "min_chars": 20, "max_passes": 2},
      {"name": "records", "kind": "dataset", "from": "reasoning", "shape": "fixit5"}]})");
  const std::string dir = c.dir() + "/stages";
  CommandResult run = c.Cli({"pipeline", "run", pipeline, "--dir", dir}, /*merge_stderr=*/true);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("stage 'pairs': experiment fixit.repairs."), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("is still running"), std::string::npos) << run.out;

  CommandResult checked = c.Cli({"pipeline", "check", pipeline, "--output", "json"});
  ASSERT_EQ(checked.exit_code, 0) << checked.out;
  const nlohmann::json stages = nlohmann::json::parse(checked.out)["stages"];
  const std::string select_dir = dir + "/" + stages[0]["id"].get<std::string>();
  absl::StatusOr<std::string> text = ReadFile(select_dir + "/manifest.json");
  ASSERT_TRUE(text.ok()) << text.status() << run.out;
  const nlohmann::json manifest = nlohmann::json::parse(*text);
  const std::string failed = "eval_status IN (2, 3, 4, 5, 6, 7, 8) AND turn <= 3";
  const std::string of_exp = absl::StrCat(" AND trajectory IN (SELECT j.rowid FROM trajectories j "
                                          "JOIN experiments e ON e.rowid = j.experiment WHERE "
                                          "e.id = '", exp, "')");
  EXPECT_EQ(manifest["counts"]["matched"],
            c.QueryInt("SELECT count(*) FROM turns WHERE " + failed + of_exp));
  int64_t capped = 0;
  for (const char* d : {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_bwd_d128"}) {
    capped += std::min<int64_t>(
        4, c.QueryInt(absl::StrCat("SELECT count(*) FROM turns JOIN trajectories t ON "
                                   "t.rowid = turns.trajectory WHERE t.definition = '",
                                   d, "' AND ", failed, of_exp)));
  }
  EXPECT_GT(capped, 0) << "the simulated run failed some kernels";
  EXPECT_EQ(manifest["counts"]["kept"], capped);
  EXPECT_EQ(manifest["inputs"][0]["id"], exp);
  absl::StatusOr<std::string> rows = ReadFile(select_dir + "/selection.jsonl");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(manifest["outputs"][0]["sha256"], Sha256Hex(*rows));
  EXPECT_EQ(manifest["outputs"][0]["rows"], capped);

  // The derived experiment: one fix-it trajectory per row, named after the
  // stage, starting from the row's kernel.
  absl::StatusOr<std::string> derived_text =
      ReadFile(dir + "/" + stages[1]["id"].get<std::string>() + "/manifest.json");
  ASSERT_TRUE(derived_text.ok()) << derived_text.status() << run.out;
  const nlohmann::json derived = nlohmann::json::parse(*derived_text);
  EXPECT_EQ(derived["experiment"]["trajectories"], capped);
  EXPECT_EQ(derived["inputs"][0]["id"], stages[0]["id"]);
  const std::string derived_id = derived["experiment"]["id"];
  const nlohmann::json first_row = nlohmann::json::parse(rows->substr(0, rows->find('\n')));
  CommandResult source = c.Cli({"show", first_row["trajectory_id"].get<std::string>(), "--full",
                                "--output", "json"});
  ASSERT_EQ(source.exit_code, 0) << source.out;
  const std::string kernel = nlohmann::json::parse(source.out)["turns"][first_row["turn"].get<int>()]
                                 ["kernel_source"].get<std::string>();
  ASSERT_FALSE(kernel.empty());
  c.AddWorker({"--latency-ms", "2", "--seed", "3"});
  c.AddGateway({"--latency-ms", "2", "--seed", "5"});
  const std::string first_derived = c.QueryText(absl::StrCat(
      "SELECT j.id FROM trajectories j JOIN experiments e ON e.rowid = j.experiment WHERE e.id = '",
      derived_id, "' AND j.sample = 0"));
  CommandResult shown = c.Cli({"show", first_derived, "--full", "--output", "json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_NE(nlohmann::json::parse(shown.out)["task_prompt"].get<std::string>().find(kernel),
            std::string::npos)
      << "the fix-it trajectory starts from the selected kernel";
  const nlohmann::json derived_status = c.WaitFinished(derived_id, 180);
  ASSERT_TRUE(derived_status.is_object());
  EXPECT_EQ(derived_status["trajectories"]["terminal"], derived_status["trajectories"]["total"]);

  // Now the rest runs, waiting for the synthesis experiment: each derived
  // trajectory that passed once is repaired, each pair explained, each
  // explanation a record.
  CommandResult rest =
      c.Cli({"pipeline", "run", pipeline, "--dir", dir, "--wait"}, /*merge_stderr=*/true);
  EXPECT_EQ(rest.exit_code, 0) << rest.out;
  absl::StatusOr<std::string> pairs_text =
      ReadFile(dir + "/" + stages[2]["id"].get<std::string>() + "/manifest.json");
  ASSERT_TRUE(pairs_text.ok()) << pairs_text.status() << rest.out;
  const nlohmann::json pairs = nlohmann::json::parse(*pairs_text);
  EXPECT_EQ(pairs["counts"]["items"], capped);
  const int64_t repaired = c.QueryInt(absl::StrCat(
      "SELECT count(DISTINCT trajectory) FROM turns WHERE eval_status = 1 AND trajectory IN "
      "(SELECT j.rowid FROM trajectories j JOIN experiments e ON e.rowid = j.experiment WHERE "
      "e.id = '", derived_id, "')"));
  EXPECT_EQ(pairs["counts"]["repaired"], repaired);
  EXPECT_EQ(pairs["counts"]["pairs"], repaired) << "the first fix of each";
  EXPECT_EQ(pairs["inputs"][1]["id"], derived_id);
  // A select of the derived experiment: its correct turns.
  absl::StatusOr<std::string> repaired_text =
      ReadFile(dir + "/" + stages[3]["id"].get<std::string>() + "/manifest.json");
  ASSERT_TRUE(repaired_text.ok()) << repaired_text.status() << rest.out;
  const nlohmann::json repaired_manifest = nlohmann::json::parse(*repaired_text);
  EXPECT_EQ(repaired_manifest["inputs"][1]["id"], derived_id);
  EXPECT_EQ(repaired_manifest["counts"]["kept"],
            c.QueryInt(absl::StrCat("SELECT count(*) FROM turns WHERE eval_status = 1 AND "
                                    "trajectory IN (SELECT j.rowid FROM trajectories j JOIN "
                                    "experiments e ON e.rowid = j.experiment WHERE e.id = '",
                                    derived_id, "')")));
  CommandResult status = c.Cli({"pipeline", "status", pipeline, "--dir", dir, "--output", "json"});
  ASSERT_EQ(status.exit_code, 0) << status.out;
  const nlohmann::json states = nlohmann::json::parse(status.out)["stages"];
  for (int i = 0; i < 4; ++i) EXPECT_EQ(states[i]["state"], "done") << i;
  for (int i = 4; i < 6; ++i) EXPECT_EQ(states[i]["state"], "done") << i;

  // The synthesis: one trajectory per pair, nothing evaluated, a row's text
  // its answer within the bounds.
  const nlohmann::json synthesis = states[4]["manifest"];
  const std::string synthesis_id = synthesis["inputs"][1]["id"];
  const std::string of_synthesis = absl::StrCat(
      "trajectory IN (SELECT j.rowid FROM trajectories j JOIN experiments e ON e.rowid = "
      "j.experiment WHERE e.id = '", synthesis_id, "')");
  EXPECT_EQ(synthesis["counts"]["rows"], pairs["counts"]["pairs"]);
  EXPECT_EQ(synthesis["counts"]["passes"],
            c.QueryInt("SELECT count(*) FROM turns WHERE " + of_synthesis));
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM turns WHERE eval_status IS NOT NULL AND " +
                       of_synthesis),
            0)
      << "nothing of a synthesis is evaluated";
  const int64_t synthesized = c.QueryInt(absl::StrCat(
      "SELECT count(*) FROM trajectories j JOIN experiments e ON e.rowid = j.experiment WHERE "
      "e.id = '", synthesis_id, "' AND j.state = ", SqlValue(ptxbench::v1::SUBMITTED)));
  EXPECT_EQ(synthesis["counts"]["synthesized"], synthesized);
  EXPECT_GT(synthesized, 0) << rest.out;
  // The records: PTXBench's five messages, every hash and count as written.
  const nlohmann::json records = states[5]["manifest"];
  EXPECT_EQ(records["counts"]["records"], synthesized);
  const std::string records_dir = states[5]["folder"];
  absl::StatusOr<std::string> sft = ReadFile(records_dir + "/sft.jsonl");
  ASSERT_TRUE(sft.ok()) << sft.status();
  EXPECT_EQ(records["outputs"][0]["sha256"], Sha256Hex(*sft));
  EXPECT_EQ(records["outputs"][0]["rows"], synthesized);
  const nlohmann::json record = nlohmann::json::parse(sft->substr(0, sft->find('\n')));
  ASSERT_EQ(record["messages"].size(), 5u);
  EXPECT_EQ(record["messages"][4]["step_loss_mask"], 1);
  EXPECT_EQ(record["messages"][4]["content"].get<std::string>().rfind("<think>\n", 0), 0u);
  EXPECT_EQ(records["lineage"]["from"].size(), 4u) << "reasoning, pairs, repairs and failed";
  EXPECT_EQ(records["lineage"]["experiments"][0], "e2e-pipe");
  // The experiments stages made say so.
  CommandResult made = c.Cli({"status", synthesis_id});
  EXPECT_NE(made.out.find("made by     stage reasoning (synthesize, " +
                          stages[4]["id"].get<std::string>() +
                          ") of pipeline fixit, from pairs (pairs) <- repairs (derive) <- failed "
                          "(select) <- experiment e2e-pipe"),
            std::string::npos)
      << made.out;

  // A second run recomputes nothing: every stage says so and no file or
  // experiment is written again.
  const auto written = std::filesystem::last_write_time(select_dir + "/selection.jsonl");
  const auto sft_written = std::filesystem::last_write_time(records_dir + "/sft.jsonl");
  CommandResult again = c.Cli({"pipeline", "run", pipeline, "--dir", dir});
  EXPECT_EQ(again.exit_code, 0) << again.out;
  size_t up_to_date = 0;
  for (size_t at = 0; (at = again.out.find("up to date, nothing recomputed", at)) !=
                      std::string::npos; ++at) {
    ++up_to_date;
  }
  EXPECT_EQ(up_to_date, 6u) << again.out;
  EXPECT_EQ(std::filesystem::last_write_time(select_dir + "/selection.jsonl"), written);
  EXPECT_EQ(std::filesystem::last_write_time(records_dir + "/sft.jsonl"), sft_written);
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments"), 3) << "nothing submitted twice";
}

TEST(EndToEndTest, SchedulerKilledMidRunLosesNothingAndPaysForNothingTwice) {
  Cluster c("e2e_crash");
  ASSERT_TRUE(c.StartScheduler(kFastLeases)) << c.SchedulerLogTail();
  // Slow enough (about 20 answers a second) that the kill lands mid-run even
  // when each status poll takes a second on a loaded machine: with unlimited
  // slots the whole run once finished between two polls.
  for (int i = 0; i < 4; ++i) {
    c.AddWorker({"--latency-ms", "20", "--seed", "1", "--slots", "2"});
  }
  const std::string log_a = c.dir() + "/requests_a.log", log_b = c.dir() + "/requests_b.log";
  c.AddGateway({"--latency-ms", "200", "--slots", "2", "--request-log", log_a});
  c.AddGateway({"--latency-ms", "200", "--slots", "2", "--request-log", log_b});
  std::string exp = c.Submit(c.WriteFile("matrix.json", MatrixSpec("e2e-crash")));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();

  // Wait until the run is well under way, then kill -9 the scheduler.
  int64_t done_before = 0;
  for (int i = 0; i < 600 && done_before < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    nlohmann::json s = c.Status(exp);
    if (s.is_object()) done_before = s["turns"]["completed"].get<int64_t>();
  }
  ASSERT_GE(done_before, 40);
  c.KillScheduler();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(c.StartScheduler(kFastLeases)) << c.SchedulerLogTail();

  nlohmann::json status = c.WaitFinished(exp, 180);
  ExpectStatusMatchesDatabase(c, status);
  ExpectTurnsConsistent(c);
  EXPECT_GT(status["turns"]["completed"].get<int64_t>(), done_before);
  // The counters status reads survived the kill with the rows they count.
  const CommandResult check = c.Cli({"admin", "check"}, /*merge_stderr=*/true);
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_THAT(check.out, ::testing::HasSubstr("every experiment's counters agree with its rows"));

  // No model answer was requested twice for the same (trajectory, turn), and
  // every recorded turn's answer was requested exactly once.
  std::multiset<std::string> requests;
  for (const std::string& path : {log_a, log_b}) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) requests.insert(line);
  }
  std::set<std::string> unique(requests.begin(), requests.end());
  EXPECT_EQ(unique.size(), requests.size()) << "some (trajectory, turn) was asked twice";
  EXPECT_EQ(static_cast<int64_t>(requests.size()), c.QueryInt("SELECT count(*) FROM turns"));
}

TEST(EndToEndTest, WorkerKilledHoldingALeaseIsReplacedAndItsLateReportRejected) {
  Cluster c("e2e_worker_kill");
  ASSERT_TRUE(c.StartScheduler(kFastLeases)) << c.SchedulerLogTail();
  c.AddGateway({"--latency-ms", "5"});
  process::Process& slow = c.AddWorker({"--latency-ms", "600000", "--slots", "1"});
  std::string exp = c.Submit(c.WriteFile("one.json", R"({"name": "one",
    "models": ["m"], "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["ptxb-no-hint"],
    "samples": 1, "num_turns": 1, "target_speedup": 1.0})"));
  ASSERT_FALSE(exp.empty());

  // Wait until the slow worker holds the evaluation lease.
  std::string task_id, lease_id, holder;
  for (int i = 0; i < 400 && lease_id.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto db = c.OpenDatabase();
    auto s = db->Prepare(absl::StrCat("SELECT rowid, lease_id, executor FROM tasks WHERE kind = ",
                                      SqlValue(StepKind::kEval), " AND state = ",
                                      SqlValue(TaskState::kLeased)));
    if (s.ok() && *s->Step()) {
      task_id = absl::StrCat("tk_", s->ColumnInt64(0));
      lease_id = s->ColumnText(1);
      holder = s->ColumnText(2);
    }
  }
  ASSERT_FALSE(lease_id.empty()) << c.SchedulerLogTail();
  slow.Kill();  // kill -9 while it holds the lease
  c.AddWorker({"--latency-ms", "5"});

  nlohmann::json status = c.WaitFinished(exp, 60);
  ASSERT_EQ(status["trajectories"]["terminal"], 1) << status.dump();
  EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT attempt FROM tasks WHERE kind = ",
                                     SqlValue(StepKind::kEval))), 2);
  EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT deaths FROM tasks WHERE kind = ",
                                     SqlValue(StepKind::kEval))), 1);
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM events WHERE kind = 'task.expired'"), 1);

  // The dead worker's report, arriving late under the old lease, is refused.
  auto stub = ptxbench::v1::ExecutorService::NewStub(auth::NewChannel(
      c.address(), {auth::ReadTokenFile(c.TokenFile()).value_or(""), "", "", ""}));
  grpc::ClientContext ctx;
  ptxbench::v1::CompleteRequest late;
  late.set_executor_id(holder);
  late.mutable_lease()->set_task_id(task_id);
  late.mutable_lease()->set_lease_id(lease_id);
  late.mutable_eval()->set_status(ptxbench::v1::PASSED);
  late.mutable_eval()->set_all_passed(true);
  late.mutable_eval()->set_min_speedup(100.0);
  ptxbench::v1::CompleteResponse out;
  grpc::Status rejected = stub->Complete(&ctx, late, &out);
  EXPECT_EQ(rejected.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << rejected.error_message();
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM trajectories WHERE best_speedup >= 100"), 0);
}

// An experiment for Blackwell GPUs waits while only a Hopper worker is
// registered, and `status` says why; a Blackwell worker then evaluates it.
TEST(EndToEndTest, EvaluationsWaitForAWorkerOfTheirArchitecture) {
  Cluster c("e2e_architectures");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddGateway();
  c.AddWorker({"--gpu-arch", "sm_90", "--name", "hopper"});
  std::string exp = c.Submit(c.WriteFile("b200.json", R"({"name": "b200",
    "models": ["sim-model"], "definitions": ["gemm_n7168_k5120"],
    "prompt_tags": ["ptxb-no-hint"], "samples": 3, "num_turns": 1, "target_speedup": 1.0,
    "architectures": ["blackwell"]})"));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();

  nlohmann::json status;
  for (int i = 0; i < 100; ++i) {
    status = c.Status(exp);
    // All three answered and queued: the gateway answers them one by one.
    if (status.is_object() && !status["waiting_for_architectures"].empty() &&
        status["tasks"]["eval_queued"] == 3) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(status.is_object());
  EXPECT_EQ(status["architectures"], nlohmann::json({"sm_100", "sm_103"}));
  EXPECT_EQ(status["waiting_for_architectures"], nlohmann::json({"sm_100", "sm_103"}))
      << status.dump();
  EXPECT_EQ(status["tasks"]["eval_queued"], 3) << status.dump();
  EXPECT_EQ(status["trajectories"]["terminal"], 0);
  CommandResult text = c.Cli({"status", exp});
  EXPECT_THAT(text.out, ::testing::HasSubstr(
                            "waiting     3 evaluation(s) wait for a GPU of sm_100 (Blackwell) or "
                            "sm_103 (Blackwell): no active worker has one"));

  c.AddWorker({"--gpu-arch", "sm_100", "--name", "blackwell"});
  status = c.WaitFinished(exp, 30);
  ASSERT_EQ(status["trajectories"]["terminal"], 3) << status.dump();
  EXPECT_TRUE(status["waiting_for_architectures"].empty());
  EXPECT_EQ(c.QueryInt(absl::StrCat("SELECT count(*) FROM tasks t JOIN executors e ON "
                                    "t.executor = e.id WHERE e.name = 'blackwell' AND t.kind = ",
                                    SqlValue(StepKind::kEval))),
            3)
      << "every evaluation ran on the Blackwell worker";
  // The model was told the GPU it writes for, not Hopper's.
  std::string trajectory;
  {
    auto db = c.OpenDatabase();
    auto s = db->Prepare("SELECT id FROM trajectories ORDER BY rowid LIMIT 1");
    ASSERT_TRUE(s.ok() && *s->Step());
    trajectory = s->ColumnText(0);
  }
  CommandResult shown = c.Cli({"show", trajectory, "--full"});
  ASSERT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_THAT(shown.out, ::testing::HasSubstr("on NVIDIA GPUs of sm_100 (Blackwell) and sm_103 "
                                              "(Blackwell); it is built for the GPU that runs it"));
  EXPECT_THAT(shown.out, ::testing::Not(::testing::HasSubstr("sm_90a")));
}

TEST(EndToEndTest, AnOnlineBackupWhileTheExperimentRunsIsWholeAndSound) {
  Cluster c("e2e_backup");
  ASSERT_TRUE(c.StartScheduler(kFastLeases)) << c.SchedulerLogTail();
  EXPECT_TRUE(absl::StrContains(c.SchedulerLogTail(), "integrity check ok"));
  for (int i = 0; i < 2; ++i) c.AddWorker({"--latency-ms", "20"});
  c.AddGateway({"--latency-ms", "20"});
  std::string exp = c.Submit(c.WriteFile("matrix.json", MatrixSpec("e2e-backup")));
  ASSERT_FALSE(exp.empty()) << c.SchedulerLogTail();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  const std::string copy = c.dir() + "/backup.db";
  CommandResult backup = c.Cli({"admin", "backup", copy}, /*merge_stderr=*/true);
  ASSERT_EQ(backup.exit_code, 0) << backup.out;
  EXPECT_TRUE(absl::StrContains(backup.out, "backed up")) << backup.out;
  nlohmann::json status = c.WaitFinished(exp, 180);
  EXPECT_EQ(status["trajectories"]["total"], status["trajectories"]["terminal"]);

  storage::Database::Options read_only;
  read_only.read_only = true;
  auto restored = storage::Database::Open(copy, read_only);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_TRUE(storage::CheckIntegrity(**restored).ok());
  auto count = (*restored)->Prepare("SELECT count(*) FROM trajectories");
  ASSERT_TRUE(count.ok() && *count->Step());
  EXPECT_EQ(count->ColumnInt64(0), status["trajectories"]["total"].get<int64_t>())
      << "the backup holds the submitted experiment";
}

TEST(EndToEndTest, DaemonsTellTheServiceManagerWhenTheyAreReady) {
  // What systemd's Type=notify listens for (deploy/systemd/): a datagram on
  // $NOTIFY_SOCKET, from the scheduler once it serves and from an executor
  // once registered.
  Cluster c("e2e_notify");
  const std::string path = c.dir() + "/notify.sock";
  const int fd = BindNotifySocket(path, 30);
  ASSERT_GE(fd, 0);
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.AddWorker();
  unsetenv("NOTIFY_SOCKET");
  std::vector<std::string> messages;
  char buffer[512];
  for (int i = 0; i < 2; ++i) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n > 0) messages.emplace_back(buffer, n);
  }
  close(fd);
  ASSERT_EQ(messages.size(), 2u) << c.SchedulerLogTail();
  EXPECT_EQ(messages[0], absl::StrCat("READY=1\nSTATUS=serving on ", c.address()));
  EXPECT_TRUE(absl::StartsWith(messages[1], "READY=1\nSTATUS=registered as wk_")) << messages[1];
}

}  // namespace
}  // namespace ptxbench::testing
