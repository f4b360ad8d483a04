// gateway_bench: what one real ptxbench-gateway costs per model call when
// many calls are in flight. A real scheduler, one real gateway (no
// --simulate) and an in-process fake OpenAI server that answers each request
// after a fixed latency; one experiment of one-turn trajectories whose
// answers hold no code (so each trajectory is exactly one model call and no
// worker is needed).
//
//   gateway_bench [--slots 1000] [--calls 10000] [--latency-ms 1000]
//                 [--idle-s 3] [--keep]
//
// Prints one table row: the most requests the fake server held at once
// (ideally --slots), calls answered per second over the run (ideally
// slots / latency), the gateway's CPU time per call (utime + stime from
// /proc/PID/stat over the run; net: less its idle rate, measured after the
// run with every slot back in its lease poll, times the run's length), its
// RSS idle and at its peak (VmHWM), and its threads.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "agent_gateway/testing/fake_model_server.h"
#include "common/flags.h"
#include "nlohmann/json.hpp"
#include "tests/cluster.h"

ABSL_FLAG(int, slots, 1000, "the gateway's --slots (model calls in flight)");
ABSL_FLAG(int, calls, 10000, "model calls (one-turn trajectories) in the run");
ABSL_FLAG(int, latency_ms, 1000, "how long the fake server takes to answer");
ABSL_FLAG(bool, keep, false, "keep the cluster's folder (database, logs) and print its path");
ABSL_FLAG(int, idle_s, 3, "seconds the gateway idles before the submission and after the run (its idle CPU rate)");

namespace ptxbench::bench {
namespace {

using agent_gateway::testing_support::Completion;
using agent_gateway::testing_support::FakeModelServer;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// utime + stime of a process, seconds (fields 14 and 15 of /proc/PID/stat,
// counted after the command name, which may hold spaces).
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) stime = std::atoll(field.c_str());
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A "Key:   N kB"-style value of /proc/PID/status (VmHWM, Threads), as a number.
long long StatusValue(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::atoll(line.c_str() + key.size() + 1);
  }
  return -1;
}

// The child of this process running `name` (the scheduler the cluster
// started), or -1.
pid_t ChildNamed(const std::string& name) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t open = text.find('('), close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    // comm is cut to 15 characters.
    if (name.rfind(text.substr(open + 1, close - open - 1), 0) != 0) continue;
    std::istringstream rest(text.substr(close + 2));
    std::string state;
    long long ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid()) return static_cast<pid_t>(std::atoll(pid.c_str()));
  }
  return -1;
}

