// One agent session run to its end (session.h).
#include "agent_gateway/agent/session.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent_gateway/agent/eval_endpoint.h"
#include "agent_gateway/agent/model_proxy.h"
#include "agent_gateway/agent/session_record.h"
#include "agent_gateway/agent/session_setup.h"
#include "agent_tool/eval_wire.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/utf8.h"
#include "nlohmann/json.hpp"
#include "sandbox/sandboxed_process.h"
#include "verdict/verdict.h"

namespace ptxbench::agent_gateway {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using agent_tool::EvalReply;
using namespace session_internal;  // NOLINT: this file's own internals

// How long the answers still streaming when a session ends may take to be
// read to their end; past it they are cut and charged their reservations.
constexpr absl::Duration kAnswerGrace = absl::Seconds(30);

v1::CompleteRequest Failure(v1::FailureClass klass, const std::string& message) {
  v1::CompleteRequest c;
  c.mutable_failure()->set_failure_class(klass);
  c.mutable_failure()->set_message(message);
  return c;
}

v1::AgentUsage Minus(const v1::AgentUsage& a, const v1::AgentUsage& b) {
  v1::AgentUsage d;
  d.mutable_usage()->set_input_tokens(a.usage().input_tokens() - b.usage().input_tokens());
  d.mutable_usage()->set_output_tokens(a.usage().output_tokens() - b.usage().output_tokens());
  d.mutable_usage()->set_reasoning_tokens(a.usage().reasoning_tokens() -
                                          b.usage().reasoning_tokens());
  d.mutable_usage()->set_cached_tokens(a.usage().cached_tokens() - b.usage().cached_tokens());
  d.set_cost_usd(a.cost_usd() - b.cost_usd());
  d.set_model_calls(a.model_calls() - b.model_calls());
  d.set_latency_ms(a.latency_ms() - b.latency_ms());
  return d;
}

// A pipe end the sandbox writes, and what was read of it (capped).
struct Capture {
  int read_fd = -1, write_fd = -1;
  std::string text;
  int64_t dropped = 0;
  ~Capture() {
    if (read_fd >= 0) close(read_fd);
    if (write_fd >= 0) close(write_fd);
  }
  bool Open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    read_fd = fds[0];
    write_fd = fds[1];
    return fcntl(read_fd, F_SETFL, O_NONBLOCK) == 0;
  }
  // Reads what is there; true when anything came.
  bool Drain(size_t cap) {
    bool any = false;
    char buffer[64 << 10];
    for (ssize_t n; (n = read(read_fd, buffer, sizeof(buffer))) > 0;) {
      any = true;
      const size_t keep = std::min(static_cast<size_t>(n), cap - std::min(cap, text.size()));
      text.append(buffer, keep);
      dropped += n - static_cast<ssize_t>(keep);
    }
    return any;
  }
};

class Session {
 public:
  Session(const SessionOptions& options, const v1::Task& task, const std::atomic<bool>& cancelled)
      : options_(options), task_(task), settings_(task.agent().settings()), cancelled_(cancelled) {}

  v1::CompleteRequest Run(SessionRecord* record);

 private:
  // Ends with `end` and `why` (it ran its course).
  v1::CompleteRequest Outcome(v1::AgentEnd end, const std::string& why);
  // The usage, evaluations and times of `o` as they stand.
  void FillUsage(v1::AgentOutcome* o);
  // Counts the time since the last sample as blocked when the agent could
  // do nothing but wait for its evaluation (see the definition).
  void SampleBlocked(sandbox::SandboxedProcess& process);
  EvalReply Evaluate(int turn, const std::string& source, bool profile);
  std::string BudgetLine() const;
  // Time the session has been running, less its time blocked in evaluations.
  absl::Duration Active() const;
  // Why the session must end now, if it must; nullopt while it goes on.
  std::optional<v1::CompleteRequest> Check(const absl::Time& last_output);
  v1::CompleteRequest Supervise(sandbox::SandboxedProcess& process, Capture& out, Capture& err);
  v1::CompleteRequest Exited(const sandbox::Outcome& outcome, const Capture& err);
  // Evaluates the kernel file as the agent left it, when it changed; why
  // it was not evaluated when it could not be ("" otherwise).
  std::string FinalEvaluation();

