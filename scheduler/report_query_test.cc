// Reports and streamed trajectories read back through a Snapshot from a
// scheduler database whose experiments were driven to known outcomes; every
// expected figure is worked out by hand in the comments.
#include "scheduler/read/report_query.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scheduler/read/snapshot.h"
#include "scheduler/state/core_test_util.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {

using experiment_spec::ExpandedExperiment;

namespace {

namespace v1 = ::ptxbench::v1;
namespace fs = std::filesystem;

// What happens at one turn: no kernel in the answer, an evaluation status
// with a speedup, or an evaluation left pending.
struct Step {
  enum Kind { kNoKernel, kEval, kPending } kind = kEval;
  v1::EvalStatus status = v1::PASSED;
  double speedup = 0;
  // LIBRARY_FALLBACK: the census says the outputs passed the checks.
  bool checks_passed = false;
  // A result without workload traces (whatever its status says).
  bool no_traces = false;
};

class ReportQueryTest : public CoreFixture {
 protected:
  std::string DatabasePath() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("report_query_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    return (dir_ / "ptxbench.db").string();
  }
  void TearDown() override {
    core_.reset();
    db_.reset();
    fs::remove_all(dir_);
  }

  // Runs `x` with scripted outcomes: scripts[i] for trajectory i, one Step
  // per turn. Answers carry 100 input and 50 output tokens, cost 0.25 and
  // take 1000 + 100 * turn ms; evaluations take 2000 ms.
  void Run(const ExpandedExperiment& x, const std::vector<std::vector<Step>>& scripts,
           const std::string& provider = "openai", bool simulated = false) {
    std::map<std::string, const std::vector<Step>*> by_id;
    for (size_t i = 0; i < scripts.size(); ++i) by_id[x.trajectories[i].trajectory_id] = &scripts[i];
    const std::string gateway = RegisterGateway();
    // Slots for every evaluation: a pending one holds its lease.
    v1::RegisterRequest w;
    w.set_kind(v1::WORKER);
    w.set_name("wk");
    auto* gpu = w.mutable_capabilities()->add_gpus();
    gpu->set_model("H200");
    gpu->set_sm_arch("sm_90");
    gpu->set_healthy(true);
    w.mutable_capabilities()->set_slots(64);
    const std::string worker = core_->Register(w)->executor_id();
    bool progress = true;
    while (progress) {
      progress = false;
      while (true) {
        auto task = core_->TryLease(gateway);
        ASSERT_TRUE(task.ok()) << task.status();
        if (!task->has_value()) break;
        const Step& step = by_id.at((*task)->trajectory_id())->at((*task)->turn());
        v1::CompleteRequest c;
        *c.mutable_lease() = (*task)->lease();
        c.set_executor_id(gateway);
        v1::LlmResponse* r = c.mutable_llm();
        r->set_text(step.kind == Step::kNoKernel ? "I cannot do it." : kKernelAnswer);
        r->set_finish_reason("stop");
        r->set_cost_usd(0.25);
        r->set_provider(provider);
        r->set_simulated(simulated);
        r->set_latency_ms(1000 + 100 * (*task)->turn());
        r->mutable_usage()->set_input_tokens(100);
        r->mutable_usage()->set_output_tokens(50);
        ASSERT_TRUE(core_->Complete(c).ok());
        progress = true;
      }
      while (true) {
        auto task = core_->TryLease(worker);
        ASSERT_TRUE(task.ok()) << task.status();
        if (!task->has_value()) break;
        const Step& step = by_id.at((*task)->trajectory_id())->at((*task)->turn());
        if (step.kind == Step::kPending) continue;  // leased, never completed
        v1::CompleteRequest c;
        *c.mutable_lease() = (*task)->lease();
        c.set_executor_id(worker);
        v1::EvalResult* r = c.mutable_eval();
        r->set_status(step.status);
        r->set_all_passed(step.status == v1::PASSED);
        r->set_min_speedup(step.speedup);
        r->set_wall_time_ms(2000);
        r->set_simulated(simulated);
        if (step.no_traces) {
          ASSERT_TRUE(core_->Complete(c).ok());
          progress = true;
          continue;
        }
        v1::WorkloadTrace* trace = r->add_traces();
        trace->set_status(step.status);
        trace->set_speedup(step.speedup);
        trace->set_roofline_fraction(step.status == v1::PASSED ? 0.5 : 0);
        if (step.status == v1::LIBRARY_FALLBACK) {
          v1::LaunchedKernel* k = trace->mutable_census()->add_kernels();
          k->set_name("sm90_xmma_gemm_cublas");
          k->set_origin(v1::LIBRARY);
          trace->mutable_census()->set_outputs_correct(step.checks_passed);
        }
        ASSERT_TRUE(core_->Complete(c).ok());
        progress = true;
      }
    }
  }

