#ifndef PTXBENCH_TESTS_AGENT_ATTACK_FIXTURE_H_
#define PTXBENCH_TESTS_AGENT_ATTACK_FIXTURE_H_

// The fixture of agent_attack_test.cc: a session of a pinned CLI whose first
// step runs a suite of tests/agent_attacks/attacks.py from the CLI's shell
// tool, its provider a scripted model behind a wire tap; and the checks that
// hold whatever the suite (the provider saw only what it may; each attack's
// result against what it expects).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent_gateway/agent/session.h"
#include "agents/clis.h"
#include "testing/agent_session_fixture.h"
#include "testing/scripted_model.h"
#include "testing/wire_tap.h"

namespace ptxbench::attack_testing {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;
using testing::FakeScheduler;
using testing::ScriptedModel;

// What the agent may have sent the provider and must not: a header it
// injected, a request it smuggled or pipelined, its own keys, a URL or a
// stored file it made the provider fetch, the CLI's placeholder key.
inline const char *const kNeverUpstream[] = {"x-ptxb-injected", "ptxb-smuggle",  "ptxb-pipeline",
                                             "sk-agent-ptxb",   "exfil.invalid", "ptxbexfil",
                                             "ptxbench-session"};

// The peak resident memory of this process (which hosts the proxy), and
// its reset (Linux: writing 5 to clear_refs).
inline int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (absl::StartsWith(line, "VmHWM:")) {
      int64_t kb = 0;
      std::istringstream(line.substr(6)) >> kb;
      return kb << 10;
    }
  }
  return 0;
}
inline void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// How a session ended, in a line (its records left out).
inline std::string Ended(const v1::CompleteRequest &done) {
  if (done.has_failure()) return absl::StrCat("failed: ", done.failure().message());
  if (done.has_agent()) {
    return absl::StrCat(v1::AgentEnd_Name(done.agent().end()), ": ", done.agent().reason());
  }
  return "no end";
}

class AgentAttackTest : public testing::AgentSessionFixture {
 protected:
  // One line of results.jsonl.
  struct Result {
    std::string attack;
    std::optional<int> status;
    std::string expect;
    Json line;
  };
  struct Attacked {
    v1::CompleteRequest done;
    std::vector<Result> results;
    std::string log;  // what the script printed
  };

  void SetUp() override {
    testing::AgentSessionFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    model_ = std::make_unique<ScriptedModel>(cli_->wire, std::vector<ScriptedModel::Step>{});
  }

  const char *WireName() const {
    return cli_->wire == agents::Wire::kAnthropicMessages ? "anthropic"
           : cli_->wire == agents::Wire::kOpenAIResponses ? "responses"
                                                          : "gemini";
  }

  // The shell step that writes the attack script into the workspace and
  // runs `suite`; the CLI waits for it (Claude Code's Bash up to its 10
  // minutes, Codex's exec_command without yielding early). The attacks
  // named in $PTXB_ATTACK_SKIP (comma-separated) are not sent: to see what
  // else fails where one of them ends the gateway.
  ScriptedModel::Step AttackStep(const std::string &suite) const {
    const char *skip = std::getenv("PTXB_ATTACK_SKIP");
    std::ifstream in(fs::path(PTXB_ATTACKS_DIR) / "attacks.py");
    std::stringstream script;
    script << in.rdbuf();
    const std::string command =
        absl::StrCat("printf %s '", absl::Base64Escape(script.str()),
                     "' | base64 -d > attacks.py && python3 attacks.py ", suite, " ", WireName(),
                     " ", testing::AgentToolBinary(), " '", skip == nullptr ? "" : skip,
                     "' > attacks.log 2>&1; tail -n 3 attacks.log");
    ScriptedModel::Step step = Shell(command);
    if (cli_->name == "codex") step.input["yield_time_ms"] = 30'000;
    if (cli_->name == "claude-code") step.input["timeout"] = 600'000;
    return step;
  }

