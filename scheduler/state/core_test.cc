// State-machine tests: submission, the turn loop, leases and fencing.
#include "scheduler/state/core.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "nlohmann/json.hpp"
#include "scheduler/state/core_test_util.h"
#include "storage/blob_store.h"
#include "workloads/testing/triton_solution.h"

namespace ptxbench::scheduler {

using experiment_spec::AgentSettings;
using experiment_spec::ExpandedExperiment;
using experiment_spec::SynthesisSettings;
using experiment_spec::TrajectorySpec;

namespace {

namespace v1 = ::ptxbench::v1;

using CoreTest = CoreFixture;

TEST_F(CoreTest, SubmitCreatesTrajectoriesAndIsIdempotent) {
  ExpandedExperiment x = MakeExperiment("exp-a", 5, 3);
  auto first = core_->Submit(x, PromptsFor(x));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->trajectories, 5);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories"), 5);
  EXPECT_EQ(TasksIn(TaskState::kQueued), 5);
  // The system prompt is stored once, not once per trajectory.
  EXPECT_EQ(Count("SELECT count(DISTINCT system_blob) FROM trajectories"), 1);

  auto again = core_->Submit(x, PromptsFor(x));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->experiment_id, first->experiment_id);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories"), 5);

  ExpandedExperiment changed = MakeExperiment("exp-a", 6, 3);
  auto clash = core_->Submit(changed, PromptsFor(changed));
  EXPECT_EQ(clash.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories"), 5);
}

// A trajectory held to some workloads (a PTXBench test_path) asks its
// evaluations for exactly those; one without asks for all (none named).
TEST_F(CoreTest, EvalTasksCarryTheTrajectorysWorkloads) {
  ExpandedExperiment x = MakeExperiment("exp-w", 2, 1);
  x.trajectories[0].workloads = {"w-8192"};
  Submit(x);
  std::string gw = RegisterGateway(), wk = RegisterWorker();
  std::vector<std::vector<std::string>> asked;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
    v1::Task eval = MustLease(wk);
    asked.emplace_back(eval.eval().workload_uuids().begin(), eval.eval().workload_uuids().end());
  }
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, (std::vector<std::vector<std::string>>{{}, {"w-8192"}}));
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories WHERE workloads = 'w-8192'"), 1);
}

// Evaluations go only to GPUs of the architectures their experiment
// targets, and name them; compile-only ones go to any worker.
TEST_F(CoreTest, EvaluationsGoToGpusOfTheExperimentsArchitectures) {
  ExpandedExperiment blackwell = MakeExperiment("exp-b200", 1, 1);
  blackwell.architectures = {"sm_100", "sm_103"};
  Submit(blackwell);
  std::string gw = RegisterGateway(), hopper = RegisterWorker("h200", "sm_90"),
              b200 = RegisterWorker("b200", "sm_100");
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  EXPECT_TRUE(NothingFor(hopper)) << "a Hopper GPU got a Blackwell experiment's evaluation";
  v1::Task eval = MustLease(b200);
  EXPECT_THAT(eval.eval().architectures(), ::testing::ElementsAre("sm_100", "sm_103"));

  ExpandedExperiment default_hopper = MakeExperiment("exp-h200", 1, 1);
  Submit(default_hopper);
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  EXPECT_TRUE(NothingFor(b200));
  EXPECT_THAT(MustLease(hopper).eval().architectures(), ::testing::ElementsAre("sm_90"));

  // Kept across a restart (the column), so routing stays the same.
  ExpandedExperiment again = MakeExperiment("exp-b200-2", 1, 1);
  again.architectures = {"sm_100"};
  Submit(again);
  Restart();
  hopper = RegisterWorker("h200", "sm_90");
  b200 = RegisterWorker("b200", "sm_100");
  gw = RegisterGateway();
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  EXPECT_TRUE(NothingFor(hopper));
  EXPECT_THAT(MustLease(b200).eval().architectures(), ::testing::ElementsAre("sm_100"));
  EXPECT_EQ(Count("SELECT count(*) FROM experiments WHERE architectures = 'sm_100,sm_103'"), 1);
}

