#include "cli/views/views.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::set<std::string> Keys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& item : object.items()) keys.insert(item.key());
  return keys;
}

v1::GetExperimentResponse SampleExperiment() {
  v1::GetExperimentResponse r;
  r.mutable_experiment()->set_experiment_id("exp_42");
  r.mutable_experiment()->set_name("quickstart");
  r.mutable_experiment()->set_num_turns(3);
  v1::ExperimentProgress* p = r.mutable_progress();
  p->set_total(10);
  p->set_terminal(4);
  (*p->mutable_by_state())["SUBMITTED"] = 2;
  (*p->mutable_by_state())["FAILED"] = 2;
  (*p->mutable_by_state())["AWAITING_MODEL"] = 6;
  (*p->mutable_by_failure_class())["INFRA"] = 2;
  p->set_turns_completed(17);
  p->set_tasks_queued(5);
  p->set_tasks_leased(1);
  p->set_correct(3);
  p->set_target_met(2);
  p->set_cost_usd(0.5);
  p->set_simulated(true);
  return r;
}

TEST(ExperimentViewTest, JsonHasTheDocumentedKeys) {
  const nlohmann::json j = ExperimentJson(SampleExperiment());
  EXPECT_EQ(Keys(j), (std::set<std::string>{"experiment", "name", "created_unix_ms", "num_turns",
                                            "trajectories", "turns", "tasks", "correct",
                                            "target_met", "cost_usd", "simulated",
                                            "architectures", "waiting_for_architectures",
                                            "waiting_for_triton"}));
  EXPECT_EQ(j["experiment"], "exp_42");
  EXPECT_EQ(j["name"], "quickstart");
  EXPECT_EQ(Keys(j["trajectories"]),
            (std::set<std::string>{"total", "terminal", "by_state", "by_failure_class"}));
  EXPECT_EQ(j["trajectories"]["total"], 10);
  EXPECT_EQ(j["trajectories"]["terminal"], 4);
  EXPECT_EQ(j["trajectories"]["by_state"]["SUBMITTED"], 2);
  EXPECT_EQ(j["trajectories"]["by_state"]["AWAITING_MODEL"], 6);
  EXPECT_EQ(j["trajectories"]["by_failure_class"]["INFRA"], 2);
  EXPECT_EQ(j["turns"], nlohmann::json({{"completed", 17}}));
  EXPECT_EQ(j["tasks"], nlohmann::json({{"queued", 5}, {"leased", 1}, {"eval_queued", 0}}));
  EXPECT_EQ(j["correct"], 3);
  EXPECT_EQ(j["target_met"], 2);
  EXPECT_DOUBLE_EQ(j["cost_usd"].get<double>(), 0.5);
  EXPECT_EQ(j["simulated"], true);
}

TEST(ExperimentViewTest, EmptyMapsAreObjects) {
  v1::GetExperimentResponse r;
  r.mutable_experiment()->set_experiment_id("exp_1");
  const nlohmann::json j = ExperimentJson(r);
  EXPECT_TRUE(j["trajectories"]["by_state"].is_object());
  EXPECT_TRUE(j["trajectories"]["by_failure_class"].is_object());
  EXPECT_EQ(j["simulated"], false);
}

TEST(ExperimentViewTest, TextShowsProgressStatesAndSimulated) {
  const std::string text = ExperimentText(SampleExperiment());
  EXPECT_THAT(text, HasSubstr("exp_42 (quickstart)  (SIMULATED results)"));
  EXPECT_THAT(text, HasSubstr("[############------------------] 4/10 (40%)"));
  // States in the enum's order, live ones first.
  EXPECT_THAT(text, HasSubstr("AWAITING_MODEL 6, SUBMITTED 2, FAILED 2"));
  EXPECT_THAT(text, HasSubstr("INFRA 2"));

  v1::GetExperimentResponse real = SampleExperiment();
  real.mutable_progress()->set_simulated(false);
  EXPECT_THAT(ExperimentText(real), Not(HasSubstr("SIMULATED")));
}

