#ifndef PTXBENCH_WORKER_EVAL_SUMMARY_H_
#define PTXBENCH_WORKER_EVAL_SUMMARY_H_

// How a worker summarizes an evaluation's workload traces into the result's
// status, all_passed and min_speedup: the one path of the GPU evaluator
// (gpu_eval.cc) and the simulated one (simulated_evaluator.cc), so that a
// simulated result reads as a real one would (pipelines/select.cc and the
// scheduler read min_speedup). The rule itself is the verdict's
// (verdict/verdict.h); this adds what only a worker knows to say.

#include "ptxbench/v1/common.pb.h"

namespace ptxbench::worker {

// verdict::Summarize on `result`'s traces, then, when the result carries no
// error yet, the first error of its first INFRA_ERROR trace that has one.
void SummarizeTraces(ptxbench::v1::EvalResult& result);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_EVAL_SUMMARY_H_
