// The gateway's session runner (agent_gateway/agent/session.h) with each
// real pinned CLI, offline: the CLI in its sandbox, the model proxy in
// front of a scripted model, and a stand-in for the scheduler's AgentEval.
// A whole session (write, evaluate, read the feedback, fix, evaluate again,
// finish); each budget (tokens, evaluations, model calls, cost, wall time)
// ending it at its point; an evaluation slower than Codex's default tool
// timeout; a cancel that leaves no process; two sessions at once that do
// not mix and run as two uids; nothing of the host in a session (PID 1's
// argv and environment, the cgroup path, a vendor library of the toolkit);
// a stall, a full disk and a flooding tool. Each skips, saying so, where the
// CLI is not installed or the test does not run as root.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent_gateway/agent/session.h"
#include "agents/clis.h"
#include "sandbox/uid_range.h"
#include "testing/agent_session_fixture.h"
#include "testing/pinned_clis.h"
#include "testing/scripted_model.h"

namespace ptxbench {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;
using Json = nlohmann::json;
using Step = testing::ScriptedModel::Step;

using testing::FakeScheduler;

class AgentSessionTest : public testing::AgentSessionFixture {
 protected:
  // Runs task `id` with final_evaluation if-changed against the model in
  // use; its end, which must be an agent outcome.
  v1::CompleteRequest RunWithFinalEvaluation(const std::string& id, FakeScheduler& scheduler) {
    v1::Task task = Task(id);
    task.mutable_agent()->mutable_settings()->set_final_evaluation("if-changed");
    std::atomic<bool> cancelled{false};
    agent_gateway::SessionRecord record;
    v1::CompleteRequest done =
        agent_gateway::RunAgentSession(Options(scheduler), task, cancelled, &record);
    EXPECT_TRUE(done.has_agent()) << done.DebugString() << record.stderr_text;
    return done;
  }
};

// What `marker=[...]` holds in `text` ("" when it is not there).
std::string Marked(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker + "=[");
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size() + 2;
  return text.substr(start, text.find(']', start) - start);
}

TEST_P(AgentSessionTest, AWholeSessionEndsWhenTheCliFinishes) {
  testing::ScriptedModel model(cli_->wire, Steps(Workspace("tk_1")));
  UseModel(model);
  FakeScheduler scheduler;
  std::atomic<bool> cancelled{false};
  agent_gateway::SessionRecord record;
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), Task("tk_1"), cancelled, &record);
  ASSERT_TRUE(done.has_agent()) << done.DebugString() << record.stderr_text;
  EXPECT_EQ(done.agent().end(), v1::AGENT_FINISHED);
  EXPECT_EQ(done.agent().evaluations(), 2);
  // The two kernels, in order, each its own action.
  const std::vector<v1::AgentEvalRequest> evals = scheduler.requests();
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_EQ(evals[0].kernel_source(), "// first\n");
  EXPECT_EQ(evals[1].kernel_source(), "// second\n");
  EXPECT_NE(evals[0].action_id(), evals[1].action_id());
  // The feedback reached the model, with the budget line.
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 5u);
  const std::string last = requests.back().dump();
  EXPECT_THAT(last, HasSubstr("feedback of turn 1 for: // second"));
  EXPECT_THAT(last, HasSubstr("Budget: 2 evaluations"));
  // Every token counted once: with the turns, or after the last one.
  const v1::AgentUsage& total = done.agent().total();
  EXPECT_EQ(total.model_calls(), static_cast<int>(requests.size()));
  int64_t summed = done.agent().usage_since_last_eval().usage().input_tokens();
  for (const v1::AgentEvalRequest& e : evals) summed += e.usage_since_last_eval().usage().input_tokens();
  EXPECT_EQ(summed, total.usage().input_tokens());
  EXPECT_THAT(record.events, HasSubstr(cli_->name == "codex" ? "turn.completed" : "result"));
  // What the session left, for the record.
  std::map<std::string, std::string> records;
  for (const v1::AgentRecord& r : done.agent().records()) records[r.name()] = r.content();
  EXPECT_THAT(records["events.jsonl"], HasSubstr(cli_->name == "codex" ? "turn.completed" : "result"));
  EXPECT_EQ(records["workspace/kernel.cu"], "// second\n") << "the final workspace";
  const std::string calls = records["model_calls.jsonl"];
  EXPECT_EQ(std::count(calls.begin(), calls.end(), '\n'), total.model_calls());
  EXPECT_THAT(calls, HasSubstr("pinned-model")) << "the request as sent upstream";
  EXPECT_THAT(calls, ::testing::Not(HasSubstr("sk-session-test"))) << "never the key";
  int native = 0;
  for (const auto& [name, content] : records) native += name.rfind("home/", 0) == 0;
  EXPECT_GT(native, 0) << "the CLI's own session file";
}