  v1::ReportResponse Report(const std::vector<std::string>& ids,
                            const std::vector<std::vector<std::string>>& groupings) {
    auto snapshot = Snapshot::Open(DatabasePathOfDb());
    EXPECT_TRUE(snapshot.ok()) << snapshot.status();
    auto definitions = workloads::DefinitionRegistry::Load({});
    EXPECT_TRUE(definitions.ok()) << definitions.status();
    v1::ReportRequest request;
    for (const std::string& id : ids) request.add_experiment_ids(id);
    for (const auto& g : groupings) {
      v1::Grouping* grouping = request.add_groupings();
      for (const std::string& d : g) grouping->add_by(d);
    }
    auto report = ComputeReport(**snapshot, **definitions, request);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : v1::ReportResponse();
  }

  std::string DatabasePathOfDb() { return (dir_ / "ptxbench.db").string(); }

  fs::path dir_;
};

constexpr Step kNoKernel{Step::kNoKernel};
constexpr Step kPending{Step::kPending};
constexpr Step Eval(v1::EvalStatus status, double speedup = 0) {
  return Step{Step::kEval, status, speedup};
}

// Four trajectories of three turns, target 1.5:
//   #0  PASSED 2.0                          -> SUBMITTED at turn 1
//   #1  COMPILE_ERROR, PASSED 1.2, PASSED 1.0 -> LIMITS_EXCEEDED (rescued)
//   #2  INCORRECT, no kernel, RUNTIME_ERROR -> LIMITS_EXCEEDED
//   #3  kernel whose evaluation is pending  -> AWAITING_EVAL
const std::vector<std::vector<Step>>& KnownScripts() {
  static const auto* scripts = new std::vector<std::vector<Step>>{
      {Eval(v1::PASSED, 2.0)},
      {Eval(v1::COMPILE_ERROR), Eval(v1::PASSED, 1.2), Eval(v1::PASSED, 1.0)},
      {Eval(v1::INCORRECT_NUMERICAL), kNoKernel, Eval(v1::RUNTIME_ERROR)},
      {kPending},
  };
  return *scripts;
}

TEST_F(ReportQueryTest, EveryMetricOfAKnownExperiment) {
  const ExpandedExperiment x = MakeExperiment("known", 4, 3);
  Submit(x);
  Run(x, KnownScripts());
  const v1::ReportResponse report = Report({"known"}, {{"model"}, {"turn"}});
  ASSERT_EQ(report.experiments_size(), 1);
  EXPECT_EQ(report.metrics_version(), "ptxbench.metrics.v3");
  const v1::ExperimentReport& e = report.experiments(0);
  EXPECT_EQ(e.name(), "known");
  const v1::GroupReport& t = e.total();
  EXPECT_EQ(t.trajectories(), 4);
  EXPECT_EQ(t.finished(), 3);
  EXPECT_EQ(t.by_state().at("SUBMITTED"), 1);
  EXPECT_EQ(t.by_state().at("LIMITS_EXCEEDED"), 2);
  EXPECT_EQ(t.by_state().at("AWAITING_EVAL"), 1);
  EXPECT_EQ(t.correct(), 2);  // #0, #1
  EXPECT_DOUBLE_EQ(t.correct_rate(), 0.5);
  // By turn 1: #0; by turn 2 and 3: #0 and #1.
  ASSERT_EQ(t.pass_at_turn_size(), 3);
  EXPECT_DOUBLE_EQ(t.pass_at_turn(0).rate(), 0.25);
  EXPECT_DOUBLE_EQ(t.pass_at_turn(1).rate(), 0.5);
  EXPECT_DOUBLE_EQ(t.pass_at_turn(2).rate(), 0.5);
  EXPECT_EQ(t.target_met(), 1);
  // Best speedups 2.0 (#0) and 1.2 (#1): above 0, 0.5, 0.8, 1 both; above
  // 1.5 only 2.0; above 2 none (strictly greater).
  const std::map<double, int64_t> fast = {{0, 2}, {0.5, 2}, {0.8, 2}, {1, 2}, {1.5, 1}, {2, 0}};
  ASSERT_EQ(t.fast_p_size(), 6);
  for (const v1::FastP& f : t.fast_p()) EXPECT_EQ(f.count(), fast.at(f.p())) << "p = " << f.p();
  EXPECT_EQ(t.speedup_count(), 2);
  EXPECT_NEAR(t.geomean_speedup(), std::sqrt(2.0 * 1.2), 1e-12);
  EXPECT_DOUBLE_EQ(t.best_speedup(), 2.0);
  EXPECT_EQ(t.roofline_count(), 2);
  EXPECT_DOUBLE_EQ(t.roofline_fraction(), 0.5);
  // Turn 1: passed (#0), compile_error (#1), incorrect (#2), pending (#3);
  // turn 2: passed (#1), no_kernel (#2); turn 3: passed (#1), runtime_error (#2).
  ASSERT_EQ(t.outcomes_by_turn_size(), 3);
  const auto& o0 = t.outcomes_by_turn(0).classes();
  EXPECT_EQ(o0.at("passed"), 1);
  EXPECT_EQ(o0.at("compile_error"), 1);
  EXPECT_EQ(o0.at("incorrect"), 1);
  EXPECT_EQ(o0.at("pending"), 1);
  const auto& o1 = t.outcomes_by_turn(1).classes();
  EXPECT_EQ(o1.at("passed"), 1);
  EXPECT_EQ(o1.at("no_kernel"), 1);
  const auto& o2 = t.outcomes_by_turn(2).classes();
  EXPECT_EQ(o2.at("passed"), 1);
  EXPECT_EQ(o2.at("runtime_error"), 1);
  // #1 and #2 failed their first turn (#3's is pending); #1 was rescued.
  EXPECT_EQ(t.first_turn_failed(), 2);
  EXPECT_EQ(t.rescued(), 1);
  EXPECT_DOUBLE_EQ(t.rescue_rate(), 0.5);
  // Answers: 1 + 3 + 3 + 1 = 8 at 0.25; evaluations: 1 + 3 + 2 = 6.
  EXPECT_EQ(t.model_calls(), 8);
  EXPECT_EQ(t.evaluations(), 6);
  EXPECT_EQ(t.tokens().input_tokens(), 800);
  EXPECT_EQ(t.tokens().output_tokens(), 400);
  EXPECT_DOUBLE_EQ(t.cost_usd(), 2.0);
  EXPECT_DOUBLE_EQ(t.cost_per_correct_usd(), 1.0);
  // Latencies: four turn-1 calls at 1000 ms, two at 1100, two at 1200:
  // rank ceil(0.5 * 8) = 4 -> 1000; rank ceil(0.95 * 8) = 8 -> 1200.
  EXPECT_EQ(t.model_latency_ms().count(), 8);
  EXPECT_DOUBLE_EQ(t.model_latency_ms().p50(), 1000);
  EXPECT_DOUBLE_EQ(t.model_latency_ms().p95(), 1200);
  EXPECT_DOUBLE_EQ(t.eval_time_ms().p50(), 2000);
  EXPECT_EQ(t.simulated_trajectories(), 0);
  EXPECT_EQ(t.scripted_turns(), 0);

  ASSERT_EQ(e.groupings_size(), 2);
  ASSERT_EQ(e.groupings(0).groups_size(), 1);
  EXPECT_EQ(e.groupings(0).groups(0).key().at("model"), "model-a");
  EXPECT_EQ(e.groupings(0).groups(0).correct(), 2);
  // Cut after turn 1, the experiment had one correct trajectory; after 2, two.
  ASSERT_EQ(e.groupings(1).groups_size(), 3);
  EXPECT_EQ(e.groupings(1).groups(0).key().at("turn"), "1");
  EXPECT_EQ(e.groupings(1).groups(0).correct(), 1);
  EXPECT_EQ(e.groupings(1).groups(1).correct(), 2);
  EXPECT_DOUBLE_EQ(e.groupings(1).groups(0).cost_usd(), 1.0);  // four turn-1 answers
}

// The fallback figures from stored results: the rule runs when a result is
// stored (turns.fallback_correct) and the report reads the column.
// The scores' columns are written with each correct result and read back
// (docs/REPORTS.md, "Scores"). Every PASSED trace has roofline fraction 0.5:
// #0's 2.0x scores (2 - 0.5) / (2 + 1 - 1) = 0.75, #1's best, 1.2x,
// 0.7 / 1.2; #2 and #3 have no correct kernel and score 0. The bundled
// definition weighs 1.
TEST_F(ReportQueryTest, TheScoresAreStoredWithEachResult) {
  const ExpandedExperiment x = MakeExperiment("scored", 4, 3);
  Submit(x);
  Run(x, KnownScripts());
  const v1::GroupReport t = Report({"scored"}, {}).experiments(0).total();
  EXPECT_EQ(t.sol_score_count(), 4);
  EXPECT_DOUBLE_EQ(t.sol_score(), (0.75 + 0.7 / 1.2) / 4);
  EXPECT_EQ(t.weighted_roofline_count(), 4);
  EXPECT_DOUBLE_EQ(t.weighted_roofline(), (0.5 + 0.5) / 4);
  // Correct timed turns 2.0, 1.2, 1.0: none slower than the reference; #0's
  // is persistent, #1's two rescued.
  EXPECT_EQ(t.timed_correct_turns(), 3);
  EXPECT_EQ(t.slower_turns(), 0);
  EXPECT_EQ(t.rescue_speedups().persistent().count(), 1);
  EXPECT_EQ(t.rescue_speedups().rescued().count(), 2);
  EXPECT_DOUBLE_EQ(t.rescue_speedups().rescued().geomean(), std::sqrt(1.2 * 1.0));
  const v1::CorrectnessVariance& v = Report({"scored"}, {}).experiments(0).correctness_variance();
  EXPECT_EQ(v.trajectories(), 4);
  EXPECT_EQ(v.correct(), 2);
}

// Held-out workloads reach the report apart (docs/REPORTS.md): a turn that
// passed its shown workload and failed the held-out one is correct on what
// it was shown, not correct, and found out.
TEST_F(ReportQueryTest, AHeldOutWorkloadThatFailedIsFoundOut) {
  ExpandedExperiment x = MakeExperiment("held", 1, 1);
  x.trajectories[0].workloads = {"w-shown", "w-held"};
  x.trajectories[0].held_out = {"w-held"};
  Submit(x);
  const std::string gw = RegisterGateway(), wk = RegisterWorker();
  ASSERT_TRUE(CompleteLlm(MustLease(gw)).ok());
  v1::CompleteRequest c = ReportOn(MustLease(wk));
  AddTraces(c.mutable_eval(), {{"w-shown", v1::PASSED}, {"w-held", v1::INCORRECT_NUMERICAL}});
  ASSERT_TRUE(core_->Complete(c).ok());
  const v1::GroupReport t = Report({"held"}, {}).experiments(0).total();
  EXPECT_EQ(t.held_out_trajectories(), 1);
  EXPECT_EQ(t.correct(), 0);
  EXPECT_EQ(t.correct_on_shown(), 1);
  EXPECT_EQ(t.found_out(), 1);
}

// The workloads' importances reach the stored figures: with every workload
// weighing 0, no correct turn has a figure, so only the incorrect
// trajectories (#2, #3) count, at 0.
TEST_F(ReportQueryTest, TheWorkloadsImportanceWeighsTheStoredScores) {
  std::vector<std::string> asked;
  options_.workload_importance = [&asked](const std::string& definition,
                                          const std::string& workload) {
    asked.push_back(definition);
    return 0.0;
  };
  Restart();
  const ExpandedExperiment x = MakeExperiment("weighed", 4, 3);
  Submit(x);
  Run(x, KnownScripts());
  const v1::GroupReport t = Report({"weighed"}, {}).experiments(0).total();
  EXPECT_EQ(t.sol_score_count(), 2);
  EXPECT_DOUBLE_EQ(t.sol_score(), 0);
  EXPECT_EQ(t.weighted_roofline_count(), 2);
  ASSERT_FALSE(asked.empty());
  EXPECT_EQ(asked[0], x.trajectories[0].definition);
}

TEST_F(ReportQueryTest, FallbacksThatPassedTheChecksAreCountedApart) {
  const ExpandedExperiment x = MakeExperiment("fallbacks", 3, 2);
  Submit(x);
  Step fallback_correct = Eval(v1::LIBRARY_FALLBACK);
  fallback_correct.checks_passed = true;
  // #0 a fallback that passed the checks, then PASSED; #1 a fallback that
  // passed them, then one that did not; #2 a fallback whose outputs were
  // wrong, then INCORRECT. Correct: #0; by checks: #0, #1; turns correct
  // by checks: 1 PASSED, 2 fallbacks.
  Run(x, {{fallback_correct, Eval(v1::PASSED, 1.2)},
          {fallback_correct, Eval(v1::LIBRARY_FALLBACK)},
          {Eval(v1::LIBRARY_FALLBACK), Eval(v1::INCORRECT_NUMERICAL)}});
  const v1::ReportResponse report = Report({"fallbacks"}, {{"model"}});
  ASSERT_EQ(report.experiments_size(), 1);
  EXPECT_EQ(report.experiments(0).language(), x.language);
  const v1::GroupReport& t = report.experiments(0).total();
  EXPECT_EQ(t.correct(), 1);
  EXPECT_EQ(t.correct_by_checks(), 2);
  EXPECT_EQ(t.passed_turns(), 1);
  EXPECT_EQ(t.fallback_correct_turns(), 2);
  EXPECT_DOUBLE_EQ(t.fallback_share(), 2.0 / 3);
  EXPECT_EQ(report.experiments(0).groupings(0).groups(0).fallback_correct_turns(), 2);
}

// Correct is the verdict's, stored with the result (turns.correct), not the
// status: a PASSED that checked no workload is not correct, for the report
// as for the scheduler's own trajectory row.
TEST_F(ReportQueryTest, CorrectIsTheVerdictsNotTheStatus) {
  const ExpandedExperiment x = MakeExperiment("verdict", 2, 1);
  Submit(x);
  Step passed_unchecked = Eval(v1::PASSED, 2.0);
  passed_unchecked.no_traces = true;
  Run(x, {{passed_unchecked}, {Eval(v1::PASSED, 1.5)}});
  const v1::GroupReport t = Report({"verdict"}, {{"model"}}).experiments(0).total();
  EXPECT_EQ(t.evaluations(), 2);
  EXPECT_EQ(t.correct(), 1);
  EXPECT_EQ(t.passed_turns(), 1);
  EXPECT_EQ(t.speedup_count(), 1);
  EXPECT_EQ(QueryInt(*db_, "SELECT count(*) FROM trajectories WHERE correct = 1"), 1);
}

TEST_F(ReportQueryTest, SimulatedAndScriptedResultsAreCountedAsSuch) {
  const ExpandedExperiment sim = MakeExperiment("sim", 2, 1);
  Submit(sim);
  Run(sim, {{Eval(v1::PASSED, 1.1)}, {Eval(v1::COMPILE_ERROR)}}, "simulated", true);
  const ExpandedExperiment scripted = MakeExperiment("scripted", 1, 1, 1, "model-b");
  Submit(scripted);
  Run(scripted, {{Eval(v1::PASSED, 3.0)}}, "scripted");
  const v1::ReportResponse report = Report({"sim", "scripted"}, {{"model"}});
  ASSERT_EQ(report.experiments_size(), 2);
  EXPECT_EQ(report.experiments(0).total().simulated_trajectories(), 2);
  EXPECT_EQ(report.experiments(0).total().scripted_turns(), 0);
  EXPECT_EQ(report.experiments(1).total().simulated_trajectories(), 0);
  EXPECT_EQ(report.experiments(1).total().scripted_turns(), 1);
}

TEST_F(ReportQueryTest, UnknownExperimentsAndGroupingsAreRefused) {
  Submit(MakeExperiment("known", 1, 1));
  auto snapshot = Snapshot::Open(DatabasePathOfDb());
  ASSERT_TRUE(snapshot.ok());
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok());
  v1::ReportRequest request;
  request.add_experiment_ids("nope");
  request.add_groupings()->add_by("model");
  EXPECT_EQ(ComputeReport(**snapshot, **definitions, request).status().message(),
            "unknown experiment 'nope'");
  request.set_experiment_ids(0, "known");
  request.mutable_groupings(0)->set_by(0, "colour");
  EXPECT_TRUE(absl::IsInvalidArgument(ComputeReport(**snapshot, **definitions, request).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ComputeReport(**snapshot, **definitions, v1::ReportRequest()).status()));
}

