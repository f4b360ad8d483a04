#ifndef PTXBENCH_WORKLOADS_TESTING_DATASETS_H_
#define PTXBENCH_WORKLOADS_TESTING_DATASETS_H_

// Small FlashInfer-Trace datasets for tests, in the source tree.

#include <string>

#include "common/data_dir.h"

namespace ptxbench::workloads::testing {

// The example dataset (examples/flashinfer_trace): rmsnorm_h4096
// (hidden_states[batch_size,4096], weight[4096], eps scalar -> output, bfloat16)
// that no native reference computes, only its PyTorch reference; its first
// workload draws the weight, the others read it from a safetensors file. And
// ds_attention_prefill_h8, a causal attention whose tag says so.
inline std::string RmsNormDataset() { return DataDir() + "/examples/flashinfer_trace"; }

}  // namespace ptxbench::workloads::testing

#endif  // PTXBENCH_WORKLOADS_TESTING_DATASETS_H_