TEST(ExperimentViewTest, ListTable) {
  v1::ListExperimentsResponse list;
  *list.add_experiments() = SampleExperiment();
  const std::string table = ExperimentTable(list);
  EXPECT_THAT(table, HasSubstr("EXPERIMENT"));
  EXPECT_THAT(table, HasSubstr("exp_42"));
  EXPECT_THAT(table, HasSubstr("4/10"));
  EXPECT_THAT(table, HasSubstr("SIMULATED"));
  EXPECT_EQ(ExperimentListJson(list)["experiments"][0]["experiment"], "exp_42");
}

v1::Trajectory SampleTrajectory() {
  v1::Trajectory t;
  v1::TrajectorySummary* s = t.mutable_summary();
  s->set_trajectory_id("tr_7");
  s->set_experiment_id("exp_42");
  s->set_model("sim-model");
  s->set_definition("gemm_small");
  s->set_prompt_tag("hopper");
  s->set_state(v1::LIMITS_EXCEEDED);
  s->set_num_turns(2);
  s->set_turns_completed(2);
  s->set_best_speedup(1.25);
  s->set_has_correct_kernel(true);
  s->set_reason("turn limit reached");

  v1::Turn* t1 = t.add_turns();
  t1->set_index(1);
  t1->set_state("done");
  t1->mutable_response()->set_text("Here is my kernel\n```cuda\n...\n```");
  t1->mutable_response()->set_finish_reason("stop");
  t1->mutable_response()->set_simulated(true);
  t1->set_kernel_sha256("ab12");
  t1->set_kernel_source("line1\nline2\n");
  v1::EvalResult* e = t1->mutable_eval();
  e->set_status(v1::PASSED);
  e->set_min_speedup(1.25);
  e->set_all_passed(true);
  e->set_simulated(true);
  v1::WorkloadTrace* trace = e->add_traces();
  trace->set_workload_uuid("0123456789abcdef");
  trace->set_status(v1::PASSED);
  trace->set_speedup(1.25);
  (*trace->mutable_axes())["M"] = 128;
  t1->set_feedback("All workloads passed.");

  v1::Turn* t2 = t.add_turns();  // no code block: nothing evaluated
  t2->set_index(2);
  t2->set_state("done");
  t2->mutable_response()->set_text("I give up");
  t2->mutable_response()->set_finish_reason("length");
  t2->set_feedback("No code block found.");
  return t;
}

TEST(TrajectoryViewTest, ShowJson) {
  const nlohmann::json j = TrajectoryJson(SampleTrajectory(), /*full=*/false);
  EXPECT_EQ(j["trajectory"], "tr_7");
  EXPECT_EQ(j["experiment"], "exp_42");
  EXPECT_EQ(j["state"], "LIMITS_EXCEEDED");
  EXPECT_TRUE(j["failure_class"].is_null());
  EXPECT_EQ(j["reason"], "turn limit reached");
  ASSERT_EQ(j["turns"].size(), 2u);
  const nlohmann::json& t1 = j["turns"][0];
  for (const char* key : {"index", "state", "kernel_sha256", "eval_status", "speedup", "simulated",
                          "finish_reason"}) {
    EXPECT_TRUE(t1.contains(key)) << key;
  }
  EXPECT_EQ(t1["index"], 1);
  EXPECT_EQ(t1["state"], "done");
  EXPECT_EQ(t1["kernel_sha256"], "ab12");
  EXPECT_EQ(t1["eval_status"], "PASSED");
  EXPECT_DOUBLE_EQ(t1["speedup"].get<double>(), 1.25);
  EXPECT_EQ(t1["simulated"], true);
  EXPECT_EQ(t1["finish_reason"], "stop");
  EXPECT_FALSE(t1.contains("answer"));  // only with --full
  const nlohmann::json& t2 = j["turns"][1];
  EXPECT_TRUE(t2["eval_status"].is_null());
  EXPECT_TRUE(t2["speedup"].is_null());
  EXPECT_EQ(t2["simulated"], false);
  EXPECT_EQ(t2["kernel_sha256"], "");

  const nlohmann::json full = TrajectoryJson(SampleTrajectory(), /*full=*/true);
  EXPECT_EQ(full["turns"][0]["answer"], "Here is my kernel\n```cuda\n...\n```");
  EXPECT_EQ(full["turns"][1]["feedback"], "No code block found.");
}

