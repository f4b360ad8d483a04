// scheduler_bench: tasks completed per second (lease -> complete) and lease
// latency with many concurrent executors over loopback, against a real
// ptxbench-scheduler process, with a large queue of work waiting.
//
//   scheduler_bench [--executors 1000] [--queued 100000,1000000]
//                   [--seconds 20] [--warmup 3] [--tls]
//
// Each scenario starts a fresh scheduler, submits one experiment of `queued`
// one-turn trajectories (each is an LLM step, then an eval step), then runs
// `executors` simulated executors (60% gateways, 40% workers by default, so
// that eval tasks back up and neither kind waits for work to exist) on the gRPC
// callback API: Lease (long-poll) -> Complete -> Lease ..., or, as the real
// executors do (--next, the default), Complete asking for the next task in
// the same call and Lease only when it brought none. No heartbeats: each task
// is held for well under the lease TTL. Prints one table row per scenario:
// throughput over the measured window, lease latency percentiles (from
// asking for a task, by Lease or by Complete with next, to holding it) and
// the executors' idle time between tasks (from sending a task's Complete to
// holding the next task: with --next=false, Complete's round trip and then
// the Lease's latency). Every call
// carries the data directory's admin token, as every call to a scheduler
// must; --tls serves and calls over TLS (a CA made by scripts/make_certs.sh).
//
// The executors share the machine's cores with the scheduler, which real
// executors (on other nodes) do not: on a small machine the figures are the
// two competing. To see the scheduler alone, give it cores of its own, e.g.
// --scheduler_bin a script that runs `taskset -c 0,1 ptxbench-scheduler "$@"`
// and the bench under `taskset -c 2-15` (docs/DECISIONS.md, "Lease latency:
// the disk off the writer's path").
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <queue>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/channel.h"
#include "bench/bench_support.h"
#include "auth/token.h"
#include "common/file.h"
#include "common/flags.h"
#include "grpcpp/create_channel.h"
#include "process/run.h"
#include "ptxbench/v1/client.grpc.pb.h"
#include "ptxbench/v1/executor.grpc.pb.h"
#include "testing/child_process.h"
#include "testing/tls.h"
#include "testing/unused_port.h"

ABSL_FLAG(int, executors, 1000, "concurrent simulated executors");
ABSL_FLAG(std::string, queued, "100000,1000000", "trajectories queued per scenario");
ABSL_FLAG(int, seconds, 20, "measured window per scenario");
ABSL_FLAG(int, warmup, 3, "seconds before the window opens");
ABSL_FLAG(int, work_ms, 0,
          "simulated work per task between lease and complete (0 = saturate the scheduler)");
ABSL_FLAG(double, gateway_share, 0.6,
          "fraction of executors that are gateways; above 0.5 the eval queue never runs dry, "
          "so lease latency measures the scheduler, not waiting for work to exist");
ABSL_FLAG(int, channels, 8, "gRPC connections shared by the executors");
ABSL_FLAG(std::string, scheduler_bin, PTXB_SCHEDULER_BIN, "scheduler binary");
ABSL_FLAG(std::string, background_db, "",
          "start the scheduler on a copy of this database (e.g. one written by results_db)");
ABSL_FLAG(std::string, background, "",
          "run this ptxbench command against the scheduler over and over during the window, "
          "e.g. \"export bench-results --format csv\" (an --out folder is added) or "
          "\"report bench-results --by model\"");
ABSL_FLAG(std::string, cli_bin, PTXB_CLI_BIN, "ptxbench binary, for --background");
ABSL_FLAG(bool, tls, false, "TLS between the executors and the scheduler");
ABSL_FLAG(bool, next, true,
          "executors ask for their next task in Complete (CompleteRequest.next), as "
          "executor/executor_runner does; false: a Lease after every Complete");

namespace ptxbench::bench {
namespace {

namespace v1 = ::ptxbench::v1;
using Clock = std::chrono::steady_clock;

// Runs callbacks after a delay, on one thread: the executors' "work".
class DelayQueue {
 public:
  DelayQueue() : thread_([this] { Loop(); }) {}
  ~DelayQueue() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.SignalAll();
    thread_.join();
  }
  void After(std::chrono::milliseconds d, std::function<void()> fn) {
    {
      absl::MutexLock lock(&mu_);
      items_.push(Item{Clock::now() + d, seq_++, std::move(fn)});
    }
    cv_.SignalAll();
  }

