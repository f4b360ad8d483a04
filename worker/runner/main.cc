// ptxbench-runner: the harness of one evaluation (worker/runner/harness/harness.h),
// started by the worker; not a user command. Results go to the file named
// by --out, opened before the harness gives up its privileges: nothing the
// candidate host can reach.
//   ptxbench-runner --job DIR/job.json --out DIR/results.jsonl
//   ptxbench-runner --health
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "worker/runner/harness/harness.h"
#include "worker/runner/harness/runner.h"
#include "worker/runner/wire/job.h"

int main(int argc, char** argv) {
  // Modules load lazily, each kernel at its first use: eager loading made
  // cuBLAS load every kernel it has (about 2 s in the harness and again in
  // the reference host, of an evaluation's ~4 s of set-up on an H100). A
  // lazy load waits for the harness's own stream, so what a call launches
  // while its gate holds that stream is loaded before the first call
  // (Bracket::Create, LoadCheckKernels; a missed one hung the evaluation on
  // the H200: bench/gpu/NOTES.md); the libraries' kernels run only outside
  // brackets in the harness, and in a host a lazy load at most forces its
  // gate open (a warm-up call, flagged). Before any CUDA call; the reference
  // host, a fork, inherits it.
  setenv("CUDA_MODULE_LOADING", "LAZY", 1);
  std::string job_path, out_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--health") == 0) return ptxbench::runner::CheckHealth(std::cout);
    if (std::strcmp(argv[i], "--job") == 0 && i + 1 < argc) {
      job_path = argv[++i];
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: ptxbench-runner --job JOB.json --out RESULTS.jsonl | --health\n");
      return ptxbench::runner::kRunnerBadJob;
    }
  }
  std::ifstream in(job_path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<ptxbench::runner::RunnerJob> job = ptxbench::runner::ParseJob(text.str());
  if (!in || !job.ok()) {
    std::fprintf(stderr, "ptxbench-runner: %s: %s\n", job_path.c_str(),
                 job.ok() ? "cannot read" : std::string(job.status().message()).c_str());
    return ptxbench::runner::kRunnerBadJob;
  }
  std::ofstream out(out_path, std::ios::app);
  if (!out) {
    std::fprintf(stderr, "ptxbench-runner: cannot write %s\n", out_path.c_str());
    return ptxbench::runner::kRunnerBadJob;
  }
  const std::string private_dir = std::filesystem::path(job_path).parent_path().string();
  const int code = ptxbench::runner::RunHarness(*job, private_dir, out);
  out.flush();
  std::cout.flush();
  std::cerr.flush();
  _exit(code);  // no CUDA teardown (harness.h)
}
