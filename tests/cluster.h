#ifndef PTXBENCH_TESTS_CLUSTER_H_
#define PTXBENCH_TESTS_CLUSTER_H_

// A scheduler, simulated workers and gateways as real processes on loopback,
// plus the CLI, for end-to-end tests. Binary paths come from the build.

#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "process/process.h"
#include "storage/database.h"
#include "testing/child_process.h"

namespace ptxbench::testing {

class Cluster {
 public:
  // `name` names the folder under the test temp dir (wiped first).
  explicit Cluster(const std::string& name);
  ~Cluster();

  const std::string& dir() const { return dir_; }
  std::string address() const;
  // The scheduler's admin token file (written at its first start); the
  // executors started here carry it.
  std::string TokenFile() const { return dir_ + "/admin.token"; }

  // Starts (or restarts, on the same database and port) the scheduler and
  // waits until it serves. Extra flags are appended.
  bool StartScheduler(const std::vector<std::string>& extra = {});
  void KillScheduler() { scheduler_.Kill(); }
  process::Process& scheduler() { return scheduler_; }
  process::Process& AddWorker(const std::vector<std::string>& extra = {});
  // A real (not simulated) worker: on a machine without a GPU, compile-only.
  process::Process& AddRealWorker(const std::vector<std::string>& extra = {});
  process::Process& AddGateway(const std::vector<std::string>& extra = {});  // --simulate
  // A gateway calling real providers (tests point it at fake servers).
  process::Process& AddRealGateway(const std::vector<std::string>& extra = {});

  // `ptxbench --scheduler ADDR args... flags...`, with the flags given to
  // SetCliFlags (TLS); its stderr in `out` too when `merge_stderr` (else it
  // goes to the test's).
  CommandResult Cli(const std::vector<std::string>& args, bool merge_stderr = false) const;
  void SetCliFlags(std::vector<std::string> flags) { cli_flags_ = std::move(flags); }
  // Writes `text` to DIR/<file> (creating folders) and returns the path.
  std::string WriteFile(const std::string& file, const std::string& text) const;
  // Submits a spec file; returns the experiment id ("" on failure).
  std::string Submit(const std::string& spec_path,
                     const std::vector<std::string>& extra = {}) const;
  // `status EXP --output json`, parsed (null on failure).
  nlohmann::json Status(const std::string& experiment) const;
  // Polls status until every trajectory is terminal or `timeout_s` passes.
  nlohmann::json WaitFinished(const std::string& experiment, int timeout_s) const;
  // A read-only connection to the scheduler's database.
  std::unique_ptr<storage::Database> OpenDatabase() const;
  // One integer from a query.
  int64_t QueryInt(const std::string& sql) const;
  // The first column of the first row of `sql`, as text.
  std::string QueryText(const std::string& sql) const;
  std::string SchedulerLogTail() const { return Tail(dir_ + "/scheduler.log"); }

 private:
  std::string dir_;
  int port_;
  process::Process scheduler_;
  std::vector<std::unique_ptr<process::Process>> executors_;
  int next_executor_ = 0;
  std::vector<std::string> cli_flags_;
};

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTS_CLUSTER_H_
