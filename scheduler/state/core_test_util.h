#ifndef PTXBENCH_SCHEDULER_STATE_CORE_TEST_UTIL_H_
#define PTXBENCH_SCHEDULER_STATE_CORE_TEST_UTIL_H_

// A Core over an in-memory database with a FakeClock, and helpers to drive
// trajectories through it without any network.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "experiment_spec/spec.h"
#include "gtest/gtest.h"
#include "scheduler/state/core.h"
#include "scheduler/store/schema.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {

inline experiment_spec::ExpandedExperiment MakeExperiment(const std::string& name, int trajectories,
                                                          int num_turns, int priority = 1,
                                                          const std::string& model = "model-a",
                                                          double target = 1.5) {
  experiment_spec::ExpandedExperiment x;
  x.name = name;
  x.experiment_id = experiment_spec::DeriveExperimentId(name);
  x.normalized_json = absl::StrCat("{\"name\":\"", name, "\",\"n\":", trajectories, "}");
  x.spec_hash = absl::StrCat("hash-", name, "-", trajectories, "-", num_turns, "-", priority);
  x.priority = priority;
  for (int i = 0; i < trajectories; ++i) {
    experiment_spec::TrajectorySpec t;
    t.model = model;
    t.definition = "gemm_n7168_k5120";
    t.prompt_tag = "ptxb-no-hint";
    t.sample_index = i;
    t.num_turns = num_turns;
    t.target_speedup = target;
    t.trajectory_id = experiment_spec::DeriveTrajectoryId(x.experiment_id, t.model, t.definition,
                                                          t.prompt_tag, i);
    x.trajectories.push_back(t);
  }
  return x;
}

inline experiment_spec::RenderedPrompts PromptsFor(const experiment_spec::ExpandedExperiment& x) {
  experiment_spec::RenderedPrompts p;
  for (const experiment_spec::TrajectorySpec& t : x.trajectories) {
    p.system_by_tag[t.prompt_tag] = "SYSTEM PROMPT for " + t.prompt_tag;
    p.task_by_key[experiment_spec::TaskPromptKey(t)] = "TASK: write " + t.definition;
  }
  return p;
}

// The first column of the first row of `sql`.
inline int64_t QueryInt(storage::Database& db, const std::string& sql) {
  auto s = db.Prepare(sql);
  EXPECT_TRUE(s.ok()) << s.status();
  auto row = s->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return s.ok() && row.ok() && *row ? s->ColumnInt64(0) : -1;
}

// One trace per (workload, status) into `result` (speedup 2 where PASSED, 0
// else), then summarized as a worker does: a result of named workloads, for
// the held-out tests.
inline void AddTraces(ptxbench::v1::EvalResult* result,
                      const std::vector<std::pair<std::string, ptxbench::v1::EvalStatus>>& traces) {
  for (const auto& [uuid, status] : traces) {
    ptxbench::v1::WorkloadTrace* t = result->add_traces();
    t->set_workload_uuid(uuid);
    t->set_status(status);
    t->set_speedup(status == ptxbench::v1::PASSED ? 2.0 : 0);
  }
  verdict::Summarize(*result);
}

inline std::string QueryText(storage::Database& db, const std::string& sql) {
  auto s = db.Prepare(sql);
  EXPECT_TRUE(s.ok()) << s.status();
  auto row = s->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return s.ok() && row.ok() && *row ? s->ColumnText(0) : "";
}

inline constexpr char kKernelAnswer[] =
    "Here is my kernel.\n```cpp\n#include \"ptxbench/kernel_abi.h\"\n"
    "__global__ void k() {}\nPTXB_EXPORT void run() { k<<<1,1>>>(); }\n```\n";

// A CUDA kernel and a Triton one: each language's extraction takes its own
// block, so one answer serves CUDA and Triton experiments alike.
inline constexpr char kCudaAndTritonAnswer[] =
    "Here is my kernel.\n```cpp\n#include \"ptxbench/kernel_abi.h\"\n"
    "__global__ void k() {}\nPTXB_EXPORT void run() { k<<<1,1>>>(); }\n```\n"
    "And in Triton:\n```python\nimport triton\n@triton.jit\ndef k(x):\n    pass\n"
    "def run(A, B, C):\n    k[(1,)](A)\n```\n";

class CoreFixture : public ::testing::Test {
 protected:
  // A test that reads through a second connection (a Snapshot) needs a file.
  virtual std::string DatabasePath() { return ":memory:"; }

  void SetUp() override {
    auto db = OpenSchedulerDatabase(DatabasePath());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    options_.lease_ttl = absl::Seconds(30);
    options_.backoff_base = absl::Seconds(1);
    core_ = std::make_unique<Core>(db_.get(), &clock_, options_);
    ASSERT_TRUE(core_->Load().ok());
  }

  // Rebuilds the Core from the same database, as after a restart.
  void Restart() {
    core_ = std::make_unique<Core>(db_.get(), &clock_, options_);
    ASSERT_TRUE(core_->Load().ok());
  }