  const SessionOptions& options_;
  const v1::Task& task_;
  const v1::AgentSettings& settings_;
  const std::atomic<bool>& cancelled_;
  SessionFiles files_;
  absl::Time start_ = absl::Now();

  mutable std::mutex mu_;
  v1::AgentUsage reported_;     // the usage the scheduler has with turns
  bool evaluating_ = false;
  absl::Time eval_started_;
  absl::Duration blocked_;      // summed by SampleBlocked
  absl::Time last_sample_ = absl::Now();
  absl::Duration last_cpu_;
  absl::Time last_eval_end_ = absl::Now();
  bool target_met_ = false;
  bool lease_lost_ = false;
  std::string last_source_sha_;  // of the last kernel evaluated
  // When Check first saw a spent budget with no evaluation in flight.
  absl::Time spent_at_ = absl::InfiniteFuture();
  // The session is over: an evaluation still waiting gives up.
  std::atomic<bool> ending_{false};
  // Last, so destroyed first: the endpoint's connections (Evaluate) use
  // everything above, and the proxy.
  std::unique_ptr<ModelProxy> proxy_;
  std::unique_ptr<EvalEndpoint> endpoint_;
};

std::string Session::BudgetLine() const {
  const v1::AgentUsage t = proxy_->totals();
  std::string line = absl::StrCat("Budget: ", endpoint_->evaluations());
  if (settings_.max_evaluations() > 0) absl::StrAppend(&line, " of ", settings_.max_evaluations());
  absl::StrAppend(&line, " evaluations, ", t.usage().input_tokens() + t.usage().output_tokens(),
                  " of ", settings_.token_budget(), " tokens");
  if (settings_.max_cost_usd() > 0) {
    absl::StrAppend(&line, absl::StrFormat(", $%.2f of $%.2f", t.cost_usd(),
                                           settings_.max_cost_usd()));
  }
  if (settings_.max_model_calls() > 0) {
    absl::StrAppend(&line, ", ", t.model_calls(), " of ", settings_.max_model_calls(),
                    " model calls");
  }
  absl::StrAppend(&line, ", ", absl::ToInt64Minutes(Active()), " of ",
                  settings_.wall_time_s() / 60, " minutes.");
  return line;
}

absl::Duration Session::Active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return absl::Now() - start_ - blocked_;
}

// The wall-time budget stops only while the agent is blocked on an
// evaluation: one is in flight, no model call was admitted since it began
// (nor is one still streaming), and the session's processes use at most a
// quarter of a CPU. An agent that starts an evaluation in the background and
// goes on working, with its model or its shell, spends its time; a CLI
// waiting on its evaluate tool does not.
void Session::SampleBlocked(sandbox::SandboxedProcess& process) {
  const absl::Time now = absl::Now();
  const absl::Duration since = now - last_sample_;
  if (since < absl::Milliseconds(250)) return;
  const absl::Duration cpu = process.CpuTime();
  const bool idle = cpu - last_cpu_ <= since / 4;
  last_cpu_ = cpu;
  last_sample_ = now;
  const bool model_busy = proxy_->in_flight() > 0;
  const absl::Time admitted = proxy_->last_call_admitted();
  std::lock_guard<std::mutex> lock(mu_);
  if (evaluating_ && idle && !model_busy && admitted < eval_started_) blocked_ += since;
}