// Profiles (docs/MEASUREMENT.md, "Profiles"): refused at submit, nothing
// created, until an active GPU worker can profile; then only such workers
// get the experiment's evaluations, and a profile's report is a blob of its
// own.
TEST_F(CoreTest, ProfiledEvaluationsGoOnlyToWorkersThatCanProfile) {
  ExpandedExperiment x = MakeExperiment("exp-profiled", 1, 1);
  x.profile = true;
  const std::string plain = RegisterWorker("plain");
  auto refused = core_->Submit(x, PromptsFor(x));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(refused.status().message()),
            "experiment 'exp-profiled' asks for profiles, and no registered GPU worker of its "
            "architectures can profile (`ptxbench workers` says why each cannot); nothing was "
            "created");
  EXPECT_EQ(Count("SELECT count(*) FROM experiments"), 0);

  const std::string profiling =
      RegisterWorker("profiling", "sm_90", "Nsight Compute 2025.3.1.0 at /usr/local/cuda/bin/ncu");
  Submit(x);
  Submit(MakeExperiment("exp-plain", 1, 1));
  const std::string gw = RegisterGateway();
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  // The plain worker takes the plain experiment's evaluation, never the
  // profiled one's.
  const v1::Task plain_eval = MustLease(plain);
  EXPECT_FALSE(plain_eval.eval().profile());
  EXPECT_TRUE(NothingFor(plain));
  v1::Task profiled = MustLease(profiling);
  EXPECT_TRUE(profiled.eval().profile());

  v1::CompleteRequest c = ReportOn(profiled);
  v1::EvalResult* result = c.mutable_eval();
  result->set_status(v1::PASSED);
  result->set_all_passed(true);
  result->set_min_speedup(1.5);
  v1::WorkloadTrace* trace = result->add_traces();
  trace->set_status(v1::PASSED);
  trace->set_speedup(1.5);
  result->mutable_profile()->set_status(v1::PASSED);
  result->mutable_profile()->set_report("NVIDIA Nsight Compute report bytes");
  ASSERT_TRUE(core_->Complete(c).ok());
  const std::string eval_blob = QueryText(
      *db_, "SELECT eval_blob FROM turns WHERE eval_blob IS NOT NULL ORDER BY finished_ms DESC LIMIT 1");
  v1::EvalResult stored;
  ASSERT_TRUE(stored.ParseFromString(*storage::GetBlob(*db_, eval_blob)));
  EXPECT_TRUE(stored.profile().report().empty());
  EXPECT_EQ(stored.profile().report_bytes(), 34);
  EXPECT_EQ(*storage::GetBlob(*db_, stored.profile().report_blob()),
            "NVIDIA Nsight Compute report bytes");
  Restart();
  EXPECT_EQ(Count("SELECT count(*) FROM experiments WHERE profile = 1"), 1);
}

// The memcheck gate (docs/MEASUREMENT.md, "The memcheck gate"): refused at
// submit until an active GPU worker has compute-sanitizer; then only such
// workers get the experiment's evaluations, asked to run the gate, also
// after a restart (the setting is read back from the stored spec).
TEST_F(CoreTest, MemcheckedEvaluationsGoOnlyToWorkersWithASanitizer) {
  ExpandedExperiment x = MakeExperiment("exp-memcheck", 1, 1);
  x.memcheck = true;
  x.normalized_json = R"({"memcheck":true,"name":"exp-memcheck"})";
  const std::string plain = RegisterWorker("plain");
  auto refused = core_->Submit(x, PromptsFor(x));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              testing::HasSubstr("experiment 'exp-memcheck' asks for the memcheck gate"));
  EXPECT_EQ(Count("SELECT count(*) FROM experiments"), 0);

  Submit(MakeExperiment("exp-plain", 1, 1));
  // A profiler alone is not enough.
  (void)RegisterWorker("profiling", "sm_90", "Nsight Compute 2025.3.1.0 at /usr/local/cuda/bin/ncu");
  EXPECT_EQ(core_->Submit(x, PromptsFor(x)).status().code(), absl::StatusCode::kFailedPrecondition);
  (void)RegisterWorker("sanitizing", "sm_90", "",
                       "compute-sanitizer 2025.3.0.0 at /usr/local/cuda/bin/compute-sanitizer");
  Submit(x);
  Restart();
  const std::string gw = RegisterGateway();
  const std::string plain_again = RegisterWorker("plain");
  const std::string sanitizing = RegisterWorker(
      "sanitizing", "sm_90", "", "compute-sanitizer 2025.3.0.0 at /usr/local/cuda/bin/compute-sanitizer");
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  const v1::Task plain_eval = MustLease(plain_again);
  EXPECT_FALSE(plain_eval.eval().memcheck());
  EXPECT_TRUE(NothingFor(plain_again));
  const v1::Task gated = MustLease(sanitizing);
  EXPECT_TRUE(gated.eval().memcheck());
}

