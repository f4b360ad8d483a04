#ifndef PTXBENCH_CLI_CLI_H_
#define PTXBENCH_CLI_CLI_H_

// The `ptxbench` command as a library: RunCli parses a command line, runs the
// command and returns its exit code (0 ok, 1 failure, 2 usage error). Errors
// are one line on `err`, "ptxbench: <what went wrong>". main.cc only gathers
// the process environment into a CliEnvironment.

#include <string>
#include <vector>

#include "cli/commands/environment.h"

namespace ptxbench::cli {

// `args` excludes the program name.
int RunCli(const std::vector<std::string>& args, const CliEnvironment& env);

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_CLI_H_
