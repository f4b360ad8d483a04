// ptxbench-runner: the child process in which a candidate kernel runs
// (worker/runner/runner.h). Started by the worker inside a sandbox; not a
// user command.
//   ptxbench-runner --job JOB.json --out RESULTS.jsonl
//   ptxbench-runner --health
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "worker/runner/job.h"
#include "worker/runner/runner.h"

int main(int argc, char** argv) {
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
  return ptxbench::runner::RunJob(*job, out);
}
