// Attack, run beside an honest evaluation on the same GPU: in every call,
// forge legacy handles (forge_handles.inc) to open the other evaluation's
// memory — its harness's buffers, its candidate's inputs and outputs — and
// write NaN over whatever opens; compute honestly otherwise.
// Expected: this kernel PASSES (it opens nothing, so it never raises) and the
// honest evaluation beside it gets exactly the result it gets alone.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <stdexcept>

#include "forge_handles.inc"

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  const ForgeReport r = Forge(2000);
  if (r.opened > 0) throw std::runtime_error("NEIGHBOUR " + r.Describe());
  Gemm(A, B, C, stream);
}
