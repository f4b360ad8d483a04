#ifndef PTXBENCH_DAEMON_HTTP_THREAD_H_
#define PTXBENCH_DAEMON_HTTP_THREAD_H_

// An httplib server, already bound, served on a thread of its own: the one
// way ptxbench runs one (the status server, the dashboard, the model
// stand-ins of tests). The constructor returns once the server runs:
// httplib's stop() does nothing before that, so a server stopped right
// after it started (a daemon told to stop at once, a stand-in a test never
// calls) would otherwise wait for ever in the join.

#include <atomic>
#include <thread>

namespace httplib {
class Server;
}  // namespace httplib

namespace ptxbench::daemon {

class HttpThread {
 public:
  // `server` must outlive this object and be bound (bind_to_port or
  // bind_to_any_port).
  explicit HttpThread(httplib::Server& server);
  ~HttpThread();
  HttpThread(const HttpThread&) = delete;
  HttpThread& operator=(const HttpThread&) = delete;

  // Stops serving and waits for the handlers still running; idempotent.
  void Stop();

 private:
  httplib::Server& server_;
  std::atomic<bool> ended_{false};  // listen_after_bind returned
  std::thread thread_;
};

}  // namespace ptxbench::daemon

#endif  // PTXBENCH_DAEMON_HTTP_THREAD_H_
