#ifndef PTXBENCH_TESTING_WIRE_TAP_H_
#define PTXBENCH_TESTING_WIRE_TAP_H_

// A TCP relay on 127.0.0.1 in front of a test's upstream (a scripted model)
// that keeps the bytes each connection sent upstream, as they were on the
// wire. An HTTP server's parser hides what a proxy smuggled (httplib skips
// a header line that ends in a bare LF, so a request hidden in one never
// shows as a request); the bytes do not. Each connection is relayed both
// ways until both ends finished.

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::testing {

class WireTap {
 public:
  // Of each connection, the first this many bytes are kept.
  static constexpr size_t kKeptPerConnection = 4 << 20;

  explicit WireTap(int upstream_port);
  // Stops accepting, ends the connections, waits for their threads.
  ~WireTap();
  WireTap(const WireTap&) = delete;
  WireTap& operator=(const WireTap&) = delete;

  // 0 when it could not listen.
  int port() const { return port_; }
  // What each connection sent upstream so far, in the order they came.
  std::vector<std::string> sent() const;
  // All of it, joined (for "never contains").
  std::string all_sent() const;

 private:
  void Accept();
  void Relay(int client, size_t index);

  const int upstream_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::vector<std::string> sent_;  // guarded by mu_
  std::vector<int> open_;          // guarded by mu_: the sockets to shut at the end
  std::vector<std::thread> relays_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_WIRE_TAP_H_
