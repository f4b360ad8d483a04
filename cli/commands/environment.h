#ifndef PTXBENCH_CLI_COMMANDS_ENVIRONMENT_H_
#define PTXBENCH_CLI_COMMANDS_ENVIRONMENT_H_

// What a command takes of its process: the streams, whether they are
// terminals, the environment variables the CLI reads, its own path. Here,
// below the commands, rather than in cli.h, so that a command never includes
// the top of the folder (docs/ARCHITECTURE.md, "Rooms of `cli/`").

#include <ostream>
#include <string>

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

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_COMMANDS_ENVIRONMENT_H_