TEST(TrajectoryViewTest, ShowTextLabelsSimulatedAndPerWorkloadLines) {
  const std::string text = TrajectoryText(SampleTrajectory(), /*full=*/false);
  EXPECT_THAT(text, HasSubstr("== turn 1 (done) =="));
  EXPECT_THAT(text, HasSubstr("answer    [SIMULATED] finish stop"));
  EXPECT_THAT(text, HasSubstr("kernel    sha256 ab12 (2 lines)"));
  EXPECT_THAT(text, HasSubstr("eval      PASSED, min speedup 1.25x  [SIMULATED]"));
  EXPECT_THAT(text, HasSubstr("01234567  M=128  PASSED  1.25x"));
  EXPECT_THAT(text, HasSubstr("All workloads passed."));
  EXPECT_THAT(text, HasSubstr("kernel    none found in the answer"));
}

TEST(TrajectoryViewTest, NoSpeedupShownForAKernelThatFailed) {
  v1::Trajectory t = SampleTrajectory();
  v1::EvalResult* e = t.mutable_turns(0)->mutable_eval();
  e->set_status(v1::INCORRECT_NUMERICAL);
  e->set_all_passed(false);
  e->set_min_speedup(1.41);  // from the workloads that passed: not a result
  const std::string text = TrajectoryText(t, /*full=*/false);
  EXPECT_THAT(text, HasSubstr("eval      INCORRECT_NUMERICAL  [SIMULATED]"));
  EXPECT_THAT(text, Not(HasSubstr("min speedup 1.41x")));
}

TEST(TrajectoryViewTest, ListTable) {
  v1::ListTrajectoriesResponse list;
  *list.add_trajectories() = SampleTrajectory().summary();
  v1::TrajectorySummary* failed = list.add_trajectories();
  failed->set_trajectory_id("tr_8");
  failed->set_state(v1::FAILED);
  failed->set_failure_class(v1::INFRA);
  failed->set_reason("poisoned: executor died 3 times");
  const std::string table = TrajectoryTable(list);
  EXPECT_THAT(table, HasSubstr("TRAJECTORY  MODEL"));
  EXPECT_THAT(table, HasSubstr("LIMITS_EXCEEDED"));
  EXPECT_THAT(table, HasSubstr("1.25x"));
  EXPECT_THAT(table, HasSubstr("FAILED (INFRA)"));
  EXPECT_THAT(table, HasSubstr("poisoned: executor died 3 times"));
  EXPECT_EQ(TrajectoryListJson("exp_42", list)["trajectories"][1]["failure_class"], "INFRA");
}

TEST(ExecutorViewTest, TableAndJson) {
  v1::ListExecutorsResponse list;
  v1::ExecutorInfo* w = list.add_executors();
  w->set_executor_id("ex_w1");
  w->set_kind(v1::WORKER);
  w->set_name("node1");
  w->set_status("active");
  w->set_leases(1);
  w->mutable_capabilities()->set_slots(2);
  w->mutable_capabilities()->set_simulated(true);
  for (int i = 0; i < 2; ++i) {
    v1::Gpu* gpu = w->mutable_capabilities()->add_gpus();
    gpu->set_index(i);
    gpu->set_model("NVIDIA H200");
    gpu->set_sm_arch("sm_90");
    gpu->set_healthy(true);
  }
  w->set_last_seen_unix_ms(1000000LL * 1000 - 3000);
  v1::ExecutorInfo* g = list.add_executors();
  g->set_executor_id("ex_g1");
  g->set_kind(v1::GATEWAY);
  g->mutable_capabilities()->set_serves_any_model(true);
  const std::string table = ExecutorTable(list, absl::FromUnixSeconds(1000000));
  EXPECT_THAT(table, HasSubstr("2x NVIDIA H200 (sm_90)"));
  EXPECT_THAT(table, HasSubstr("3s ago"));
  EXPECT_THAT(table, HasSubstr("active [SIMULATED]"));
  EXPECT_THAT(table, HasSubstr("any model"));
  const nlohmann::json j = ExecutorListJson(list);
  EXPECT_EQ(j["executors"][0]["kind"], "worker");
  EXPECT_EQ(j["executors"][0]["gpus"].size(), 2u);
  EXPECT_EQ(j["executors"][1]["serves_any_model"], true);
}