  // Runs `suite` in a session of `task`, its model scripted to run the
  // attack first and then write and evaluate two kernels; the provider sits
  // behind tap_. The session's directory is kept for the script's results,
  // then unmounted and removed.
  // `to_its_end`: the script finishes before the session does (a session
  // ended by its wall time kills it midway). `then_kernels`: the model asks
  // for the two kernels after the attack; else the CLI ends after it.
  Attacked Attack(const std::string &suite, v1::Task task, FakeScheduler &scheduler,
                  bool to_its_end = true, bool then_kernels = true) {
    const std::string id = task.lease().task_id();
    std::vector<ScriptedModel::Step> steps = {AttackStep(suite)};
    // Codex's exec_command answers after 30 s at most (whatever
    // yield_time_ms asks), the script still running: more steps wait for it.
    for (int i = 0; i < 3 && cli_->name == "codex"; ++i) {
      ScriptedModel::Step wait = Shell("python3 attacks.py wait");
      wait.input["yield_time_ms"] = 30'000;
      steps.push_back(wait);
    }
    if (then_kernels) {
      for (ScriptedModel::Step &s : Steps(Workspace(id))) steps.push_back(std::move(s));
    }
    model_.reset();
    tap_.reset();
    model_ = std::make_unique<ScriptedModel>(cli_->wire, steps);
    tap_ = std::make_unique<testing::WireTap>(model_->port());
    UseModelAt(tap_->port());
    agent_gateway::SessionOptions options = Options(scheduler);
    options.keep_directory = true;
    std::atomic<bool> cancelled{false};
    Attacked out;
    agent_gateway::SessionRecord record;
    out.done = agent_gateway::RunAgentSession(options, task, cancelled, &record);
    const fs::path session = dir_ / absl::StrCat(id, "-1");
    std::ifstream log(session / "workspace" / "attacks.log");
    std::stringstream text;
    text << log.rdbuf();
    out.log = text.str();
    std::ifstream results(session / "workspace" / "results.jsonl");
    for (std::string line; std::getline(results, line);) {
      Json j = Json::parse(line, nullptr, false);
      if (!j.is_object()) continue;
      Result r{j.value("attack", ""), std::nullopt, j.value("expect", ""), j};
      if (j["status"].is_number_integer()) r.status = j["status"].get<int>();
      out.results.push_back(std::move(r));
    }
    // $PTXB_ATTACK_RESULTS_DIR keeps what the script wrote, to read later.
    std::error_code ec;
    if (const char *keep = std::getenv("PTXB_ATTACK_RESULTS_DIR")) {
      const std::string name = absl::StrCat(id, "-", cli_->name);
      fs::copy_file(session / "workspace" / "results.jsonl",
                    fs::path(keep) / (name + ".results.jsonl"),
                    fs::copy_options::overwrite_existing, ec);
      std::ofstream(fs::path(keep) / (name + ".stderr.txt")) << record.stderr_text;
      std::ofstream(fs::path(keep) / (name + ".log")) << out.log;
      const std::vector<Json> sent = model_->requests();  // the CLI's first is one
      if (!sent.empty())
        std::ofstream(fs::path(keep) / (name + ".first_request.json")) << sent[0].dump(1);
    }
    umount2(session.c_str(), MNT_DETACH);
    fs::remove_all(session, ec);
    if (to_its_end) {
      EXPECT_FALSE(out.results.empty() || out.results.back().attack != "done")
          << "the attack script did not run to its end; the end of what it "
             "printed:\n"
          << out.log.substr(out.log.size() > 2000 ? out.log.size() - 2000 : 0)
          << "\nthe CLI's stderr:\n"
          << record.stderr_text.substr(0, 4000);
    }
    return out;
  }

  // As attacks.py marks each request: "@ptxb:atk:" + its name + "@".
  static std::string Marker(const std::string &attack) { return "@ptxb:atk:" + attack + "@"; }

