#include "executor/executor_runner.h"

#include <deque>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <thread>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

// Suite names start with "executor_" so that `ctest -R executor` selects them.
namespace ptxbench::executor {
namespace {

namespace v1 = ::ptxbench::v1;

// An in-process scheduler whose answers are scripted per test.
class FakeScheduler final : public v1::ExecutorService::Service {
 public:
  void AddTask(const std::string& task_id, const std::string& lease_id) {
    absl::MutexLock lock(&mu_);
    v1::Task task;
    task.mutable_lease()->set_task_id(task_id);
    task.mutable_lease()->set_lease_id(lease_id);
    task.set_kind(v1::LLM);
    task.set_trajectory_id("traj-" + task_id);
    task.set_attempt(1);
    tasks_.push_back(task);
  }
  // Complete for `task_id` answers these codes in order, then OK.
  void ScriptComplete(const std::string& task_id, std::vector<grpc::StatusCode> codes) {
    absl::MutexLock lock(&mu_);
    complete_script_[task_id] = std::deque<grpc::StatusCode>(codes.begin(), codes.end());
  }
  void ScriptRegister(std::vector<grpc::StatusCode> codes) {
    absl::MutexLock lock(&mu_);
    register_script_ = std::deque<grpc::StatusCode>(codes.begin(), codes.end());
  }
  void RevokeOnHeartbeat(const std::string& task_id, const std::string& lease_id) {
    absl::MutexLock lock(&mu_);
    revoke_[task_id] = lease_id;
  }
  void DrainWhenEmpty() {
    absl::MutexLock lock(&mu_);
    drain_when_empty_ = true;
  }
  void DrainOnHeartbeat() {
    absl::MutexLock lock(&mu_);
    drain_on_heartbeat_ = true;
  }
  // A Complete asking for its next task gets one (or drain, when empty and
  // DrainWhenEmpty), as the scheduler does.
  void GrantOnComplete() {
    absl::MutexLock lock(&mu_);
    grant_on_complete_ = true;
  }
  int nexts_granted() const {
    absl::MutexLock lock(&mu_);
    return nexts_granted_;
  }
  void ReregisterOnNextLease() {
    absl::MutexLock lock(&mu_);
    reregister_next_lease_ = true;
  }
  // The next poll waits until its caller cancels it, then grants a task: the
  // answer is lost on the way, as when a drain cancels a poll just as the
  // scheduler commits a lease.
  void LoseTheNextLease() {
    absl::MutexLock lock(&mu_);
    lose_next_lease_ = true;
  }
  bool PollParkedForLoss() const {
    absl::MutexLock lock(&mu_);
    return parked_for_loss_;
  }
  int leases_lost() const {
    absl::MutexLock lock(&mu_);
    return leases_lost_;
  }
  std::vector<std::string> leaves() const {
    absl::MutexLock lock(&mu_);
    return leaves_;
  }

  std::vector<v1::CompleteRequest> completes() const {
    absl::MutexLock lock(&mu_);
    return completes_;
  }
  std::vector<v1::RegisterRequest> registers() const {
    absl::MutexLock lock(&mu_);
    return registers_;
  }
  std::vector<v1::HeartbeatRequest> heartbeats() const {
    absl::MutexLock lock(&mu_);
    return heartbeats_;
  }
  int leases_granted() const {
    absl::MutexLock lock(&mu_);
    return leases_granted_;
  }

  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest* request,
                        v1::RegisterResponse* response) override {
    absl::MutexLock lock(&mu_);
    registers_.push_back(*request);
    if (!register_script_.empty()) {
      grpc::StatusCode code = register_script_.front();
      register_script_.pop_front();
      if (code != grpc::StatusCode::OK) return grpc::Status(code, "scripted register error");
    }
    response->set_executor_id(request->executor_id().empty()
                                  ? absl::StrCat("exec-", registers_.size())
                                  : request->executor_id());
    response->set_lease_ttl_ms(5000);
    response->set_heartbeat_interval_ms(20);
    return grpc::Status::OK;
  }