TEST(ExecutorViewTest, WorkersShowTheirSandboxAndWhatItLacks) {
  v1::ListExecutorsResponse list;
  v1::ExecutorInfo* w = list.add_executors();
  w->set_executor_id("ex_w1");
  w->set_kind(v1::WORKER);
  w->set_name("node1");
  w->mutable_capabilities()->add_protections("own PID, network, mount namespaces");
  w->mutable_capabilities()->add_protections("seccomp filter");
  w->mutable_capabilities()->add_protection_warnings("no cgroup v2: limits by a watchdog");
  const std::string table = ExecutorTable(list, absl::FromUnixSeconds(1000000));
  EXPECT_THAT(table, HasSubstr("ex_w1 sandbox: own PID, network, mount namespaces; seccomp filter"));
  EXPECT_THAT(table, HasSubstr("ex_w1 WARNING: no cgroup v2: limits by a watchdog"));
  const nlohmann::json j = ExecutorListJson(list);
  EXPECT_EQ(j["executors"][0]["protections"].size(), 2u);
  EXPECT_EQ(j["executors"][0]["protection_warnings"][0], "no cgroup v2: limits by a watchdog");
}

// A gateway with agent slots says what its sessions are protected by, and
// what bounds they lack (no cgroup: their kernel memory).
TEST(ExecutorViewTest, AgentGatewaysShowTheirSessionsProtections) {
  v1::ListExecutorsResponse list;
  v1::ExecutorInfo* g = list.add_executors();
  g->set_executor_id("ex_g1");
  g->set_kind(v1::GATEWAY);
  g->mutable_capabilities()->set_agent_slots(2);
  g->mutable_capabilities()->add_protections("each session runs as its own uid");
  g->mutable_capabilities()->add_protection_warnings("no --agent-cgroup: kernel memory");
  const std::string table = ExecutorTable(list, absl::FromUnixSeconds(1000000));
  EXPECT_THAT(table, HasSubstr("ex_g1 sessions: each session runs as its own uid"));
  EXPECT_THAT(table, HasSubstr("ex_g1 WARNING: no --agent-cgroup: kernel memory"));
}

// And whether they run Triton submissions, and how to start one that does.
TEST(ExecutorViewTest, GpuWorkersSayWhetherTheyRunPyTorchReferencesAndTriton) {
  v1::ListExecutorsResponse list;
  for (const char* id : {"ex_w1", "ex_w2", "ex_c1"}) {
    v1::ExecutorInfo* w = list.add_executors();
    w->set_executor_id(id);
    w->set_kind(v1::WORKER);
    if (std::string(id) != "ex_c1") w->mutable_capabilities()->add_gpus()->set_model("NVIDIA H200");
  }
  list.mutable_executors(0)->mutable_capabilities()->set_torch_reference(
      "torch 2.11.0+cu130 at /opt/torch/.venv/bin/python3");
  list.mutable_executors(0)->mutable_capabilities()->set_triton(
      "triton 3.6.0 at /opt/torch/.venv/bin/python3");
  const std::string table = ExecutorTable(list, absl::FromUnixSeconds(1000000));
  EXPECT_THAT(table, HasSubstr("ex_w1 Triton: triton 3.6.0 at /opt/torch/.venv/bin/python3\n"));
  EXPECT_THAT(table, HasSubstr("ex_w2 Triton: none (start the worker with --torch-python PATH, "
                               "a Python with torch, Triton and CUDA)\n"));
  EXPECT_THAT(table, Not(HasSubstr("ex_c1 Triton")));
  EXPECT_THAT(table, HasSubstr("ex_w1 PyTorch references: torch 2.11.0+cu130 at "
                               "/opt/torch/.venv/bin/python3\n"));
  EXPECT_THAT(table, HasSubstr("ex_w2 PyTorch references: none (start the worker with "
                               "--torch-python PATH, a Python with torch and CUDA)\n"));
  // A compile-only worker runs no reference at all.
  EXPECT_THAT(table, Not(HasSubstr("ex_c1 PyTorch")));
  EXPECT_THAT(table, Not(HasSubstr("ex_c1 profiler")));
  const nlohmann::json j = ExecutorListJson(list);
  EXPECT_EQ(j["executors"][0]["torch_reference"],
            "torch 2.11.0+cu130 at /opt/torch/.venv/bin/python3");
  EXPECT_EQ(j["executors"][1]["torch_reference"], "");
  EXPECT_EQ(j["executors"][0]["triton"], "triton 3.6.0 at /opt/torch/.venv/bin/python3");
  EXPECT_EQ(j["executors"][1]["triton"], "");
}

