#ifndef PTXBENCH_CLI_COMMANDS_ARGS_H_
#define PTXBENCH_CLI_COMMANDS_ARGS_H_

// The command-line grammar of `ptxbench`: a command (one word, or a group and
// a word such as "prompts check"), its flags and positionals, and the global
// flags, which may stand before or after the command.
//
//   --flag value | --flag=value   a flag that takes a value
//   --flag                        a switch
//   --                            everything after it is positional
//   --help, -h                    help for the command (or the program)
//
// Errors here are usage errors (exit code 2); see UsageError().

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::cli {

struct FlagSpec {
  std::string name;  // without the leading "--"
  bool takes_value = false;
  bool repeatable = false;  // else the last occurrence wins
  std::string value_name;   // shown in help, e.g. "N"
  std::string help;
};

struct CommandSpec {
  std::string name;        // "submit", "prompts check"
  std::string positional;  // shown in help, e.g. "SPEC.json"
  int min_positionals = 0;
  int max_positionals = 0;  // -1 = any number
  std::vector<FlagSpec> flags;
  std::string summary;      // one line, for the command list
  std::string description;  // paragraphs shown by --help
};

// The result of parsing; `command` points into the spec list given to Parse.
struct ParsedArgs {
  const CommandSpec* command = nullptr;  // null only when help is set
  bool help = false;
  // When help is asked for a group ("prompts --help"), the group's name.
  std::string help_group;
  std::map<std::string, std::vector<std::string>> flags;  // switches hold ""
  std::vector<std::string> positionals;

  bool Has(absl::string_view flag) const;
  // The last value of `flag`, or `fallback` when absent.
  std::string Get(absl::string_view flag, absl::string_view fallback = "") const;
  std::vector<std::string> GetAll(absl::string_view flag) const;
};

// Parses `args` (without the program name). Usage errors name the offending
// token; help requests are not errors.
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::vector<CommandSpec>& commands,
                                     const std::vector<FlagSpec>& global_flags);

// Help texts.
std::string ProgramUsage(const std::vector<CommandSpec>& commands,
                         const std::vector<FlagSpec>& global_flags);
std::string CommandUsage(const CommandSpec& command, const std::vector<FlagSpec>& global_flags);
std::string GroupUsage(absl::string_view group, const std::vector<CommandSpec>& commands);

// A usage error: the command line is wrong (exit code 2). It is an
// INVALID_ARGUMENT status carrying a marker, so that an INVALID_ARGUMENT from
// the scheduler (bad spec: exit code 1) stays distinguishable.
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

// An error whose exit code is given explicitly (`ptxbench eval`: 1 for a
// kernel that failed, 2 for an infrastructure error).
absl::Status WithExitCode(absl::Status status, int exit_code);
std::optional<int> ExitCodeOf(const absl::Status& status);

// Parses a flag value as an integer / number in [min, max]; usage error
// naming the flag otherwise.
absl::StatusOr<int64_t> ParseIntFlag(absl::string_view flag, absl::string_view value, int64_t min,
                                     int64_t max);
absl::StatusOr<double> ParsePositiveSeconds(absl::string_view flag, absl::string_view value);

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_COMMANDS_ARGS_H_
