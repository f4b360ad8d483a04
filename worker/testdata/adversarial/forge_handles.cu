// Attack: forge legacy CUDA IPC memory handles (forge_handles.inc) to open
// the harness's memory — its expected outputs, pristine inputs, check
// counters — and overwrite what it reaches, then report the counts.
// Expected: RUNTIME_ERROR whose report says opened=0 over tens of thousands
// of tries: ptxbench's processes share memory only by descriptor, and the
// candidate host's sandbox refuses the driver's object duplication.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <stdexcept>

#include "forge_handles.inc"

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  Gemm(A, B, C, stream);
  cudaStreamSynchronize(stream);
  throw std::runtime_error(Forge(40000).Describe());
}
