#ifndef PTXBENCH_CLI_CLI_H_
#define PTXBENCH_CLI_CLI_H_

// The `ptxbench` command as a library: RunCli parses a command line, runs the
// command and returns its exit code (0 ok, 1 failure, 2 usage error). Errors
// are one line on `err`, "ptxbench: <what went wrong>". main.cc only gathers
// the process environment into a CliEnvironment.

#include <ostream>
#include <string>
#include <vector>

namespace ptxbench::cli {

struct CliEnvironment {
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  // stdout is a terminal: `--watch` redraws in place.
  bool out_is_terminal = false;
  // stderr is a terminal: long waits show a live elapsed-time line.
  bool err_is_terminal = false;
  // $PTXBENCH_SCHEDULER (empty when unset).
  std::string scheduler_env;
  // $PTXBENCH_TOKEN (empty when unset).
  std::string token_env;
  // Path of the running binary; `up` looks for the daemons beside it.
  std::string self_exe;
};

// `args` excludes the program name.
int RunCli(const std::vector<std::string>& args, const CliEnvironment& env);

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_CLI_H_