EvalReply Session::Evaluate(int turn, const std::string& source, bool profile) {
  v1::AgentEvalRequest request;
  *request.mutable_lease() = task_.lease();
  request.set_action_id(absl::StrCat("session-", task_.agent().session(), "-eval-", turn));
  request.set_kernel_source(source);
  request.set_profile(profile);
  request.set_wait_ms(5'000);
  v1::AgentUsage reported;  // what the scheduler will have once it takes the turn
  {
    std::lock_guard<std::mutex> lock(mu_);
    reported = proxy_->totals();
    *request.mutable_usage_since_last_eval() = Minus(reported, reported_);
    evaluating_ = true;
    eval_started_ = absl::Now();
    last_source_sha_ = Sha256Hex(source);
  }
  EvalReply reply{2, "refused: the session ended before its evaluation came back"};
  bool taken = false;  // the scheduler made the turn (and recorded its usage)
  const absl::Time deadline = absl::Now() + absl::Seconds(settings_.eval_wait_timeout_s());
  while (!cancelled_.load() && !ending_.load() && absl::Now() < deadline) {
    absl::StatusOr<v1::AgentEvalResponse> r = options_.agent_eval(request);
    taken |= r.ok();
    if (r.ok() && r->done()) {
      reply = {verdict::Correct(r->result()) ? 0 : 1, r->feedback()};
      std::lock_guard<std::mutex> lock(mu_);
      target_met_ |= verdict::TargetMet(r->result(), task_.agent().target_speedup());
      break;
    }
    if (r.ok()) continue;  // the long poll ended: ask again
    const absl::StatusCode code = r.status().code();
    // Only an answer that says "try again" is tried again (the call is
    // idempotent): a request the scheduler cannot take is refused at once,
    // not retried until eval_wait_timeout with the slot held.
    if (code != absl::StatusCode::kUnavailable && code != absl::StatusCode::kDeadlineExceeded &&
        code != absl::StatusCode::kAborted) {
      reply = {2, absl::StrCat("refused: ", r.status().message())};
      if (code == absl::StatusCode::kFailedPrecondition ||
          code == absl::StatusCode::kPermissionDenied) {
        std::lock_guard<std::mutex> lock(mu_);
        lease_lost_ = absl::StrContains(r.status().message(), "is not current");
      }
      break;
    }
    absl::SleepFor(absl::Seconds(1));  // the scheduler is away
  }
  if (absl::Now() >= deadline && reply.exit_code == 2 && !cancelled_.load()) {
    reply = {2, absl::StrCat("refused: no evaluation came back within ",
                             settings_.eval_wait_timeout_s(), " s; try again")};
  }
  std::lock_guard<std::mutex> lock(mu_);
  // A refused call recorded nothing: its calls' usage goes with the next.
  if (taken) reported_ = reported;
  evaluating_ = false;
  last_eval_end_ = absl::Now();
  return reply;
}

v1::CompleteRequest Session::Outcome(v1::AgentEnd end, const std::string& why) {
  v1::CompleteRequest c;
  v1::AgentOutcome* o = c.mutable_agent();
  o->set_end(end);
  o->set_reason(why);
  FillUsage(o);
  return c;
}

void Session::FillUsage(v1::AgentOutcome* o) {
  std::lock_guard<std::mutex> lock(mu_);
  const v1::AgentUsage total = proxy_->totals();
  *o->mutable_usage_since_last_eval() = Minus(total, reported_);
  *o->mutable_total() = total;
  o->set_evaluations(endpoint_->evaluations());
  o->set_blocked_ms(absl::ToInt64Milliseconds(blocked_));
  o->set_wall_ms(absl::ToInt64Milliseconds(absl::Now() - start_));
}

std::optional<v1::CompleteRequest> Session::Check(const absl::Time& last_output) {
  if (cancelled_.load()) return Failure(v1::INFRA, "the session's lease was revoked or the "
                                                   "gateway is stopping");
  bool evaluating, target_met, lease_lost;
  absl::Time last_eval_end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    evaluating = evaluating_;
    target_met = target_met_;
    lease_lost = lease_lost_;
    last_eval_end = last_eval_end_;
  }
  if (lease_lost) return Failure(v1::INFRA, "the scheduler no longer holds the session's lease");
  if (!evaluating && target_met && settings_.stop_at_target()) {
    return Outcome(v1::AGENT_TARGET_MET, "an evaluation met the target (stop_at_target)");
  }
  if (std::optional<v1::AgentEnd> spent = proxy_->spent(); spent && !evaluating) {
    // The answer that spent the budget may ask to evaluate the kernel it
    // wrote: the CLI has budget_grace_s to start that evaluation, which is
    // then waited for (an evaluation in flight is recorded whatever
    // happens). A CLI that asks the model again instead is refused and
    // exits; a refused call is no sign of that by itself, as the CLIs make
    // side calls (titles, next-speaker checks) beside their turn.
    if (spent_at_ == absl::InfiniteFuture()) spent_at_ = absl::Now();
    if (absl::Now() - spent_at_ >= absl::Seconds(settings_.budget_grace_s())) {
      return Outcome(*spent, proxy_->spent_reason());
    }
  }
  if (endpoint_->limit_reached() && !evaluating) {
    return Outcome(v1::AGENT_EVALUATION_LIMIT,
                   absl::StrCat("the ", settings_.max_evaluations(), " evaluations are used"));
  }
  if (Active() > absl::Seconds(settings_.wall_time_s())) {
    return Outcome(v1::AGENT_WALL_TIME, absl::StrCat("wall time of ", settings_.wall_time_s(),
                                                     " s reached (time in evaluations not "
                                                     "counted)"));
  }
  const absl::Time active =
      std::max({last_output, proxy_->last_activity(), last_eval_end});
  if (!evaluating && proxy_->in_flight() == 0 &&
      absl::Now() - active > absl::Seconds(settings_.stall_timeout_s())) {
    return Failure(v1::TERMINAL, absl::StrCat("stalled: no output, model call or evaluation for ",
                                              settings_.stall_timeout_s(), " s"));
  }
  return std::nullopt;
}