TEST(ExecutorViewTest, GpuWorkersSayWhetherTheyHaveASanitizerAndWhyNot) {
  v1::ListExecutorsResponse list;
  for (const char* id : {"ex_w1", "ex_w2"}) {
    v1::ExecutorInfo* w = list.add_executors();
    w->set_executor_id(id);
    w->set_kind(v1::WORKER);
    w->mutable_capabilities()->add_gpus()->set_model("NVIDIA H200");
  }
  list.mutable_executors(0)->mutable_capabilities()->set_sanitizer(
      "compute-sanitizer 2025.3.0.0 at /usr/local/cuda/bin/compute-sanitizer");
  list.mutable_executors(1)->mutable_capabilities()->set_sanitizer_unavailable(
      "no compute-sanitizer at /usr/local/cuda/bin/compute-sanitizer");
  const std::string table = ExecutorTable(list, absl::FromUnixSeconds(1000000));
  EXPECT_THAT(table, HasSubstr("ex_w1 sanitizer: compute-sanitizer 2025.3.0.0 at "
                               "/usr/local/cuda/bin/compute-sanitizer\n"));
  EXPECT_THAT(table, HasSubstr("ex_w2 sanitizer: none (no compute-sanitizer at "
                               "/usr/local/cuda/bin/compute-sanitizer)\n"));
  const nlohmann::json j = ExecutorListJson(list);
  EXPECT_EQ(j["executors"][1]["sanitizer_unavailable"],
            "no compute-sanitizer at /usr/local/cuda/bin/compute-sanitizer");
}

TEST(ExecutorViewTest, GpuWorkersSayWhetherTheyCanProfileAndWhyNot) {
  v1::ListExecutorsResponse list;
  for (const char* id : {"ex_w1", "ex_w2"}) {
    v1::ExecutorInfo* w = list.add_executors();
    w->set_executor_id(id);
    w->set_kind(v1::WORKER);
    w->mutable_capabilities()->add_gpus()->set_model("NVIDIA H200");
  }
  list.mutable_executors(0)->mutable_capabilities()->set_profiler(
      "Nsight Compute 2025.3.1.0 at /usr/local/cuda/bin/ncu");
  list.mutable_executors(1)->mutable_capabilities()->set_profiler_unavailable(
      "no ncu at /usr/local/cuda/bin/ncu");
  const std::string table = ExecutorTable(list, absl::FromUnixSeconds(1000000));
  EXPECT_THAT(table, HasSubstr("ex_w1 profiler: Nsight Compute 2025.3.1.0 at "
                               "/usr/local/cuda/bin/ncu\n"));
  EXPECT_THAT(table, HasSubstr("ex_w2 profiler: none (no ncu at /usr/local/cuda/bin/ncu)\n"));
  const nlohmann::json j = ExecutorListJson(list);
  EXPECT_EQ(j["executors"][1]["profiler"], "");
  EXPECT_EQ(j["executors"][1]["profiler_unavailable"], "no ncu at /usr/local/cuda/bin/ncu");
}