  // Whether anything of `marker` reached the provider.
  bool Upstream(const std::string &marker) const {
    for (const ScriptedModel::Received &r : model_->received()) {
      if (absl::StrContains(r.body, marker) || absl::StrContains(r.target, marker)) return true;
    }
    return absl::StrContains(tap_->all_sent(), marker);
  }

  // The routes a provider may be sent, exactly (path and query).
  std::vector<std::string> AllowedTargets() const {
    switch (cli_->wire) {
      case agents::Wire::kAnthropicMessages:
        return {"/v1/messages", "/v1/messages?beta=true", "/v1/messages/count_tokens",
                "/v1/messages/count_tokens?beta=true"};
      case agents::Wire::kOpenAIResponses:
        return {"/v1/responses", "/v1/responses/input_tokens"};
      case agents::Wire::kGeminiGenerate:
        return {"/v1beta/models/pinned-model:streamGenerateContent?alt=sse",
                "/v1beta/models/pinned-model:streamGenerateContent",
                "/v1beta/models/pinned-model:generateContent",
                "/v1beta/models/pinned-model:countTokens"};
    }
    return {};
  }
  bool IsCounter(const std::string &target) const {
    return absl::StrContains(target, "count_tokens") || absl::StrContains(target, ":countTokens") ||
           absl::StrContains(target, "input_tokens");
  }
  const char *KeyHeader() const {
    return cli_->wire == agents::Wire::kAnthropicMessages ? "x-api-key: sk-session-test"
           : cli_->wire == agents::Wire::kOpenAIResponses ? "authorization: Bearer sk-session-test"
                                                          : "x-goog-api-key: sk-session-test";
  }

  // What holds of every session, whatever was tried in it: the provider
  // got POSTs on the pinned model's routes only, each with the gateway's
  // key, and nothing the agent injected, smuggled or made it fetch.
  void ExpectTheProviderSawOnlyWhatItMay() const {
    const std::vector<std::string> allowed = AllowedTargets();
    std::set<std::string> wrong;
    int keyless = 0;
    for (const ScriptedModel::Received &r : model_->received()) {
      if (r.method != "POST" ||
          std::find(allowed.begin(), allowed.end(), r.target) == allowed.end()) {
        wrong.insert(absl::StrCat(r.method, " ", r.target));
      }
      keyless += !absl::StrContains(r.headers, KeyHeader());
    }
    EXPECT_TRUE(wrong.empty()) << "the provider was called off the pinned model's routes:\n  "
                               << absl::StrJoin(wrong, "\n  ");
    EXPECT_EQ(keyless, 0) << "requests that reached the provider without the gateway's key";
    const std::string wire = tap_->all_sent();
    for (const char *never : kNeverUpstream) {
      const size_t at = wire.find(never);
      if (at == std::string::npos) continue;
      const size_t from = at > 80 ? at - 80 : 0;
      ADD_FAILURE() << "\"" << never << "\" reached the provider's wire: ..."
                    << absl::CHexEscape(wire.substr(from, 200)) << "...";
    }
  }

