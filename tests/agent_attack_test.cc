// A hostile agent, kept in the tree (issue 47, docs/SECURITY.md "Agent
// sessions"): each real pinned CLI runs a session in-process whose first
// step runs an attack script (tests/agent_attacks/attacks.py) from the CLI's
// own shell tool, against the model proxy as the sandbox reaches it (the
// relay on 127.0.0.1:43123, or the session's socket), with a scripted model
// as the provider behind a wire tap that keeps every byte the proxy sent it.
// Each suite is one session per CLI; the checks are properties, never the
// wording of a message: the test process (which hosts the proxy) survives,
// the session ends with its own end, the provider never received what was
// refused (by a marker in each request, and by the bytes on its wire), it
// received requests on the pinned model's routes only, with the gateway's
// key only, and every token it billed was charged.
//
// agent_attack_proxy_test.cc attacks the proxy's socket directly where no
// CLI is needed to tell (a provider's answers, timing of heads).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/stubs/logging.h"
#include "testing/pinned_clis.h"
#include "tests/agent_attack_fixture.h"

// In the fixture's namespace: its names (v1, Json, HasSubstr, ...) are these
// tests' too.
namespace ptxbench::attack_testing {
namespace {

// Bodies of the wrong JSON types ({"model": 0}, {"tools":[{"type":7}]},
// the conversation as a number, max tokens as a string, a float, 1e30, -1,
// tools as an object, invalid UTF-8, 1e999999) and 1,000,000 levels deep
// ([[[..., {"a":{"a":..., a deep field in a real request): each refused, the
// proxy alive after each (a normal call works), the session ending as the
// CLI ends it. Today an uncaught JSON type error aborts the process (and a
// deep body overflows the stack re-serializing it).
TEST_P(AgentAttackTest, BodiesOfWrongTypesOrDepthsAreRefusedAndNeverCrashTheGateway) {
  ExpectAttacksHeldAndTheCliFinished("crash", "tk_crash");
  for (const ScriptedModel::Received &r : model_->received()) {
    EXPECT_LT(r.body_size, 1u << 20) << "a deep body reached the provider: " << r.target;
  }
}

// Requests a proxy that forwards text passes on, each refused and never at
// the provider: fragments that made a call free (POST
// /v1/messages#/v1/messages/count_tokens) or any POST path a route
// (/v1/messages/batches, /v1/complete, /admin/anything, ...); targets the
// provider normalizes into another route or model (dot segments, %2F and
// %2e, backslashes, //, absolute form, Gemini's models/<pinned>:x/../<other>
// and tunedModels/, extra query parameters: refused, or sent to the pinned
// model's route exactly); server-side tools by other names (Gemini
// googleMaps, google_search_retrieval, computer_use, file_search, ...;
// Anthropic WEB_SEARCH_*, padded types, mcp_toolset, mcp_servers; Responses
// web_search_preview, mcp, WEB_SEARCH) and parts that make the provider
// fetch a URL or read a stored file: refused or stripped; stored prompts,
// earlier responses, background answers, priority tiers; header lines with
// a bare LF or CR, obs-folds, NULs, duplicate or conflicting framing,
// smuggled and pipelined requests, trailers, the agent's own keys. The
// proxy answers a normal call after each group, and the CLI finishes.
TEST_P(AgentAttackTest, HostileRequestsAreRefusedAndNeverReachTheProvider) {
  ExpectAttacksHeldAndTheCliFinished("hostile", "tk_hostile");
}

// A token budget of 5,000 against every way the issue found to spend past
// it or uncounted: 300 free token counts at once (not all forwarded, each
// recorded); 8 bodies of 40 MB (refused as too large, the gateway's memory
// not grown by them); streams whose client hangs up once the text arrived
// and a client that never reads its answer (counted all the same); Gemini's
// answer without alt=sse (one JSON array) and plain answers (counted); and
// 16 calls at once each asking for all it may from a provider that gives
// it (a Gemini call with 8 candidates). What the provider billed stays
// within the budget and one prompt, and all of it is charged.
TEST_P(AgentAttackTest, ATokenBudgetHoldsAgainstEveryWayToSpendIt) {
  FakeScheduler scheduler;
  v1::Task task = Task("tk_budget", 5'000);
  task.mutable_agent()->mutable_settings()->set_budget_grace_s(5);
  ResetPeakRss();
  const int64_t rss_before = PeakRssBytes();
  const Attacked a = Attack("budget", task, scheduler);
  const int64_t grown = PeakRssBytes() - rss_before;
  // Ended by the budget (or by the CLI, once refused); never a crash.
  ASSERT_TRUE(a.done.has_agent() || a.done.has_failure()) << Ended(a.done);
  if (a.done.has_agent()) {
    EXPECT_THAT(a.done.agent().end(), ::testing::AnyOf(v1::AGENT_TOKEN_BUDGET, v1::AGENT_FINISHED))
        << Ended(a.done);
  }
  ExpectEachResult(a);
  ExpectTheProviderSawOnlyWhatItMay();
  const v1::AgentOutcome &outcome =
      a.done.has_agent() ? a.done.agent() : a.done.failure().agent_session();
  const v1::Usage &charged = outcome.total().usage();
  const int64_t billed = model_->billed_tokens();
  const std::string calls = RecordOf(a.done, "model_calls.jsonl");
  EXPECT_LE(billed, 5'000 + ScriptedModel::kInputTokens)
      << "the provider billed past the budget; charged "
      << charged.input_tokens() + charged.output_tokens() << "\n"
      << Accounts(calls);
  EXPECT_GE(charged.input_tokens() + charged.output_tokens(), billed)
      << "tokens the provider billed were not charged\n"
      << Accounts(calls);
  // The counters: rate-limited, each call recorded.
  int counted_upstream = 0;
  for (const ScriptedModel::Received &r : model_->received()) {
    counted_upstream += absl::StrContains(r.body, "@ptxb:atk:counter-");
  }
  EXPECT_LT(counted_upstream, 300) << "300 free calls in a burst all reached the provider";
  int recorded = 0;
  for (absl::string_view line : absl::StrSplit(calls, '\n')) {
    const Json j = Json::parse(line, nullptr, false);
    if (j.is_object() && IsCounter(j.value("target", ""))) ++recorded;
  }
  int answered = 0;
  const Json statuses = ByName(a)["counter-flood"].line.value("statuses", Json::object());
  for (const auto &[status, n] : statuses.items()) {
    if (status != "None" && n.is_number_integer()) answered += n.get<int>();
  }
  EXPECT_GE(recorded, answered) << "each token count answered is recorded";
  int big = 0;
  for (const ScriptedModel::Received &r : model_->received()) big += r.body_size >= (40u << 20);
  EXPECT_EQ(big, 0) << "40 MB bodies reached the provider";
  EXPECT_LT(grown, 200 << 20) << "8 bodies of 40 MB grew the gateway's memory by " << (grown >> 20)
                              << " MB";
}

// A model call limit of 3: the agent kills ptxbench's relay, runs its own on
// 127.0.0.1:43123 that rewrites every call of the CLI to look free (a
// fragment), and makes 8 such calls at once itself. The provider answers at
// most 3 model calls.
TEST_P(AgentAttackTest, AModelCallLimitHoldsAgainstARelayOfTheAgentsOwn) {
  FakeScheduler scheduler;
  v1::Task task = Task("tk_limit");
  task.mutable_agent()->mutable_settings()->set_max_model_calls(3);
  task.mutable_agent()->mutable_settings()->set_budget_grace_s(5);
  const Attacked a = Attack("limit", task, scheduler);
  ASSERT_TRUE(a.done.has_agent() || a.done.has_failure()) << Ended(a.done);
  int answered = 0;
  for (const ScriptedModel::Received &r : model_->received()) {
    answered += r.method == "POST" && !IsCounter(r.target);
  }
  EXPECT_LE(answered, 3) << "model calls the provider answered against a limit of 3";
  const v1::AgentOutcome &o =
      a.done.has_agent() ? a.done.agent() : a.done.failure().agent_session();
  EXPECT_LE(o.total().model_calls(), 3);
  ExpectTheProviderSawOnlyWhatItMay();
}

// A call whose answer the agent never reads (its connection held open by a
// process of its own), and then nothing: the session stalls and is ended
// at its stall_timeout. Today the proxy blocks writing that answer, the
// call stays in flight, and a call in flight keeps the stall detector
// from firing: the session runs to its wall time.
TEST_P(AgentAttackTest, AnAnswerHeldUnreadDoesNotKeepAStalledSessionAlive) {
  FakeScheduler scheduler;
  v1::Task task = Task("tk_stall");
  // Longer than a CLI takes to start and make its first call (Gemini CLI's
  // 6 s alone, past 12 s on CI's loaded machine), so that what stalls is the
  // attack; the wall time far enough past it that which one fired is plain.
  task.mutable_agent()->mutable_settings()->set_stall_timeout_s(25);
  task.mutable_agent()->mutable_settings()->set_wall_time_s(120);
  const absl::Time start = absl::Now();
  const Attacked a = Attack("stall", task, scheduler, /*to_its_end=*/false);
  ASSERT_TRUE(ByName(a).count("stall-unread")) << "the attack never ran: " << Ended(a.done);
  ASSERT_TRUE(a.done.has_failure()) << "not ended as stalled: " << Ended(a.done);
  EXPECT_THAT(a.done.failure().message(), HasSubstr("stalled"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(100)) << "ran to its wall time";
  EXPECT_EQ(Survivors(), 0) << "a process of the session survived";
}

// An agent that starts an evaluation in the background (the scheduler holds
// it 120 s) and keeps calling its model is not blocked on it: its wall time
// of 10 s runs, and the session ends there. The hold is far past the bound
// (60 s) so that a loaded machine's slow CLI start cannot blur which fired.
TEST_P(AgentAttackTest, AnEvaluationInTheBackgroundDoesNotStopTheClock) {
  FakeScheduler scheduler;
  scheduler.first_delay = absl::Seconds(120);
  v1::Task task = Task("tk_wall");
  task.mutable_agent()->mutable_settings()->set_wall_time_s(10);
  const absl::Time start = absl::Now();
  const Attacked a = Attack("walltime", task, scheduler, /*to_its_end=*/false);
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(a.done.has_agent()) << Ended(a.done);
  EXPECT_EQ(a.done.agent().end(), v1::AGENT_WALL_TIME) << a.done.agent().reason();
  EXPECT_LT(took, absl::Seconds(60)) << "a wall time of 10 s, the evaluation held 120 s";
  int ticks = 0;
  for (const ScriptedModel::Received &r : model_->received()) {
    ticks += absl::StrContains(r.body, "@ptxb:atk:tick-");
  }
  EXPECT_LE(ticks, 40) << "model calls at 2 a second: more than 10 s of them";
  EXPECT_EQ(Survivors(), 0) << "a process of the session survived";
}

// What a session leaves is data, bounded, and its sandbox shows nothing of
// the host: files named with bytes that are not UTF-8 (in the workspace and
// HOME), links to the gateway's own files (never followed), 20,000 empty files
// and a tree 1,500 levels deep leave a record that the scheduler can parse,
// of bounded size and depth; a kernel that is not UTF-8, evaluated with the
// command or left as the final kernel (final_evaluation if-changed), is
// answered (refused with a reason, or evaluated) and never sent to the
// scheduler as a request it cannot parse (which the gateway then retried
// as "scheduler away" until eval_wait_timeout); socket pairs (kernel memory
// no watchdog sees) are bounded in number; the sandbox's PID 1 is not the
// gateway's command line, and its cgroup path is not the host's.
TEST_P(AgentAttackTest, WhatTheSessionLeavesIsBoundedDataAndShowsNothingOfTheHost) {
  FakeScheduler scheduler;
  v1::Task task = Task("tk_records");
  // The wait far past the bound: the attack alone takes 12-28 s (CI's loaded
  // machine), and a held session would take 120 s.
  task.mutable_agent()->mutable_settings()->set_eval_wait_timeout_s(120);
  task.mutable_agent()->mutable_settings()->set_final_evaluation("if-changed");
  const absl::Time start = absl::Now();
  const Attacked a = Attack("records", task, scheduler, /*to_its_end=*/true,
                            /*then_kernels=*/false);
  EXPECT_LT(absl::Now() - start, absl::Seconds(90))
      << "a final kernel that is not UTF-8 held the session (eval_wait_timeout "
         "120 s)";
  ASSERT_TRUE(a.done.has_agent()) << Ended(a.done);
  EXPECT_EQ(a.done.agent().end(), v1::AGENT_FINISHED) << a.done.agent().reason();
  v1::CompleteRequest parsed;
  {
    google::protobuf::LogSilencer quiet;
    EXPECT_TRUE(parsed.ParseFromString(a.done.SerializeAsString()))
        << "the session's end does not parse at the scheduler";
  }
  EXPECT_EQ(scheduler.unparsed(), 0) << "an evaluation the scheduler cannot parse was sent";
  for (const v1::AgentEvalRequest &r : scheduler.requests()) {
    EXPECT_THAT(r.kernel_source(), Not(HasSubstr("\xEF\xBF\xBD")))
        << "a kernel evaluated other than the agent wrote it (its bytes "
           "replaced)";
  }
  std::map<std::string, Result> results = ByName(a);
  ASSERT_TRUE(results.count("eval-not-utf8"));
  const Result &eval = results["eval-not-utf8"];
  EXPECT_TRUE(eval.status.has_value()) << "the evaluation of a kernel that is not UTF-8 hung";
  EXPECT_LT(eval.line.value("seconds", 99.0), 15.0);
  for (const v1::AgentRecord &r : a.done.agent().records()) {
    EXPECT_THAT(r.content(), Not(HasSubstr("sk-session-test")))
        << r.name()
        << ": a link out of the session was followed to the gateway's own "
           "files";
  }
  int workspace = 0;
  size_t deepest = 0;
  for (const v1::AgentRecord &r : a.done.agent().records()) {
    if (!absl::StartsWith(r.name(), "workspace/")) continue;
    ++workspace;
    deepest = std::max<size_t>(deepest, std::count(r.name().begin(), r.name().end(), '/'));
  }
  EXPECT_LT(workspace, 5'000) << "records of the final workspace for 20,000 files";
  EXPECT_LE(deepest, 64u) << "a record 1,500 levels deep";
  ASSERT_TRUE(results.count("socket-pairs"));
  EXPECT_LT(results["socket-pairs"].line.value("opened", 0), 8'000)
      << "socket pairs, each able to hold kernel memory no watchdog sees, not "
         "bounded";
  ASSERT_TRUE(results.count("pid1-cmdline"));
  std::string pid1 = absl::HexStringToBytes(results["pid1-cmdline"].line.value("hex", ""));
  std::replace(pid1.begin(), pid1.end(), '\0', ' ');
  std::ifstream self("/proc/self/cmdline");
  std::string argv0;
  std::getline(self, argv0, '\0');
  EXPECT_THAT(pid1, Not(HasSubstr(argv0))) << "the sandbox's PID 1 shows the gateway's argv";
  EXPECT_THAT(pid1, Not(HasSubstr(dir_.string())));
  ASSERT_TRUE(results.count("cgroup"));
  const std::string cgroup = absl::HexStringToBytes(results["cgroup"].line.value("hex", ""));
  for (absl::string_view line : absl::StrSplit(cgroup, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(absl::EndsWith(line, ":/")) << "the host's cgroup path: " << line;
  }
}

INSTANTIATE_TEST_SUITE_P(PinnedClis, AgentAttackTest,
                         ::testing::Values("claude-code", "codex", "gemini-cli"),
                         testing::CliTestName);

}  // namespace
}  // namespace ptxbench::attack_testing
