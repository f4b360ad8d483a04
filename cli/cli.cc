#include "cli/cli.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "auth/token.h"
#include "cli/commands/args.h"
#include "cli/commands/commands.h"
#include "cli/terminal/interrupt.h"

namespace ptxbench::cli {
namespace {

std::vector<FlagSpec> GlobalFlags() {
  return {
      {"scheduler", true, false, "HOST:PORT",
       "scheduler address (else $PTXBENCH_SCHEDULER, else 127.0.0.1:50051)"},
      {"output", true, false, "table|json|csv", "output format (default table; csv: report only)"},
      {"timeout", true, false, "SECONDS", "deadline of each scheduler call (default 30)"},
      {"token-file", true, false, "FILE",
       "token to call the scheduler with (else $PTXBENCH_TOKEN, else DIR/admin.token of "
       "--data-dir)"},
      {"data-dir", true, false, "DIR", "the local scheduler's state (default ./.ptxbench)"},
      {"tls-ca", true, false, "FILE", "CA certificate (PEM) of a scheduler serving TLS"},
      {"tls-cert", true, false, "FILE", "client certificate (PEM), when the scheduler asks one"},
      {"tls-key", true, false, "FILE", "private key (PEM) of --tls-cert"},
  };
}

const std::vector<Command>& AllCommands() {
  static const std::vector<Command>* commands = [] {
    auto* list = new std::vector<Command>();
    AddUpCommand(list);
    AddExperimentCommands(list);
    AddTrajectoryCommands(list);
    AddExecutorCommands(list);
    AddLocalCommands(list);
    AddImportCommand(list);
    AddEvalCommand(list);
    AddReportCommands(list);
    AddTokenCommands(list);
    AddAdminCommands(list);
    AddPipelineCommands(list);
    return list;
  }();
  return *commands;
}

absl::StatusOr<GlobalOptions> ResolveGlobals(const ParsedArgs& args, const CliEnvironment& env) {
  GlobalOptions global;
  if (args.Has("scheduler")) {
    global.scheduler = args.Get("scheduler");
  } else if (!env.scheduler_env.empty()) {
    global.scheduler = env.scheduler_env;
  }
  if (global.scheduler.empty()) return UsageError("--scheduler needs HOST:PORT, got ''");
  global.output = args.Get("output", "table");
  if (global.output != "table" && global.output != "json" && global.output != "csv") {
    return UsageError(
        absl::StrCat("--output must be 'table', 'json' or 'csv', got '", global.output, "'"));
  }
  if (global.output == "csv" && args.command != nullptr && args.command->name != "report") {
    return UsageError("--output csv is for 'report' only (export writes csv files with --format)");
  }
  global.json = global.output == "json";
  if (args.Has("timeout")) {
    absl::StatusOr<double> seconds = ParsePositiveSeconds("timeout", args.Get("timeout"));
    if (!seconds.ok()) return seconds.status();
    global.timeout = absl::Seconds(*seconds);
  }
  global.data_dir = args.Get("data-dir", global.data_dir);
  absl::StatusOr<auth::ChannelSecurity> security = auth::LoadChannelSecurity(
      {args.Get("token-file", ""), env.token_env,
       (std::filesystem::path(global.data_dir) / auth::kAdminTokenFile).string(),
       args.Get("tls-ca", ""), args.Get("tls-cert", ""), args.Get("tls-key", "")});
  if (!security.ok()) return UsageError(security.status().message());
  global.security = *std::move(security);
  return global;
}

}  // namespace

int RunCli(const std::vector<std::string>& raw_args, const CliEnvironment& env) {
  ClearInterrupted();
  const std::vector<Command>& commands = AllCommands();
  std::vector<CommandSpec> specs;
  for (const Command& c : commands) specs.push_back(c.spec);
  const std::vector<FlagSpec> globals = GlobalFlags();

  if (raw_args.empty()) {
    *env.err << ProgramUsage(specs, globals);
    return 2;
  }
  // "ptxbench help [COMMAND]" is "ptxbench [COMMAND] --help".
  std::vector<std::string> args = raw_args;
  if (args.front() == "help") {
    args.erase(args.begin());
    args.push_back("--help");
  }

  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, specs, globals);
  if (!parsed.ok()) {
    *env.err << "ptxbench: " << parsed.status().message() << "\n";
    return 2;
  }
  if (parsed->help) {
    if (parsed->command != nullptr) {
      *env.out << CommandUsage(*parsed->command, globals);
    } else if (!parsed->help_group.empty()) {
      *env.out << GroupUsage(parsed->help_group, specs);
    } else {
      *env.out << ProgramUsage(specs, globals);
    }
    return 0;
  }
  absl::StatusOr<GlobalOptions> global = ResolveGlobals(*parsed, env);
  if (!global.ok()) {
    *env.err << "ptxbench: " << global.status().message() << "\n";
    return 2;
  }
  const Command& command = commands[parsed->command - specs.data()];
  absl::Status status = command.run(Invocation{*parsed, *global, env});
  env.out->flush();
  if (status.ok()) return 0;
  *env.err << "ptxbench: " << status.message() << "\n";
  if (std::optional<int> code = ExitCodeOf(status)) return *code;
  return IsUsageError(status) ? 2 : 1;
}

}  // namespace ptxbench::cli
