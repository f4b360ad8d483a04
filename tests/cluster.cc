#include "tests/cluster.h"
#include "tests/testing/test_binary.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/unused_port.h"

namespace ptxbench::testing {
namespace {

std::string Binary(const char* built) { return TestBinary(built); }

}  // namespace

Cluster::Cluster(const std::string& name)
    : dir_(::testing::TempDir() + "/ptxb_" + name + "_" + std::to_string(getpid())),
      port_(UnusedPort()) {
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

Cluster::~Cluster() {
  for (auto& e : executors_) e->Kill();
  if (scheduler_.running()) {
    scheduler_.Signal(SIGTERM);
    scheduler_.Wait();
  }
}

std::string Cluster::address() const { return absl::StrCat("127.0.0.1:", port_); }

bool Cluster::StartScheduler(const std::vector<std::string>& extra) {
  const std::string addr_file = dir_ + "/scheduler.addr";
  std::filesystem::remove(addr_file);
  std::vector<std::string> argv = {Binary(PTXB_SCHEDULER_BIN), "--listen", address(), "--data-dir", dir_};
  argv.insert(argv.end(), extra.begin(), extra.end());
  scheduler_ = SpawnLogged(argv, dir_ + "/scheduler.log");
  for (int i = 0; i < 300; ++i) {
    if (std::filesystem::exists(addr_file)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

process::Process& Cluster::AddWorker(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Binary(PTXB_WORKER_BIN), "--scheduler", address(),
                                   "--token-file", TokenFile(), "--simulate"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  executors_.push_back(std::make_unique<process::Process>(
      SpawnLogged(argv, absl::StrCat(dir_, "/worker", next_executor_++, ".log"))));
  return *executors_.back();
}

process::Process& Cluster::AddRealWorker(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Binary(PTXB_WORKER_BIN), "--scheduler", address(),
                                   "--token-file", TokenFile(), "--cache-dir",
                                   dir_ + "/build-cache"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  executors_.push_back(std::make_unique<process::Process>(
      SpawnLogged(argv, absl::StrCat(dir_, "/worker", next_executor_++, ".log"))));
  return *executors_.back();
}

process::Process& Cluster::AddGateway(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--simulate"};
  args.insert(args.end(), extra.begin(), extra.end());
  return AddRealGateway(args);
}

process::Process& Cluster::AddRealGateway(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Binary(PTXB_GATEWAY_BIN), "--scheduler", address(),
                                   "--token-file", TokenFile()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  executors_.push_back(std::make_unique<process::Process>(
      SpawnLogged(argv, absl::StrCat(dir_, "/gateway", next_executor_++, ".log"))));
  return *executors_.back();
}

CommandResult Cluster::Cli(const std::vector<std::string>& args, bool merge_stderr) const {
  // The CLI finds the admin token in the data directory, as a user's does.
  std::vector<std::string> argv = {Binary(PTXB_CLI_BIN), "--scheduler", address(), "--data-dir",
                                   dir_};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), cli_flags_.begin(), cli_flags_.end());
  return RunCommand(argv, merge_stderr);
}

std::string Cluster::WriteFile(const std::string& file, const std::string& text) const {
  std::string path = dir_ + "/" + file;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

std::string Cluster::Submit(const std::string& spec_path,
                            const std::vector<std::string>& extra) const {
  std::vector<std::string> args = {"submit", spec_path, "--output", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  CommandResult r = Cli(args);
  if (r.exit_code != 0) return "";
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  return j.is_object() && j.contains("experiment") ? j["experiment"].get<std::string>() : "";
}

nlohmann::json Cluster::Status(const std::string& experiment) const {
  CommandResult r = Cli({"status", experiment, "--output", "json"});
  if (r.exit_code != 0) return nullptr;
  return nlohmann::json::parse(r.out, nullptr, false);
}

nlohmann::json Cluster::WaitFinished(const std::string& experiment, int timeout_s) const {
  nlohmann::json status;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    status = Status(experiment);
    if (status.is_object() && status["trajectories"]["total"] == status["trajectories"]["terminal"]) {
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return status;
}

std::unique_ptr<storage::Database> Cluster::OpenDatabase() const {
  storage::Database::Options options;
  options.read_only = true;
  auto db = storage::Database::Open(dir_ + "/ptxbench.db", options);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

int64_t Cluster::QueryInt(const std::string& sql) const {
  auto db = OpenDatabase();
  auto s = db->Prepare(sql);
  EXPECT_TRUE(s.ok()) << s.status();
  auto row = s->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return s->ColumnInt64(0);
}

std::string Cluster::QueryText(const std::string& sql) const {
  auto db = OpenDatabase();
  auto s = db->Prepare(sql);
  EXPECT_TRUE(s.ok()) << s.status();
  auto row = s->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return row.ok() && *row ? s->ColumnText(0) : "";
}

}  // namespace ptxbench::testing
