#ifndef PTXBENCH_WORKER_SIMULATED_EVALUATOR_H_
#define PTXBENCH_WORKER_SIMULATED_EVALUATOR_H_

// A stand-in for GPU evaluation, for tests and benchmarks of the rest of the
// system: it produces plausible EvalResults without compiling or running
// anything. Every result it makes is labelled simulated.

#include <cstdint>
#include <string>
#include <utility>

#include "ptxbench/v1/common.pb.h"
#include "workloads/registry.h"

namespace ptxbench::worker {

// Deterministic: the same (seed, kernel_sha256, workload list, mode) gives the
// same result. Per kernel, about 15% COMPILE_ERROR (with an nvcc-style log),
// 20% INCORRECT_NUMERICAL on one workload, else PASSED with speedups in
// [0.3, 2.0) per workload; each workload it times has a kernel census. A
// source with a library mark (torch.matmul(, scaled_dot_product_attention(,
// cublas, ...: docs/FORMATS.md, "Simulated evaluations") is always
// LIBRARY_FALLBACK, correct by the checks, the library's kernel named.
// Thread-safe (no mutable state).
class SimulatedEvaluator {
 public:
  struct Options {
    uint64_t seed = 0;
    std::string worker_id;
    std::string gpu_model = "Simulated H200";
    // Where a request's definition's workloads come from when it names
    // none; not owned, may be null.
    const workloads::DefinitionRegistry* definitions = nullptr;
  };

  explicit SimulatedEvaluator(Options options) : options_(std::move(options)) {}

  // Workloads are the request's uuids; when it has none, those of its
  // definition in `definitions`, as a real worker runs them; else (no
  // registry, or a definition it does not know) "w0", "w1", "w2".
  // COMPILE_ONLY requests end COMPILED (or COMPILE_ERROR). wall_time_ms is
  // left 0: the caller knows how long it pretended to take.
  ptxbench::v1::EvalResult Evaluate(const ptxbench::v1::EvalRequest& request) const;

 private:
  Options options_;
};

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_SIMULATED_EVALUATOR_H_