// A fix-it session (starter fixit) starts with the broken kernel in the
// kernel file and its feedback in error.log, and the instructions say so; a
// session that leaves the kernel as it started has nothing new to evaluate
// at its end (final_evaluation if-changed).
TEST_P(AgentSessionTest, AFixItSessionStartsFromTheBrokenKernelAndItsLog) {
  // The model's one step: look at what the workspace starts with.
  const std::vector<Step> look = {Steps(Workspace("tk_fix"), "cat kernel.cu error.log").front()};
  testing::ScriptedModel model(cli_->wire, look);
  UseModel(model);
  FakeScheduler scheduler;
  std::atomic<bool> cancelled{false};
  v1::Task task = Task("tk_fix");
  task.mutable_agent()->mutable_settings()->set_starter("fixit");
  task.mutable_agent()->mutable_settings()->set_final_evaluation("if-changed");
  task.mutable_agent()->set_starter_kernel("// broken: no such intrinsic\n");
  task.mutable_agent()->set_starter_log("error: identifier \"__no_such\" is undefined\n");
  agent_gateway::SessionRecord record;
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), task, cancelled, &record);
  ASSERT_TRUE(done.has_agent()) << done.DebugString() << record.stderr_text;
  EXPECT_EQ(done.agent().end(), v1::AGENT_FINISHED);
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 2u);
  const std::string seen = requests[1].dump();
  EXPECT_THAT(seen, HasSubstr("// broken: no such intrinsic")) << "kernel.cu as it starts";
  EXPECT_THAT(seen, HasSubstr("is undefined")) << "error.log beside it";
  EXPECT_THAT(requests[0].dump(), HasSubstr("holds the kernel to fix")) << "the instructions";
  EXPECT_EQ(scheduler.requests().size(), 0u) << "the starter was evaluated before: not again";
  EXPECT_EQ(done.agent().evaluations(), 0);
}

// The kernel file the gateway reads at a session's end is the agent's: one
// it replaced by a link to a file of the gateway's machine (or to a device,
// which would never end) is not read, and nothing of the file reaches an
// evaluation.
TEST_P(AgentSessionTest, AKernelFileLinkedOutOfItsWorkspaceIsNotReadAtTheEnd) {
  const fs::path secret = dir_ / "gateway_secret.txt";
  std::ofstream(secret) << "PTXB-GATEWAY-SECRET-42\n";
  const std::vector<Step> link = {
      Steps(Workspace("tk_link"), absl::StrCat("ln -sf ", secret.string(), " kernel.cu")).front()};
  testing::ScriptedModel model(cli_->wire, link);
  UseModel(model);
  FakeScheduler scheduler;
  const v1::CompleteRequest done = RunWithFinalEvaluation("tk_link", scheduler);
  EXPECT_EQ(done.agent().end(), v1::AGENT_FINISHED);
  for (const v1::AgentEvalRequest& r : scheduler.requests()) {
    EXPECT_THAT(r.kernel_source(), ::testing::Not(HasSubstr("PTXB-GATEWAY-SECRET")));
  }
  EXPECT_EQ(scheduler.requests().size(), 0u) << "a link is no kernel";
}

