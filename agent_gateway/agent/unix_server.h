#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_UNIX_SERVER_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_UNIX_SERVER_H_

// The server behind a session's sockets (eval_endpoint.h, model_proxy.h): a
// unix socket created 0600 (no moment in which another uid could connect;
// the session runner hands it to the session's uid), one thread per
// connection, at most `max_connections` at once. A connection over that is
// closed unanswered, so a flood of them gets nothing but closed sockets.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ptxbench::agent_gateway {

class UnixSocketServer {
 public:
  // Serves one connection; the server closes `fd` after it returns.
  using Handler = std::function<void(int fd)>;

  UnixSocketServer(int max_connections, Handler handler);
  // Stop().
  ~UnixSocketServer();
  UnixSocketServer(const UnixSocketServer&) = delete;
  UnixSocketServer& operator=(const UnixSocketServer&) = delete;

  // False when it cannot listen at `path` (too long, or bind/listen failed).
  bool Listen(const std::string& path);
  // Stops accepting, waits for the connections being served (the handler
  // must return once its owner is stopping), removes the socket.
  // Idempotent.
  void Stop();

 private:
  void Serve();

  const int max_connections_;
  const Handler handler_;
  std::mutex mu_;
  std::condition_variable done_;
  int connections_ = 0;
  bool stopping_ = false;
  int listener_ = -1;
  std::string path_;
  std::thread server_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_UNIX_SERVER_H_
