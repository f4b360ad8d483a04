// submit_bench: what submitting a big experiment costs as the database grows,
// and what it costs everyone else meanwhile. Against a real
// ptxbench-scheduler process on a fresh data directory:
//
//   submit_bench [--submits 10] [--trajectories 100000] [--leasers 4]
//
// submits `submits` experiments of `trajectories` trajectories each (2
// models x 2 definitions x 1 prompt tag x trajectories/4 samples, 5 turns),
// one after another, each with the `ptxbench submit` command a user runs
// (its default timeout), while `leasers` simulated executors lease and
// complete tasks without pause (gateways answering the model steps, workers
// passing the evaluations). Prints a row per submit: its wall time, the
// trajectories already in the database, and the lease latency (from asking
// to holding a task, over gRPC) while it ran: median, p99, max. A first
// experiment of `trajectories`/5 gives the leasers work from the start. Then,
// the leasers stopped, `ptxbench status` of the first experiment, 50 times,
// as whole CLI processes, right after the last submit and 10 s later.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "auth/channel.h"
#include "bench/bench_support.h"
#include "auth/token.h"
#include "common/file.h"
#include "grpcpp/create_channel.h"
#include "nlohmann/json.hpp"
#include "process/run.h"
#include "ptxbench/v1/executor.grpc.pb.h"
#include "scheduler/store/schema.h"
#include "storage/database.h"
#include "testing/child_process.h"
#include "testing/unused_port.h"

ABSL_FLAG(int, submits, 10, "experiments submitted one after another");
ABSL_FLAG(int, trajectories, 100000, "trajectories per experiment (a multiple of 4)");
ABSL_FLAG(int, leasers, 4, "simulated executors leasing and completing meanwhile");
ABSL_FLAG(int, hold_s, 0, "keep the scheduler this long at the end, to look at it");
ABSL_FLAG(std::string, scheduler_bin, PTXB_SCHEDULER_BIN, "scheduler binary");
ABSL_FLAG(std::string, cli_bin, PTXB_CLI_BIN, "ptxbench binary");

namespace ptxbench::bench {
namespace {

namespace v1 = ::ptxbench::v1;
using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// Leases stamped with when they were asked for, for the windows of submits.
struct Leases {
  absl::Mutex mu;
  std::vector<std::pair<Clock::time_point, double>> asked_ms ABSL_GUARDED_BY(mu);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> errors{0};
};

void Lease(v1::ExecutorService::Stub* stub, v1::ExecutorKind kind, Leases* out) {
  std::string id;
  {
    grpc::ClientContext ctx;
    v1::RegisterRequest req;
    req.set_kind(kind);
    req.set_name("submit-bench");
    req.mutable_capabilities()->set_serves_any_model(true);
    req.mutable_capabilities()->set_simulated(true);
    auto* gpu = req.mutable_capabilities()->add_gpus();
    gpu->set_model("Simulated H100");
    gpu->set_sm_arch("sm_90");
    gpu->set_healthy(true);
    v1::RegisterResponse resp;
    if (!stub->Register(&ctx, req, &resp).ok()) {
      out->errors.fetch_add(1);
      return;
    }
    id = resp.executor_id();
  }
  while (!out->stop.load()) {
    grpc::ClientContext ctx;
    v1::LeaseRequest req;
    req.set_executor_id(id);
    req.set_wait_ms(500);
    v1::LeaseResponse resp;
    const Clock::time_point asked = Clock::now();
    if (!stub->Lease(&ctx, req, &resp).ok()) {
      out->errors.fetch_add(1);
      continue;
    }
    if (!resp.has_task()) continue;  // a poll that found nothing waited by design
    {
      absl::MutexLock lock(&out->mu);
      out->asked_ms.emplace_back(asked, Ms(Clock::now() - asked));
    }
    grpc::ClientContext complete_ctx;
    v1::CompleteRequest complete;
    complete.set_executor_id(id);
    *complete.mutable_lease() = resp.task().lease();
    FillSimulatedCompletion(resp.task(), &complete);
    v1::CompleteResponse done;
    if (!stub->Complete(&complete_ctx, complete, &done).ok()) out->errors.fetch_add(1);
  }
}

absl::StatusOr<process::RunResult> RunCli(const std::vector<std::string>& argv) {
  process::RunOptions options;
  options.argv = argv;
  options.deadline = absl::Minutes(10);  // the CLI's own timeout is what counts
  return process::Run(options);
}

// A scheduler on `dir`, with `leasers` simulated executors working against it.
class Fleet {
 public:
  Fleet(const std::string& dir, Leases* leases) : dir_(dir), leases_(leases) {}
  ~Fleet() { Stop(); }