  grpc::Status Lease(grpc::ServerContext* context, const v1::LeaseRequest* request,
                     v1::LeaseResponse* response) override {
    absl::Time deadline = absl::Now() + absl::Milliseconds(request->wait_ms());
    if (TakeLoseTheNextLease()) {
      while (!context->IsCancelled() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
      absl::MutexLock lock(&mu_);
      leases_lost_ += context->IsCancelled();
      loss_poll_done_ = true;
      response->mutable_task()->mutable_lease()->set_task_id("lost");
      return grpc::Status::OK;
    }
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        if (reregister_next_lease_) {
          reregister_next_lease_ = false;
          response->set_reregister(true);
          return grpc::Status::OK;
        }
        if (!tasks_.empty()) {
          *response->mutable_task() = tasks_.front();
          tasks_.pop_front();
          ++leases_granted_;
          return grpc::Status::OK;
        }
        if (drain_when_empty_) {
          response->set_drain(true);
          return grpc::Status::OK;
        }
      }
      if (context->IsCancelled() || absl::Now() >= deadline) return grpc::Status::OK;
      absl::SleepFor(absl::Milliseconds(2));
    }
  }

  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override {
    absl::MutexLock lock(&mu_);
    heartbeats_.push_back(*request);
    for (const v1::LeaseRef& lease : request->leases()) {
      auto it = revoke_.find(lease.task_id());
      if (it != revoke_.end() && it->second == lease.lease_id()) *response->add_revoked() = lease;
    }
    response->set_drain(drain_on_heartbeat_);
    return grpc::Status::OK;
  }

  grpc::Status Leave(grpc::ServerContext*, const v1::LeaveRequest* request,
                     v1::LeaveResponse* response) override {
    absl::MutexLock lock(&mu_);
    // As the scheduler's single writer orders a grant before a later Leave.
    auto granted = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !parked_for_loss_ || loss_poll_done_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&granted), absl::Seconds(5));
    leaves_.push_back(request->executor_id());
    response->set_released(leases_lost_);
    return grpc::Status::OK;
  }

  grpc::Status Complete(grpc::ServerContext*, const v1::CompleteRequest* request,
                        v1::CompleteResponse* response) override {
    absl::MutexLock lock(&mu_);
    completes_.push_back(*request);
    auto& script = complete_script_[request->lease().task_id()];
    if (!script.empty()) {
      grpc::StatusCode code = script.front();
      script.pop_front();
      if (code != grpc::StatusCode::OK) return grpc::Status(code, "scripted complete error");
    }
    if (grant_on_complete_ && request->has_next()) {
      if (!tasks_.empty()) {
        *response->mutable_next()->mutable_task() = tasks_.front();
        tasks_.pop_front();
        ++nexts_granted_;
      } else {
        response->mutable_next()->set_drain(drain_when_empty_);
      }
    }
    return grpc::Status::OK;
  }

 private:
  bool TakeLoseTheNextLease() {
    absl::MutexLock lock(&mu_);
    parked_for_loss_ = lose_next_lease_;
    return std::exchange(lose_next_lease_, false);
  }

  mutable absl::Mutex mu_;
  std::deque<v1::Task> tasks_ ABSL_GUARDED_BY(mu_);
  bool lose_next_lease_ ABSL_GUARDED_BY(mu_) = false;
  bool parked_for_loss_ ABSL_GUARDED_BY(mu_) = false;
  bool loss_poll_done_ ABSL_GUARDED_BY(mu_) = false;
  int leases_lost_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> leaves_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::deque<grpc::StatusCode>> complete_script_ ABSL_GUARDED_BY(mu_);
  std::deque<grpc::StatusCode> register_script_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> revoke_ ABSL_GUARDED_BY(mu_);
  bool drain_when_empty_ ABSL_GUARDED_BY(mu_) = false;
  bool drain_on_heartbeat_ ABSL_GUARDED_BY(mu_) = false;
  bool reregister_next_lease_ ABSL_GUARDED_BY(mu_) = false;
  bool grant_on_complete_ ABSL_GUARDED_BY(mu_) = false;
  int nexts_granted_ ABSL_GUARDED_BY(mu_) = 0;
  int leases_granted_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<v1::CompleteRequest> completes_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::RegisterRequest> registers_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::HeartbeatRequest> heartbeats_ ABSL_GUARDED_BY(mu_);
};

