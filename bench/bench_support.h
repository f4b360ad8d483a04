#ifndef PTXBENCH_BENCH_BENCH_SUPPORT_H_
#define PTXBENCH_BENCH_BENCH_SUPPORT_H_

// What the benchmarks that drive a real scheduler share.

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "auth/token.h"
#include "ptxbench/v1/executor.pb.h"

namespace ptxbench::bench {

// The admin token of a scheduler just started on `dir`, once it is up (it
// writes scheduler.addr when it listens, after loading its database; up to
// 60 s).
inline absl::StatusOr<std::string> WaitForScheduler(const std::string& dir) {
  for (int i = 0; i < 1200 && !std::filesystem::exists(dir + "/scheduler.addr"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return auth::ReadTokenFile(dir + "/admin.token");
}

// What a simulated executor reports on a task it leased: a model answer of
// one tiny kernel, or an evaluation that passed at 1x.
inline void FillSimulatedCompletion(const ptxbench::v1::Task& task,
                                    ptxbench::v1::CompleteRequest* out) {
  if (task.kind() == ptxbench::v1::LLM) {
    auto* llm = out->mutable_llm();
    llm->set_text(
        "```cpp\n#include \"ptxbench/kernel_abi.h\"\n__global__ void k() {}\n"
        "PTXB_EXPORT void run() { k<<<1, 1>>>(); }\n```\n");
    llm->set_finish_reason("stop");
    llm->set_provider("simulated");
    llm->set_simulated(true);
  } else {
    auto* eval = out->mutable_eval();
    eval->set_status(ptxbench::v1::PASSED);
    eval->set_all_passed(true);
    eval->set_min_speedup(1.0);
    eval->set_simulated(true);
  }
}

}  // namespace ptxbench::bench

#endif  // PTXBENCH_BENCH_BENCH_SUPPORT_H_
