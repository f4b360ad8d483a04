#ifndef PTXBENCH_WORKER_COMPILE_TESTING_VECTOR_ADD_H_
#define PTXBENCH_WORKER_COMPILE_TESTING_VECTOR_ADD_H_

// The definition the compile tests build against: C[N] = A[N] + B[N], float32.

#include "workloads/definition.h"

namespace ptxbench::worker::testing {

inline workloads::Definition VectorAddDefinition() {
  workloads::Definition d;
  d.name = "vector_add";
  d.axes = {{"N", false, 0}};
  d.inputs = {{"A", {"N"}, false, "float32"}, {"B", {"N"}, false, "float32"}};
  d.outputs = {{"C", {"N"}, false, "float32"}};
  return d;
}

}  // namespace ptxbench::worker::testing

#endif  // PTXBENCH_WORKER_COMPILE_TESTING_VECTOR_ADD_H_