void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;  // the children inherit it
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int Run() {
  const int slots = absl::GetFlag(FLAGS_slots);
  const int calls = absl::GetFlag(FLAGS_calls);
  const int latency_ms = absl::GetFlag(FLAGS_latency_ms);
  const int idle_s = absl::GetFlag(FLAGS_idle_s);
  if (slots < 1 || calls < 1 || latency_ms < 0 || idle_s < 1) {
    std::fprintf(stderr, "gateway_bench: --slots, --calls, --idle-s must be positive\n");
    return 2;
  }
  RaiseFileLimit();
  setenv("PTXB_BENCH_KEY", "sk-bench", 1);

  FakeModelServer::Options options;
  // httplib serves a connection per thread, idle keep-alive ones included:
  // a pool just above `slots` runs dry whenever the client holds more
  // connections than calls (a reconnect, the connection cache), and the
  // calls queued behind it wait for a keep-alive timeout. Real providers
  // have no such limit, so the pool is made ample.
  options.threads = 4 * slots + 64;
  options.keep_requests = false;
  FakeModelServer server(options);
  const std::string answer = Completion("No kernel this time.", "stop");
  server.Answer([answer, latency_ms](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(latency_ms));
    res.set_content(answer, "application/json");
  });

  auto cluster = std::make_unique<testing::Cluster>("gateway_bench");
  testing::Cluster& c = *cluster;
  if (!c.StartScheduler({"--model-inflight-cap", std::to_string(2 * slots + 100),
                         "--max-trajectories", std::to_string(std::max(calls, 100000))})) {
    std::fprintf(stderr, "the scheduler did not start:\n%s\n", c.SchedulerLogTail().c_str());
    return 1;
  }
  const std::string registry = c.WriteFile(
      "models.json",
      nlohmann::json{{"models",
                      {{"fake-model",
                        {{"provider", "openai"},
                         {"base_url", server.base_url()},
                         {"model_id", "served-model-1"},
                         {"api_key_env", "PTXB_BENCH_KEY"},
                         {"price", {{"input_per_mtok", 1.0}, {"output_per_mtok", 1.0}}}}}}}}
          .dump());
  const auto gateway_started = Clock::now();
  process::Process& gateway = c.AddRealGateway({"--models", registry, "--serve", "fake-model",
                                              "--slots", std::to_string(slots),
                                              "--call-timeout-s", "120"});
  const pid_t pid = gateway.pid();
  // Registered (and so leasing) once the scheduler lists its model.
  for (;;) {
    testing::CommandResult r = c.Cli({"models", "--output", "json"});
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    if (j.is_object() && j["models"].contains("fake-model")) break;
    if (SecondsSince(gateway_started) > 60) {
      std::fprintf(stderr, "the gateway did not register:\n%s\n",
                   testing::Tail(c.dir() + "/gateway0.log").c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double startup_s = SecondsSince(gateway_started);
  // Let every slot settle into its lease poll before the run.
  std::this_thread::sleep_for(std::chrono::seconds(idle_s));
  const double cpu_before = CpuSeconds(pid);
  const long long rss_idle_kb = StatusValue(pid, "VmRSS");
  const pid_t scheduler = ChildNamed("ptxbench-scheduler");
  const double scheduler_before = scheduler > 0 ? CpuSeconds(scheduler) : 0;

  const auto submitted = Clock::now();
  const std::string exp = c.Submit(c.WriteFile(
      "spec.json",
      nlohmann::json{{"name", "gateway-bench"},
                     {"models", {"fake-model"}},
                     {"definitions", {"gemm_n7168_k5120"}},
                     {"prompt_tags", {"ptxb-no-hint"}},
                     {"samples", calls},
                     {"num_turns", 1},
                     {"target_speedup", 1.0},
                     {"eval", "compile-only"}}
          .dump()));
  if (exp.empty()) {
    std::fprintf(stderr, "the submission failed:\n%s\n", c.SchedulerLogTail().c_str());
    return 1;
  }
  const double submit_s = SecondsSince(submitted);
  // Until the server answered every call and the scheduler recorded them;
  // a progress line a second on stderr.
  const double limit_s = 120.0 + 3.0 * calls / slots * latency_ms / 1000.0;
  Clock::time_point first_request{}, last_answer{}, next_report = Clock::now();
  bool done = false;
  long long threads_peak = 0;
  while (!done && SecondsSince(submitted) < limit_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    threads_peak = std::max(threads_peak, StatusValue(pid, "Threads"));
    if (first_request == Clock::time_point{} && server.RequestCount() > 0) {
      first_request = server.Arrivals().front();
    }
    if (Clock::now() >= next_report) {
      next_report += std::chrono::seconds(1);
      std::fprintf(stderr, "%6.1f s: %lld answered, %d in flight, gateway CPU %.2f s\n",
                   SecondsSince(submitted), static_cast<long long>(server.Answered()),
                   server.InFlight(), CpuSeconds(pid) - cpu_before);
    }
    if (server.Answered() < calls) continue;
    if (last_answer == Clock::time_point{}) last_answer = Clock::now();
    nlohmann::json status = c.Status(exp);
    done = status.is_object() && status["trajectories"]["terminal"] == calls;
  }
  const double run_s = std::chrono::duration<double>(last_answer - first_request).count();
  const double cpu_after = CpuSeconds(pid);
  const double scheduler_cpu = scheduler > 0 ? CpuSeconds(scheduler) - scheduler_before : 0;
  const double elapsed_s = SecondsSince(submitted);
  if (!done) {
    std::fprintf(stderr, "not finished after %.0f s: %lld of %d calls answered\n%s\n", limit_s,
                 static_cast<long long>(server.Answered()), calls,
                 testing::Tail(c.dir() + "/gateway0.log").c_str());
    return 1;
  }
  // The idle rate, measured after the run: every slot back in its poll.
  std::this_thread::sleep_for(std::chrono::seconds(idle_s));
  const double idle_rate = (CpuSeconds(pid) - cpu_after) / idle_s;
  const long long hwm_kb = StatusValue(pid, "VmHWM");
  const double cpu_run = cpu_after - cpu_before;
  const double cpu_net = cpu_run - idle_rate * elapsed_s;
  std::printf(
      "| slots | calls | latency ms | peak in flight | calls/s (ideal) | run s | CPU ms/call "
      "(net of idle) | idle CPU %% | startup s | RSS idle MiB | peak RSS MiB | threads |\n");
  std::printf(
      "|-------|-------|------------|----------------|-----------------|-------|------------"
      "-------------|------------|-----------|--------------|--------------|---------|\n");
  std::printf("| %5d | %5d | %10d | %14d | %7.0f (%5.0f) | %5.1f | %7.3f (%7.3f)       | %10.1f | "
              "%9.1f | %12.1f | %12.1f | %7lld |\n",
              slots, calls, latency_ms, server.PeakInFlight(), calls / run_s,
              latency_ms > 0 ? slots * 1000.0 / latency_ms : 0.0, run_s,
              1000.0 * cpu_run / calls, 1000.0 * cpu_net / calls, 100.0 * idle_rate, startup_s,
              rss_idle_kb / 1024.0, hwm_kb / 1024.0, threads_peak);
  std::fprintf(stderr,
               "submit took %.1f s; gateway CPU %.2f s over the run, %.2f s before it; "
               "scheduler CPU %.2f s over the run (%.3f ms/call)\n",
               submit_s, cpu_run, cpu_before, scheduler_cpu, 1000.0 * scheduler_cpu / calls);
  const std::string dir = c.dir();
  cluster.reset();  // stops the processes
  if (absl::GetFlag(FLAGS_keep)) {
    std::fprintf(stderr, "kept %s\n", dir.c_str());
  } else {
    std::filesystem::remove_all(dir);
  }
  return 0;
}

}  // namespace
}  // namespace ptxbench::bench

int main(int argc, char** argv) {
  ptxbench::DashedArgs args(argc, argv);
  absl::ParseCommandLine(args.argc(), args.argv());
  return ptxbench::bench::Run();
}
