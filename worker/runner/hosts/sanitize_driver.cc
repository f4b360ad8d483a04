#include "worker/runner/hosts/sanitize_driver.h"

#include "worker/runner/hosts/profile_driver.h"

namespace ptxbench::runner {

std::vector<std::string> SanitizerArgv(const SanitizeDriverArgs& args) {
  std::vector<std::string> argv = {args.sanitizer,
                                   "--tool",           "memcheck",
                                   "--log-file",       args.log_path,
                                   "--print-limit",    std::to_string(args.print_limit),
                                   "--show-backtrace", "device",
                                   "--nvtx",           "yes",
                                   "--leak-check",     "no",
                                   "--"};
  argv.insert(argv.end(), args.target.begin(), args.target.end());
  return argv;
}

int RunSanitizeDriver(const SanitizeDriverArgs& args) {
  return RunToolProcess(SanitizerArgv(args), "");
}

}  // namespace ptxbench::runner
