#ifndef PTXBENCH_TESTING_EVAL_SOCKET_STUB_H_
#define PTXBENCH_TESTING_EVAL_SOCKET_STUB_H_

// A stand-in for the gateway's end of an agent session's evaluate socket
// (agent_tool/eval_wire.h): it records each request and answers it with a
// fixed reply, for tests of the evaluate tool and of real agent CLIs.

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent_tool/eval_wire.h"

namespace ptxbench::testing {

class EvalSocketStub {
 public:
  // Listens on `path` at once; answers every request with `reply`.
  EvalSocketStub(std::string path, agent_tool::EvalReply reply);
  ~EvalSocketStub();
  EvalSocketStub(const EvalSocketStub&) = delete;
  EvalSocketStub& operator=(const EvalSocketStub&) = delete;

  bool listening() const { return listener_ >= 0; }
  std::vector<agent_tool::EvalRequest> requests() const;

 private:
  void Serve();

  const std::string path_;
  const agent_tool::EvalReply reply_;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<agent_tool::EvalRequest> requests_;  // guarded by mu_
  std::thread server_;
};

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_EVAL_SOCKET_STUB_H_
