#ifndef PTXBENCH_TESTS_TESTING_SIMULATED_OUTCOME_H_
#define PTXBENCH_TESTS_TESTING_SIMULATED_OUTCOME_H_

// What a simulated worker (worker/simulated_evaluator.h) decides for a kernel.
// Its verdict depends only on its --seed and the kernel's sha256 (the one
// mark in the source that steers it, a library call, makes a fallback:
// worker/simulated_evaluator.h), so a test of scripted answers picks the seed under
// which the evaluator tells the answers' story (a wrong kernel, then the
// fix), and then checks that the system carried each kernel to that verdict
// and ended the trajectory by it.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "ptxbench/v1/common.pb.h"
#include "worker/simulated_evaluator.h"

namespace ptxbench::testing {

// The status a simulated worker started with `seed` gives `kernel` in a
// full evaluation.
inline ptxbench::v1::EvalStatus SimulatedStatus(uint64_t seed, const std::string& kernel) {
  worker::SimulatedEvaluator::Options options;
  options.seed = seed;
  ptxbench::v1::EvalRequest request;
  request.set_kernel_source(kernel);
  request.set_kernel_sha256(Sha256Hex(kernel));
  request.set_mode(ptxbench::v1::FULL);
  return worker::SimulatedEvaluator(options).Evaluate(request).status();
}

// The first seed from 1 under which each kernel gets its status; 0 when
// none of the first 10,000 does.
inline uint64_t SeedFor(
    const std::vector<std::pair<std::string, ptxbench::v1::EvalStatus>>& wanted) {
  for (uint64_t seed = 1; seed <= 10'000; ++seed) {
    bool all = true;
    for (const auto& [kernel, status] : wanted) all = all && SimulatedStatus(seed, kernel) == status;
    if (all) return seed;
  }
  return 0;
}

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTS_TESTING_SIMULATED_OUTCOME_H_
