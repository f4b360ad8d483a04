#ifndef PTXBENCH_AGENT_GATEWAY_TESTING_FAKE_MODEL_SERVER_H_
#define PTXBENCH_AGENT_GATEWAY_TESTING_FAKE_MODEL_SERVER_H_

// For tests: a real HTTP server on loopback (cpp-httplib) standing in for a
// model provider: every POST gets the answer the test sets, and is recorded;
// GET /v1/models lists "served-model-1" (OpenAI-compatible servers).

#include <httplib.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway::testing_support {

class FakeModelServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  FakeModelServer() {
    server_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"data": [{"id": "served-model-1"}]})", "application/json");
    });
    server_.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      Handler h;
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(req);
        h = handler_;
      }
      h(req, res);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeModelServer() { Stop(); }
  void Stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  void Answer(Handler h) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(h);
  }
  httplib::Request LastRequest() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_.back();
  }
  std::vector<httplib::Request> Requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // Where the OpenAI-compatible API lives; root() for the others.
  std::string base_url() const { return root() + "/v1"; }
  std::string root() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  Handler handler_;
  std::vector<httplib::Request> requests_;
};

// A chat completion with `content`, reasoning text and usage (1000 in, 200 of
// them cached; 500 out, 100 of them reasoning).
inline std::string Completion(const std::string& content, const std::string& finish) {
  using nlohmann::json;
  return json{{"id", "chatcmpl-1"},
              {"choices",
               {{{"index", 0},
                 {"message",
                  {{"role", "assistant"}, {"content", content}, {"reasoning_content", "thinking..."}}},
                 {"finish_reason", finish}}}},
              {"usage",
               {{"prompt_tokens", 1000},
                {"completion_tokens", 500},
                {"prompt_tokens_details", {{"cached_tokens", 200}}},
                {"completion_tokens_details", {{"reasoning_tokens", 100}}}}}}
      .dump();
}

}  // namespace ptxbench::agent_gateway::testing_support

#endif  // PTXBENCH_AGENT_GATEWAY_TESTING_FAKE_MODEL_SERVER_H_
