#ifndef PTXBENCH_CLI_COMMANDS_H_
#define PTXBENCH_CLI_COMMANDS_H_

// Internal to the CLI: what a command receives, and the registration hooks of
// the command groups (one .cc file each).

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "auth/channel.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "workloads/registry.h"

namespace ptxbench::cli {

inline constexpr char kDefaultScheduler[] = "127.0.0.1:50051";

// The global flags, resolved (flag, else environment, else default).
struct GlobalOptions {
  std::string scheduler = kDefaultScheduler;
  std::string output = "table";  // --output: table, json or csv
  bool json = false;             // --output json
  absl::Duration timeout = absl::Seconds(30);
  // --data-dir: where `up` keeps its state, and whose admin.token the CLI
  // uses when no other token is given.
  std::string data_dir = ".ptxbench";
  // The token and TLS of every call to the scheduler.
  auth::ChannelSecurity security;
};

// One run of one command.
struct Invocation {
  const ParsedArgs& args;
  GlobalOptions global;
  const CliEnvironment& env;

  std::ostream& out() const { return *env.out; }
  std::ostream& err() const { return *env.err; }
};

// A command: its grammar and help, and what runs it. `run` returns OK, a
// UsageError (exit 2) or any other error (exit 1), whose message is printed.
struct Command {
  CommandSpec spec;
  absl::Status (*run)(const Invocation&);
};

// --dataset DIR (repeatable) and --prefer-dataset, for commands that read
// definitions; LoadDefinitions loads them and prints what the load skipped to
// err(), one "warning:" line each (commands_local.cc).
extern const FlagSpec kDatasetFlag;
extern const FlagSpec kPreferDatasetFlag;
absl::StatusOr<std::unique_ptr<workloads::DefinitionRegistry>> LoadDefinitions(
    const Invocation& inv);

class SchedulerClient;
// A client of the scheduler the global flags name (commands_experiments.cc).
SchedulerClient Connect(const Invocation& inv);

// Writes the HTML report of one experiment to `path` (commands_report.cc).
absl::Status WriteHtmlReport(SchedulerClient& client, const std::string& experiment_id,
                             const std::string& path);

void AddExperimentCommands(std::vector<Command>* commands);  // commands_experiments.cc
void AddTrajectoryCommands(std::vector<Command>* commands);  // commands_trajectories.cc
void AddExecutorCommands(std::vector<Command>* commands);    // commands_executors.cc
void AddLocalCommands(std::vector<Command>* commands);       // commands_local.cc
void AddImportCommand(std::vector<Command>* commands);       // commands_import.cc
void AddUpCommand(std::vector<Command>* commands);           // up.cc
void AddEvalCommand(std::vector<Command>* commands);         // commands_eval.cc
void AddReportCommands(std::vector<Command>* commands);      // commands_report.cc
void AddTokenCommands(std::vector<Command>* commands);       // commands_tokens.cc
void AddAdminCommands(std::vector<Command>* commands);       // commands_admin.cc
void AddPipelineCommands(std::vector<Command>* commands);    // commands_pipeline.cc

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_COMMANDS_H_
