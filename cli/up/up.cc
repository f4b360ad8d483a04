// `ptxbench up`: a whole local deployment in one command. Starts a scheduler,
// then workers and gateways pointed at it, as child processes with their
// output in <data-dir>/logs; optionally submits a spec and watches it.

#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "auth/token.h"
#include "cli/client/client.h"
#include "cli/client/submit.h"
#include "cli/commands/commands.h"
#include "cli/terminal/interrupt.h"
#include "cli/up/supervisor.h"
#include "cli/views/views.h"
#include "cli/views/watch.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "experiment_spec/references.h"

namespace ptxbench::cli {
namespace {

namespace fs = std::filesystem;

constexpr absl::Duration kStartupTimeout = absl::Seconds(15);
// Real workers look at their GPUs (a health check each) before registering.
constexpr absl::Duration kRegisterTimeout = absl::Seconds(60);
constexpr absl::Duration kStopGrace = absl::Seconds(10);
// Executors finish what they hold for this long after SIGTERM, then hand the
// rest back to the scheduler, before kStopGrace would kill them.
constexpr int kExecutorStopGraceS = 7;
constexpr absl::Duration kPollInterval = absl::Milliseconds(200);
constexpr int kLogTailLines = 20;

struct UpOptions {
  std::string data_dir = ".ptxbench";
  std::string listen;   // what the scheduler binds
  std::string connect;  // how clients reach it
  bool simulate = false;
  int workers = 1;
  int gateways = 1;
  std::string submit;
  bool exit_when_done = false;
  std::string models;  // registry files for the gateways
  std::string prompts;  // a PTXBench prompt hub for the scheduler
  std::vector<std::string> datasets;  // FlashInfer-Trace datasets: scheduler and workers
  bool prefer_dataset = false;
  std::string torch_python;  // the workers' Python for PyTorch references
  bool triton = false;       // the workers offer Triton submissions (ptxbench-worker --triton)
  std::string model;   // the one model to serve and submit with
  std::string name;    // of the submitted experiment, instead of the spec's
  // Agent sessions at once on one agent gateway (ptxbench-gateway
  // --agent-slots); 0: none.
  int agent_slots = 0;
};

// Whether the spec file at `path` runs coding-agent sessions ("mode":
// "agent", or a PTXBench coding-agent experiment.json); false for anything
// unreadable (the submit then says what is wrong with it).
bool IsAgentSpec(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  return text.ok() && experiment_spec::ReferencesOf(*text).agent_mode;
}

// "0.0.0.0:50051" binds every interface; clients connect through loopback.
std::string ConnectAddress(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  const std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host.empty() || host == "0.0.0.0") return absl::StrCat("127.0.0.1:", port);
  if (host == "[::]") return absl::StrCat("[::1]:", port);
  return listen;
}

absl::StatusOr<UpOptions> ParseUpOptions(const Invocation& inv) {
  UpOptions options;
  options.data_dir = inv.global.data_dir;
  options.listen = inv.args.Get("listen", inv.global.scheduler);
  const size_t colon = options.listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(options.listen.substr(colon + 1), &port) ||
      port < 1 || port > 65535) {
    return UsageError(absl::StrCat("--listen must be HOST:PORT with a port from 1 to 65535, got '",
                                   options.listen, "'"));
  }
  options.connect = ConnectAddress(options.listen);
  options.simulate = inv.args.Has("simulate");
  if (inv.args.Has("workers")) {
    PTXB_ASSIGN_OR_RETURN(int64_t n, ParseIntFlag("workers", inv.args.Get("workers"), 0, 64));
    options.workers = static_cast<int>(n);
  }
  if (inv.args.Has("gateways")) {
    PTXB_ASSIGN_OR_RETURN(int64_t n, ParseIntFlag("gateways", inv.args.Get("gateways"), 0, 64));
    options.gateways = static_cast<int>(n);
  }
  options.submit = inv.args.Get("submit");
  options.models = inv.args.Get("models");
  options.prompts = inv.args.Get("prompts", "");
  options.datasets = inv.args.GetAll("dataset");
  options.prefer_dataset = inv.args.Has("prefer-dataset");
  options.torch_python = inv.args.Get("torch-python");
  options.triton = inv.args.Has("triton");
  if (options.triton && options.simulate) {
    return UsageError("--triton is for real workers; simulated workers run Triton experiments "
                      "already");
  }
  options.model = inv.args.Get("model");
  options.name = inv.args.Get("name");
  options.exit_when_done = inv.args.Has("exit-when-done");
  // An agent experiment's sessions run on an agent gateway; its model calls
  // are the sessions' own, so it needs no model gateway unless asked.
  const bool agent = !options.submit.empty() && IsAgentSpec(options.submit);
  if (inv.args.Has("agent-slots")) {
    PTXB_ASSIGN_OR_RETURN(int64_t n,
                          ParseIntFlag("agent-slots", inv.args.Get("agent-slots"), 0, 256));
    options.agent_slots = static_cast<int>(n);
  } else if (agent) {
    options.agent_slots = 2;
  }
  if (agent && !inv.args.Has("gateways")) options.gateways = 0;
  if (options.agent_slots > 0 && options.simulate) {
    return UsageError("--agent-slots runs real agent CLIs; it does not go with --simulate");
  }
  if (options.exit_when_done && options.submit.empty()) {
    return UsageError(
        "--exit-when-done needs --submit SPEC (it stops once that experiment finishes)");
  }
  return options;
}