  std::string RegisterGateway(const std::string& name = "gw") {
    ptxbench::v1::RegisterRequest r;
    r.set_kind(ptxbench::v1::GATEWAY);
    r.set_name(name);
    r.mutable_capabilities()->set_serves_any_model(true);
    r.mutable_capabilities()->set_slots(8);
    return core_->Register(r)->executor_id();
  }

  // `profiler`: what it says it profiles with ("" : it cannot profile);
  // `sanitizer`: the compute-sanitizer of its memcheck gate ("": none);
  // `triton`: its Triton ("": it runs no Triton submissions).
  std::string RegisterWorker(const std::string& name = "wk",
                             const std::string& sm_arch = "sm_90",
                             const std::string& profiler = "",
                             const std::string& sanitizer = "", const std::string& triton = "") {
    ptxbench::v1::RegisterRequest r;
    r.set_kind(ptxbench::v1::WORKER);
    r.set_name(name);
    auto* gpu = r.mutable_capabilities()->add_gpus();
    gpu->set_model(sm_arch == "sm_90" ? "Simulated H200" : "Simulated GPU");
    gpu->set_sm_arch(sm_arch);
    gpu->set_healthy(true);
    r.mutable_capabilities()->set_slots(1);
    r.mutable_capabilities()->set_profiler(profiler);
    r.mutable_capabilities()->set_sanitizer(sanitizer);
    r.mutable_capabilities()->set_triton(triton);
    return core_->Register(r)->executor_id();
  }

  std::string Submit(const experiment_spec::ExpandedExperiment& x) {
    auto outcome = core_->Submit(x, PromptsFor(x));
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? outcome->experiment_id : "";
  }

  // Leases one task for `executor`; fails the test when none is ready.
  ptxbench::v1::Task MustLease(const std::string& executor) {
    auto task = core_->TryLease(executor);
    EXPECT_TRUE(task.ok()) << task.status();
    EXPECT_TRUE(task.ok() && task->has_value()) << "no task for " << executor;
    if (!task.ok() || !task->has_value()) return ptxbench::v1::Task();
    holders_[(*task)->lease().task_id()] = executor;
    return **task;
  }

  // A report on `task` as its holder (the executor MustLease leased it for).
  ptxbench::v1::CompleteRequest ReportOn(const ptxbench::v1::Task& task) {
    ptxbench::v1::CompleteRequest c;
    *c.mutable_lease() = task.lease();
    c.set_executor_id(holders_[task.lease().task_id()]);
    return c;
  }

  bool NothingFor(const std::string& executor) {
    auto task = core_->TryLease(executor);
    return task.ok() && !task->has_value();
  }

  absl::Status CompleteLlm(const ptxbench::v1::Task& task, const std::string& text = kKernelAnswer) {
    ptxbench::v1::CompleteRequest c = ReportOn(task);
    c.mutable_llm()->set_text(text);
    c.mutable_llm()->set_finish_reason("stop");
    c.mutable_llm()->set_cost_usd(0.25);
    return core_->Complete(c);
  }

  absl::Status CompleteEval(const ptxbench::v1::Task& task, ptxbench::v1::EvalStatus status,
                            double speedup) {
    ptxbench::v1::CompleteRequest c = ReportOn(task);
    auto* r = c.mutable_eval();
    r->set_status(status);
    r->set_all_passed(status == ptxbench::v1::PASSED);
    r->set_min_speedup(speedup);
    auto* trace = r->add_traces();
    trace->set_status(status);
    (*trace->mutable_axes())["M"] = 8192;
    trace->set_speedup(speedup);
    trace->set_latency_ms(1.0);
    trace->set_reference_latency_ms(speedup);
    return core_->Complete(c);
  }

  absl::Status Fail(const ptxbench::v1::Task& task, ptxbench::v1::FailureClass klass,
                    int64_t retry_after_ms = 0) {
    ptxbench::v1::CompleteRequest c = ReportOn(task);
    c.mutable_failure()->set_failure_class(klass);
    c.mutable_failure()->set_message("synthetic failure");
    c.mutable_failure()->set_retry_after_ms(retry_after_ms);
    return core_->Complete(c);
  }

  int64_t Count(const std::string& sql) { return QueryInt(*db_, sql); }

  int64_t TrajectoriesIn(ptxbench::v1::TrajectoryState state) {
    return Count(absl::StrCat("SELECT count(*) FROM trajectories WHERE state = ", SqlValue(state)));
  }

  int64_t TasksIn(TaskState state) {
    return Count(absl::StrCat("SELECT count(*) FROM tasks WHERE state = ", SqlValue(state)));
  }

  int64_t TasksOfKind(StepKind kind) {
    return Count(absl::StrCat("SELECT count(*) FROM tasks WHERE kind = ", SqlValue(kind)));
  }

  FakeClock clock_;
  CoreOptions options_;
  std::unique_ptr<storage::Database> db_;
  std::unique_ptr<Core> core_;
  std::map<std::string, std::string> holders_;  // task id -> the executor that leased it
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_CORE_TEST_UTIL_H_
