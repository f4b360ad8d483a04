#ifndef PTXBENCH_AGENT_GATEWAY_TESTING_FAKE_MODEL_SERVER_H_
#define PTXBENCH_AGENT_GATEWAY_TESTING_FAKE_MODEL_SERVER_H_

// For tests and benchmarks: a real HTTP server on loopback (cpp-httplib)
// standing in for a model provider: every POST gets the answer the test sets,
// and is recorded with its arrival time; GET /v1/models lists
// "served-model-1" (OpenAI-compatible servers). The server counts the
// requests its handler is working on (in flight) and the most at once, so a
// test can hold answers back and see how many calls a gateway has open.
//
// Thread safety: every method may be called from any thread. The handler
// runs on the server's pool threads, many at once; a handler that blocks
// holds one pool thread, so Options::threads bounds the requests in flight.

#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "daemon/http_thread.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway::testing_support {

class FakeModelServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  using TimePoint = std::chrono::steady_clock::time_point;

  struct Options {
    // Pool threads: the most requests the handler can work on at once.
    int threads = 16;
    // Keep a copy of every request (Requests()); off for benchmarks, where
    // only counts and arrival times matter.
    bool keep_requests = true;
  };

  FakeModelServer() : FakeModelServer(Options()) {}
  explicit FakeModelServer(const Options& options) : keep_requests_(options.keep_requests) {
    // A client that hangs up (a killed gateway, a call timeout) must not
    // kill the test with SIGPIPE. A no-op handler rather than SIG_IGN: an
    // ignored signal would stay ignored in the processes the test starts.
    struct sigaction current = {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      struct sigaction ignore = {};
      ignore.sa_handler = [](int) {};
      sigaction(SIGPIPE, &ignore, nullptr);
    }
    const size_t threads = static_cast<size_t>(std::max(1, options.threads));
    server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // Keep connections open as providers do (httplib closes one after 5
    // requests by default: the churn leaves thousands of sockets in
    // TIME_WAIT and slows a benchmark run that follows another).
    server_.set_keep_alive_max_count(1 << 20);
    server_.set_keep_alive_timeout(60);
    server_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"data": [{"id": "served-model-1"}]})", "application/json");
    });
    server_.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      Handler h;
      {
        absl::MutexLock lock(&mu_);
        arrivals_.push_back(std::chrono::steady_clock::now());
        if (keep_requests_) requests_.push_back(req);
        h = handler_;
      }
      const int now = ++in_flight_;
      int peak = peak_in_flight_.load();
      while (now > peak && !peak_in_flight_.compare_exchange_weak(peak, now)) {
      }
      h(req, res);
      --in_flight_;
      ++answered_;
    });
    // httplib listens with a backlog of 5: a burst of connects (a gateway
    // starting hundreds of calls at once) would overflow it, and the calls
    // dropped would wait for TCP retransmissions, seconds to minutes.
    // Listening again on the same socket deepens its queue.
    int listen_fd = -1;
    server_.set_socket_options([&listen_fd](socket_t sock) {
      httplib::default_socket_options(sock);
      listen_fd = sock;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
    thread_.emplace(server_);
  }
  ~FakeModelServer() { Stop(); }

  // Stops serving; waits for handlers still running (release any that block
  // first).
  void Stop() {
    if (thread_) thread_->Stop();
  }
  void Answer(Handler h) {
    absl::MutexLock lock(&mu_);
    handler_ = std::move(h);
  }
  httplib::Request LastRequest() {
    absl::MutexLock lock(&mu_);
    return requests_.back();
  }
  std::vector<httplib::Request> Requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  // When each POST arrived, in arrival order.
  std::vector<TimePoint> Arrivals() {
    absl::MutexLock lock(&mu_);
    return arrivals_;
  }
  size_t RequestCount() {
    absl::MutexLock lock(&mu_);
    return arrivals_.size();
  }
  // Requests the handler is working on now; the most at once so far; the
  // requests whose handler returned.
  int InFlight() const { return in_flight_.load(); }
  int PeakInFlight() const { return peak_in_flight_.load(); }
  int64_t Answered() const { return answered_.load(); }
  // Polls until at least `n` requests are in flight; false on timeout.
  bool WaitForInFlight(int n, std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (in_flight_.load() < n) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Where the OpenAI-compatible API lives; root() for the others.
  std::string base_url() const { return root() + "/v1"; }
  std::string root() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  const bool keep_requests_;
  int port_ = 0;
  std::optional<daemon::HttpThread> thread_;
  absl::Mutex mu_;
  Handler handler_ ABSL_GUARDED_BY(mu_);
  std::vector<httplib::Request> requests_ ABSL_GUARDED_BY(mu_);
  std::vector<TimePoint> arrivals_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> in_flight_{0};
  std::atomic<int> peak_in_flight_{0};
  std::atomic<int64_t> answered_{0};
};

// A one-way latch for handlers that hold their answer until the test lets
// them go (or `limit` passes, so a failing test cannot hang the server).
class Gate {
 public:
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  // True when opened, false after `limit`.
  bool Wait(std::chrono::milliseconds limit) {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&open_), absl::FromChrono(limit));
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

// Token counts a fake answer reports, in the OpenAI sense: cached tokens are
// part of input, reasoning tokens part of output.
struct FakeUsage {
  int64_t input = 1000;
  int64_t cached = 200;
  int64_t output = 500;
  int64_t reasoning = 100;
};

// An OpenAI chat completion with `content`, reasoning text and `usage`.
inline std::string Completion(const std::string& content, const std::string& finish,
                              const FakeUsage& usage) {
  using nlohmann::json;
  return json{{"id", "chatcmpl-1"},
              {"choices",
               {{{"index", 0},
                 {"message",
                  {{"role", "assistant"}, {"content", content}, {"reasoning_content", "thinking..."}}},
                 {"finish_reason", finish}}}},
              {"usage",
               {{"prompt_tokens", usage.input},
                {"completion_tokens", usage.output},
                {"prompt_tokens_details", {{"cached_tokens", usage.cached}}},
                {"completion_tokens_details", {{"reasoning_tokens", usage.reasoning}}}}}}
      .dump();
}

// The same with the default usage (1000 in, 200 of them cached; 500 out, 100
// of them reasoning).
inline std::string Completion(const std::string& content, const std::string& finish) {
  return Completion(content, finish, FakeUsage());
}

// An Anthropic Messages answer: a thinking block and a text block.
// `stop_reason` is Anthropic's ("end_turn", "max_tokens", ...). Anthropic
// counts cache reads apart from input_tokens and has no reasoning count (the
// gateway then reports 0 reasoning tokens).
inline std::string AnthropicMessage(const std::string& text, const std::string& stop_reason,
                                    const FakeUsage& usage = FakeUsage()) {
  using nlohmann::json;
  return json{{"id", "msg_1"},
              {"type", "message"},
              {"role", "assistant"},
              {"content",
               {{{"type", "thinking"}, {"thinking", "thinking..."}},
                {{"type", "text"}, {"text", text}}}},
              {"stop_reason", stop_reason},
              {"usage",
               {{"input_tokens", usage.input - usage.cached},
                {"cache_read_input_tokens", usage.cached},
                {"output_tokens", usage.output}}}}
      .dump();
}

// A Gemini generateContent answer: a thought part and a text part.
// `finish_reason` is Gemini's ("STOP", "MAX_TOKENS", ...). Gemini counts
// thoughts apart from candidates.
inline std::string GeminiAnswer(const std::string& text, const std::string& finish_reason,
                                const FakeUsage& usage = FakeUsage()) {
  using nlohmann::json;
  return json{{"candidates",
               {{{"content",
                  {{"role", "model"},
                   {"parts",
                    {{{"text", "thinking..."}, {"thought", true}}, {{"text", text}}}}}},
                 {"finishReason", finish_reason},
                 {"index", 0}}}},
              {"usageMetadata",
               {{"promptTokenCount", usage.input},
                {"cachedContentTokenCount", usage.cached},
                {"candidatesTokenCount", usage.output - usage.reasoning},
                {"thoughtsTokenCount", usage.reasoning},
                {"totalTokenCount", usage.input + usage.output}}}}
      .dump();
}

}  // namespace ptxbench::agent_gateway::testing_support

#endif  // PTXBENCH_AGENT_GATEWAY_TESTING_FAKE_MODEL_SERVER_H_
