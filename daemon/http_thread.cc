#include "daemon/http_thread.h"

#include <httplib.h>

#include "absl/time/clock.h"

namespace ptxbench::daemon {

HttpThread::HttpThread(httplib::Server& server)
    : server_(server), thread_([this] {
        server_.listen_after_bind();
        ended_ = true;
      }) {
  // A server that cannot listen ends at once and may never be seen running.
  while (!server_.is_running() && !ended_) absl::SleepFor(absl::Milliseconds(1));
}

HttpThread::~HttpThread() { Stop(); }

void HttpThread::Stop() {
  if (!thread_.joinable()) return;
  server_.stop();
  thread_.join();
}

}  // namespace ptxbench::daemon