  absl::Status Start() {
    address_ = absl::StrCat("127.0.0.1:", testing::UnusedPort());
    std::filesystem::remove(dir_ + "/scheduler.addr");  // the last one's
    scheduler_ = testing::SpawnLogged(
        {absl::GetFlag(FLAGS_scheduler_bin), "--listen", address_, "--data-dir", dir_,
         "--max-trajectories", "100000000", "--model-inflight-cap", "100000"},
        dir_ + "/scheduler.log");
    absl::StatusOr<std::string> token = WaitForScheduler(dir_);
    if (!token.ok()) return token.status();
    auth::ChannelSecurity security;
    security.token = *token;
    stub_ = v1::ExecutorService::NewStub(
        auth::NewChannel(address_, security, grpc::ChannelArguments()));
    leases_->stop.store(false);
    for (int i = 0; i < absl::GetFlag(FLAGS_leasers); ++i) {
      leasers_.emplace_back(Lease, stub_.get(), i % 2 == 0 ? v1::GATEWAY : v1::WORKER, leases_);
    }
    return absl::OkStatus();
  }
  void StopLeasers() {
    leases_->stop.store(true);
    for (std::thread& t : leasers_) t.join();
    leasers_.clear();
  }
  void Stop() {
    StopLeasers();
    if (!scheduler_.running()) return;
    // A graceful stop runs what is queued first; a build that queued hours
    // of work (the old one, behind its timed-out calls) is killed at 30 s.
    scheduler_.Signal(SIGTERM);
    for (int i = 0; i < 300 && !scheduler_.TryWait(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (scheduler_.running()) scheduler_.Kill();
  }
  std::vector<std::string> Cli(std::vector<std::string> args) const {
    std::vector<std::string> argv = {absl::GetFlag(FLAGS_cli_bin), "--scheduler", address_,
                                     "--data-dir", dir_};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  const std::string& address() const { return address_; }
  pid_t pid() const { return scheduler_.pid(); }

 private:
  const std::string dir_;
  Leases* leases_;
  std::string address_;
  process::Process scheduler_;
  std::unique_ptr<v1::ExecutorService::Stub> stub_;
  std::vector<std::thread> leasers_;
};

// Runs a CLI command, prints its row: wall time and the leases meanwhile.
bool TimedRow(const std::string& label, int64_t before, const std::vector<std::string>& argv,
              Leases& leases) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<process::RunResult> run = RunCli(argv);
  const Clock::time_point end = Clock::now();
  const bool ok = run.ok() && run->ok();
  if (!ok) {
    std::fprintf(stderr, "%s failed: %s\n", label.c_str(),
                 run.ok() ? run->output.c_str() : run.status().ToString().c_str());
  }
  std::vector<double> during;
  {
    absl::MutexLock lock(&leases.mu);
    for (const auto& [asked, ms] : leases.asked_ms) {
      if (asked >= start && asked <= end) during.push_back(ms);
    }
  }
  std::printf("| %s | %lld | %.2f | %zu | %.1f | %.1f | %.1f |\n", label.c_str(),
              static_cast<long long>(before), Ms(end - start) / 1000, during.size(),
              Percentile(during, 0.5), Percentile(during, 0.99), Percentile(during, 1.0));
  std::fflush(stdout);
  return ok;
}

// Turns experiment `name`'s trajectories into ones that `extend` (hit their
// turn limit) or `retry --failed api` (failed by the model's API) resume,
// as the scheduler would have left them; run while it is stopped.
absl::Status Prepare(const std::string& db_path, const std::string& name, bool failed) {
  absl::StatusOr<std::unique_ptr<storage::Database>> db =
      storage::Database::Open(db_path, storage::Database::Options());
  if (!db.ok()) return db.status();
  const std::string experiment =
      absl::StrCat("(SELECT rowid FROM experiments WHERE name = '", name, "')");
  const std::string task_state = scheduler::SqlValue(
      failed ? scheduler::TaskState::kFailed : scheduler::TaskState::kDone);
  const std::string trajectory_state =
      scheduler::SqlValue(failed ? v1::FAILED : v1::LIMITS_EXCEEDED);
  return (*db)->Execute(absl::StrCat(
      "BEGIN; UPDATE tasks SET state = ", task_state, ", lease_id = '', executor = '' ",
      "WHERE experiment = ", experiment, " AND ", scheduler::LiveTaskCondition("state"), ";",
      "UPDATE trajectories SET state = ", trajectory_state, ", failure_class = ",
      failed ? static_cast<int>(v1::MODEL_API) : 0,
      failed ? "" : ", turns_completed = num_turns", " WHERE experiment = ", experiment,
      "; COMMIT;"));
}

int Main() {
  const std::string dir = absl::StrCat("/tmp/ptxb_submit_bench_", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Leases leases;
  Fleet fleet(dir, &leases);
  if (absl::Status started = fleet.Start(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  const int per = absl::GetFlag(FLAGS_trajectories);
  const int submits = absl::GetFlag(FLAGS_submits);
  std::printf("| write | trajectories before | wall s | leases | lease p50 ms | lease p99 ms | "
              "lease max ms |\n|---|---|---|---|---|---|---|\n");
  int failed = 0;
  for (int i = 0; i <= submits; ++i) {
    const std::string spec = absl::StrCat(dir, "/spec", i, ".json");
    WriteFile(spec, absl::StrCat(
                        R"({"name": "scale-)", i,
                        R"(", "models": ["bench-model-a", "bench-model-b"], )",
                        R"("definitions": ["gemm_n7168_k5120", "mha_with_lse_d128"], )",
                        R"("prompt_tags": ["ptxb-basic"], "samples": )",
                        i == 0 ? per / 20 : per / 4, R"(, "num_turns": 5, "target_speedup": 1.0})"))
        .IgnoreError();
    if (i == 0) {  // the leasers' work from the start
      absl::StatusOr<process::RunResult> run = RunCli(fleet.Cli({"submit", spec}));
      if (!run.ok() || !run->ok()) ++failed;
      continue;
    }
    failed += !TimedRow(absl::StrCat("submit ", i), per / 5 + (i - 1) * per,
                        fleet.Cli({"submit", spec}), leases);
  }
  const int64_t total = per / 5 + static_cast<int64_t>(submits) * per;
  fleet.StopLeasers();
  // Right after the last submit the machine is still writing it back (the
  // WAL into the database file, the file to disk). Measured then, and again
  // once the machine is quiet.
  for (const char* when : {"right after the last submit", "10 s later"}) {
    if (std::string(when) != "right after the last submit") {
      std::this_thread::sleep_for(std::chrono::seconds(10));
    }
    std::vector<double> status_ms;
    for (int i = 0; i < 50; ++i) {
      const Clock::time_point start = Clock::now();
      absl::StatusOr<process::RunResult> run = RunCli(fleet.Cli({"status", "scale-1"}));
      if (!run.ok() || !run->ok()) ++failed;
      status_ms.push_back(Ms(Clock::now() - start));
    }
    std::printf("\n`ptxbench status scale-1` %s (whole process, 50 runs): p50 %.1f ms, "
                "p99 %.1f ms\n",
                when, Percentile(status_ms, 0.5), Percentile(status_ms, 0.99));
  }
  if (submits >= 3) {
    // The other big writes, each of one experiment of `per` among them all.
    // The scheduler is stopped to make the last two experiments' states
    // what extend and retry resume, and started again.
    fleet.Stop();
    const std::string db = dir + "/ptxbench.db";
    for (const auto& [name, failed_api] :
         {std::pair{absl::StrCat("scale-", submits - 1), false},
          std::pair{absl::StrCat("scale-", submits - 2), true}}) {
      if (absl::Status prepared = Prepare(db, name, failed_api); !prepared.ok()) {
        std::fprintf(stderr, "%s\n", prepared.ToString().c_str());
        return 1;
      }
    }
    if (absl::Status started = fleet.Start(); !started.ok()) {
      std::fprintf(stderr, "%s\n", started.ToString().c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));  // the leasers at work
    std::printf("\n| write | trajectories in the database | wall s | leases | lease p50 ms | "
                "lease p99 ms | lease max ms |\n|---|---|---|---|---|---|---|\n");
    // cancel, extend and retry take an experiment's id, not its name.
    auto id_of = [&](int i) -> std::string {
      absl::StatusOr<process::RunResult> run =
          RunCli(fleet.Cli({"--output", "json", "status", absl::StrCat("scale-", i)}));
      const nlohmann::json status =
          run.ok() ? nlohmann::json::parse(run->output, nullptr, false) : nlohmann::json();
      return status.is_object() ? status.value("experiment", "") : "";
    };
    failed += !TimedRow(absl::StrCat("cancel scale-", submits, " (", per, " live)"), total,
                        fleet.Cli({"cancel", id_of(submits)}), leases);
    failed += !TimedRow(absl::StrCat("extend scale-", submits - 1, " to 6 turns"), total,
                        fleet.Cli({"extend", id_of(submits - 1), "--turns", "6"}), leases);
    failed += !TimedRow(absl::StrCat("retry scale-", submits - 2, " --failed api"), total,
                        fleet.Cli({"retry", id_of(submits - 2), "--failed", "api"}), leases);
  }
  std::printf("lease errors: %lld\n", static_cast<long long>(leases.errors.load()));
  if (absl::GetFlag(FLAGS_hold_s) > 0) {
    std::printf("holding: %s --scheduler %s --data-dir %s (pid %d)\n",
                absl::GetFlag(FLAGS_cli_bin).c_str(), fleet.address().c_str(), dir.c_str(),
                fleet.pid());
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(absl::GetFlag(FLAGS_hold_s)));
  }
  fleet.Stop();
  std::filesystem::remove_all(dir);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ptxbench::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return ptxbench::bench::Main();
}