// What an agent leaves that is not UTF-8 is data, never a broken report: a
// kernel file that is not UTF-8 text is refused by the tool naming where
// (once sent, the scheduler could not parse the request and the slot waited
// out eval_wait_timeout) and not evaluated at the end, saying so; a file
// named with bytes that are not UTF-8 is recorded under its escaped name
// (once, the end report did not parse and the trajectory was lost).
TEST_P(AgentSessionTest, AKernelAndANameThatAreNotUtf8EndWithTheOutcome) {
  const std::vector<Step> steps = Steps(
      Workspace("tk_utf8"),
      // No $(...): Gemini CLI refuses command substitution.
      "printf '// caf\\351\\n' > kernel.cu; printf x > t; printf 'bad\\377name.cu' | xargs mv t");
  testing::ScriptedModel model(cli_->wire, {steps[0], steps[2]});  // the probe, evaluate
  UseModel(model);
  FakeScheduler scheduler;
  const v1::CompleteRequest done = RunWithFinalEvaluation("tk_utf8", scheduler);
  EXPECT_EQ(done.agent().end(), v1::AGENT_FINISHED);
  EXPECT_TRUE(scheduler.requests().empty()) << "neither the tool nor the end sent it";
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 3u);
  EXPECT_THAT(requests[2].dump(), HasSubstr("is not UTF-8 text: byte 0xe9 at offset 6"))
      << "the tool's refusal, as the model read it";
  EXPECT_THAT(done.agent().reason(),
              HasSubstr("its final kernel was not evaluated: kernel.cu is not UTF-8 text: byte "
                        "0xe9 at offset 6 (line 1, column 7)"));
  std::map<std::string, std::string> records;
  for (const v1::AgentRecord& r : done.agent().records()) records[r.name()] = r.content();
  EXPECT_EQ(records["workspace/kernel.cu"], "// caf\xe9\n") << "its bytes, as they are";
  EXPECT_EQ(records["workspace/bad\\xffname.cu"], "x");
  EXPECT_THAT(records["workspace.notes"], HasSubstr("escaped: workspace/bad\\xffname.cu"));
  v1::CompleteRequest parsed;
  EXPECT_TRUE(parsed.ParseFromString(done.SerializeAsString())) << "the end report parses";
  EXPECT_EQ(parsed.agent().records_size(), done.agent().records_size());
}

TEST_P(AgentSessionTest, TheTokenBudgetEndsTheSession) {
  testing::ScriptedModel model(cli_->wire, Steps(Workspace("tk_2")));
  UseModel(model);
  FakeScheduler scheduler;
  std::atomic<bool> cancelled{false};
  // Each scripted answer is 120 tokens: the second call spends 230, and its
  // answer asks to evaluate the kernel the first wrote. That evaluation is
  // waited for (the budget's grace); the CLI's next call is refused and
  // ends the session.
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), Task("tk_2", 230), cancelled);
  ASSERT_TRUE(done.has_agent()) << done.DebugString();
  EXPECT_EQ(done.agent().end(), v1::AGENT_TOKEN_BUDGET);
  EXPECT_THAT(done.agent().reason(), HasSubstr("token budget of 230 spent"));
  EXPECT_LE(model.requests().size(), 2u) << "refused once spent";
  ASSERT_EQ(scheduler.requests().size(), 1u) << "the kernel of the answer that spent it";
  EXPECT_EQ(scheduler.requests()[0].kernel_source(), "// first\n");
}

// Each of the other budgets ends the session at its point, with its end and
// a reason that names it.
TEST_P(AgentSessionTest, EachBudgetEndsTheSessionAtItsPoint) {
  struct Case {
    const char* name;
    void (*set)(v1::AgentSettings&);
    v1::AgentEnd end;
    const char* reason;
    size_t evaluations;  // the scheduler saw this many
    size_t max_calls;    // the model answered at most this many
  };
  const Case cases[] = {
      {"evaluations", [](v1::AgentSettings& a) { a.set_max_evaluations(1); },
       v1::AGENT_EVALUATION_LIMIT, "the 1 evaluations are used", 1, 10},
      {"model calls", [](v1::AgentSettings& a) { a.set_max_model_calls(2); },
       v1::AGENT_MODEL_CALL_LIMIT, "model call limit of 2 reached", 1, 2},
      // $0.00014 a call at the scripted prices: the second call's prompt
      // alone would pass what is left, so it is refused before it is made
      // (the budget is never overshot), and its kernel is never evaluated.
      {"cost", [](v1::AgentSettings& a) { a.set_max_cost_usd(0.0002); }, v1::AGENT_COST_BUDGET,
       "cost budget of $0.0002 spent", 0, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string id = absl::StrCat("tk_b", &c - cases);
    testing::ScriptedModel model(cli_->wire, Steps(Workspace(id)));
    UseModel(model);
    FakeScheduler scheduler;
    std::atomic<bool> cancelled{false};
    v1::Task task = Task(id);
    c.set(*task.mutable_agent()->mutable_settings());
    const v1::CompleteRequest done =
        agent_gateway::RunAgentSession(Options(scheduler), task, cancelled);
    ASSERT_TRUE(done.has_agent()) << done.DebugString();
    EXPECT_EQ(done.agent().end(), c.end) << done.agent().reason();
    EXPECT_THAT(done.agent().reason(), HasSubstr(c.reason));
    EXPECT_EQ(scheduler.requests().size(), c.evaluations);
    EXPECT_LE(model.requests().size(), c.max_calls)
        << "counted " << done.agent().total().model_calls() << "; paths "
        << absl::StrJoin(model.paths(), " ");
    EXPECT_EQ(Survivors(), 0) << "a process of the session survived";
  }
}

// The wall time counts the agent's own time: a CLI busy in its shell is
// ended at it.
TEST_P(AgentSessionTest, TheWallTimeEndsABusySession) {
  testing::ScriptedModel model(
      cli_->wire, Steps(Workspace("tk_w"), "python3 -c 'import time; time.sleep(600)'"));
  UseModel(model);
  FakeScheduler scheduler;
  std::atomic<bool> cancelled{false};
  v1::Task task = Task("tk_w");
  task.mutable_agent()->mutable_settings()->set_wall_time_s(8);
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), task, cancelled);
  ASSERT_TRUE(done.has_agent()) << done.DebugString();
  EXPECT_EQ(done.agent().end(), v1::AGENT_WALL_TIME);
  EXPECT_THAT(done.agent().reason(), HasSubstr("wall time of 8 s reached"));
  EXPECT_EQ(Survivors(), 0) << "a process of the session survived";
}

