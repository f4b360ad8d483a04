// ptxbench-scheduler: owns all state (SQLite) and hands out work over gRPC.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "auth/server.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/sd_notify.h"
#include "common/status_macros.h"
#include "daemon/start.h"
#include "daemon/status_server.h"
#include "daemon/stop_signals.h"
#include "dashboard/server.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_builder.h"
#include "process/process.h"
#include "scheduler/api/access.h"
#include "scheduler/api/service.h"
#include "scheduler/api/tokens.h"
#include "scheduler/read/reader.h"
#include "scheduler/state/dispatcher.h"
#include "scheduler/state/metrics.h"
#include "scheduler/store/schema.h"
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

using prompts::PromptRegistry;

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
  in.sync = dispatcher.sync_seconds().Read();
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

// Both listeners, before anything is created.
absl::Status CheckListeners(const auth::ServerTls& tls) {
  const bool insecure = absl::GetFlag(FLAGS_insecure);
  PTXB_RETURN_IF_ERROR(
      auth::CheckListenAddress("the API", absl::GetFlag(FLAGS_listen), tls.tls(), insecure));
  if (const std::string http = absl::GetFlag(FLAGS_http_listen); !http.empty()) {
    PTXB_RETURN_IF_ERROR(auth::CheckListenAddress("the dashboard", http, tls.tls(), insecure));
  }
  return absl::OkStatus();
}

// The database, opened and found sound.
absl::StatusOr<std::unique_ptr<storage::Database>> OpenCheckedDatabase(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<storage::Database> db, OpenSchedulerDatabase(path));
  const absl::Time start = absl::Now();
  PTXB_RETURN_IF_ERROR(storage::CheckIntegrity(*db));
  LogInfo("integrity check ok", {{"ms", absl::StrCat(absl::ToInt64Milliseconds(absl::Now() - start))}});
  return db;
}

// Tokens before anything serves: the admin token of the data directory,
// then every valid token into memory.
absl::Status LoadAuthentication(storage::Database* db, const std::string& dir,
                                auth::Authenticator& authenticator) {
  TokenStore tokens(db);
  PTXB_RETURN_IF_ERROR(EnsureAdminToken(tokens, dir, absl::Now()));
  return LoadTokens(tokens, authenticator);
}

// What specs name: the definitions (bundled and --dataset's) and prompts.
struct Catalog {
  std::unique_ptr<workloads::DefinitionRegistry> definitions;
  std::unique_ptr<PromptRegistry> prompts;
};
absl::StatusOr<Catalog> LoadCatalog() {
  Catalog c;
  PTXB_ASSIGN_OR_RETURN(c.definitions,
                        workloads::DefinitionRegistry::Load(
                            {absl::GetFlag(FLAGS_dataset), absl::GetFlag(FLAGS_prefer_dataset)}));
  for (const std::string& p : c.definitions->problems()) {
    LogWarning("dataset file skipped", {{"problem", p}});
  }
  std::string prompts_root = absl::GetFlag(FLAGS_prompts_root);
  if (prompts_root.empty()) prompts_root = PromptRegistry::BundledRoot();
  PTXB_ASSIGN_OR_RETURN(c.prompts, PromptRegistry::Load(prompts_root, absl::GetFlag(FLAGS_prompts)));
  return c;
}

DispatcherOptions DispatcherOptionsFromFlags() {
  DispatcherOptions options;
  options.core.lease_ttl = absl::Milliseconds(absl::GetFlag(FLAGS_lease_ttl_ms));
  options.core.heartbeat_interval = absl::Milliseconds(absl::GetFlag(FLAGS_heartbeat_ms));
  options.core.backoff_base = absl::Milliseconds(absl::GetFlag(FLAGS_backoff_base_ms));
  options.core.default_model_inflight_cap = absl::GetFlag(FLAGS_model_inflight_cap);
  return options;
}

// The gRPC API (executor and client services) on --listen; *port is the
// port bound.
absl::StatusOr<std::unique_ptr<grpc::Server>> StartApi(const auth::ServerTls& tls,
                                                       std::vector<grpc::Service*> services,
                                                       int* port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), auth::ServerCredentials(tls), port);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  for (grpc::Service* service : services) builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || *port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", absl::GetFlag(FLAGS_listen),
                                               " (address in use or invalid)"));
  }
  return server;
}