// `status` names the architectures evaluations wait for only when no active
// worker has a healthy GPU of one; compile-only experiments wait for none.
TEST(ViewsTest, UnservedArchitecturesLookOnlyAtActiveHealthyGpus) {
  v1::GetExperimentResponse exp;
  exp.mutable_experiment()->set_eval_mode(v1::FULL);
  exp.mutable_experiment()->add_architectures("sm_100");
  exp.mutable_progress()->set_eval_tasks_queued(2);
  v1::ListExecutorsResponse executors;
  auto add = [&](const std::string& status, const std::string& arch, bool healthy) {
    v1::ExecutorInfo* w = executors.add_executors();
    w->set_kind(v1::WORKER);
    w->set_status(status);
    v1::Gpu* g = w->mutable_capabilities()->add_gpus();
    g->set_sm_arch(arch);
    g->set_healthy(healthy);
  };
  add("active", "sm_90", true);
  add("lost", "sm_100", true);
  add("draining", "sm_100", true);
  add("active", "sm_100", false);
  EXPECT_EQ(UnservedArchitectures(exp, executors), std::vector<std::string>{"sm_100"});
  EXPECT_THAT(ExperimentText(exp, {"sm_100"}),
              HasSubstr("waiting     2 evaluation(s) wait for a GPU of sm_100 (Blackwell)"));
  add("active", "sm_100", true);
  EXPECT_TRUE(UnservedArchitectures(exp, executors).empty());
  executors.clear_executors();
  exp.mutable_experiment()->set_eval_mode(v1::COMPILE_ONLY);
  EXPECT_TRUE(UnservedArchitectures(exp, executors).empty());
}

// A Triton experiment whose GPUs are there but run no Triton says it waits
// for a worker that runs Triton; a CUDA one, or one a Triton worker (or a
// simulated one) serves, does not.
TEST(ViewsTest, ATritonExperimentSaysItWaitsForAWorkerThatRunsTriton) {
  v1::GetExperimentResponse exp;
  exp.mutable_experiment()->set_eval_mode(v1::FULL);
  exp.mutable_experiment()->set_language("triton");
  exp.mutable_experiment()->add_architectures("sm_90");
  exp.mutable_progress()->set_eval_tasks_queued(3);
  v1::ListExecutorsResponse executors;
  auto add = [&](const std::string& arch, const std::string& triton) {
    v1::ExecutorInfo* w = executors.add_executors();
    w->set_kind(v1::WORKER);
    w->set_status("active");
    v1::Gpu* g = w->mutable_capabilities()->add_gpus();
    g->set_sm_arch(arch);
    g->set_healthy(true);
    w->mutable_capabilities()->set_triton(triton);
    return w;
  };
  EXPECT_FALSE(WaitsForTriton(exp, executors)) << "no GPU at all: UnservedArchitectures says so";
  add("sm_90", "");
  add("sm_100", "triton 3.6.0 at /usr/bin/python3");  // not of its GPUs
  EXPECT_TRUE(WaitsForTriton(exp, executors));
  const std::string text = ExperimentText(exp, {}, true);
  EXPECT_THAT(text, HasSubstr("waiting     3 evaluation(s) wait for a worker that runs Triton: "
                              "no active worker of its GPUs has Triton (start one with "
                              "--torch-python PATH"));
  EXPECT_EQ(ExperimentJson(exp, {}, true)["waiting_for_triton"], true);
  exp.mutable_experiment()->set_language("cuda");
  EXPECT_FALSE(WaitsForTriton(exp, executors));
  exp.mutable_experiment()->set_language("triton");
  add("sm_90", "")->mutable_capabilities()->set_simulated(true);
  EXPECT_FALSE(WaitsForTriton(exp, executors));
}

}  // namespace
}  // namespace ptxbench::cli