// Triton (issue 50): a Triton experiment is refused at submit, nothing
// created, until an active GPU worker of its architectures runs Triton; its
// evaluations go only to such workers, and wait while none is left.
TEST_F(CoreTest, TritonEvaluationsGoOnlyToWorkersThatRunTriton) {
  constexpr char kTriton[] = "triton 3.6.0 at /opt/venv/bin/python3";
  ExpandedExperiment x = MakeExperiment("exp-triton", 1, 1);
  x.language = "triton";
  const std::string plain = RegisterWorker("plain");
  RegisterWorker("b200", "sm_100", "", "", kTriton);  // Triton, but not of its GPUs
  auto refused = core_->Submit(x, PromptsFor(x));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(refused.status().message()),
            "experiment 'exp-triton' is in Triton (\"language\": \"triton\"), and no registered "
            "GPU worker of its architectures runs Triton: start a worker with --torch-python "
            "PATH (a Python with torch, Triton and CUDA); `ptxbench workers` shows each "
            "worker's Triton; nothing was created");
  EXPECT_EQ(Count("SELECT count(*) FROM experiments"), 0);

  std::string triton = RegisterWorker("triton", "sm_90", "", "", kTriton);
  Submit(x);
  Submit(MakeExperiment("exp-cuda", 1, 1));
  const std::string gw = RegisterGateway();
  ASSERT_TRUE(CompleteLlm(MustLease(gw), kCudaAndTritonAnswer).ok());
  ASSERT_TRUE(CompleteLlm(MustLease(gw), kCudaAndTritonAnswer).ok());
  // The plain worker takes the CUDA experiment's evaluation, never the
  // Triton one's; the Triton worker takes that.
  const v1::Task plain_eval = MustLease(plain);
  EXPECT_EQ(plain_eval.eval().language(), "cuda");
  EXPECT_TRUE(NothingFor(plain)) << "a worker without Triton got a Triton evaluation";
  EXPECT_EQ(MustLease(triton).eval().language(), "triton");

  // The Triton worker goes away: the next Triton evaluation waits (the
  // plain worker still does not take it) until one that runs Triton comes.
  ExpandedExperiment later = MakeExperiment("exp-triton-2", 1, 1);
  later.language = "triton";
  Submit(later);
  ASSERT_TRUE(core_->Leave(triton).ok());
  ASSERT_TRUE(CompleteLlm(MustLease(gw), kCudaAndTritonAnswer).ok());
  EXPECT_TRUE(NothingFor(plain));
  Restart();  // and the route survives a restart (the experiment's language)
  RegisterGateway();
  const std::string plain_again = RegisterWorker("plain");
  EXPECT_TRUE(NothingFor(plain_again));
  triton = RegisterWorker("triton", "sm_90", "", "", kTriton);
  EXPECT_EQ(MustLease(triton).eval().language(), "triton");
}

// In a "solution" experiment, an answer that is a Triton solution (PTXBench's
// shape) runs as what it is: its evaluation goes only to a worker that runs
// Triton, as its kernel.py with language triton, also after a restart; a
// CUDA solution's evaluation goes anywhere, as the solution.
TEST_F(CoreTest, ATritonSolutionInASolutionExperimentRunsAsTriton) {
  const std::string module = workloads::testing::TritonModule();
  nlohmann::json solution = workloads::testing::TritonSolution(module);
  const std::string triton_answer = absl::StrCat("```json\n", solution.dump(2), "\n```\n");
  solution["spec"]["language"] = "cuda";
  solution["spec"]["entry_point"] = "kernel.cu::run";
  solution["sources"][0] = {{"path", "kernel.cu"}, {"content", "__global__ void k() {}\n"}};
  const std::string cuda_answer = absl::StrCat("```json\n", solution.dump(2), "\n```\n");

  ExpandedExperiment x = MakeExperiment("exp-solutions", 2, 1);
  x.language = "solution";
  Submit(x);
  const std::string gw = RegisterGateway(), plain = RegisterWorker("plain");
  ASSERT_TRUE(CompleteLlm(MustLease(gw), triton_answer).ok());
  EXPECT_TRUE(NothingFor(plain)) << "a worker without Triton got a Triton solution";
  Restart();
  const std::string gw2 = RegisterGateway(), plain2 = RegisterWorker("plain");
  EXPECT_TRUE(NothingFor(plain2)) << "after a restart";
  ASSERT_TRUE(CompleteLlm(MustLease(gw2), cuda_answer).ok());
  const v1::Task cuda_eval = MustLease(plain2);
  EXPECT_EQ(cuda_eval.eval().language(), "solution");
  EXPECT_TRUE(NothingFor(plain2));
  const std::string triton =
      RegisterWorker("triton", "sm_90", "", "", "triton 3.6.0 at /usr/bin/python3");
  const v1::Task triton_eval = MustLease(triton);
  EXPECT_EQ(triton_eval.eval().language(), "triton");
  EXPECT_EQ(triton_eval.eval().kernel_source(), module);
}

// A compile-only Triton evaluation needs no Triton (the worker checks the
// module's shape; Triton's JIT runs only before timing on a GPU): any worker
// takes it, and its submit needs no Triton worker.
TEST_F(CoreTest, ACompileOnlyTritonEvaluationGoesToAnyWorker) {
  ExpandedExperiment x = MakeExperiment("exp-triton-compile", 1, 1);
  x.language = "triton";
  x.eval_mode = v1::COMPILE_ONLY;
  const std::string plain = RegisterWorker("plain");
  Submit(x);
  const std::string gw = RegisterGateway();
  ASSERT_TRUE(CompleteLlm(MustLease(gw), kCudaAndTritonAnswer).ok());
  const v1::Task eval = MustLease(plain);
  EXPECT_EQ(eval.eval().language(), "triton");
  EXPECT_EQ(eval.eval().mode(), v1::COMPILE_ONLY);
}