// The live dashboard (docs/DASHBOARD.md) of --http-listen (null when not
// asked for), with the API's certificate: it calls the client service
// in-process with each signed-in user's token, so the same role checks
// apply. Its bound address goes to DATA_DIR/dashboard.addr (port 0 case)
// before scheduler.addr says the scheduler is up.
absl::StatusOr<std::unique_ptr<dashboard::DashboardServer>> StartDashboard(
    grpc::Server& server, const std::filesystem::path& dir) {
  const std::string http = absl::GetFlag(FLAGS_http_listen);
  if (http.empty()) return nullptr;
  dashboard::DashboardOptions web_options;
  web_options.listen = http;
  web_options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  web_options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  grpc::ChannelArguments channel;
  channel.SetMaxReceiveMessageSize(64 << 20);
  web_options.scheduler = server.InProcessChannel(channel);
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<dashboard::DashboardServer> web,
                        dashboard::DashboardServer::Start(std::move(web_options)));
  std::ofstream((dir / "dashboard.addr").string()) << web->address() << "\n";
  LogInfo("dashboard", {{"url", web->url()}});
  return web;
}

// /healthz and /metrics on --metrics-listen (null when not asked for); the
// bound address goes to DATA_DIR/metrics.addr (tests, port 0).
absl::StatusOr<std::unique_ptr<daemon::StatusServer>> StartMetrics(
    Dispatcher& dispatcher, Reader& reader, const std::string& db_path,
    const std::filesystem::path& dir) {
  const std::string listen = absl::GetFlag(FLAGS_metrics_listen);
  if (listen.empty()) return nullptr;
  PTXB_ASSIGN_OR_RETURN(
      std::unique_ptr<daemon::StatusServer> server,
      daemon::StatusServer::Start(
          listen, {[&dispatcher]() { return dispatcher.Gauges().status(); },
                   [&dispatcher, &reader, db_path] { return MetricsPage(dispatcher, reader, db_path); }}));
  std::ofstream((dir / "metrics.addr").string()) << server->address() << "\n";
  LogInfo("metrics", {{"address", server->address()}});
  return server;
}

// Says the scheduler is up: DATA_DIR/scheduler.addr (tests and `ptxbench
// up` read the bound address there), the log, and systemd (Type=notify).
// The file comes last: whoever waits for it finds every start-up line
// already in the log.
void AnnounceServing(const std::filesystem::path& dir, const std::string& address,
                     const std::string& db_path, const auth::ServerTls& tls) {
  if (!tls.tls() && !auth::IsLoopbackAddress(address)) {
    LogWarning("serving plaintext beyond loopback (--insecure): tokens, prompts and results "
               "cross the network unencrypted",
               {{"address", address}});
  }
  LogInfo("listening", {{"address", address},
                        {"database", db_path},
                        {"tls", !tls.tls() ? "off"
                                : tls.client_ca_pem.empty() ? "on"
                                                            : "on, client certificates required"}});
  if (absl::Status s = SdNotify(absl::StrCat("READY=1\nSTATUS=serving on ", address)); !s.ok()) {
    LogWarning("cannot tell the service manager", {{"why", std::string(s.message())}});
  }
  std::ofstream((dir / "scheduler.addr").string()) << address << "\n";
}

// `busy` as a share of `interval_s` seconds, two decimals.
std::string Share(absl::Duration busy, int interval_s) {
  return absl::StrFormat("%.2f", absl::ToDoubleSeconds(busy) / interval_s);
}

// Until a stop signal (returned), a structured health line every
// --stats-interval-s.
int LogStatsUntilStopped(Dispatcher& dispatcher, const sigset_t& signals) {
  storage::WriteQueue::Stats last;
  const int interval_s = absl::GetFlag(FLAGS_stats_interval_s);
  while (true) {
    timespec timeout{interval_s, 0};
    if (int signal_number = sigtimedwait(&signals, nullptr, &timeout); signal_number >= 0) {
      return signal_number;
    }
    storage::WriteQueue::Stats now = dispatcher.GetStats();
    const int64_t commits = now.commits - last.commits, ops = now.ops - last.ops;
    LogInfo("stats", {{"ops_per_s", std::to_string(ops / interval_s)},
                      {"commits_per_s", std::to_string(commits / interval_s)},
                      {"ops_per_commit", std::to_string(commits ? ops / commits : 0)},
                      {"largest_batch", std::to_string(now.largest_batch)},
                      {"failed_ops", std::to_string(now.failed_ops - last.failed_ops)},
                      {"writer_busy_ops", Share(now.in_ops - last.in_ops, interval_s)},
                      {"writer_busy_commit", Share(now.in_commit - last.in_commit, interval_s)},
                      {"syncs_per_s", std::to_string((now.syncs - last.syncs) / interval_s)},
                      {"reply_busy_sync", Share(now.in_sync - last.in_sync, interval_s)},
                      {"reply_busy", Share(now.in_done - last.in_done, interval_s)}});
    last = now;
  }
}

