#ifndef PTXBENCH_CLI_COMMANDS_COMMANDS_H_
#define PTXBENCH_CLI_COMMANDS_COMMANDS_H_

// Internal to the CLI: what a command receives, and the registration hooks of
// the command groups (one .cc file each in this room; `up` and `pipeline`,
// which need more than one file, have rooms of their own above it).

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "auth/channel.h"
#include "cli/commands/args.h"
#include "cli/commands/environment.h"
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
// err(), one "warning:" line each (local.cc).
extern const FlagSpec kDatasetFlag;
extern const FlagSpec kPreferDatasetFlag;
absl::StatusOr<std::unique_ptr<workloads::DefinitionRegistry>> LoadDefinitions(
    const Invocation& inv);

class SchedulerClient;
// A client of the scheduler the global flags name (experiments.cc).
SchedulerClient Connect(const Invocation& inv);

// Writes the HTML report of one experiment to `path` (report.cc).
absl::Status WriteHtmlReport(SchedulerClient& client, const std::string& experiment_id,
                             const std::string& path);

void AddExperimentCommands(std::vector<Command>* commands);  // experiments.cc
void AddTrajectoryCommands(std::vector<Command>* commands);  // trajectories.cc
void AddExecutorCommands(std::vector<Command>* commands);    // executors.cc
void AddLocalCommands(std::vector<Command>* commands);       // local.cc
void AddImportCommand(std::vector<Command>* commands);       // import.cc
void AddUpCommand(std::vector<Command>* commands);           // cli/up/up.cc
void AddEvalCommand(std::vector<Command>* commands);         // eval.cc
void AddReportCommands(std::vector<Command>* commands);      // report.cc
void AddTokenCommands(std::vector<Command>* commands);       // tokens.cc
void AddAdminCommands(std::vector<Command>* commands);       // admin.cc
void AddPipelineCommands(std::vector<Command>* commands);    // cli/pipeline/pipeline_commands.cc

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_COMMANDS_COMMANDS_H_