bool IsExecutable(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

// Finds a daemon binary: beside the running ptxbench, else in the build tree
// (../<build_dir>/ from cli/), else on PATH.
absl::StatusOr<std::string> FindDaemon(const std::string& self_exe, const std::string& name,
                                       const std::string& build_dir) {
  std::vector<std::string> looked;
  if (!self_exe.empty()) {
    const fs::path dir = fs::path(self_exe).parent_path();
    for (const fs::path& candidate :
         {dir / name, (dir / ".." / build_dir / name).lexically_normal()}) {
      if (IsExecutable(candidate)) return candidate.string();
      looked.push_back(candidate.parent_path().string());
    }
  }
  if (const char* path_env = std::getenv("PATH")) {
    for (absl::string_view dir : absl::StrSplit(path_env, ':', absl::SkipEmpty())) {
      const fs::path candidate = fs::path(std::string(dir)) / name;
      if (IsExecutable(candidate)) return candidate.string();
    }
  }
  looked.push_back("PATH");
  return absl::NotFoundError(absl::StrCat("cannot find ", name, " (looked in ",
                                          absl::StrJoin(looked, ", "), "); build it with 'ninja ",
                                          name, "'"));
}

std::string LogTail(const std::string& path, int lines) {
  std::ifstream file(path);
  std::deque<std::string> tail;
  for (std::string line; std::getline(file, line);) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  std::string out;
  for (const std::string& line : tail) absl::StrAppend(&out, "  ", line, "\n");
  return out;
}

std::string EndedText(const Supervisor::Ended& ended) {
  return absl::StrCat(ended.name, " ", ended.how, " (log: ", ended.log_path, ")");
}

// Runs one `up`: owns the children from start to stop.
class Deployment {
 public:
  Deployment(const Invocation& inv, UpOptions options)
      : inv_(inv),
        options_(std::move(options)),
        logs_dir_((fs::path(options_.data_dir) / "logs").string()),
        // Banner and notes go to stderr under --output json, so stdout stays JSON.
        info_(inv.global.json ? inv.err() : inv.out()) {}

  absl::Status Run() {
    PTXB_RETURN_IF_ERROR(StartAll());
    if (Interrupted()) return Stop();
    PrintBanner();
    if (!options_.submit.empty()) {
      PTXB_ASSIGN_OR_RETURN(bool done, SubmitAndWatch());
      if (done) return absl::OkStatus();
    }
    while (!Interrupted()) {
      ReportEnded();
      if (!supervisor_.Running("scheduler")) {
        supervisor_.StopAll(kStopGrace);
        return absl::UnavailableError(
            absl::StrCat("the scheduler stopped; see ", logs_dir_, "/scheduler.log"));
      }
      std::this_thread::sleep_for(absl::ToChronoMilliseconds(kPollInterval));
    }
    return Stop();
  }

 private:
  absl::Status StartAll() {
    PTXB_ASSIGN_OR_RETURN(std::string scheduler_bin,
                          FindDaemon(inv_.env.self_exe, "ptxbench-scheduler", "scheduler"));
    std::string worker_bin, gateway_bin;
    if (options_.workers > 0) {
      PTXB_ASSIGN_OR_RETURN(worker_bin, FindDaemon(inv_.env.self_exe, "ptxbench-worker", "worker"));
    }
    if (options_.gateways > 0 || options_.agent_slots > 0) {
      PTXB_ASSIGN_OR_RETURN(gateway_bin,
                            FindDaemon(inv_.env.self_exe, "ptxbench-gateway", "agent_gateway"));
    }
    std::error_code ec;
    fs::create_directories(logs_dir_, ec);
    if (ec)
      return absl::UnavailableError(absl::StrCat("cannot create ", logs_dir_, ": ", ec.message()));

    InstallInterruptHandlers();
    // Anything that answers there, even refusing our token, is a scheduler.
    SchedulerClient probe(options_.connect, inv_.global.security, absl::Seconds(1));
    if (absl::StatusCode code = probe.WhoAmI().status().code();
        code == absl::StatusCode::kOk || code == absl::StatusCode::kUnauthenticated ||
        code == absl::StatusCode::kPermissionDenied) {
      return absl::FailedPreconditionError(
          absl::StrCat("a scheduler is already running at ", options_.connect,
                       "; use it as it is, or start another with --listen HOST:PORT"));
    }

    std::vector<std::string> scheduler_args = {"--listen", options_.listen, "--data-dir",
                                               options_.data_dir};
    if (!options_.prompts.empty()) scheduler_args.insert(scheduler_args.end(), {"--prompts", options_.prompts});
    // The scheduler and the workers read the same datasets.
    std::vector<std::string> dataset_args;
    if (!options_.datasets.empty()) {
      dataset_args = {"--dataset", absl::StrJoin(options_.datasets, ",")};
      if (options_.prefer_dataset) dataset_args.push_back("--prefer_dataset");
    }
    scheduler_args.insert(scheduler_args.end(), dataset_args.begin(), dataset_args.end());
    PTXB_RETURN_IF_ERROR(supervisor_
                             .Start({"scheduler",
                                     scheduler_bin,
                                     scheduler_args,
                                     LogPath("scheduler"),
                                     /*stop_last=*/true})
                             .status());
    PTXB_RETURN_IF_ERROR(WaitForScheduler());
    if (Interrupted()) return absl::OkStatus();

    // The executors of this deployment carry the data directory's admin
    // token, as the CLI does: one user, one machine.
    std::vector<std::string> executor_args = {
        "--scheduler", options_.connect, "--token-file", AdminTokenPath(),
        "--stop-grace-s", absl::StrCat(kExecutorStopGraceS)};
    if (options_.simulate) executor_args.push_back("--simulate");
    std::vector<std::string> gateway_args = executor_args;
    if (!options_.simulate && !options_.models.empty()) {
      gateway_args.insert(gateway_args.end(), {"--models", options_.models});
    }
    // One named model: a gateway that cannot serve it (no key) says so and
    // stops, instead of the experiment waiting for nobody.
    if (!options_.simulate && !options_.model.empty()) {
      gateway_args.insert(gateway_args.end(), {"--serve", options_.model});
    }
    std::vector<std::string> worker_args = executor_args;
    worker_args.insert(worker_args.end(), dataset_args.begin(), dataset_args.end());
    if (!options_.torch_python.empty()) {
      worker_args.insert(worker_args.end(), {"--torch_python", options_.torch_python});
    }
    if (options_.triton) worker_args.push_back("--triton");
    for (int i = 1; i <= options_.workers; ++i) {
      const std::string name = absl::StrCat("worker-", i);
      PTXB_RETURN_IF_ERROR(
          supervisor_.Start({name, worker_bin, worker_args, LogPath(name)}).status());
    }
    for (int i = 1; i <= options_.gateways; ++i) {
      const std::string name = absl::StrCat("gateway-", i);
      PTXB_RETURN_IF_ERROR(
          supervisor_.Start({name, gateway_bin, gateway_args, LogPath(name)}).status());
    }
    if (options_.agent_slots > 0) {
      std::vector<std::string> agent_args = executor_args;
      agent_args.insert(agent_args.end(),
                        {"--agent-slots", absl::StrCat(options_.agent_slots), "--name", "agents",
                         "--agent-dir", (fs::path(options_.data_dir) / "sessions").string()});
      if (!options_.models.empty()) agent_args.insert(agent_args.end(), {"--models", options_.models});
      PTXB_RETURN_IF_ERROR(
          supervisor_.Start({"agents", gateway_bin, agent_args, LogPath("agents")}).status());
    }
    if (!options_.simulate) return WaitForExecutors();
    return absl::OkStatus();
  }

  // Real executors check their GPUs, models and keys before registering:
  // wait for them, so the banner can say what evaluation this machine does,
  // and so one that gives up at start (a missing key, say) is shown with its
  // reason and stops everything.
  absl::Status WaitForExecutors() {
    const int expected = options_.workers + options_.gateways + (options_.agent_slots > 0);
    if (expected == 0) return absl::OkStatus();
    const absl::Time started = absl::Now();
    const absl::Time deadline = started + kRegisterTimeout;
    SchedulerClient client(options_.connect, security_, absl::Seconds(2));
    while (!Interrupted()) {
      for (const Supervisor::Ended& ended : supervisor_.Reap()) {
        inv_.err() << "--- last lines of " << ended.log_path << " ---\n"
                   << LogTail(ended.log_path, kLogTailLines);
        supervisor_.StopAll(kStopGrace);
        return absl::FailedPreconditionError(
            absl::StrCat(ended.name, " ", ended.how, " while starting; see ", ended.log_path));
      }
      absl::StatusOr<v1::ListExecutorsResponse> listed = client.ListExecutors();
      if (!listed.ok()) return absl::OkStatus();  // cannot tell; the banner says less
      // Ours: registered since they were started (the scheduler keeps
      // earlier sessions' executors as lost or stopped).
      executors_.clear();
      for (const v1::ExecutorInfo& e : listed->executors()) {
        if (e.status() != "lost" && e.status() != "stopped" &&
            absl::FromUnixMillis(e.registered_unix_ms()) >= started - absl::Seconds(1)) {
          executors_.push_back(e);
        }
      }
      if (static_cast<int>(executors_.size()) >= expected) return absl::OkStatus();
      if (absl::Now() >= deadline) {
        inv_.err() << "ptxbench: only " << executors_.size() << " of " << expected
                   << " workers and gateways registered within "
                   << absl::FormatDuration(kRegisterTimeout) << "; see " << logs_dir_ << "/\n";
        return absl::OkStatus();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return absl::OkStatus();
  }

  bool HasGpu() const {
    for (const v1::ExecutorInfo& e : executors_) {
      if (e.kind() == v1::WORKER && e.capabilities().gpus_size() > 0) return true;
    }
    return false;
  }

  // What the registered executors do, for the banner.
  void PrintCapabilities() {
    if (options_.simulate || executors_.empty()) return;
    std::map<std::string, int> gpus;
    int workers = 0;
    std::set<std::string> models;
    for (const v1::ExecutorInfo& e : executors_) {
      if (e.kind() == v1::WORKER) {
        ++workers;
        for (const v1::Gpu& g : e.capabilities().gpus()) {
          ++gpus[absl::StrCat(g.model(), g.sm_arch().empty() ? "" : " (" + g.sm_arch() + ")")];
        }
      } else {
        models.insert(e.capabilities().models().begin(), e.capabilities().models().end());
      }
    }
    if (workers > 0) {
      if (gpus.empty()) {
        info_ << "  evaluation COMPILE-ONLY: no GPU on this machine. Kernels are compiled and\n"
                 "             their resources checked; nothing is run, checked or timed.\n";
      } else {
        std::vector<std::string> parts;
        for (const auto& [model, n] : gpus) parts.push_back(absl::StrCat(n, " x ", model));
        info_ << "  evaluation on GPU: " << absl::StrJoin(parts, ", ")
              << " (checked and timed against the vendor libraries, or a definition's own "
                 "PyTorch reference)\n";
      }
    }
    if (!models.empty()) info_ << "  models     " << absl::StrJoin(models, ", ") << "\n";
  }

  std::string AdminTokenPath() const {
    return (fs::path(options_.data_dir) / auth::kAdminTokenFile).string();
  }

  // The scheduler writes its admin token before it listens; once it
  // answers, every client of this deployment uses that token.
  absl::Status WaitForScheduler() {
    const absl::Time deadline = absl::Now() + kStartupTimeout;
    // One client per token read: the file may still hold an earlier
    // session's token until the scheduler replaces it.
    std::optional<SchedulerClient> client;
    while (!Interrupted()) {
      for (const Supervisor::Ended& ended : supervisor_.Reap()) {
        inv_.err() << "--- last lines of " << ended.log_path << " ---\n"
                   << LogTail(ended.log_path, kLogTailLines);
        return absl::UnavailableError(
            absl::StrCat("the scheduler ", ended.how, " while starting; see ", ended.log_path));
      }
      if (absl::StatusOr<std::string> token = auth::ReadTokenFile(AdminTokenPath());
          token.ok() && (!client || *token != security_.token)) {
        security_ = inv_.global.security;
        security_.token = *token;
        client.emplace(options_.connect, security_, absl::Seconds(1));
      }
      if (client && client->Probe(kPollInterval).ok()) return absl::OkStatus();
      if (absl::Now() >= deadline) {
        supervisor_.StopAll(kStopGrace);
        inv_.err() << "--- last lines of " << LogPath("scheduler") << " ---\n"
                   << LogTail(LogPath("scheduler"), kLogTailLines);
        return absl::DeadlineExceededError(
            absl::StrCat("the scheduler did not answer at ", options_.connect, " within ",
                         absl::FormatDuration(kStartupTimeout), "; see ", LogPath("scheduler")));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return absl::OkStatus();
  }

  void PrintBanner() {
    std::string scheduler_flag;
    if (options_.connect != kDefaultScheduler && options_.connect != inv_.env.scheduler_env) {
      scheduler_flag = absl::StrCat(" --scheduler ", options_.connect);
    }
    const char* mode = options_.simulate ? " --simulate" : "";
    info_ << "ptxbench is up" << (options_.simulate ? " (SIMULATED workers and gateways)" : "")
          << "\n"
          << "  scheduler  " << options_.connect << "\n"
          << "  database   " << (fs::path(options_.data_dir) / "ptxbench.db").string() << "\n"
          << "  logs       " << logs_dir_ << "/\n"
          << "  workers    " << options_.workers << " x ptxbench-worker" << mode << "\n"
          << "  gateways   " << options_.gateways << " x ptxbench-gateway" << mode << "\n";
    PrintCapabilities();
    info_ << "try:\n"
          << "  ptxbench" << scheduler_flag << " status\n"
          << "  ptxbench" << scheduler_flag << " submit examples/quickstart.json\n"
          << "  ptxbench" << scheduler_flag << " workers\n"
          << "Ctrl-C stops everything.\n"
          << std::flush;
  }

  // Returns true when `up` is done (interrupted, or finished with
  // --exit-when-done); false to keep the deployment running.
  absl::StatusOr<bool> SubmitAndWatch() {
    std::string id;
    absl::StatusOr<WatchEnd> end;
    absl::StatusOr<v1::GetExperimentResponse> final_status;
    const std::string report_path = (fs::path(options_.data_dir) / "report.html").string();
    absl::Status report_written = absl::UnknownError("not written");
    {
      // Closed before the children are stopped: a gRPC server shuts down
      // promptly only once its clients have gone.
      SchedulerClient client(options_.connect, security_, inv_.global.timeout);
      v1::SubmitExperimentRequest request;
      request.set_model(options_.model);
      request.set_name(options_.name);
      // Full evaluation waits for a GPU worker; with none here, the quickstart
      // would wait forever: evaluate compile-only instead, as the banner said.
      if (!options_.simulate && options_.workers > 0 && !executors_.empty() && !HasGpu()) {
        request.set_eval("compile-only");
        info_ << "no GPU here: submitting with eval compile-only\n";
      }
      PTXB_ASSIGN_OR_RETURN(id, SubmitSpecFile(client, options_.submit, std::move(request),
                                               inv_.global.json, inv_.out(), inv_.err()));
      WatchOptions watch;
      watch.json = inv_.global.json;
      watch.terminal = inv_.env.out_is_terminal;
      watch.terminal_columns = watch.terminal ? TerminalColumns() : 0;
      watch.poll_notes = [this] {
        std::vector<std::string> notes;
        for (const auto& ended : supervisor_.Reap()) notes.push_back(EndedText(ended));
        return notes;
      };
      end = FollowExperiment(client, id, watch, inv_.out());
      if (end.ok() && *end == WatchEnd::kFinished && options_.exit_when_done) {
        final_status = client.GetExperiment(id);
        // The page of results, made while the scheduler still runs.
        report_written = WriteHtmlReport(client, id, report_path);
      }
    }
    if (!end.ok()) {
      PTXB_RETURN_IF_ERROR(Stop());
      return end.status();
    }
    if (*end == WatchEnd::kFinished && !options_.exit_when_done) {
      info_ << "experiment " << id << " finished; everything keeps running (Ctrl-C stops it)\n"
            << std::flush;
      return false;
    }
    PTXB_RETURN_IF_ERROR(Stop());
    if (*end == WatchEnd::kInterrupted) return true;
    PTXB_RETURN_IF_ERROR(final_status.status());
    if (inv_.global.json) {
      inv_.out() << ExperimentJson(*final_status).dump(2) << "\n";
    } else {
      inv_.out() << "\n" << ExperimentText(*final_status);
    }
    if (report_written.ok()) {
      info_ << "report: " << report_path << " (open it in a browser; `ptxbench report " << id
            << "` shows the tables while a scheduler runs on this data directory)\n";
    } else {
      info_ << "report not written: " << report_written.message() << "\n";
    }
    return true;
  }

  void ReportEnded() {
    for (const auto& ended : supervisor_.Reap()) {
      inv_.err() << "ptxbench: " << EndedText(ended) << "\n" << std::flush;
    }
  }

  absl::Status Stop() {
    ReportEnded();
    const int running = supervisor_.running_count();
    if (running > 0) info_ << "stopping " << running << " processes...\n" << std::flush;
    for (const std::string& name : supervisor_.StopAll(kStopGrace)) {
      inv_.err() << "ptxbench: " << name << " did not stop within "
                 << absl::FormatDuration(kStopGrace) << "; killed it\n";
    }
    info_ << "stopped; state is kept in " << options_.data_dir << "\n" << std::flush;
    return absl::OkStatus();
  }

  std::string LogPath(const std::string& name) const {
    return (fs::path(logs_dir_) / (name + ".log")).string();
  }

  const Invocation& inv_;
  const UpOptions options_;
  const std::string logs_dir_;
  std::ostream& info_;
  Supervisor supervisor_;
  auth::ChannelSecurity security_;  // the admin token (WaitForScheduler)
  std::vector<v1::ExecutorInfo> executors_;  // as registered at start
};

absl::Status RunUp(const Invocation& inv) {
  PTXB_ASSIGN_OR_RETURN(UpOptions options, ParseUpOptions(inv));
  Deployment deployment(inv, std::move(options));
  return deployment.Run();
}

}  // namespace

void AddUpCommand(std::vector<Command>* commands) {
  commands->push_back(
      {{"up",
        "",
        0,
        0,
        {{"listen", true, false, "HOST:PORT", "scheduler address (default: --scheduler's)"},
         {"simulate", false, false, "", "simulated workers and gateways (no GPU, no model API)"},
         {"workers", true, false, "N", "worker processes (default 1)"},
         {"gateways", true, false, "N", "gateway processes (default 1)"},
         {"submit", true, false, "SPEC", "submit SPEC once up, and watch it"},
         {"exit-when-done", false, false, "", "with --submit: stop everything when it finishes"},
         {"models", true, false, "FILE[,FILE]", "model registry files for the gateways"},
         {"prompts", true, false, "HUB", "a PTXBench prompt hub (hub.json) for the scheduler"},
         {"dataset", true, true, "DIR", "a FlashInfer-Trace dataset for the scheduler and workers"},
         {"prefer-dataset", false, false, "", "a dataset definition replaces a bundled one of its name"},
         {"torch-python", true, false, "PATH",
          "the workers' Python with torch, for PyTorch references (default: python3 on PATH)"},
         {"triton", false, false, "",
          "the workers offer Triton submissions (ptxbench-worker --triton): --torch-python's "
          "Python must have Triton (docs/FORMATS.md, \"Triton\")"},
         {"model", true, false, "NAME",
          "serve only this registry model, and submit SPEC with it (its API key must be set)"},
         {"name", true, false, "NAME", "with --submit: the experiment's name instead of SPEC's"},
         {"agent-slots", true, false, "N",
          "coding-agent sessions at once on an agent gateway (default: 2 when SPEC is in agent "
          "mode, else none)"}},
        "start a local scheduler, workers and gateways",
        "Starts ptxbench-scheduler, then the workers and gateways, as child processes\n"
        "(found beside ptxbench, in the build tree, or on PATH); each logs to\n"
        "DIR/logs/<name>.log. Real workers evaluate on this machine's GPUs, or\n"
        "compile-only without one (the banner says which); real gateways serve the\n"
        "registry models whose API key is set. An agent-mode SPEC (or --agent-slots)\n"
        "starts an agent gateway that runs the pinned agent CLIs, sandboxed\n"
        "(docs/AGENTS.md). Ctrl-C or SIGTERM stops them all (SIGKILL after 10 s)."},
       RunUp});
}

}  // namespace ptxbench::cli