// Profiles and Triton together need one worker that does both: a Triton
// worker and a profiling one apart are not enough. A simulated worker does
// both (its results say they are simulated).
TEST_F(CoreTest, AProfiledTritonExperimentNeedsAWorkerThatDoesBoth) {
  ExpandedExperiment x = MakeExperiment("exp-triton-profiled", 1, 1);
  x.language = "triton";
  x.profile = true;
  RegisterWorker("triton", "sm_90", "", "", "triton 3.6.0 at /usr/bin/python3");
  RegisterWorker("profiling", "sm_90", "Nsight Compute 2025.3.1.0 at /usr/local/cuda/bin/ncu");
  auto refused = core_->Submit(x, PromptsFor(x));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr("no registered GPU worker of its architectures runs Triton and "
                                   "profiles: start a worker with --torch-python PATH (a Python "
                                   "with torch, Triton and CUDA) and --ncu PATH;"));
  EXPECT_EQ(Count("SELECT count(*) FROM experiments"), 0);

  v1::RegisterRequest r;
  r.set_kind(v1::WORKER);
  r.set_name("simulated");
  r.mutable_capabilities()->set_simulated(true);
  r.mutable_capabilities()->set_slots(1);
  v1::Gpu* gpu = r.mutable_capabilities()->add_gpus();
  gpu->set_sm_arch("sm_90");
  gpu->set_healthy(true);
  ASSERT_TRUE(core_->Register(r).ok());
  Submit(x);
  EXPECT_EQ(Count("SELECT count(*) FROM experiments WHERE language = 'triton'"), 1);
}

