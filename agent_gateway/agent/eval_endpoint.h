#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_EVAL_ENDPOINT_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_EVAL_ENDPOINT_H_

// agent_gateway/agent/: the gateway's side of agent sessions (docs/AGENTS.md).
//
// The gateway's end of one session's evaluate socket (agent_tool/eval_wire.h):
// the rules an evaluate call follows before it becomes a turn.
//  - Bound to the session's workload: a request whose workload digest is not
//    the session's task file is refused, and not counted.
//  - One evaluation in flight: a second call while one waits is refused
//    ("wait for its feedback"), and not counted.
//  - Idempotent by action id: a repeated id (the command retries after a
//    broken connection) gets the reply of the evaluation it already asked
//    for, waiting for it if it is still running; it is not counted again.
//  - At most max_evaluations (0: no limit): the call after the last one is
//    refused with the count, and the session is told to end.
//  - UTF-8 text only: a source that is not is refused naming its first bad
//    byte, and not counted (the scheduler's request carries it as a proto
//    `string`).
// Refusals are exit code 2 with the reason; the kernel's own failures are
// the evaluation's feedback (exit 1). The time calls spend blocked in an
// evaluation is summed: it counts towards no time budget of the session.
// Requests are read as hostile input: bounded frames, the strict parser, at
// most kMaxConnections at once, a connection that sends nothing in 10 s
// dropped.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "agent_gateway/agent/unix_server.h"
#include "agent_tool/eval_wire.h"

namespace ptxbench::agent_gateway {

class EvalEndpoint {
 public:
  struct Settings {
    std::string workload_sha256;  // of the session's task file, as the agent sees it
    std::string workload_name;    // "gemm_n7168_k5120/242ddd1a-...", for refusals
    int64_t max_evaluations = 0;  // 0: no limit
    bool show_budget = false;     // the budget line after each evaluation's feedback
  };
  // Evaluates `source` as turn `turn` (1-based); blocks until the feedback,
  // and must return once the session ends (the destructor waits for it).
  // `profile`: the call was profile_kernel.
  using Evaluate = std::function<agent_tool::EvalReply(int turn, const std::string& source,
                                                       bool profile)>;
  // The session's budget in one line ("Budget: 4 of 20 evaluations, ...").
  using BudgetLine = std::function<std::string()>;

  static constexpr int kMaxConnections = 8;

  EvalEndpoint(Settings settings, Evaluate evaluate, BudgetLine budget);
  ~EvalEndpoint();  // stops serving, waits for the connections
  EvalEndpoint(const EvalEndpoint&) = delete;
  EvalEndpoint& operator=(const EvalEndpoint&) = delete;

  // The reply to one request. Thread-safe.
  agent_tool::EvalReply Handle(const agent_tool::EvalRequest& request);

  // Serves the unix socket at `path` (created 0600; the caller hands it to
  // the session's uid) until destroyed. False when it cannot listen.
  bool Listen(const std::string& path);

  int evaluations() const;          // turns asked for
  bool limit_reached() const;       // the session should end
  absl::Duration blocked() const;   // summed time calls waited on evaluations

 private:
  agent_tool::EvalReply Evaluated(const agent_tool::EvalRequest& request);
  void Answer(int fd);

  const Settings settings_;
  const Evaluate evaluate_;
  const BudgetLine budget_;

  mutable std::mutex mu_;
  std::condition_variable done_;
  int evaluations_ = 0;
  bool in_flight_ = false;
  bool limit_reached_ = false;
  absl::Duration blocked_;
  // By action id: the reply, once its evaluation ended.
  std::map<std::string, agent_tool::EvalReply> replies_;
  std::map<std::string, bool> running_;  // action ids being evaluated
  // Last: destroyed (stopped) first, while the members its connections use
  // are still alive.
  UnixSocketServer server_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_EVAL_ENDPOINT_H_