// Answers every task with its task id; tasks in `block` wait for cancellation.
class EchoHandler final : public TaskHandler {
 public:
  // `ready`, when given, must hold before a task that is not blocked returns.
  explicit EchoHandler(std::set<std::string> block = {}, std::function<bool()> ready = nullptr)
      : block_(std::move(block)), ready_(std::move(ready)) {}

  v1::CompleteRequest Run(const v1::Task& task, const std::atomic<bool>& cancelled) override {
    if (block_.count(task.lease().task_id()) > 0) {
      started_.Notify();
      absl::Time give_up = absl::Now() + absl::Seconds(5);
      while (!cancelled && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
      saw_cancel_ = cancelled.load();
    } else if (ready_) {
      absl::Time give_up = absl::Now() + absl::Seconds(5);
      while (!ready_() && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
    }
    v1::CompleteRequest out;
    out.mutable_llm()->set_text(task.lease().task_id());
    return out;
  }

  absl::Notification& started() { return started_; }
  bool saw_cancel() const { return saw_cancel_; }

 private:
  std::set<std::string> block_;
  std::function<bool()> ready_;
  absl::Notification started_;
  std::atomic<bool> saw_cancel_{false};
};


// An asynchronous handler: Start() only records the task; a thread answers
// held tasks (with their task id) once `release` allows, or as soon as they
// are cancelled. Tracks how many tasks were held at once.
class AsyncEchoHandler final : public AsyncTaskHandler {
 public:
  explicit AsyncEchoHandler(std::function<bool(int held)> release)
      : release_(std::move(release)), thread_([this] { Loop(); }) {}
  ~AsyncEchoHandler() override {
    {
      absl::MutexLock lock(&mu_);
      closing_ = true;
    }
    thread_.join();
  }
  void Start(const v1::Task& task, std::shared_ptr<const std::atomic<bool>> cancelled,
             Done done) override {
    absl::MutexLock lock(&mu_);
    held_.push_back({task.lease().task_id(), std::move(cancelled), std::move(done)});
    most_held_ = std::max(most_held_, static_cast<int>(held_.size()));
  }
  int most_held() const {
    absl::MutexLock lock(&mu_);
    return most_held_;
  }
  int cancelled_seen() const {
    absl::MutexLock lock(&mu_);
    return cancelled_seen_;
  }

 private:
  struct Held {
    std::string task_id;
    std::shared_ptr<const std::atomic<bool>> cancelled;
    Done done;
  };
  void Loop() {
    for (;;) {
      std::vector<Held> answer;
      {
        absl::MutexLock lock(&mu_);
        if (closing_ && held_.empty()) return;
        const bool release = release_(static_cast<int>(held_.size()));
        for (auto it = held_.begin(); it != held_.end();) {
          if (release || it->cancelled->load()) {
            cancelled_seen_ += it->cancelled->load();
            answer.push_back(std::move(*it));
            it = held_.erase(it);
          } else {
            ++it;
          }
        }
      }
      for (Held& h : answer) {
        v1::CompleteRequest out;
        out.mutable_llm()->set_text(h.task_id);
        std::move(h.done)(std::move(out));
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
  }
  std::function<bool(int)> release_;
  mutable absl::Mutex mu_;
  std::vector<Held> held_ ABSL_GUARDED_BY(mu_);
  int most_held_ ABSL_GUARDED_BY(mu_) = 0;
  int cancelled_seen_ ABSL_GUARDED_BY(mu_) = 0;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

class executor_runner : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now()));
  }

  ExecutorRunner::Options MakeOptions(int slots = 1) {
    ExecutorRunner::Options options;
    options.scheduler_address = absl::StrCat("127.0.0.1:", port_);
    options.kind = v1::GATEWAY;
    options.name = "test-executor";
    options.slots = slots;
    options.lease_wait = absl::Milliseconds(200);
    options.initial_backoff = absl::Milliseconds(1);
    options.max_backoff = absl::Milliseconds(10);
    options.rpc_timeout = absl::Seconds(2);
    return options;
  }

  // Runs `runner` to its end; stops it and fails the test after 5 s.
  absl::Status RunToEnd(ExecutorRunner& runner) {
    auto done = std::async(std::launch::async, [&runner] { return runner.Run(); });
    if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      ADD_FAILURE() << "Run() did not return within 5 s";
      runner.Stop();
    }
    return done.get();
  }