absl::Status Serve() {
  const std::filesystem::path dir = absl::GetFlag(FLAGS_data_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create data dir ", dir.string(), ": ", ec.message()));
  }
  const std::string db_path = (dir / "ptxbench.db").string();
  PTXB_ASSIGN_OR_RETURN(const auth::ServerTls tls,
                        auth::LoadServerTls({absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
                                             absl::GetFlag(FLAGS_tls_client_ca)}));
  PTXB_RETURN_IF_ERROR(CheckListeners(tls));
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<storage::Database> db, OpenCheckedDatabase(db_path));
  auth::Authenticator authenticator;
  PTXB_RETURN_IF_ERROR(LoadAuthentication(db.get(), dir.string(), authenticator));
  const Access access(&authenticator);
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<storage::Database> read_db, OpenReadOnly(db_path));
  PTXB_ASSIGN_OR_RETURN(Catalog catalog, LoadCatalog());

  DispatcherOptions dispatcher_options = DispatcherOptionsFromFlags();
  // The scores stored with each correct result weigh its workloads by the
  // importance the loaded datasets give them (docs/REPORTS.md, "Scores").
  dispatcher_options.core.workload_importance =
      [definitions = catalog.definitions.get()](const std::string& definition,
                                                const std::string& workload) {
        absl::StatusOr<const workloads::Definition*> d = definitions->Find(definition);
        if (!d.ok()) return 1.0;
        for (const workloads::Workload& w : (*d)->workloads) {
          if (w.uuid == workload) return w.importance;
        }
        return 1.0;
      };
  Dispatcher dispatcher(std::move(db), Clock::Real(), std::move(dispatcher_options));
  PTXB_RETURN_IF_ERROR(dispatcher.Start());
  Reader reader(std::move(read_db));
  storage::Checkpointer checkpointer(db_path, absl::Milliseconds(250));
  PTXB_RETURN_IF_ERROR(checkpointer.Start());

  // Each model's rpm, tpm and concurrency for the whole fleet; a permit
  // lives as long as a lease (its gateway renews both as often).
  FleetLimits::Options fleet_options;
  fleet_options.permit_ttl = absl::Milliseconds(absl::GetFlag(FLAGS_lease_ttl_ms));
  FleetLimits fleet_limits(fleet_options, Clock::Real());
  ExecutorServiceImpl executor_service(&dispatcher, &access, &fleet_limits);
  ClientServiceDeps deps;
  deps.dispatcher = &dispatcher;
  deps.reader = &reader;
  deps.access = &access;
  deps.authenticator = &authenticator;
  deps.definitions = catalog.definitions.get();
  deps.prompts = catalog.prompts.get();
  deps.limits.max_trajectories = absl::GetFlag(FLAGS_max_trajectories);
  ClientServiceImpl client_service(deps);
  int port = 0;
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> server,
                        StartApi(tls, {&executor_service, &client_service}, &port));
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<dashboard::DashboardServer> web, StartDashboard(*server, dir));
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<daemon::StatusServer> metrics,
                        StartMetrics(dispatcher, reader, db_path, dir));
  const std::string listen = absl::GetFlag(FLAGS_listen);
  AnnounceServing(dir, absl::StrCat(listen.substr(0, listen.rfind(':')), ":", port), db_path, tls);

  // A stop signal: stop taking calls, let running ones finish, close.
  const sigset_t signals = process::StopSignalSet();
  const int signal_number = LogStatsUntilStopped(dispatcher, signals);
  LogInfo("shutting down", {{"signal", std::to_string(signal_number)}});
  (void)SdNotify("STOPPING=1");
  DrainLeases(dispatcher, absl::GetFlag(FLAGS_report_grace_s), signals);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  dispatcher.Stop();
  checkpointer.Stop();
  LogInfo("stopped");
  return absl::OkStatus();
}

int Main() {
  InitLogging("scheduler");
  if (absl::Status s = Serve(); !s.ok()) return Fail(std::string(s.message()));
  return 0;
}

}  // namespace
}  // namespace ptxbench::scheduler

int main(int argc, char** argv) {
  ptxbench::daemon::StartDaemonProcess();
  absl::SetProgramUsageMessage(
      "ptxbench-scheduler --listen HOST:PORT --data-dir DIR [--tls-cert F --tls-key F]\n"
      "Owns the experiment database and serves the client and executor APIs.");
  ptxbench::DashedArgs args(argc, argv);
  absl::ParseCommandLine(args.argc(), args.argv());
  return ptxbench::scheduler::Main();
}