v1::CompleteRequest Session::Exited(const sandbox::Outcome& outcome, const Capture& err) {
  if (std::optional<v1::AgentEnd> spent = proxy_->spent()) {
    return Outcome(*spent, proxy_->spent_reason());  // the CLI stopped at the proxy's refusal
  }
  if (outcome.exited && outcome.exit_code == 0) {
    const std::string skipped = FinalEvaluation();
    return Outcome(v1::AGENT_FINISHED, absl::StrCat("the CLI exited on its own",
                                                    skipped.empty() ? "" : "; ", skipped));
  }
  std::string why = !outcome.setup_error.empty() ? absl::StrCat("sandbox: ", outcome.setup_error)
                    : outcome.memory_exceeded    ? "the session went over its memory limit"
                    : outcome.processes_exceeded ? "the session went over its process limit"
                    : outcome.exited ? absl::StrCat("the CLI exited with status ", outcome.exit_code)
                                     : absl::StrCat("the CLI died of signal ", outcome.term_signal);
  const std::string tail = err.text.substr(err.text.size() > 2000 ? err.text.size() - 2000 : 0);
  if (!tail.empty()) absl::StrAppend(&why, "; its last words: ", tail);
  return Failure(outcome.setup_error.empty() ? v1::TERMINAL : v1::INFRA, why);
}

std::string Session::FinalEvaluation() {
  if (settings_.final_evaluation() != "if-changed" || endpoint_->limit_reached()) return "";
  // The agent's file, read from outside its sandbox: a link it left there
  // would name a file of this machine. Not UTF-8, it is no kernel the
  // scheduler's request can carry (nor one the tool would have sent).
  absl::StatusOr<std::string> text = ReadUntrustedFile(files_.kernel, agent_tool::kMaxSource);
  if (text.ok() && !IsValidUtf8(*text)) {
    text = absl::InvalidArgumentError(absl::StrCat(fs::path(files_.kernel).filename().string(),
                                                   " is not UTF-8 text: ",
                                                   DescribeInvalidUtf8(*text)));
  }
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) return "";
    const std::string why(text.status().message());
    LogWarning("no final evaluation", {{"session", files_.dir}, {"why", why}});
    return absl::StrCat("its final kernel was not evaluated: ", why);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Sha256Hex(*text) == last_source_sha_) return "";
  }
  (void)Evaluate(endpoint_->evaluations() + 1, *text, /*profile=*/false);
  return "";
}