  int CompletesFor(const std::string& task_id) {
    int n = 0;
    for (const auto& c : fake_.completes()) n += c.lease().task_id() == task_id;
    return n;
  }

  FakeScheduler fake_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(executor_runner, CompletesCarryTheLeaseTheyWereLeasedUnder) {
  fake_.AddTask("t1", "l1");
  fake_.AddTask("t2", "l2");
  fake_.AddTask("t3", "l3");
  fake_.DrainWhenEmpty();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(/*slots=*/2), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());

  std::map<std::string, std::string> lease_of = {{"t1", "l1"}, {"t2", "l2"}, {"t3", "l3"}};
  std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 3u);
  for (const auto& c : completes) {
    EXPECT_EQ(c.lease().lease_id(), lease_of[c.lease().task_id()]);
    EXPECT_EQ(c.executor_id(), "exec-1");
    EXPECT_EQ(c.llm().text(), c.lease().task_id());
  }
  std::vector<v1::RegisterRequest> registers = fake_.registers();
  ASSERT_EQ(registers.size(), 1u);
  EXPECT_EQ(registers[0].kind(), v1::GATEWAY);
  EXPECT_EQ(registers[0].name(), "test-executor");
  EXPECT_EQ(registers[0].capabilities().slots(), 2);
  EXPECT_EQ(runner.executor_id(), "exec-1");
}

TEST_F(executor_runner, EachCompletionAsksForTheNextTaskAndRunsIt) {
  for (int i = 1; i <= 4; ++i) fake_.AddTask(absl::StrCat("t", i), absl::StrCat("l", i));
  fake_.DrainWhenEmpty();
  fake_.GrantOnComplete();
  EchoHandler handler;
  ExecutorRunner::Options options = MakeOptions();
  options.lease_kinds = {v1::LLM};
  ExecutorRunner runner(options, &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  // One Lease, then each task's report brought the next; the last report's
  // drain ended the run.
  EXPECT_EQ(fake_.leases_granted(), 1);
  EXPECT_EQ(fake_.nexts_granted(), 3);
  std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(completes[i].lease().task_id(), absl::StrCat("t", i + 1));
    EXPECT_EQ(completes[i].llm().text(), absl::StrCat("t", i + 1));
    ASSERT_TRUE(completes[i].has_next());
    EXPECT_EQ(completes[i].next().executor_id(), "exec-1");
    ASSERT_EQ(completes[i].next().kinds_size(), 1);
    EXPECT_EQ(completes[i].next().kinds(0), v1::LLM);
  }
}

TEST_F(executor_runner, RejectedCompletionIsDroppedNotRetried) {
  fake_.AddTask("t1", "l1");
  fake_.AddTask("t2", "l2");
  fake_.ScriptComplete("t1",
                       std::vector<grpc::StatusCode>(5, grpc::StatusCode::FAILED_PRECONDITION));
  fake_.DrainWhenEmpty();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  EXPECT_EQ(CompletesFor("t1"), 1);
  EXPECT_EQ(CompletesFor("t2"), 1);
}

TEST_F(executor_runner, UnavailableCompletionIsRetriedUntilAccepted) {
  fake_.AddTask("t1", "l1");
  fake_.ScriptComplete("t1", {grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::DEADLINE_EXCEEDED,
                              grpc::StatusCode::UNAVAILABLE});
  fake_.DrainWhenEmpty();
  EchoHandler handler;
  // One slot: with more, a second poll's drain answer could be processed
  // before the first poll's task, which the drain then drops as lost (by
  // design: DrainedRunSaysGoodbyeForTheLeaseItsCancelledPollLost).
  ExecutorRunner runner(MakeOptions(/*slots=*/1), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 4u);
  for (const auto& c : completes) {
    EXPECT_EQ(c.lease().task_id(), "t1");
    EXPECT_EQ(c.lease().lease_id(), "l1");
    EXPECT_EQ(c.llm().text(), "t1");
  }
  // Only the first attempt asks for a next task: a retry may repeat an
  // accepted report whose answer (and next task) was lost.
  EXPECT_TRUE(completes[0].has_next());
  for (size_t i = 1; i < completes.size(); ++i) EXPECT_FALSE(completes[i].has_next()) << i;
}

