// The `ptxbench` command: gathers the process environment and hands the
// command line to the CLI library.

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace {

std::string SelfExe() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(true);
  ptxbench::cli::CliEnvironment env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.out_is_terminal = isatty(STDOUT_FILENO) == 1;
  env.err_is_terminal = isatty(STDERR_FILENO) == 1;
  if (const char* scheduler = std::getenv("PTXBENCH_SCHEDULER")) env.scheduler_env = scheduler;
  if (const char* token = std::getenv("PTXBENCH_TOKEN")) env.token_env = token;
  env.self_exe = SelfExe();
  return ptxbench::cli::RunCli(std::vector<std::string>(argv + 1, argv + argc), env);
}
