// ptxbench-scheduler: owns all state (SQLite) and hands out work over gRPC.
#include <sys/prctl.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "auth/server.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/sd_notify.h"
#include "dashboard/server.h"
#include "daemon/status_server.h"
#include "daemon/stop_signals.h"
#include "process/process.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_builder.h"
#include "scheduler/access.h"
#include "scheduler/dispatcher.h"
#include "scheduler/metrics.h"
#include "scheduler/reader.h"
#include "scheduler/schema.h"
#include "scheduler/service.h"
#include "scheduler/tokens.h"
#include "storage/checkpointer.h"
#include "storage/maintenance.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "address to serve on (port 0 picks one)");
ABSL_FLAG(std::string, tls_cert, "", "TLS certificate chain (PEM) of the API; with --tls-key");
ABSL_FLAG(std::string, tls_key, "", "TLS private key (PEM) of --tls-cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "require client certificates signed by this CA (PEM); needs --tls-cert");
ABSL_FLAG(bool, insecure, false,
          "allow plaintext on an address other than loopback (a network you trust)");
ABSL_FLAG(std::string, data_dir, ".ptxbench", "folder of the database (ptxbench.db)");
ABSL_FLAG(std::vector<std::string>, dataset, {},
          "extra FlashInfer-Trace dataset folders (comma-separated)");
ABSL_FLAG(bool, prefer_dataset, false,
          "a dataset definition named like a bundled one replaces it (default: skipped)");
ABSL_FLAG(std::string, prompts_root, "", "prompt registry folder (default: bundled)");
ABSL_FLAG(std::string, prompts, "",
          "a PTXBench prompt hub (hub.json, or its folder) whose tags experiments may name");
ABSL_FLAG(int64_t, max_trajectories, 100'000, "largest experiment accepted");
ABSL_FLAG(int64_t, lease_ttl_ms, 30'000, "a lease not extended for this long expires");
ABSL_FLAG(int64_t, heartbeat_ms, 5'000, "heartbeat interval asked of executors");
ABSL_FLAG(int64_t, backoff_base_ms, 1'000, "first retry backoff");
ABSL_FLAG(int, stats_interval_s, 10, "seconds between structured stats log lines");
ABSL_FLAG(int, model_inflight_cap, 512, "LLM calls in flight per model, across gateways");
ABSL_FLAG(std::string, metrics_listen, "",
          "serve /healthz and Prometheus /metrics on [HOST:]PORT (a bare port: 127.0.0.1; "
          "docs/OBSERVABILITY.md)");
ABSL_FLAG(int, report_grace_s, 0,
          "after a stop signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT), grant no lease but take the reports of what executors hold for up "
          "to this long (until none is held; a second signal ends it): executors stopped by "
          "the same signal then lose nothing (deploy/slurm/)");
ABSL_FLAG(std::string, http_listen, "",
          "serve the live dashboard on HOST:PORT (port 0 picks one; docs/DASHBOARD.md)");

namespace ptxbench::scheduler {
namespace {

int Fail(const std::string& message) {
  std::cerr << "ptxbench-scheduler: " << message << "\n";
  return 1;
}

// One scrape: the writer thread's gauges (one op), the counters, the
// trajectory counts from the read connection, the file sizes.
std::string MetricsPage(Dispatcher& dispatcher, Reader& reader, const std::string& db_path) {
  SchedulerMetricsInput in;
  in.counters = &dispatcher.counters();
  if (absl::StatusOr<SchedulerGauges> gauges = dispatcher.Gauges(); gauges.ok()) {
    in.gauges = *std::move(gauges);
  }
  if (auto counts = reader.TrajectoriesByState(); counts.ok()) {
    in.trajectories = *std::move(counts);
  } else {
    LogWarning("metrics: cannot count trajectories", {{"error", counts.status().ToString()}});
  }
  in.lease_wait = dispatcher.lease_wait_seconds().Read();
  in.commit = dispatcher.commit_seconds().Read();
  std::tie(in.database_bytes, in.wal_bytes) = DatabaseFileSizes(db_path);
  return RenderSchedulerMetrics(in);
}

// The report grace (--report-grace-s): no new lease; what executors hold is
// still reported, and their goodbyes hand back what they never received,
// until no lease is held, the grace is over or a second signal comes. A
// Slurm job's scancel signals the scheduler and its executors at once;
// without this the evaluations and model answers they finish in their own
// drain would be reported to nobody and done again (answers paid twice).
void DrainLeases(Dispatcher& dispatcher, int grace_s, const sigset_t& signals) {
  if (grace_s <= 0) return;
  if (absl::Status s = dispatcher.StopLeasing(); !s.ok()) {
    LogWarning("cannot stop leasing", {{"error", s.ToString()}});
    return;
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(grace_s);
  int64_t logged = -1;
  while (true) {
    absl::StatusOr<SchedulerGauges> gauges = dispatcher.Gauges();
    if (!gauges.ok()) return;
    int64_t held = 0;
    for (const auto& [kind, n] : gauges->leased) held += n;
    if (held == 0) {
      LogInfo("no lease held");
      return;
    }
    if (held != logged) {
      LogInfo("waiting for the reports of leases held",
              {{"held", std::to_string(held)}, {"grace_s", std::to_string(grace_s)}});
      logged = held;
    }
    if (absl::Now() >= deadline) {
      LogWarning("report grace over; the leases still held expire and are run again",
                 {{"held", std::to_string(held)}});
      return;
    }
    timespec poll{0, 200'000'000};
    if (sigtimedwait(&signals, nullptr, &poll) >= 0) {
      LogWarning("second signal; the leases still held expire and are run again",
                 {{"held", std::to_string(held)}});
      return;
    }
  }
}

int Main() {
  InitLogging("scheduler");
  const std::filesystem::path dir = absl::GetFlag(FLAGS_data_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail(absl::StrCat("cannot create data dir ", dir.string(), ": ", ec.message()));
  const std::string db_path = (dir / "ptxbench.db").string();

  const std::string listen = absl::GetFlag(FLAGS_listen);
  absl::StatusOr<auth::ServerTls> tls = auth::LoadServerTls(
      {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
       absl::GetFlag(FLAGS_tls_client_ca)});
  if (!tls.ok()) return Fail(std::string(tls.status().message()));
  const bool insecure = absl::GetFlag(FLAGS_insecure);
  // Both listeners are checked before anything is created.
  if (absl::Status s = auth::CheckListenAddress("the API", listen, tls->tls(), insecure);
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (const std::string http = absl::GetFlag(FLAGS_http_listen); !http.empty()) {
    if (absl::Status s = auth::CheckListenAddress("the dashboard", http, tls->tls(), insecure);
        !s.ok()) {
      return Fail(std::string(s.message()));
    }
  }

  absl::StatusOr<std::unique_ptr<storage::Database>> db = OpenSchedulerDatabase(db_path);
  if (!db.ok()) return Fail(std::string(db.status().message()));
  {
    const absl::Time start = absl::Now();
    if (absl::Status sound = storage::CheckIntegrity(**db); !sound.ok()) {
      return Fail(std::string(sound.message()));
    }
    LogInfo("integrity check ok",
            {{"ms", absl::StrCat(absl::ToInt64Milliseconds(absl::Now() - start))}});
  }
  // Tokens before anything serves: the admin token of the data directory,
  // then every valid token into memory.
  auth::Authenticator authenticator;
  {
    TokenStore tokens(db->get());
    if (absl::Status s = EnsureAdminToken(tokens, dir.string(), absl::Now()); !s.ok()) {
      return Fail(s.ToString());
    }
    if (absl::Status s = LoadTokens(tokens, authenticator); !s.ok()) return Fail(s.ToString());
  }
  const Access access(&authenticator);
  absl::StatusOr<std::unique_ptr<storage::Database>> read_db = OpenReadOnly(db_path);
  if (!read_db.ok()) return Fail(std::string(read_db.status().message()));

  auto definitions = workloads::DefinitionRegistry::Load(
      {absl::GetFlag(FLAGS_dataset), absl::GetFlag(FLAGS_prefer_dataset)});
  if (!definitions.ok()) return Fail(std::string(definitions.status().message()));
  for (const std::string& p : (*definitions)->problems()) LogWarning("dataset file skipped", {{"problem", p}});
  std::string prompts_root = absl::GetFlag(FLAGS_prompts_root);
  if (prompts_root.empty()) prompts_root = PromptRegistry::BundledRoot();
  auto prompts = PromptRegistry::Load(prompts_root, absl::GetFlag(FLAGS_prompts));
  if (!prompts.ok()) return Fail(std::string(prompts.status().message()));

  DispatcherOptions options;
  options.core.lease_ttl = absl::Milliseconds(absl::GetFlag(FLAGS_lease_ttl_ms));
  options.core.heartbeat_interval = absl::Milliseconds(absl::GetFlag(FLAGS_heartbeat_ms));
  options.core.backoff_base = absl::Milliseconds(absl::GetFlag(FLAGS_backoff_base_ms));
  options.core.default_model_inflight_cap = absl::GetFlag(FLAGS_model_inflight_cap);
  Dispatcher dispatcher(*std::move(db), Clock::Real(), options);
  if (absl::Status s = dispatcher.Start(); !s.ok()) return Fail(s.ToString());
  Reader reader(*std::move(read_db));
  storage::Checkpointer checkpointer(db_path, absl::Milliseconds(250));
  if (absl::Status s = checkpointer.Start(); !s.ok()) return Fail(s.ToString());

  ExecutorServiceImpl executor_service(&dispatcher, &access);
  ClientServiceDeps deps;
  deps.dispatcher = &dispatcher;
  deps.reader = &reader;
  deps.access = &access;
  deps.authenticator = &authenticator;
  deps.definitions = definitions->get();
  deps.prompts = prompts->get();
  deps.limits.max_trajectories = absl::GetFlag(FLAGS_max_trajectories);
  ClientServiceImpl client_service(deps);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, auth::ServerCredentials(*tls), &port);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  builder.RegisterService(&executor_service);
  builder.RegisterService(&client_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    return Fail(absl::StrCat("cannot listen on ", absl::GetFlag(FLAGS_listen),
                             " (address in use or invalid)"));
  }
  // The live dashboard (docs/DASHBOARD.md), with the API's certificate: it
  // calls the client service in-process with each signed-in user's token, so
  // the same role checks apply. Its bound address goes to
  // DATA_DIR/dashboard.addr (port 0 case) before scheduler.addr says the
  // scheduler is up.
  std::unique_ptr<dashboard::DashboardServer> web;
  if (const std::string http = absl::GetFlag(FLAGS_http_listen); !http.empty()) {
    dashboard::DashboardOptions web_options;
    web_options.listen = http;
    web_options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
    web_options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
    grpc::ChannelArguments channel;
    channel.SetMaxReceiveMessageSize(64 << 20);
    web_options.scheduler = server->InProcessChannel(channel);
    absl::StatusOr<std::unique_ptr<dashboard::DashboardServer>> started =
        dashboard::DashboardServer::Start(std::move(web_options));
    if (!started.ok()) return Fail(started.status().ToString());
    web = *std::move(started);
    std::ofstream((dir / "dashboard.addr").string()) << web->address() << "\n";
    LogInfo("dashboard", {{"url", web->url()}});
  }
  std::unique_ptr<daemon::StatusServer> metrics_server;
  if (const std::string m = absl::GetFlag(FLAGS_metrics_listen); !m.empty()) {
    absl::StatusOr<std::unique_ptr<daemon::StatusServer>> started = daemon::StatusServer::Start(
        m, {[&dispatcher]() { return dispatcher.Gauges().status(); },
            [&dispatcher, &reader, &db_path] { return MetricsPage(dispatcher, reader, db_path); }});
    if (!started.ok()) return Fail(std::string(started.status().message()));
    metrics_server = *std::move(started);
    // Tests read the bound address from here (port 0 case).
    std::ofstream((dir / "metrics.addr").string()) << metrics_server->address() << "\n";
    LogInfo("metrics", {{"address", metrics_server->address()}});
  }
  std::string address = absl::StrCat(listen.substr(0, listen.rfind(':')), ":", port);
  // Tests and `ptxbench up` read the bound address from here (port 0 case).
  std::ofstream((dir / "scheduler.addr").string()) << address << "\n";
  LogInfo("listening", {{"address", address},
                        {"database", db_path},
                        {"tls", !tls->tls() ? "off"
                                : tls->client_ca_pem.empty() ? "on"
                                                             : "on, client certificates required"}});
  // Under systemd (Type=notify, deploy/systemd/): up means serving.
  if (absl::Status s = SdNotify(absl::StrCat("READY=1\nSTATUS=serving on ", address)); !s.ok()) {
    LogWarning("cannot tell the service manager", {{"why", std::string(s.message())}});
  }
  if (!tls->tls() && !auth::IsLoopbackAddress(address)) {
    LogWarning("serving plaintext beyond loopback (--insecure): tokens, prompts and results "
               "cross the network unencrypted",
               {{"address", address}});
  }

  // A stop signal: stop taking calls, let running ones finish, close.
  const sigset_t signals = process::StopSignalSet();
  // Until then, a structured health/metrics line every --stats-interval-s.
  int signal_number = -1;
  storage::WriteQueue::Stats last;
  const int interval_s = absl::GetFlag(FLAGS_stats_interval_s);
  while (signal_number < 0) {
    timespec timeout{interval_s, 0};
    signal_number = sigtimedwait(&signals, nullptr, &timeout);
    if (signal_number >= 0) break;
    storage::WriteQueue::Stats now = dispatcher.GetStats();
    const int64_t commits = now.commits - last.commits, ops = now.ops - last.ops;
    LogInfo("stats", {{"ops_per_s", std::to_string(ops / interval_s)},
                      {"commits_per_s", std::to_string(commits / interval_s)},
                      {"ops_per_commit", std::to_string(commits ? ops / commits : 0)},
                      {"largest_batch", std::to_string(now.largest_batch)},
                      {"failed_ops", std::to_string(now.failed_ops - last.failed_ops)}});
    last = now;
  }
  LogInfo("shutting down", {{"signal", std::to_string(signal_number)}});
  (void)SdNotify("STOPPING=1");
  DrainLeases(dispatcher, absl::GetFlag(FLAGS_report_grace_s), signals);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  dispatcher.Stop();
  checkpointer.Stop();
  LogInfo("stopped");
  return 0;
}

}  // namespace
}  // namespace ptxbench::scheduler

int main(int argc, char** argv) {
  // No process of the same uid may read this one's memory or environment
  // (API keys, tokens): ptrace and /proc/<pid>/{mem,environ} are refused.
  prctl(PR_SET_DUMPABLE, 0);
  // Block the stop signals in every thread; main waits for them with sigwait.
  ptxbench::daemon::BlockStopSignals();
  absl::SetProgramUsageMessage(
      "ptxbench-scheduler --listen HOST:PORT --data-dir DIR [--tls-cert F --tls-key F]\n"
      "Owns the experiment database and serves the client and executor APIs.");
  ptxbench::DashedArgs args(argc, argv);
  absl::ParseCommandLine(args.argc(), args.argv());
  return ptxbench::scheduler::Main();
}
