#ifndef PTXBENCH_RESULTS_EXPORTS_TESTING_TRAJECTORIES_H_
#define PTXBENCH_RESULTS_EXPORTS_TESTING_TRAJECTORIES_H_

// Synthetic experiments for the export tests: an experiment, the documents
// of one small definition (not a bundled one), and trajectories whose turns
// cover every outcome a turn can have. Everything is deterministic.

#include <string>
#include <vector>

#include "ptxbench/v1/client.pb.h"

namespace ptxbench::exports::testing {

inline constexpr char kDefinition[] = "gemm_export_test";
inline constexpr char kOpType[] = "gemm";
inline constexpr char kWorkload1[] = "w-0001";
inline constexpr char kWorkload2[] = "w-0002";

enum class TurnKind {
  kNoCode,        // no kernel in the answer
  kCompileError,  // COMPILE_ERROR, no traces
  kIncorrect,     // INCORRECT_NUMERICAL on one workload (NaN error), PASSED on the other
  kCorrect,       // PASSED on both; speedups `speedup` and 2*`speedup`
  kCudnn,         // LIBRARY_FALLBACK naming cuDNN
  kCompiled,      // compile-only success, no traces
  kAwaitingEval,  // answered, kernel extracted, evaluation pending
  kAwaitingModel, // nothing yet
};

struct TurnSpec {
  TurnKind kind;
  double speedup = 1.0;     // kCorrect
  bool simulated = false;   // the evaluation came from a simulated worker
};

// language "cuda", "ptx", "solution" or "triton"; a matrix spec of 2 samples
// on sm_90.
ptxbench::v1::Experiment Experiment(const std::string& language = "cuda");
std::vector<ptxbench::v1::DefinitionDocument> Definitions();

// A trajectory of Experiment() with these turns, in this state.
ptxbench::v1::Trajectory Trajectory(int sample, ptxbench::v1::TrajectoryState state,
                                    const std::vector<TurnSpec>& turns,
                                    const std::string& language = "cuda");

// The kernel source of turn `turn` of sample `sample` (language "cuda": a
// ptxbench-ABI .cu; "ptx": a module; "solution": a solution JSON; "triton":
// a kernel.py).
std::string KernelSource(int sample, int turn, const std::string& language = "cuda");

}  // namespace ptxbench::exports::testing

#endif  // PTXBENCH_RESULTS_EXPORTS_TESTING_TRAJECTORIES_H_