// A report refused for a reason retrying cannot fix is sent once more in
// its minimal form (an LLM answer becomes an INFRA failure saying why),
// and no more.
TEST_F(executor_runner, OtherCompletionErrorsSendTheMinimalReportOnce) {
  fake_.AddTask("t1", "l1");
  fake_.ScriptComplete("t1", {grpc::StatusCode::INVALID_ARGUMENT,
                              grpc::StatusCode::INVALID_ARGUMENT});
  fake_.DrainWhenEmpty();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  const std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 2u);
  EXPECT_EQ(completes[1].lease().lease_id(), "l1");
  EXPECT_EQ(completes[1].failure().failure_class(), v1::INFRA);
  EXPECT_EQ(completes[1].failure().message(),
            "the report could not be sent: INVALID_ARGUMENT: scripted complete error");
}

// Runs every task to the same completion.
class FixedHandler final : public TaskHandler {
 public:
  explicit FixedHandler(v1::CompleteRequest result) : result_(std::move(result)) {}
  v1::CompleteRequest Run(const v1::Task&, const std::atomic<bool>&) override { return result_; }

 private:
  const v1::CompleteRequest result_;
};

// An agent session's end as a hostile workspace could leave it: a record
// name and a reason that are not UTF-8, records besides.
v1::CompleteRequest HostileAgentEnd() {
  v1::CompleteRequest c;
  v1::AgentOutcome* a = c.mutable_agent();
  a->set_end(v1::AGENT_FINISHED);
  a->set_reason("the CLI exited on its own; its last words: \xff\xfe");
  a->mutable_usage_since_last_eval()->set_cost_usd(0.25);
  a->mutable_usage_since_last_eval()->set_model_calls(3);
  a->mutable_total()->set_cost_usd(1.5);
  a->mutable_total()->set_model_calls(12);
  a->set_evaluations(4);
  v1::AgentRecord* r = a->add_records();
  r->set_name("workspace/bad\xffname.cu");
  r->set_content("\xff bytes stay bytes");
  a->add_records()->set_name("events.jsonl");
  return c;
}

// A report whose text is not UTF-8 once failed to parse at the scheduler
// ("report failed; result dropped", the trajectory lost with its records):
// every string field is made valid before it is sent, bytes left alone.
TEST_F(executor_runner, AReportWithTextThatIsNotUtf8ArrivesRepaired) {
  fake_.AddTask("t1", "l1");
  fake_.DrainWhenEmpty();
  FixedHandler handler(HostileAgentEnd());
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  const std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 1u) << "the scheduler parsed it";
  const v1::AgentOutcome& a = completes[0].agent();
  EXPECT_EQ(a.reason(), "the CLI exited on its own; its last words: \xef\xbf\xbd");
  ASSERT_EQ(a.records_size(), 2);
  EXPECT_EQ(a.records(0).name(), "workspace/bad\xef\xbf\xbdname.cu");
  EXPECT_EQ(a.records(0).content(), "\xff bytes stay bytes");
}

// A report the scheduler refuses for good (here too large; any code but
// FAILED_PRECONDITION) is sent once more without its records, keeping the
// end, the reason and what the session spent: the trajectory ends with its
// reason and its calls charged.
TEST_F(executor_runner, ARefusedAgentReportIsSentAgainWithoutItsRecords) {
  fake_.AddTask("t1", "l1");
  fake_.ScriptComplete("t1", {grpc::StatusCode::RESOURCE_EXHAUSTED});
  fake_.DrainWhenEmpty();
  FixedHandler handler(HostileAgentEnd());
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  const std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 2u);
  EXPECT_EQ(completes[0].agent().records_size(), 2);
  const v1::AgentOutcome& a = completes[1].agent();
  EXPECT_EQ(completes[1].lease().lease_id(), "l1");
  EXPECT_EQ(a.end(), v1::AGENT_FINISHED);
  EXPECT_EQ(a.records_size(), 0);
  EXPECT_EQ(a.reason(),
            "the report could not be sent: RESOURCE_EXHAUSTED: scripted complete error; the CLI "
            "exited on its own; its last words: \xef\xbf\xbd");
  EXPECT_EQ(a.usage_since_last_eval().cost_usd(), 0.25);
  EXPECT_EQ(a.usage_since_last_eval().model_calls(), 3);
  EXPECT_EQ(a.total().model_calls(), 12);
  EXPECT_EQ(a.evaluations(), 4);
}