// An evaluation that waits for a GPU longer than Codex's default tool
// timeout (60 s) neither times the tool out (each CLI is configured with
// the session's eval_wait_timeout) nor counts towards the wall time.
TEST_P(AgentSessionTest, ASlowEvaluationNeitherTimesOutNorSpendsTheWallTime) {
  testing::ScriptedModel model(cli_->wire, Steps(Workspace("tk_slow")));
  UseModel(model);
  FakeScheduler scheduler;
  scheduler.first_delay = absl::Seconds(65);
  std::atomic<bool> cancelled{false};
  v1::Task task = Task("tk_slow");
  task.mutable_agent()->mutable_settings()->set_wall_time_s(50);
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), task, cancelled);
  ASSERT_TRUE(done.has_agent()) << done.DebugString();
  EXPECT_EQ(done.agent().end(), v1::AGENT_FINISHED) << done.agent().reason();
  ASSERT_EQ(scheduler.requests().size(), 2u);
  const std::string last = model.requests().back().dump();
  EXPECT_THAT(last, HasSubstr("feedback of turn 1 for: // second"));
}

TEST_P(AgentSessionTest, ACancelledSessionEndsWithinSecondsLeavingNoProcess) {
  testing::ScriptedModel model(cli_->wire, Steps(Workspace("tk_3")));
  UseModel(model);
  FakeScheduler scheduler;
  scheduler.block = true;  // the evaluation never comes back
  std::atomic<bool> cancelled{false};
  std::thread canceller([&] {
    while (scheduler.requests().empty()) absl::SleepFor(absl::Milliseconds(20));
    cancelled = true;  // what a revoked lease does
  });
  const absl::Time start = absl::Now();
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), Task("tk_3"), cancelled);
  canceller.join();
  EXPECT_TRUE(done.has_failure());
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  EXPECT_EQ(Survivors(), 0) << "a process of the session survived";
}

// Two sessions at once share nothing: not their files, not their model
// calls, and not their uid (each leases its own for its lifetime: on one
// uid, one session holding 126 inotify instances made the other's
// inotify_init fail).
// `uid=[N]` (Gemini CLI refuses a command with a command substitution).
constexpr char kUidProbe[] = "printf 'uid=['; id -u | tr -d '\\n'; echo ']'";