// The parts a snapshot reads, as a vector; each part's size is checked
// against what it says.
class Parts : public Snapshot::PartWriter, public std::vector<v1::Trajectory> {
 public:
  v1::Trajectory* NewPart() override { return &emplace_back(); }
  absl::Status PartDone(size_t bytes) override {
    EXPECT_EQ(bytes, back().ByteSizeLong());
    return absl::OkStatus();
  }
};

// A snapshot sees the database as it was when opened, whatever is written
// after; a trajectory larger than a part comes in parts that join up.
TEST_F(ReportQueryTest, SnapshotsAreConsistentAndStreamInParts) {
  const ExpandedExperiment x = MakeExperiment("parts", 2, 3);
  Submit(x);
  Run(x, {{Eval(v1::COMPILE_ERROR), Eval(v1::COMPILE_ERROR), Eval(v1::PASSED, 1.0)},
          {kPending}});
  auto snapshot = Snapshot::Open(DatabasePathOfDb());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  Submit(MakeExperiment("later", 1, 1));
  EXPECT_TRUE(absl::IsNotFound((*snapshot)->Experiment("later").status()))
      << "written after the snapshot was taken";

  v1::ReadTrajectoriesRequest request;
  request.set_experiment_id("parts");
  Parts parts;
  ASSERT_TRUE((*snapshot)->ReadTrajectories(request, /*part_bytes=*/1, parts).ok());
  // One turn per part: 3 parts for #0, 1 for #1.
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_FALSE(parts[0].continued());
  EXPECT_EQ(parts[0].summary().model(), "model-a");
  EXPECT_FALSE(parts[0].system_prompt().empty());
  EXPECT_NE(parts[0].turns(0).response().text().find("```cpp"), std::string::npos);
  EXPECT_FALSE(parts[0].turns(0).feedback().empty());
  EXPECT_TRUE(parts[1].continued());
  EXPECT_EQ(parts[1].summary().trajectory_id(), parts[0].summary().trajectory_id());
  EXPECT_TRUE(parts[1].summary().model().empty());
  EXPECT_EQ(parts[2].turns(0).index(), 2);
  EXPECT_EQ(parts[2].turns(0).eval().status(), v1::PASSED);
  EXPECT_FALSE(parts[3].continued());

  // Results only: no texts, no prompts, evaluations without logs.
  request.set_detail(v1::TURN_DETAIL_RESULTS);
  Parts results;
  ASSERT_TRUE((*snapshot)->ReadTrajectories(request, 1 << 20, results).ok());
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(results[0].turns_size(), 3);
  EXPECT_TRUE(results[0].system_prompt().empty());
  EXPECT_TRUE(results[0].turns(0).response().text().empty());
  EXPECT_EQ(results[0].turns(0).response().cost_usd(), 0.25);
  EXPECT_TRUE(results[0].turns(0).kernel_source().empty());
  EXPECT_TRUE(results[0].turns(0).feedback().empty());
  EXPECT_EQ(results[0].turns(2).eval().traces_size(), 1);

  request.set_trajectory_id("no-such-trajectory");
  Parts none;
  EXPECT_TRUE(absl::IsNotFound((*snapshot)->ReadTrajectories(request, 1, none)));
}

}  // namespace
}  // namespace ptxbench::scheduler
