#ifndef PTXBENCH_WORKLOADS_TESTING_DATASETS_H_
#define PTXBENCH_WORKLOADS_TESTING_DATASETS_H_

// Small FlashInfer-Trace datasets for tests, in the source tree.

#include <string>

#include "common/data_dir.h"

namespace ptxbench::workloads::testing {

// One definition, rmsnorm_h4096 (x[T,4096], w[4096] -> y[T,4096], bfloat16),
// that no native reference computes: only its PyTorch reference does. One
// workload, rmsnorm-t8 (T = 8, random inputs).
inline std::string RmsNormDataset() { return DataDir() + "/workloads/testing/rmsnorm_dataset"; }

}  // namespace ptxbench::workloads::testing

#endif  // PTXBENCH_WORKLOADS_TESTING_DATASETS_H_
