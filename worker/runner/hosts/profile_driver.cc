#include "worker/runner/hosts/profile_driver.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ptxbench::runner {

int RunToolProcess(const std::vector<std::string>& argv, const std::string& stdout_path) {
  std::vector<char*> c_argv;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    if (!stdout_path.empty()) {
      const int fd = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || dup2(fd, 1) < 0) _exit(127);
    }
    execv(c_argv[0], c_argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::vector<std::string> NcuProfileArgv(const ProfileDriverArgs& args) {
  std::vector<std::string> argv = {args.ncu,
                                   "--clock-control",    "none",
                                   "--launch-skip",      "1",
                                   "--launch-count",     std::to_string(args.launches),
                                   "--metrics",          args.metrics,
                                   "--export",           args.out_prefix,
                                   "--force-overwrite",  "--"};
  argv.insert(argv.end(), args.target.begin(), args.target.end());
  return argv;
}

std::vector<std::string> NcuImportArgv(const ProfileDriverArgs& args) {
  return {args.ncu, "--import", args.out_prefix + ".ncu-rep", "--csv", "--page", "raw",
          "--print-units", "base"};
}

int RunProfileDriver(const ProfileDriverArgs& args) {
  const int profiled = RunToolProcess(NcuProfileArgv(args), "");
  (void)RunToolProcess(NcuImportArgv(args), args.out_prefix + ".csv");
  return profiled;
}

}  // namespace ptxbench::runner
