// What the model proxy adds to one model call (docs/AGENTS.md, "The model
// proxy"): the same streamed Anthropic Messages answer from a scripted model,
// asked for directly over TCP and through the proxy's unix socket (request
// policy, relay, usage accounting, record). Reports wall time per call and
// the process's CPU per call (all threads: the proxy works on its own).
//   build/bench/agent_proxy_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent_gateway/agent/model_proxy.h"
#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "testing/scripted_model.h"

namespace ptxbench::agent_gateway {
namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::string Request() {
  const std::string body =
      nlohmann::json{{"model", "claude-x"},
                     {"max_tokens", 4096},
                     {"stream", true},
                     {"messages", {{{"role", "user"}, {"content", std::string(8000, 'x')}}}}}
          .dump();
  return absl::StrCat("POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                      "Content-Type: application/json\r\nContent-Length: ",
                      body.size(), "\r\n\r\n", body);
}

// One request on a fresh connection, read to the end; the bytes read.
size_t Call(int fd, const std::string& request) {
  size_t got = 0;
  if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    char buffer[16384];
    for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) got += n;
  }
  close(fd);
  return got;
}

int Tcp(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  return fd;
}

int Unix(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.data(), path.size());
  connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  return fd;
}

void Run(benchmark::State& state, bool through_proxy) {
  testing::ScriptedModel model(agents::Wire::kAnthropicMessages, {});
  const std::string socket = absl::StrCat("/tmp/ptxb-proxy-bench-", getpid(), ".sock");
  ModelProxy::Upstream up;
  up.wire = agents::Wire::kAnthropicMessages;
  up.base_url = absl::StrCat("http://127.0.0.1:", model.port());
  up.key_headers = {"x-api-key: sk-bench"};
  up.model_id = "claude-pinned";
  auto proxy = std::make_unique<ModelProxy>(up, ModelProxy::Budget{int64_t{1} << 50});
  if (!proxy->Listen(socket)) state.SkipWithError("cannot listen");
  const std::string request = Request();
  const double cpu_start = CpuSeconds();
  for (auto _ : state) {
    const size_t got = Call(through_proxy ? Unix(socket) : Tcp(model.port()), request);
    if (got == 0) state.SkipWithError("no answer");
  }
  state.counters["cpu_us_per_call"] = benchmark::Counter(
      (CpuSeconds() - cpu_start) * 1e6 / static_cast<double>(state.iterations()));
}

void BM_ScriptedModelDirect(benchmark::State& state) { Run(state, false); }
void BM_ScriptedModelThroughProxy(benchmark::State& state) { Run(state, true); }
BENCHMARK(BM_ScriptedModelDirect)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScriptedModelThroughProxy)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ptxbench::agent_gateway

BENCHMARK_MAIN();