TEST_F(executor_runner, DrainFromLeaseEndsRun) {
  fake_.DrainWhenEmpty();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(/*slots=*/4), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  EXPECT_TRUE(fake_.completes().empty());
}

// A drain cancels the polls in flight; the scheduler may have granted a
// lease to one just then. The runner cannot know, so it says goodbye when it
// ends, and the scheduler hands back whatever it still records as leased.
TEST_F(executor_runner, DrainedRunSaysGoodbyeForTheLeaseItsCancelledPollLost) {
  fake_.LoseTheNextLease();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  auto done = std::async(std::launch::async, [&runner] { return runner.Run(); });
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  while (!fake_.PollParkedForLoss() && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_TRUE(fake_.PollParkedForLoss());
  runner.Drain();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(done.get().ok());
  EXPECT_EQ(fake_.leases_lost(), 1) << "the poll was cancelled with its lease granted";
  EXPECT_TRUE(fake_.completes().empty()) << "the runner never saw that task";
  EXPECT_EQ(fake_.leaves(), std::vector<std::string>{"exec-1"});
}

TEST_F(executor_runner, DrainFromHeartbeatFinishesHeldTaskAndTakesNoMore) {
  fake_.AddTask("t1", "l1");
  fake_.AddTask("t2", "l2");
  fake_.DrainOnHeartbeat();
  // t1 is held until two heartbeats went out: the second is sent only after
  // the runner has processed the first answer (drain).
  fake_.GrantOnComplete();
  EchoHandler handler({}, [this] { return fake_.heartbeats().size() >= 2; });
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  EXPECT_EQ(fake_.leases_granted(), 1);
  EXPECT_EQ(fake_.nexts_granted(), 0);
  EXPECT_EQ(CompletesFor("t1"), 1);
  EXPECT_EQ(CompletesFor("t2"), 0);
  ASSERT_EQ(fake_.completes().size(), 1u);
  EXPECT_FALSE(fake_.completes()[0].has_next()) << "a draining executor asks for no next task";
}

TEST_F(executor_runner, RegisterIsRetriedWhileUnavailable) {
  fake_.ScriptRegister({grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::UNAVAILABLE,
                        grpc::StatusCode::DEADLINE_EXCEEDED});
  fake_.DrainWhenEmpty();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  EXPECT_EQ(fake_.registers().size(), 4u);
}

TEST_F(executor_runner, RegisterRefusalIsReturned) {
  fake_.ScriptRegister({grpc::StatusCode::PERMISSION_DENIED});
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_EQ(RunToEnd(runner).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(fake_.registers().size(), 1u);
  EXPECT_TRUE(fake_.leaves().empty()) << "never registered, nothing to leave";
}

TEST_F(executor_runner, RegisterRetriesUntilTheSchedulerListens) {
  // Nothing listens on the port at first: the runner must keep trying.
  int port = port_;
  server_->Shutdown(absl::ToChronoTime(absl::Now()));
  server_->Wait();
  server_.reset();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  auto done = std::async(std::launch::async, [&runner] { return runner.Run(); });
  absl::SleepFor(absl::Milliseconds(150));
  FakeScheduler late;
  late.DrainWhenEmpty();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("127.0.0.1:", port), grpc::InsecureServerCredentials());
  builder.RegisterService(&late);
  server_ = builder.BuildAndStart();
  ASSERT_NE(server_, nullptr) << "port " << port << " was taken meanwhile";
  ASSERT_EQ(done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(done.get().ok());
  EXPECT_EQ(late.registers().size(), 1u);
  server_->Shutdown(absl::ToChronoTime(absl::Now()));
  server_->Wait();
  server_.reset();  // it serves `late`, which goes out of scope now
}

TEST_F(executor_runner, DrainBeforeTheFirstRegistrationEndsRunAtOnce) {
  // Nothing listens: a SIGTERM (Drain) must not wait for a scheduler that
  // may never come; the executor holds nothing yet.
  server_->Shutdown(absl::ToChronoTime(absl::Now()));
  server_->Wait();
  server_.reset();
  EchoHandler handler;
  ExecutorRunner::Options options = MakeOptions();
  options.rpc_timeout = absl::Seconds(30);
  options.initial_backoff = options.max_backoff = absl::Seconds(30);
  ExecutorRunner runner(options, &handler);
  auto done = std::async(std::launch::async, [&runner] { return runner.Run(); });
  absl::SleepFor(absl::Milliseconds(150));
  const absl::Time drained = absl::Now();
  runner.Drain();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(done.get().ok());
  EXPECT_LT(absl::Now() - drained, absl::Seconds(2));
}

TEST_F(executor_runner, ReregisterKeepsTheExecutorId) {
  fake_.ReregisterOnNextLease();
  fake_.AddTask("t1", "l1");
  fake_.DrainWhenEmpty();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  std::vector<v1::RegisterRequest> registers = fake_.registers();
  ASSERT_EQ(registers.size(), 2u);
  EXPECT_EQ(registers[0].executor_id(), "");
  EXPECT_EQ(registers[1].executor_id(), "exec-1");
  EXPECT_EQ(CompletesFor("t1"), 1);
}

TEST_F(executor_runner, RevokedLeaseCancelsTheHandlerAndDropsTheResult) {
  fake_.AddTask("t1", "l1");
  fake_.RevokeOnHeartbeat("t1", "l1");
  fake_.DrainWhenEmpty();
  EchoHandler handler({"t1"});
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  EXPECT_TRUE(handler.saw_cancel());
  EXPECT_EQ(CompletesFor("t1"), 0);
  std::vector<v1::HeartbeatRequest> heartbeats = fake_.heartbeats();
  ASSERT_FALSE(heartbeats.empty());
  ASSERT_EQ(heartbeats[0].leases_size(), 1);
  EXPECT_EQ(heartbeats[0].leases(0).lease_id(), "l1");
  EXPECT_EQ(heartbeats[0].executor_id(), "exec-1");
}

TEST_F(executor_runner, StopAbandonsTheRunningTaskAndReportsItAsInfra) {
  fake_.AddTask("t1", "l1");
  EchoHandler handler({"t1"});
  ExecutorRunner runner(MakeOptions(), &handler);
  auto done = std::async(std::launch::async, [&runner] { return runner.Run(); });
  ASSERT_TRUE(handler.started().WaitForNotificationWithTimeout(absl::Seconds(5)));
  runner.Stop();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(done.get().ok());
  EXPECT_TRUE(handler.saw_cancel());
  std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 1u);
  EXPECT_EQ(completes[0].lease().lease_id(), "l1");
  EXPECT_EQ(completes[0].failure().failure_class(), v1::INFRA);
  EXPECT_EQ(fake_.leaves().size(), 1u) << "a stopped runner says goodbye too";
}

TEST_F(executor_runner, AsyncHandlerHoldsEveryLeaseOfItsSlotsAtOnce) {
  // 200 tasks held at once by 2 lease threads: answers come only when all
  // 200 are held, so fewer slots in flight would never finish.
  for (int i = 0; i < 200; ++i) fake_.AddTask(absl::StrCat("t", i), absl::StrCat("l", i));
  fake_.DrainWhenEmpty();
  std::atomic<bool> all_held{false};
  AsyncEchoHandler handler([&all_held](int held) {
    if (held == 200) all_held = true;
    return all_held.load();
  });
  ExecutorRunner::Options options = MakeOptions(/*slots=*/200);
  options.lease_threads = 2;
  ExecutorRunner runner(options, &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  EXPECT_EQ(handler.most_held(), 200);
  std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 200u);
  for (const auto& c : completes) {
    EXPECT_EQ(c.lease().lease_id(), "l" + c.lease().task_id().substr(1));
    EXPECT_EQ(c.llm().text(), c.lease().task_id());
  }
}

TEST_F(executor_runner, AsyncHandlerNeverHoldsMoreThanItsSlots) {
  for (int i = 0; i < 30; ++i) fake_.AddTask(absl::StrCat("t", i), absl::StrCat("l", i));
  fake_.DrainWhenEmpty();
  // A next task a report brings takes the room of the task reported.
  fake_.GrantOnComplete();
  // Answers whenever 3 are held (and at the end, when fewer remain).
  std::atomic<int> rounds{0};
  AsyncEchoHandler handler([&rounds](int held) { return held >= 3 || ++rounds % 50 == 0; });
  ExecutorRunner::Options options = MakeOptions(/*slots=*/3);
  options.lease_threads = 4;
  ExecutorRunner runner(options, &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  EXPECT_EQ(handler.most_held(), 3);
  EXPECT_EQ(fake_.completes().size(), 30u);
  EXPECT_GT(fake_.nexts_granted(), 0);
  EXPECT_EQ(fake_.leases_granted() + fake_.nexts_granted(), 30);
}

TEST_F(executor_runner, AsyncStopCancelsHeldTasksAndReportsThemAsInfra) {
  for (int i = 0; i < 5; ++i) fake_.AddTask(absl::StrCat("t", i), absl::StrCat("l", i));
  AsyncEchoHandler handler([](int) { return false; });  // answers only cancelled tasks
  ExecutorRunner runner(MakeOptions(/*slots=*/5), &handler);
  auto done = std::async(std::launch::async, [&runner] { return runner.Run(); });
  absl::Time give_up = absl::Now() + absl::Seconds(5);
  while (handler.most_held() < 5 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_EQ(handler.most_held(), 5);
  runner.Stop();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(done.get().ok());
  EXPECT_EQ(handler.cancelled_seen(), 5);
  std::vector<v1::CompleteRequest> completes = fake_.completes();
  ASSERT_EQ(completes.size(), 5u);
  for (const auto& c : completes) EXPECT_EQ(c.failure().failure_class(), v1::INFRA);
}

TEST_F(executor_runner, AsyncRevokedLeaseIsCancelledAndItsResultDropped) {
  fake_.AddTask("t1", "l1");
  fake_.AddTask("t2", "l2");
  fake_.RevokeOnHeartbeat("t1", "l1");
  fake_.DrainWhenEmpty();
  // Tasks are answered only when cancelled: t1 by the revocation.
  AsyncEchoHandler handler([](int) { return false; });
  ExecutorRunner::Options options = MakeOptions(/*slots=*/2);
  ExecutorRunner runner(options, &handler);
  auto done = std::async(std::launch::async, [&runner] { return runner.Run(); });
  absl::Time give_up = absl::Now() + absl::Seconds(5);
  while (handler.cancelled_seen() < 1 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(handler.cancelled_seen(), 1);
  runner.Stop();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(CompletesFor("t1"), 0) << "a revoked lease is never reported";
}

TEST_F(executor_runner, StopCancelsAnIdleLongPoll) {
  EchoHandler handler;
  ExecutorRunner::Options options = MakeOptions(/*slots=*/2);
  options.lease_wait = absl::Seconds(30);
  ExecutorRunner runner(options, &handler);
  auto done = std::async(std::launch::async, [&runner] { return runner.Run(); });
  absl::Time give_up = absl::Now() + absl::Seconds(5);
  while (runner.executor_id().empty() && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  absl::SleepFor(absl::Milliseconds(50));  // let the polls start
  absl::Time stop_at = absl::Now();
  runner.Stop();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(done.get().ok());
  EXPECT_LT(absl::Now() - stop_at, absl::Seconds(2));
}

TEST_F(executor_runner, StopBeforeRunReturnsWithoutRegistering) {
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  runner.Stop();
  EXPECT_TRUE(runner.Run().ok());
  EXPECT_TRUE(fake_.registers().empty());
}

TEST_F(executor_runner, RunTwiceIsAnError) {
  fake_.DrainWhenEmpty();
  EchoHandler handler;
  ExecutorRunner runner(MakeOptions(), &handler);
  EXPECT_TRUE(RunToEnd(runner).ok());
  EXPECT_EQ(runner.Run().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ptxbench::executor