TEST_P(AgentSessionTest, TwoSessionsAtOnceDoNotMixAndRunAsUidsOfTheirOwn) {
  testing::ScriptedModel model_a(cli_->wire, Steps(Workspace("tk_a"), kUidProbe));
  testing::ScriptedModel model_b(cli_->wire, Steps(Workspace("tk_b"), kUidProbe));
  FakeScheduler scheduler_a, scheduler_b;
  UseModel(model_a);
  auto registry_a = std::move(registry_);
  UseModel(model_b);
  agent_gateway::SessionOptions a = Options(scheduler_a), b = Options(scheduler_b);
  a.registry = registry_a.get();
  std::atomic<bool> cancelled{false};
  v1::CompleteRequest done_a, done_b;
  std::thread ta([&] { done_a = agent_gateway::RunAgentSession(a, Task("tk_a"), cancelled); });
  std::thread tb([&] { done_b = agent_gateway::RunAgentSession(b, Task("tk_b"), cancelled); });
  ta.join();
  tb.join();
  ASSERT_TRUE(done_a.has_agent()) << done_a.DebugString();
  ASSERT_TRUE(done_b.has_agent()) << done_b.DebugString();
  EXPECT_EQ(scheduler_a.requests().size(), 2u);
  EXPECT_EQ(scheduler_b.requests().size(), 2u);
  for (const Json& r : model_a.requests()) {
    EXPECT_THAT(r.dump(), ::testing::Not(HasSubstr("tk_b"))) << "session b's files in a's calls";
  }
  EXPECT_EQ(done_a.agent().total().model_calls(), static_cast<int>(model_a.requests().size()));
  EXPECT_EQ(done_b.agent().total().model_calls(), static_cast<int>(model_b.requests().size()));
  // What `id -u` said in each CLI's shell.
  std::vector<std::string> uids;
  for (const testing::ScriptedModel* model : {&model_a, &model_b}) {
    const std::vector<Json> requests = model->requests();
    ASSERT_GE(requests.size(), 2u);
    uids.push_back(Marked(model->ToolResults(requests[1]).at(0).dump(), "uid"));
  }
  EXPECT_NE(uids[0], uids[1]) << "two sessions at once ran as one uid";
  for (const std::string& uid : uids) {
    EXPECT_TRUE(uid == std::to_string(uids_->first()) || uid == std::to_string(uids_->first() + 1))
        << uid << ": not a uid of the sessions' range";
  }
}

// Nothing of the host shows in a session: its PID 1 (a copy of the gateway)
// has no argv of the gateway's (its scheduler address and token file were
// read there) and no environment, no host cgroup path shows, and a vendor
// library of the toolkit under /usr reads empty, as in the kernels' views.
TEST_P(AgentSessionTest, ASessionSeesNothingOfTheHost) {
  // A vendor library of the real toolkit, where this machine has one.
  std::string vendor;
  std::error_code ec;
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"}) {
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (vendor.empty() && name.rfind("libcublas", 0) == 0 && fs::file_size(it->path(), ec) > 0) {
        vendor = it->path().string();
      }
    }
  }
  // Each as `name=[...]`, with no command substitution (Gemini CLI refuses it).
  const std::string probe = absl::StrCat(
      "printf 'cmdline=['; tr '\\0' '|' < /proc/1/cmdline; echo ']'; ",
      "printf 'environ=['; cat /proc/1/environ 2>&1 | tr '\\0' '|'; echo ']'; ",
      "printf 'cgroup=['; tr '\\n' '|' < /proc/self/cgroup; echo ']'",
      vendor.empty()
          ? ""
          : absl::StrCat("; printf 'vendor=['; wc -c < ", vendor, " | tr -d '\\n'; echo ']'"));
  const std::vector<Step> look = {Steps(Workspace("tk_host"), probe).front()};
  testing::ScriptedModel model(cli_->wire, look);
  UseModel(model);
  FakeScheduler scheduler;
  std::atomic<bool> cancelled{false};
  agent_gateway::SessionRecord record;
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), Task("tk_host"), cancelled, &record);
  ASSERT_TRUE(done.has_agent()) << done.DebugString() << record.stderr_text;
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 2u);
  const std::string seen = model.ToolResults(requests[1]).at(0).dump();
  EXPECT_EQ(Marked(seen, "cmdline"), "ptxbench-init|") << seen;
  EXPECT_THAT(seen, ::testing::Not(HasSubstr("agent_session_test"))) << "the host's argv";
  const std::string environ = Marked(seen, "environ");
  EXPECT_TRUE(environ.empty() || absl::StrContains(environ, "Permission denied")) << environ;
  EXPECT_THAT(seen, ::testing::Not(HasSubstr("PTXB_SESSION_TEST_KEY")));
  const std::string cgroup = Marked(seen, "cgroup");
  ASSERT_FALSE(cgroup.empty()) << seen;
  for (absl::string_view line : absl::StrSplit(cgroup, '|', absl::SkipEmpty())) {
    EXPECT_TRUE(absl::EndsWith(line, ":/")) << "a host cgroup path: " << line;
  }
  if (vendor.empty()) {
    std::cout << "no libcublas under /usr/local/cuda: the vendor mask is not checked\n";
  } else {
    EXPECT_EQ(Marked(seen, "vendor"), "0") << vendor << " in the session's view: " << seen;
  }
}

