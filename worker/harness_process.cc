#include "worker/harness_process.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;

std::string Tail(const std::string& text, size_t max_bytes = 4000) {
  return text.size() <= max_bytes ? text : "…" + text.substr(text.size() - max_bytes);
}

std::vector<std::string> Environment(const HarnessProcessOptions& options, const std::string& dir) {
  std::vector<std::string> env;
  for (const std::string& name : options.pass_env) {
    if (const char* value = std::getenv(name.c_str())) env.push_back(name + "=" + value);
  }
  env.push_back("TMPDIR=" + dir);
  env.push_back("HOME=" + dir);
  env.push_back("CUDA_VISIBLE_DEVICES=" +
                (options.gpu_index >= 0 ? std::to_string(options.gpu_index) : std::string()));
  return env;
}

}  // namespace

absl::StatusOr<HarnessProcessOutcome> RunHarnessProcess(const HarnessProcessOptions& options) {
  std::string pattern = options.temp_root + "/ptxb-run-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a private directory under ", options.temp_root, ": ",
                     strerror(errno)));
  }
  HarnessProcessOutcome outcome;
  outcome.private_dir = pattern;
  chmod(pattern.c_str(), 0700);
  // Removed on every path out.
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{pattern};

  for (const auto& [name, content] : options.files) {
    std::ofstream out(pattern + "/" + name, std::ios::binary);
    out << content;
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", name, " for the runner"));
  }
  process::RunOptions run;
  for (const std::string& arg : options.argv) {
    run.argv.push_back(absl::StrReplaceAll(arg, {{"{dir}", pattern}}));
  }
  run.cwd = pattern;
  run.deadline = options.deadline;
  run.environment = Environment(options, pattern);
  // A stop signal sent to the worker's whole tree (a Slurm scancel) must not
  // end the runner midway: the worker drains, and an evaluation it finishes
  // must be the kernel's result, not "killed by signal 15" blamed on it.
  // It still dies with the worker (SIGKILL at its death).
  run.ignore_stop_signals = true;
  run.rlimits = {{RLIMIT_CORE, 0},
                 {RLIMIT_FSIZE, options.max_file_bytes},
                 {RLIMIT_NOFILE, options.max_open_files}};
  absl::StatusOr<process::RunResult> result = process::Run(run);
  if (!result.ok()) return result.status();
  outcome.process = *std::move(result);

  const process::RunResult& p = outcome.process;
  if (p.timed_out) {
    outcome.status = v1::TIMEOUT;
    outcome.diagnostic = absl::StrCat("did not finish within ", absl::FormatDuration(options.deadline),
                                      "; the process group was killed\n", Tail(p.output));
  } else if (!p.exited) {
    outcome.status = v1::RUNTIME_ERROR;
    outcome.diagnostic = absl::StrCat("the runner was killed by signal ", p.term_signal, " (",
                                      strsignal(p.term_signal), ")\n", Tail(p.output));
  } else if (p.exit_code != 0) {
    outcome.status = v1::RUNTIME_ERROR;
    outcome.diagnostic =
        absl::StrCat("the runner exited with code ", p.exit_code, "\n", Tail(p.output));
  }
  // Whatever the end: a runner that crashed on its third workload still
  // wrote the first two results.
  for (const std::string& name : options.collect) {
    std::ifstream in(pattern + "/" + name, std::ios::binary);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    outcome.collected[name] = text.str();
  }
  return outcome;
}

}  // namespace ptxbench::worker