v1::CompleteRequest Session::Supervise(sandbox::SandboxedProcess& process, Capture& out,
                                       Capture& err) {
  absl::Time last_output = absl::Now();
  for (;;) {
    const bool ended = process.Poll();
    const bool said = out.Drain(options_.max_output_bytes);
    if (err.Drain(options_.max_output_bytes) || said) last_output = absl::Now();
    if (ended) return Exited(process.outcome(), err);
    SampleBlocked(process);
    if (std::optional<v1::CompleteRequest> end = Check(last_output)) {
      process.Kill();
      while (!process.Poll()) absl::SleepFor(absl::Milliseconds(5));
      return *end;
    }
    absl::SleepFor(options_.poll);
  }
}

v1::CompleteRequest Session::Run(SessionRecord* record) {
  const v1::AgentSession& s = task_.agent();
  const agents::AgentCli* cli = agents::FindAgentCli(s.settings().cli());
  if (cli == nullptr || cli->version != s.settings().cli_version()) {
    return Failure(v1::INFRA, absl::StrCat("this gateway does not run ", s.settings().cli(), " ",
                                           s.settings().cli_version()));
  }
  absl::StatusOr<ModelProxy::Upstream> upstream =
      UpstreamFor(*options_.registry, *cli, s.model());
  if (!upstream.ok()) return Failure(v1::TERMINAL, std::string(upstream.status().message()));
  if (options_.uids == nullptr) return Failure(v1::INFRA, "the gateway gave sessions no uids");
  if (options_.permits == nullptr) {
    return Failure(v1::INFRA, "the gateway gave sessions no call permits");
  }
  // Its own until the session ends: no two sessions at once share one.
  const sandbox::UidRange::Lease uid = options_.uids->Acquire();
  absl::StatusOr<SessionFiles> files = MakeSessionFiles(options_, task_, uid.uid());
  if (!files.ok()) return Failure(v1::INFRA, std::string(files.status().message()));
  files_ = *files;
  // A fix-it starter was evaluated already (error.log says how): a final
  // evaluation is only for a kernel the agent changed.
  if (!task_.agent().starter_kernel().empty()) {
    last_source_sha_ = Sha256Hex(task_.agent().starter_kernel());
  }
  proxy_ = std::make_unique<ModelProxy>(
      *upstream,
      ModelProxy::Budget{settings_.token_budget(), settings_.max_cost_usd(),
                         settings_.max_model_calls()},
      options_.permits);
  EvalEndpoint::Settings binding{files_.workload_sha256, s.definition(),
                                 settings_.max_evaluations(), settings_.show_budget()};
  endpoint_ = std::make_unique<EvalEndpoint>(
      binding,
      [this](int turn, const std::string& source, bool profile) {
        return Evaluate(turn, source, profile);
      },
      [this] { return BudgetLine(); });
  absl::StatusOr<agents::Launch> launch = LaunchFor(options_, *cli, s, files_);
  if (!proxy_->Listen(files_.model_socket) || !endpoint_->Listen(files_.eval_socket) ||
      !launch.ok()) {
    return Failure(v1::INFRA, "cannot open the session's sockets or write its CLI's settings");
  }
  if (absl::Status handed = HandOver(files_); !handed.ok()) {
    return Failure(v1::INFRA, std::string(handed.message()));
  }
  Capture out, err;
  if (!out.Open() || !err.Open()) return Failure(v1::INFRA, "cannot make the session's pipes");
  sandbox::SandboxedProcess::Spec spec;
  // Its view masks vendor libraries: the walk of each tree is the first
  // session's cost (docs/AGENTS.md), logged with the sandbox's start.
  const absl::Time setup = absl::Now();
  spec.policy = SessionPolicy(options_, *cli, files_, *launch);
  const absl::Duration view_time = absl::Now() - setup;
  // The relay first (it goes to the background once listening), then the CLI.
  spec.argv = {"/bin/sh", "-c",
               absl::StrCat("\"$0\" relay ", kRelayPort, " ", files_.model_socket,
                            " > /dev/null && exec \"$@\" < /dev/null"),
               options_.tool_binary};
  spec.argv.insert(spec.argv.end(), launch->argv.begin(), launch->argv.end());
  spec.fds = {{1, out.write_fd}, {2, err.write_fd}};
  absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> process =
      sandbox::SandboxedProcess::Start(spec);
  if (!process.ok()) return Failure(v1::INFRA, std::string(process.status().message()));
  const absl::Duration sandbox_time = absl::Now() - setup - view_time;
  close(out.write_fd);
  close(err.write_fd);
  out.write_fd = err.write_fd = -1;
  start_ = absl::Now();
  const long masked =
      std::count_if(spec.policy.mounts.begin(), spec.policy.mounts.end(),
                    [](const sandbox::Mount& m) { return m.kind == sandbox::Mount::Kind::kMask; });
  LogInfo("agent session started",
          {{"task", task_.lease().task_id()},
           {"cli", cli->name},
           {"session", std::to_string(s.session())},
           {"dir", files_.dir},
           {"uid", std::to_string(files_.uid)},
           {"view_ms", absl::StrFormat("%.1f", absl::ToDoubleMilliseconds(view_time))},
           {"masked", std::to_string(masked)},
           {"sandbox_ms", absl::StrFormat("%.1f", absl::ToDoubleMilliseconds(sandbox_time))}});
  v1::CompleteRequest result = Supervise(**process, out, err);
  ending_ = true;
  process->reset();
  // The calls still streaming are read to their end (or cut and charged
  // their reservations) before the totals are final.
  proxy_->Close(kAnswerGrace);
  if (record != nullptr) {
    *record = {files_.dir, out.text, err.text, out.dropped};
  }
  // What the session left goes with its end, whichever it was.
  v1::AgentOutcome* outcome = result.has_agent() ? result.mutable_agent()
                                                 : result.mutable_failure()->mutable_agent_session();
  FillUsage(outcome);
  for (v1::AgentRecord& r :
       SessionRecords({out.text, out.dropped, err.text, err.dropped}, proxy_->calls(),
                      files_.home, files_.workspace, {fs::path(files_.kernel).filename()})) {
    *outcome->add_records() = std::move(r);
  }
  return result;
}

}  // namespace