  // Each result against what it expects (attacks.py's docstring); one line
  // per attack that did not hold.
  void ExpectEachResult(const Attacked &a) const {
    std::vector<std::string> failed;
    for (const Result &r : a.results) {
      const bool refused = r.status && *r.status >= 400 && *r.status < 500;
      const bool answered = r.status && *r.status >= 200 && *r.status < 300;
      std::vector<std::string> why;
      if (r.expect == "refuse") {
        if (!refused) why.push_back("not refused");
        if (Upstream(Marker(r.attack))) why.push_back("reached the provider");
      } else if (r.expect == "strip" || r.expect == "pin") {
        if (!refused && !answered) why.push_back("no answer");
        if (refused && Upstream(Marker(r.attack))) why.push_back("refused, yet forwarded");
        const std::string forbid = r.line.value("forbid", "");
        for (const ScriptedModel::Received &got : model_->received()) {
          if (r.expect == "strip" && absl::StrContains(got.body, Marker(r.attack)) &&
              absl::StrContains(got.body, forbid)) {
            why.push_back(absl::StrCat("forwarded with ", forbid));
            break;
          }
        }
        // "pin": ExpectTheProviderSawOnlyWhatItMay holds the routes.
      } else if (r.expect == "probe") {
        if (r.status != 200) why.push_back("a normal call after the attacks before it failed");
        if (!Upstream(Marker(r.attack))) why.push_back("a normal call never reached the provider");
      } else if (r.expect == "413") {
        if (r.status != 413) why.push_back("a 40 MB body not refused as too large");
      }
      if (!why.empty()) {
        failed.push_back(absl::StrCat(r.attack, " (", r.expect, "): status ",
                                      r.status ? std::to_string(*r.status) : "none", "; ",
                                      absl::StrJoin(why, "; ")));
      }
    }
    EXPECT_TRUE(failed.empty()) << failed.size() << " of " << a.results.size()
                                << " attacks got through:\n  " << absl::StrJoin(failed, "\n  ");
  }

  // Per attack, what the provider billed and what the proxy charged (its
  // record of the calls, `calls`), where they differ: a failure's detail.
  std::string Accounts(const std::string &calls) const {
    std::map<std::string, std::pair<int64_t, int64_t>> by;  // billed, charged
    for (const ScriptedModel::Billed &b : model_->billed()) {
      by[b.attack.empty() ? "(the CLI's)" : b.attack].first += b.input_tokens + b.output_tokens;
    }
    for (absl::string_view line : absl::StrSplit(calls, '\n')) {
      const Json j = Json::parse(line, nullptr, false);
      if (!j.is_object()) continue;
      const std::string request = j.value("request", "");
      std::string attack = "(the CLI's)";
      if (const size_t at = request.find("@ptxb:atk:"); at != std::string::npos) {
        attack = request.substr(at + 10, request.find('@', at + 10) - at - 10);
      }
      by[attack].second +=
          j.value("input_tokens", int64_t{0}) + j.value("output_tokens", int64_t{0});
    }
    std::string out = "billed, charged:";
    for (const auto &[attack, t] : by) {
      if (t.first != t.second) absl::StrAppend(&out, "\n  ", attack, ": ", t.first, ", ", t.second);
    }
    return out;
  }

  // Runs `suite` in a session with the default budgets: each attack holds,
  // and the CLI goes on to write and evaluate its two kernels and finish.
  void ExpectAttacksHeldAndTheCliFinished(const std::string &suite, const std::string &id) {
    FakeScheduler scheduler;
    const Attacked a = Attack(suite, Task(id), scheduler);
    ASSERT_TRUE(a.done.has_agent()) << Ended(a.done);
    EXPECT_EQ(a.done.agent().end(), v1::AGENT_FINISHED) << a.done.agent().reason();
    EXPECT_EQ(scheduler.requests().size(), 2u) << "the CLI went on after the attacks";
    ExpectEachResult(a);
    ExpectTheProviderSawOnlyWhatItMay();
  }

  std::map<std::string, Result> ByName(const Attacked &a) const {
    std::map<std::string, Result> out;
    for (const Result &r : a.results) out[r.attack] = r;
    return out;
  }

  // The session's record of `name` ("" when there is none).
  static std::string RecordOf(const v1::CompleteRequest &done, const std::string &name) {
    const v1::AgentOutcome &o = done.has_agent() ? done.agent() : done.failure().agent_session();
    for (const v1::AgentRecord &r : o.records()) {
      if (r.name() == name) return r.content();
    }
    return "";
  }

  std::unique_ptr<ScriptedModel> model_;
  std::unique_ptr<testing::WireTap> tap_;
};

}  // namespace ptxbench::attack_testing

#endif  // PTXBENCH_TESTS_AGENT_ATTACK_FIXTURE_H_
