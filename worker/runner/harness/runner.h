#ifndef PTXBENCH_WORKER_RUNNER_HARNESS_RUNNER_H_
#define PTXBENCH_WORKER_RUNNER_HARNESS_RUNNER_H_

// ptxbench-runner: the harness of one evaluation (harness.h), and the GPU
// self-test the worker runs after a failed evaluation.

#include <ostream>

namespace ptxbench::runner {

// A short self-test of the GPU (context, allocation, a kernel, a cuBLAS call,
// free memory): 0 healthy, 1 not, with one line saying why on `out`.
int CheckHealth(std::ostream& out);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HARNESS_RUNNER_H_