v1::CompleteRequest RunAgentSession(const SessionOptions& options, const v1::Task& task,
                                    const std::atomic<bool>& cancelled, SessionRecord* record) {
  if (!task.has_agent()) return Failure(v1::INFRA, "not an agent session");
  v1::CompleteRequest result;
  {
    Session session(options, task, cancelled);
    result = session.Run(record);
  }
  if (!options.keep_directory) {
    session_internal::RemoveSessionDirectory(session_internal::SessionDirectory(options, task));
  }
  return result;
}

std::vector<v1::AgentCliInstall> InstalledAgentClis(const std::string& clis_dir) {
  std::vector<v1::AgentCliInstall> out;
  for (const agents::AgentCli& cli : agents::PinnedAgentClis()) {
    // Installed at the pinned version, as npm recorded it.
    std::ifstream manifest(fs::path(clis_dir) / cli.npm_package / "package.json");
    const nlohmann::json package = nlohmann::json::parse(manifest, nullptr, false);
    if (!package.is_object() || package.value("version", "") != cli.version) continue;
    absl::StatusOr<std::string> sha256 =
        Sha256FileHex((fs::path(clis_dir) / cli.executable).string());
    if (!sha256.ok()) continue;
    v1::AgentCliInstall install;
    install.set_name(cli.name);
    install.set_version(cli.version);
    install.set_sha256(*std::move(sha256));
    out.push_back(std::move(install));
  }
  return out;
}

}  // namespace ptxbench::agent_gateway