// A CLI that goes quiet (here its shell tool waits on a command that never
// ends) is ended at stall_timeout with that reason, its processes with it.
TEST_P(AgentSessionTest, ASessionThatStallsIsEndedWithItsReason) {
  // Not `sleep`: Claude Code refuses a long sleep in its shell tool.
  testing::ScriptedModel model(
      cli_->wire, Steps(Workspace("tk_5"), "python3 -c 'import time; time.sleep(600)'"));
  UseModel(model);
  FakeScheduler scheduler;
  std::atomic<bool> cancelled{false};
  v1::Task task = Task("tk_5");
  task.mutable_agent()->mutable_settings()->set_stall_timeout_s(3);
  const absl::Time start = absl::Now();
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), task, cancelled);
  ASSERT_TRUE(done.has_failure()) << done.DebugString();
  EXPECT_EQ(done.failure().failure_class(), v1::TERMINAL);
  EXPECT_THAT(done.failure().message(), HasSubstr("stalled"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_TRUE(scheduler.requests().empty()) << "it never got to evaluate";
  EXPECT_EQ(Survivors(), 0) << "a process of the session survived";
}

// The session's directory is a file system of its own: an agent that fills
// it runs out of space there (and nowhere else), and once it makes room the
// session goes on.
TEST_P(AgentSessionTest, ASessionThatFillsItsDiskFailsOnlyItself) {
  testing::ScriptedModel model(
      cli_->wire, Steps(Workspace("tk_4"), "head -c 100000000 /dev/zero > fill; echo wrote=$?; "
                                           ": > fill"));
  UseModel(model);
  FakeScheduler scheduler;
  std::atomic<bool> cancelled{false};
  agent_gateway::SessionOptions options = Options(scheduler);
  options.disk_bytes = 32 << 20;
  const v1::CompleteRequest done = agent_gateway::RunAgentSession(options, Task("tk_4"), cancelled);
  ASSERT_TRUE(done.has_agent()) << done.DebugString();
  EXPECT_EQ(done.agent().end(), v1::AGENT_FINISHED);
  EXPECT_EQ(scheduler.requests().size(), 2u) << "it went on after the disk was full";
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 2u);
  const std::string seen = model.ToolResults(requests[1]).at(0).dump();
  EXPECT_THAT(seen, HasSubstr("No space left on device"));
  EXPECT_THAT(seen, ::testing::Not(HasSubstr("wrote=0")));
}

// An agent cannot write into its CLI's event stream (the kernel refuses it
// the CLI's /proc/PID/fd: the CLI is no descendant of its shell), and a tool
// that floods its output reaches the model as the CLI cuts it: the session
// goes on and what is kept of it stays within its caps.
TEST_P(AgentSessionTest, AFloodingToolIsCutAndTheSessionGoesOn) {
  testing::ScriptedModel model(
      cli_->wire, Steps(Workspace("tk_f"),
                        "(echo x > /proc/$PPID/fd/1) 2>/dev/null && r=wrote-cli-stdout || "
                        "r=cli-stdout-refused; echo $r; head -c 40000000 /dev/zero | tr '\\0' x; "
                        "echo; echo $r"));
  UseModel(model);
  FakeScheduler scheduler;
  std::atomic<bool> cancelled{false};
  agent_gateway::SessionRecord record;
  const v1::CompleteRequest done =
      agent_gateway::RunAgentSession(Options(scheduler), Task("tk_f"), cancelled, &record);
  ASSERT_TRUE(done.has_agent()) << done.DebugString();
  EXPECT_EQ(done.agent().end(), v1::AGENT_FINISHED) << done.agent().reason();
  EXPECT_EQ(scheduler.requests().size(), 2u);
  const std::vector<Json> requests = model.requests();
  ASSERT_GE(requests.size(), 2u);
  const std::string seen = model.ToolResults(requests[1]).at(0).dump();
  EXPECT_THAT(seen, HasSubstr("cli-stdout-refused"));
  EXPECT_THAT(seen, ::testing::Not(HasSubstr("wrote-cli-stdout")));
  EXPECT_LE(record.events.size(), 8u << 20);
  size_t stored = 0;
  for (const v1::AgentRecord& r : done.agent().records()) stored += r.content().size();
  EXPECT_LE(stored, 16u << 20) << "a session's record stays within 16 MiB";
}

INSTANTIATE_TEST_SUITE_P(PinnedClis, AgentSessionTest,
                         ::testing::Values("claude-code", "codex", "gemini-cli"),
                         testing::CliTestName);

}  // namespace
}  // namespace ptxbench