 private:
  struct Item {
    Clock::time_point at;
    int64_t seq;
    std::function<void()> fn;
    bool operator>(const Item& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  void Loop() {
    while (true) {
      std::function<void()> fn;
      {
        absl::MutexLock lock(&mu_);
        while (!stop_ && (items_.empty() || items_.top().at > Clock::now())) {
          if (items_.empty()) {
            cv_.Wait(&mu_);
          } else {
            cv_.WaitWithTimeout(&mu_, absl::FromChrono(items_.top().at - Clock::now()));
          }
        }
        if (stop_) return;
        fn = items_.top().fn;
        items_.pop();
      }
      fn();  // unlocked: it may call After()
    }
  }
  absl::Mutex mu_;
  absl::CondVar cv_;  // an item was added or stop_ set
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> items_ ABSL_GUARDED_BY(mu_);
  int64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

struct Stats {
  std::atomic<bool> measuring{false};
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> completed{0};
  std::atomic<int64_t> errors{0};
  absl::Mutex mu;
  std::vector<double> lease_ms ABSL_GUARDED_BY(mu);  // measured window only
  std::vector<double> idle_ms ABSL_GUARDED_BY(mu);
};

// One executor: a chain of async calls, no thread of its own.
class Executor {
 public:
  Executor(v1::ExecutorService::Stub* stub, v1::ExecutorKind kind, Stats* stats,
           DelayQueue* work, int work_ms, bool next)
      : stub_(stub), kind_(kind), stats_(stats), work_(work), work_ms_(work_ms), next_(next) {}

  bool Register() {
    grpc::ClientContext ctx;
    v1::RegisterRequest req;
    req.set_kind(kind_);
    req.set_name("bench");
    req.mutable_capabilities()->set_serves_any_model(true);
    req.mutable_capabilities()->set_simulated(true);
    auto* gpu = req.mutable_capabilities()->add_gpus();
    gpu->set_model("Simulated H200");
    gpu->set_sm_arch("sm_90");
    gpu->set_healthy(true);
    v1::RegisterResponse resp;
    if (!stub_->Register(&ctx, req, &resp).ok()) return false;
    id_ = resp.executor_id();
    return true;
  }

  // `after_complete`: the poll follows a Complete that brought no task, so the
  // idle time (and, with next, the ask) began when that Complete was sent.
  void StartLease(bool after_complete = false) {
    if (stats_->stopping.load()) {
      done_.store(true);
      return;
    }
    ctx_ = std::make_unique<grpc::ClientContext>();
    lease_req_.set_executor_id(id_);
    lease_req_.set_wait_ms(5000);
    lease_resp_.Clear();
    const Clock::time_point now = Clock::now();
    if (!after_complete) idle_from_ = now;
    if (!after_complete || !next_) asked_ = now;
    stub_->async()->Lease(ctx_.get(), &lease_req_, &lease_resp_,
                          [this](grpc::Status s) { OnLease(s); });
  }

  bool done() const { return done_.load(); }

 private:
  void OnLease(const grpc::Status& status) {
    if (!status.ok() || !lease_resp_.has_task()) {
      if (!status.ok()) stats_->errors.fetch_add(1);
      StartLease();
      return;
    }
    Holding();
  }

  // A task is in lease_resp_: count the wait, then work on it.
  void Holding() {
    if (stats_->measuring.load()) {
      const Clock::time_point now = Clock::now();
      absl::MutexLock lock(&stats_->mu);
      stats_->lease_ms.push_back(std::chrono::duration<double, std::milli>(now - asked_).count());
      stats_->idle_ms.push_back(
          std::chrono::duration<double, std::milli>(now - idle_from_).count());
    }
    if (work_ms_ > 0) {
      work_->After(std::chrono::milliseconds(work_ms_), [this] { StartComplete(); });
    } else {
      StartComplete();
    }
  }

  void StartComplete() {
    const v1::Task& task = lease_resp_.task();
    complete_req_.Clear();
    complete_req_.set_executor_id(id_);
    *complete_req_.mutable_lease() = task.lease();
    FillSimulatedCompletion(task, &complete_req_);
    if (next_ && !stats_->stopping.load()) complete_req_.mutable_next()->set_executor_id(id_);
    ctx_ = std::make_unique<grpc::ClientContext>();
    idle_from_ = Clock::now();
    if (next_) asked_ = idle_from_;
    complete_resp_.Clear();
    stub_->async()->Complete(ctx_.get(), &complete_req_, &complete_resp_,
                             [this](grpc::Status s) {
                               if (s.ok() && stats_->measuring.load()) stats_->completed.fetch_add(1);
                               if (!s.ok()) stats_->errors.fetch_add(1);
                               if (s.ok() && complete_resp_.next().has_task()) {
                                 lease_resp_ = complete_resp_.next();
                                 Holding();
                                 return;
                               }
                               StartLease(/*after_complete=*/true);
                             });
  }

  v1::ExecutorService::Stub* stub_;
  v1::ExecutorKind kind_;
  Stats* stats_;
  DelayQueue* work_;
  int work_ms_;
  bool next_;
  std::string id_;
  std::unique_ptr<grpc::ClientContext> ctx_;
  v1::LeaseRequest lease_req_;
  v1::LeaseResponse lease_resp_;
  v1::CompleteRequest complete_req_;
  v1::CompleteResponse complete_resp_;
  // When it asked for the task it waits for (Lease sent, or Complete with
  // next), and when its idle time began (its last Complete sent, or the
  // poll that follows an empty one).
  Clock::time_point asked_;
  Clock::time_point idle_from_;
  std::atomic<bool> done_{false};
};

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p * (v.size() - 1));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

long RssMiB(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      long kb = 0;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(6, line.size() - 9)), &kb)) {
        return 0;
      }
      return kb / 1024;
    }
  }
  return 0;
}

double CpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> f = absl::StrSplit(stat.substr(stat.rfind(')') + 2), ' ');
  double ticks = std::stod(f[11]) + std::stod(f[12]);  // utime + stime
  return ticks / sysconf(_SC_CLK_TCK);
}

int RunScenario(int64_t queued) {
  const std::string dir = absl::StrCat("/tmp/ptxb_bench_", getpid(), "_", queued);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  if (!absl::GetFlag(FLAGS_background_db).empty()) {
    std::filesystem::copy_file(absl::GetFlag(FLAGS_background_db), dir + "/ptxbench.db");
  }
  const int port = testing::UnusedPort();
  const std::string address = absl::StrCat("127.0.0.1:", port);
  std::vector<std::string> scheduler_argv = {
      absl::GetFlag(FLAGS_scheduler_bin), "--listen", address, "--data-dir", dir,
      "--max-trajectories", "5000000", "--model-inflight-cap", "100000",
      "--stats-interval-s", "2"};
  auth::ChannelSecurity security;
  if (absl::GetFlag(FLAGS_tls)) {
    absl::StatusOr<testing::TestCertificates> certs = testing::MakeTestCertificates(dir + "/tls");
    if (!certs.ok()) {
      std::fprintf(stderr, "%s\n", std::string(certs.status().message()).c_str());
      return 1;
    }
    scheduler_argv.insert(scheduler_argv.end(),
                          {"--tls-cert", certs->server_cert, "--tls-key", certs->server_key});
    security.ca_pem = *ReadFile(certs->ca);
  }
  process::Process scheduler = testing::SpawnLogged(scheduler_argv, dir + "/scheduler.log");
  absl::StatusOr<std::string> token = WaitForScheduler(dir);
  if (!token.ok()) {
    std::fprintf(stderr, "%s\n", std::string(token.status().message()).c_str());
    return 1;
  }
  security.token = *token;

  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::ExecutorService::Stub>> stubs;
  for (int i = 0; i < absl::GetFlag(FLAGS_channels); ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // one connection each
    args.SetInt("ptxb.bench.channel", i);
    channels.push_back(auth::NewChannel(address, security, args));
    stubs.push_back(v1::ExecutorService::NewStub(channels.back()));
  }

  auto submit_start = Clock::now();
  {
    auto client = v1::ClientService::NewStub(channels[0]);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
    v1::SubmitExperimentRequest req;
    req.set_spec_json(absl::StrCat(
        R"({"name": "bench", "models": ["bench-model"], "definitions": ["gemm_n7168_k5120"],)",
        R"("prompt_tags": ["ptxb-no-hint"], "samples": )", queued,
        R"(, "num_turns": 1, "target_speedup": 1.5})"));
    req.set_spec_path("bench.json");
    v1::SubmitExperimentResponse resp;
    grpc::Status s = client->SubmitExperiment(&ctx, req, &resp);
    if (!s.ok()) {
      std::fprintf(stderr, "submit failed: %s\n%s", s.error_message().c_str(),
                   testing::Tail(dir + "/scheduler.log").c_str());
      return 1;
    }
  }
  const double submit_s = std::chrono::duration<double>(Clock::now() - submit_start).count();

  Stats stats;
  DelayQueue work;
  const int n = absl::GetFlag(FLAGS_executors);
  std::vector<std::unique_ptr<Executor>> executors;
  for (int i = 0; i < n; ++i) {
    executors.push_back(std::make_unique<Executor>(stubs[i % stubs.size()].get(),
                                                   (i % 100) < absl::GetFlag(FLAGS_gateway_share) * 100
                                                       ? v1::GATEWAY
                                                       : v1::WORKER,
                                                   &stats, &work,
                                                   absl::GetFlag(FLAGS_work_ms),
                                                   absl::GetFlag(FLAGS_next)));
    if (!executors.back()->Register()) {
      std::fprintf(stderr, "register failed\n");
      return 1;
    }
  }
  for (auto& e : executors) e->StartLease();
  std::this_thread::sleep_for(std::chrono::seconds(absl::GetFlag(FLAGS_warmup)));
  const double cpu0 = CpuSeconds(scheduler.pid());
  stats.measuring.store(true);
  auto t0 = Clock::now();
  std::atomic<bool> background_stop{false};
  std::atomic<int> background_runs{0};
  std::thread background;
  if (!absl::GetFlag(FLAGS_background).empty()) {
    background = std::thread([&] {
      while (!background_stop.load()) {
        const std::vector<std::string> command =
            absl::StrSplit(absl::GetFlag(FLAGS_background), ' ', absl::SkipEmpty());
        std::vector<std::string> argv = {absl::GetFlag(FLAGS_cli_bin), "--scheduler", address,
                                         "--data-dir", dir,
                                         "--timeout", "600"};
        argv.insert(argv.end(), command.begin(), command.end());
        const std::string out = absl::StrCat(dir, "/background-", background_runs.load());
        if (command.front() == "export") {
          argv.push_back("--out");
          argv.push_back(out);
        }
        process::RunOptions options;
        options.argv = argv;
        options.deadline = absl::Minutes(10);
        absl::StatusOr<process::RunResult> r = process::Run(options);
        std::filesystem::remove_all(out);
        if (!r.ok() || !r->ok()) {
          std::fprintf(stderr, "background command failed: %s\n",
                       r.ok() ? r->output.substr(0, 500).c_str() : r.status().ToString().c_str());
          return;
        }
        ++background_runs;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(absl::GetFlag(FLAGS_seconds)));
  stats.measuring.store(false);
  const double window = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = CpuSeconds(scheduler.pid()) - cpu0;
  // After the window: a background command still running is waited for.
  const int background_done = background_runs.load();
  background_stop.store(true);
  if (background.joinable()) background.join();
  if (!absl::GetFlag(FLAGS_background).empty()) {
    std::fprintf(stderr, "background: '%s' completed %d times during the window\n",
                 absl::GetFlag(FLAGS_background).c_str(), background_done);
  }
  const long rss = RssMiB(scheduler.pid());
  stats.stopping.store(true);

  std::vector<double> lat;
  std::vector<double> idle;
  {
    absl::MutexLock lock(&stats.mu);
    lat = stats.lease_ms;
    idle = stats.idle_ms;
  }
  const double rate = stats.completed.load() / window;
  std::printf("| %9lld | %9d | %7d | %8.1f | %9lld | %8.0f | %7.2f | %7.2f | %7.2f | %8.2f | %8.2f | %7.2f | %6ld | %6lld |\n",
              static_cast<long long>(queued), n, absl::GetFlag(FLAGS_work_ms), submit_s,
              static_cast<long long>(stats.completed.load()), rate, Percentile(lat, 0.5),
              Percentile(lat, 0.99), Percentile(lat, 0.999), Percentile(idle, 0.5),
              Percentile(idle, 0.99), cpu / window, rss,
              static_cast<long long>(stats.errors.load()));
  std::fflush(stdout);
  scheduler.Signal(SIGTERM);
  // Executors stop at their next lease; the scheduler answers parked ones
  // empty at shutdown.
  for (int i = 0; i < 100; ++i) {
    bool all = std::all_of(executors.begin(), executors.end(), [](auto& e) { return e->done(); });
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  scheduler.Wait();
  // The scheduler's own view of the window: ops and commits per second.
  std::string last_stats;
  {
    std::ifstream log(dir + "/scheduler.log");
    for (std::string line; std::getline(log, line);) {
      if (line.find("msg=stats") != std::string::npos) last_stats = line;
    }
  }
  std::fprintf(stderr, "scheduler: %s\n", last_stats.c_str());
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace ptxbench::bench

int main(int argc, char** argv) {
  ptxbench::DashedArgs args(argc, argv);
  absl::ParseCommandLine(args.argc(), args.argv());
  std::printf("| queued    | executors | work ms | submit s | completed | tasks/s  | p50 ms  | p99 ms  | p99.9ms | idle p50 | idle p99 | sched CPU | RSS MiB | errors |\n");
  std::printf("|-----------|-----------|---------|----------|-----------|----------|---------|---------|---------|----------|----------|---------|--------|--------|\n");
  for (absl::string_view q : absl::StrSplit(absl::GetFlag(FLAGS_queued), ',')) {
    int64_t queued = 0;
    if (!absl::SimpleAtoi(q, &queued)) return 2;
    if (int rc = ptxbench::bench::RunScenario(queued); rc != 0) return rc;
  }
  return 0;
}