TEST_F(CoreTest, TurnLoopReachesTargetAndSubmits) {
  Submit(MakeExperiment("exp", 1, 5, 1, "model-a", /*target=*/1.5));
  std::string gw = RegisterGateway(), wk = RegisterWorker();
  EXPECT_TRUE(NothingFor(wk));  // only an LLM step is ready

  v1::Task llm = MustLease(gw);
  EXPECT_EQ(llm.kind(), v1::LLM);
  EXPECT_EQ(llm.turn(), 0);
  ASSERT_EQ(llm.llm().messages_size(), 2);
  EXPECT_EQ(llm.llm().messages(0).role(), "system");
  ASSERT_TRUE(CompleteLlm(llm).ok());

  v1::Task eval = MustLease(wk);
  EXPECT_EQ(eval.kind(), v1::EVAL);
  EXPECT_NE(eval.eval().kernel_source().find("PTXB_EXPORT"), std::string::npos);
  EXPECT_EQ(eval.eval().definition(), "gemm_n7168_k5120");
  ASSERT_TRUE(CompleteEval(eval, v1::PASSED, 1.1).ok());  // correct, below target

  v1::Task llm2 = MustLease(gw);
  EXPECT_EQ(llm2.turn(), 1);
  // Full context: system, task, answer 0, feedback 0.
  ASSERT_EQ(llm2.llm().messages_size(), 4);
  EXPECT_EQ(llm2.llm().messages(2).role(), "assistant");
  EXPECT_NE(llm2.llm().messages(3).content().find("Keep optimizing"), std::string::npos);
  ASSERT_TRUE(CompleteLlm(llm2).ok());
  ASSERT_TRUE(CompleteEval(MustLease(wk), v1::PASSED, 2.0).ok());

  EXPECT_EQ(TrajectoriesIn(v1::SUBMITTED), 1);
  EXPECT_EQ(Count("SELECT turns_completed FROM trajectories"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM turns WHERE state = 'done'"), 2);
  EXPECT_EQ(Count("SELECT correct FROM trajectories"), 1);
  EXPECT_TRUE(NothingFor(gw));
}

TEST_F(CoreTest, OneOffEvalGoesStraightToAWorkerAndEndsAfterItsOnlyTurn) {
  ExpandedExperiment x = MakeExperiment("eval-abc", 1, 1, 10, "file", 1.0);
  std::string gw = RegisterGateway(), wk = RegisterWorker();
  auto trajectory = core_->SubmitEval(x, PromptsFor(x), kKernelAnswer);
  ASSERT_TRUE(trajectory.ok()) << trajectory.status();
  EXPECT_EQ(*trajectory, x.trajectories[0].trajectory_id);
  EXPECT_TRUE(NothingFor(gw)) << "no model is asked";
  EXPECT_EQ(TrajectoriesIn(v1::AWAITING_EVAL), 1);

  v1::Task eval = MustLease(wk);
  EXPECT_EQ(eval.kind(), v1::EVAL);
  EXPECT_NE(eval.eval().kernel_source().find("PTXB_EXPORT"), std::string::npos);
  ASSERT_TRUE(CompleteEval(eval, v1::PASSED, 1.2).ok());
  EXPECT_EQ(TrajectoriesIn(v1::SUBMITTED), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM turns WHERE eval_status = 1"), 1);
  EXPECT_TRUE(NothingFor(gw));
  EXPECT_TRUE(NothingFor(wk));

  // A second evaluation under the same name is refused, and more than one
  // turn is not a one-off evaluation.
  EXPECT_EQ(core_->SubmitEval(x, PromptsFor(x), kKernelAnswer).status().code(),
            absl::StatusCode::kAlreadyExists);
  ExpandedExperiment two = MakeExperiment("eval-two", 1, 2);
  EXPECT_FALSE(core_->SubmitEval(two, PromptsFor(two), kKernelAnswer).ok());
}

TEST_F(CoreTest, BudgetReachedStopsNewModelStepsButLetsEvaluationsFinish) {
  ExpandedExperiment x = MakeExperiment("budget", 3, 5);
  x.max_cost_usd = 0.5;  // two answers at $0.25 each
  Submit(x);
  std::string gw = RegisterGateway(), wk = RegisterWorker();
  v1::Task a = MustLease(gw), b = MustLease(gw);
  ASSERT_TRUE(CompleteLlm(a).ok());
  ASSERT_TRUE(CompleteLlm(b).ok());
  // The third trajectory's model step was queued before the budget ran out:
  // it never starts, and the trajectory ends saying why.
  EXPECT_TRUE(NothingFor(gw));
  // The two answers already paid for are still evaluated; then those
  // trajectories end instead of asking the model again.
  ASSERT_TRUE(CompleteEval(MustLease(wk), v1::PASSED, 1.0).ok());
  ASSERT_TRUE(CompleteEval(MustLease(wk), v1::PASSED, 1.0).ok());
  EXPECT_TRUE(NothingFor(gw));
  EXPECT_EQ(TrajectoriesIn(v1::LIMITS_EXCEEDED), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories WHERE reason LIKE 'experiment budget of $0.50 reached%'"), 3);
}

TEST_F(CoreTest, SpentBudgetSurvivesARestart) {
  ExpandedExperiment x = MakeExperiment("budget-restart", 2, 5);
  x.max_cost_usd = 0.25;  // one answer
  Submit(x);
  std::string gw = RegisterGateway();
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  Restart();  // the spent $0.25 must be read back from the database
  EXPECT_TRUE(NothingFor(RegisterGateway("gw2")));
  EXPECT_EQ(Count("SELECT count(*) FROM trajectories WHERE reason LIKE 'experiment budget%'"), 1);
}

TEST_F(CoreTest, TurnLimitEndsAsLimitsExceededAndNoCodeCountsATurn) {
  Submit(MakeExperiment("exp", 1, 2));
  std::string gw = RegisterGateway(), wk = RegisterWorker();
  ASSERT_TRUE(CompleteLlm(MustLease(gw), "I would rather not write code.").ok());
  EXPECT_TRUE(NothingFor(wk));  // no kernel, nothing to evaluate
  v1::Task second = MustLease(gw);
  EXPECT_EQ(second.turn(), 1);
  EXPECT_NE(second.llm().messages(3).content().find("```"), std::string::npos)
      << "the no-code feedback asks for a fenced block";
  ASSERT_TRUE(CompleteLlm(second).ok());
  ASSERT_TRUE(CompleteEval(MustLease(wk), v1::INCORRECT_NUMERICAL, 0).ok());
  EXPECT_EQ(TrajectoriesIn(v1::LIMITS_EXCEEDED), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM turns"), 2);
  EXPECT_TRUE(NothingFor(gw));
}

// A synthesis experiment's answers are kept and never evaluated: within
// the length bounds a trajectory is done; outside them, or cut off at the
// token limit, it asks again, afresh, until its passes are spent. The stored settings survive a restart.
TEST_F(CoreTest, SynthesisAnswersEndWithinTheirBoundsAndAreNeverEvaluated) {
  ExpandedExperiment x = MakeExperiment("synth", 2, 2);
  x.eval_mode = v1::EVAL_MODE_UNSPECIFIED;
  x.synthesis = SynthesisSettings{"SYSTEM", "answer", /*min_chars=*/10, /*max_chars=*/40,
                                  /*max_passes=*/2, /*max_tokens=*/4096};
  Submit(x);
  Restart();
  std::string gw = RegisterGateway(), wk = RegisterWorker();
  const std::string kernel_like = "```cpp\nint x;\n```";  // 19 characters, within
  // The first row: within at once.
  v1::Task first = MustLease(gw);
  EXPECT_EQ(first.llm().params().max_tokens(), 4096);
  ASSERT_TRUE(CompleteLlm(first, kernel_like).ok());
  EXPECT_TRUE(NothingFor(wk)) << "a synthesis answer is never evaluated";
  EXPECT_EQ(TrajectoriesIn(v1::SUBMITTED), 1);
  // The second: cut off at its token limit (within the bounds, but
  // unfinished), asked again without the first answer, then too short.
  v1::Task second = MustLease(gw);
  v1::CompleteRequest cut = ReportOn(second);
  cut.mutable_llm()->set_text(kernel_like);
  cut.mutable_llm()->set_finish_reason("length");
  ASSERT_TRUE(core_->Complete(cut).ok());
  v1::Task again = MustLease(gw);
  EXPECT_EQ(again.turn(), 1);
  EXPECT_EQ(again.llm().messages_size(), 2) << "afresh: system and task only";
  ASSERT_TRUE(CompleteLlm(again, "short").ok());
  EXPECT_EQ(TrajectoriesIn(v1::LIMITS_EXCEEDED), 1);
  EXPECT_TRUE(NothingFor(gw));
  EXPECT_TRUE(NothingFor(wk));
  EXPECT_EQ(Count("SELECT count(*) FROM turns WHERE kernel_blob IS NOT NULL AND kernel_blob != ''"),
            0);
}

TEST_F(CoreTest, ExpiredLeaseIsReleasedAfterBackoffAndStaleCompletionRejected) {
  Submit(MakeExperiment("exp", 1, 3));
  std::string gw1 = RegisterGateway("one"), gw2 = RegisterGateway("two");
  v1::Task first = MustLease(gw1);
  EXPECT_EQ(first.attempt(), 1);

  clock_.Advance(absl::Seconds(29));
  ASSERT_TRUE(core_->Tick().ok());
  EXPECT_TRUE(NothingFor(gw2)) << "lease still current";
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(core_->Tick().ok());
  EXPECT_TRUE(NothingFor(gw2)) << "expired, but in backoff for 1 s";
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(core_->Tick().ok());
  v1::Task second = MustLease(gw2);
  EXPECT_EQ(second.lease().task_id(), first.lease().task_id());
  EXPECT_NE(second.lease().lease_id(), first.lease().lease_id());
  EXPECT_EQ(second.attempt(), 2);

  absl::Status stale = CompleteLlm(first);
  EXPECT_EQ(stale.code(), absl::StatusCode::kFailedPrecondition) << stale;
  EXPECT_EQ(Count("SELECT count(*) FROM turns"), 0) << "a stale report changes nothing";

  ASSERT_TRUE(CompleteLlm(second).ok());
  EXPECT_TRUE(CompleteLlm(second).ok()) << "a duplicate of an accepted report is accepted";
  EXPECT_EQ(Count("SELECT count(*) FROM turns"), 1) << "and recorded once";
  EXPECT_EQ(TasksOfKind(StepKind::kLlm), 1);
}

TEST_F(CoreTest, HeartbeatsKeepALeaseAliveAndReportRevokedOnes) {
  Submit(MakeExperiment("exp", 1, 3));
  std::string gw = RegisterGateway();
  v1::Task task = MustLease(gw);
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(absl::Seconds(20));
    v1::HeartbeatRequest hb;
    hb.set_executor_id(gw);
    *hb.add_leases() = task.lease();
    v1::HeartbeatResponse r = core_->Heartbeat(hb);
    EXPECT_EQ(r.revoked_size(), 0);
    ASSERT_TRUE(core_->Tick().ok());
  }
  ASSERT_TRUE(CompleteLlm(task).ok()) << "200 s later, still current";

  v1::HeartbeatRequest hb;
  hb.set_executor_id(gw);
  *hb.add_leases() = task.lease();  // done now: no longer current
  EXPECT_EQ(core_->Heartbeat(hb).revoked_size(), 1);
  hb.set_executor_id("gw_unknown");
  EXPECT_TRUE(core_->Heartbeat(hb).reregister());
}

TEST_F(CoreTest, AttemptTimeLimitExpiresEvenWithHeartbeats) {
  options_.max_llm_attempt = absl::Seconds(60);
  Restart();
  Submit(MakeExperiment("exp", 1, 3));
  std::string gw = RegisterGateway();
  v1::Task task = MustLease(gw);
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(absl::Seconds(20));
    v1::HeartbeatRequest hb;
    hb.set_executor_id(gw);
    *hb.add_leases() = task.lease();
    core_->Heartbeat(hb);
    ASSERT_TRUE(core_->Tick().ok());
  }
  EXPECT_EQ(CompleteLlm(task).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Count("SELECT deaths FROM tasks"), 1);
}

TEST_F(CoreTest, ModelInflightCapHoldsAcrossGateways) {
  options_.model_inflight_caps["model-a"] = 2;
  Restart();
  Submit(MakeExperiment("exp", 5, 3));
  std::string gw1 = RegisterGateway("one"), gw2 = RegisterGateway("two");
  v1::Task a = MustLease(gw1);
  MustLease(gw2);
  EXPECT_TRUE(NothingFor(gw1));
  EXPECT_TRUE(NothingFor(gw2));
  ASSERT_TRUE(CompleteLlm(a).ok());
  MustLease(gw2);
}

TEST_F(CoreTest, GatewayOnlyGetsModelsItServes) {
  Submit(MakeExperiment("exp", 2, 3, 1, "model-b"));
  v1::RegisterRequest r;
  r.set_kind(v1::GATEWAY);
  r.mutable_capabilities()->set_serves_any_model(false);
  r.mutable_capabilities()->add_models("model-a");
  std::string only_a = core_->Register(r)->executor_id();
  EXPECT_TRUE(NothingFor(only_a));
  r.mutable_capabilities()->add_models("model-b");
  r.set_executor_id(only_a);
  ASSERT_TRUE(core_->Register(r).ok());
  EXPECT_EQ(MustLease(only_a).llm().model(), "model-b");
}

TEST_F(CoreTest, FairnessBetweenTwoExperimentsByPriority) {
  std::string low = Submit(MakeExperiment("low", 200, 1, /*priority=*/1));
  std::string high = Submit(MakeExperiment("high", 200, 1, /*priority=*/3));
  std::string gw = RegisterGateway();
  std::map<std::string, int> served;
  for (int i = 0; i < 100; ++i) ++served[MustLease(gw).experiment_id()];
  EXPECT_EQ(served[high], 75);
  EXPECT_EQ(served[low], 25);
  // A small experiment submitted now is served right away.
  std::string small = Submit(MakeExperiment("small", 2, 1, 1));
  std::map<std::string, int> next;
  for (int i = 0; i < 10; ++i) ++next[MustLease(gw).experiment_id()];
  EXPECT_EQ(next[small], 2);
}

TEST_F(CoreTest, RecoveryKeepsLeasesFencedAndQueuesIntact) {
  Submit(MakeExperiment("exp", 3, 3));
  std::string gw = RegisterGateway();
  v1::Task held = MustLease(gw);
  clock_.Advance(absl::Seconds(25));
  Restart();  // the scheduler died and came back 25 s into the lease
  clock_.Advance(absl::Seconds(25));
  ASSERT_TRUE(core_->Tick().ok());
  // The lease got a fresh TTL at restart, so the answer is not lost (and
  // nobody asks the model again).
  ASSERT_TRUE(CompleteLlm(held).ok());
  EXPECT_EQ(MustLease(gw).attempt(), 1);
  EXPECT_EQ(MustLease(gw).attempt(), 1);
  EXPECT_TRUE(NothingFor(gw));
  EXPECT_EQ(TasksOfKind(StepKind::kLlm), 3);
}

// A definition only its PyTorch reference computes: refused at submit,
// before anything is written, until an active GPU worker can run it.
class PyTorchReferenceTest : public CoreFixture {
 protected:
  static ExpandedExperiment RmsNormExperiment(const std::string& name = "rms") {
    ExpandedExperiment x = MakeExperiment(name, 2, 1);
    for (TrajectorySpec& t : x.trajectories) t.definition = "rmsnorm_h4096";
    x.pytorch_references["rmsnorm_h4096"] =
        "definition rmsnorm_h4096 (op_type rmsnorm): this build has no native reference for it";
    return x;
  }
  std::string RegisterGpuWorker(const std::string& torch, bool simulated = false,
                                bool healthy = true) {
    v1::RegisterRequest r;
    r.set_kind(v1::WORKER);
    r.set_name("gpu");
    v1::Gpu* gpu = r.mutable_capabilities()->add_gpus();
    gpu->set_healthy(healthy);
    gpu->set_sm_arch("sm_90");
    r.mutable_capabilities()->set_torch_reference(torch);
    r.mutable_capabilities()->set_simulated(simulated);
    return core_->Register(r)->executor_id();
  }
  void ExpectRefused() {
    const ExpandedExperiment x = RmsNormExperiment();
    auto outcome = core_->Submit(x, PromptsFor(x));
    EXPECT_EQ(outcome.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(std::string(outcome.status().message()),
              "definition rmsnorm_h4096 has no native reference (definition rmsnorm_h4096 "
              "(op_type rmsnorm): this build has no native reference for it) and no registered "
              "GPU worker can run its PyTorch reference: start a worker with --torch-python PATH "
              "(a Python with torch and CUDA)");
    for (const char* table : {"experiments", "trajectories", "tasks", "blobs", "events"}) {
      EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM ", table)), 0) << table;
    }
  }
  static constexpr char kTorch[] = "torch 2.11.0+cu130 at /opt/torch/.venv/bin/python3";
};

TEST_F(PyTorchReferenceTest, RefusedWithNoWorkerThatRunsPyTorch) {
  ExpectRefused();
  RegisterGateway();
  RegisterWorker();  // a GPU worker without torch
  v1::RegisterRequest compile_only;
  compile_only.set_kind(v1::WORKER);
  compile_only.mutable_capabilities()->set_torch_reference(kTorch);  // but no GPU
  ASSERT_TRUE(core_->Register(compile_only).ok());
  RegisterGpuWorker(kTorch, /*simulated=*/false, /*healthy=*/false);
  ExpectRefused();
}

TEST_F(PyTorchReferenceTest, ADrainingOrLostWorkerDoesNotCount) {
  const std::string worker = RegisterGpuWorker(kTorch);
  ASSERT_TRUE(core_->Drain(worker).ok());
  ExpectRefused();
  RegisterGpuWorker(kTorch);
  clock_.Advance(absl::Minutes(5));  // no heartbeat since: lost
  ExpectRefused();
}

TEST_F(PyTorchReferenceTest, AcceptedOnceAWorkerRunsPyTorchReferences) {
  RegisterGpuWorker(kTorch);
  const ExpandedExperiment x = RmsNormExperiment();
  auto outcome = core_->Submit(x, PromptsFor(x));
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->trajectories, 2);
}

TEST_F(PyTorchReferenceTest, ASimulatedGpuWorkerTakesAnyDefinition) {
  RegisterGpuWorker("", /*simulated=*/true);
  const ExpandedExperiment x = RmsNormExperiment();
  EXPECT_TRUE(core_->Submit(x, PromptsFor(x)).ok());
}

TEST_F(PyTorchReferenceTest, NativeDefinitionsNeedNoPyTorch) {
  ExpandedExperiment x = MakeExperiment("native", 2, 1);
  EXPECT_TRUE(core_->Submit(x, PromptsFor(x)).ok());
}

// Agent mode: refused at submit, before anything is written, unless an
// active gateway runs the experiment's CLI at its pinned version.
class AgentCliTest : public CoreFixture {
 protected:
  static ExpandedExperiment AgentExperiment() {
    ExpandedExperiment x = MakeExperiment("agents", 2, 1);
    x.agent = AgentSettings{};
    x.agent->cli = "codex";
    x.agent->cli_version = "0.171.0";
    x.agent->token_budget = 1000;
    return x;
  }
  std::string RegisterAgentGateway(int slots, const std::string& cli, const std::string& version) {
    v1::RegisterRequest r;
    r.set_kind(v1::GATEWAY);
    r.set_name("agents");
    r.mutable_capabilities()->set_serves_any_model(true);
    r.mutable_capabilities()->set_agent_slots(slots);
    v1::AgentCliInstall* install = r.mutable_capabilities()->add_agent_clis();
    install->set_name(cli);
    install->set_version(version);
    return core_->Register(r)->executor_id();
  }
  absl::Status Submit() {
    const ExpandedExperiment x = AgentExperiment();
    absl::Status s = core_->Submit(x, PromptsFor(x)).status();
    for (const char* table : {"experiments", "trajectories", "tasks", "blobs", "events"}) {
      EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM ", table)), 0) << table;
    }
    return s;
  }
};

TEST_F(AgentCliTest, RefusedUntilAGatewayRunsTheCliAtItsPinnedVersion) {
  const std::string none =
      "experiment 'agents' is in agent mode with codex 0.171.0, and no registered gateway runs "
      "sessions of that CLI; nothing was created";
  absl::Status s = Submit();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(s.message()), none);
  RegisterGateway();                                 // no agent slots
  RegisterAgentGateway(0, "codex", "0.171.0");       // the CLI, but no slots
  RegisterAgentGateway(2, "codex", "0.149.1");       // another version
  RegisterAgentGateway(2, "claude-code", "2.1.332");  // another CLI
  const std::string draining = RegisterAgentGateway(2, "codex", "0.171.0");
  ASSERT_TRUE(core_->Drain(draining).ok());
  EXPECT_EQ(std::string(Submit().message()), none);
}

TEST_F(AgentCliTest, WithItsGatewayEachTrajectoryIsQueuedAsOneSession) {
  RegisterAgentGateway(2, "codex", "0.171.0");
  const ExpandedExperiment x = AgentExperiment();
  ASSERT_TRUE(core_->Submit(x, PromptsFor(x)).ok());
  EXPECT_EQ(TrajectoriesIn(v1::AWAITING_AGENT), 2);
  EXPECT_EQ(TasksOfKind(StepKind::kAgent), 2);
  EXPECT_EQ(TasksOfKind(StepKind::kLlm), 0) << "never run as a turn loop";
}

}  // namespace
}  // namespace ptxbench::scheduler
