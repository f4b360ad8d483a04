// Attack on scale_1e-4 (this folder's dataset): every output is below atol,
// so zeros are "close enough" element by element (KernelBench #165).
// Expected: INCORRECT_NUMERICAL, the constant-output check
// (docs/MEASUREMENT.md, "Correctness checks").
#include "ptxbench/kernel_abi.h"

PTXB_EXPORT void run(const ptxb::Tensor& x, ptxb::Tensor& y, cudaStream_t stream) {
  cudaMemsetAsync(y.data, 0, y.numel() * sizeof(float), stream);
}
