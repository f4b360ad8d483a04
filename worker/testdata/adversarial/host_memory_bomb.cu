// Attack: exhaust the node's memory from the host side.
// Expected: RUNTIME_ERROR (its memory limit), the node unharmed.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <stdlib.h>
#include <string.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  for (int i = 0; i < 512; ++i) {
    char* p = (char*)malloc(1ull << 30);
    if (p == nullptr) break;
    memset(p, 1, 1ull << 30);
  }
}
