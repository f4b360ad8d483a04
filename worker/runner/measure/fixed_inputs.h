#ifndef PTXBENCH_WORKER_RUNNER_FIXED_INPUTS_H_
#define PTXBENCH_WORKER_RUNNER_FIXED_INPUTS_H_

// The inputs a workload fixes instead of leaving them to the seed
// (job.h FixedInput: a dataset's "scalar" and "safetensors" sources), as
// the harness loads them: exactly the definition's dtype and the workload's
// shape, never converted or padded. They are read while the runner still
// has the worker's privileges (a dataset need not be readable by the
// sandbox uid), before any host starts.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/kernel_abi.h"
#include "worker/runner/wire/job.h"
#include "workloads/definition.h"

namespace ptxbench::runner {

struct FixedValue {
  int index = 0;      // the input's position in the definition
  std::string bytes;  // its value, in the input's dtype
};

// Every fixed input of `workload`, checked: kInvalidArgument or kNotFound
// naming the input, the file and what differs.
absl::StatusOr<std::vector<FixedValue>> LoadFixedInputs(const workloads::Definition& definition,
                                                        const WorkloadSpec& workload);

// A scalar as JSON text ("1e-06", "3", "true") encoded in `dtype`: floats
// rounded to nearest, integers only when the value is one and fits, booleans
// from true/false or 0/1. kInvalidArgument saying why not.
absl::StatusOr<std::string> EncodeScalar(const std::string& json_text, ptxb::DType dtype);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_FIXED_INPUTS_H_
