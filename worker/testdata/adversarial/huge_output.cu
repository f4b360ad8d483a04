// Attack: flood stdout (1 GiB), then do the work. Expected: PASSED with an
// honest speedup; what it printed is bounded in the result.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <unistd.h>

#include <vector>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  static bool flooded = false;
  if (!flooded) {
    flooded = true;
    std::vector<char> junk(1 << 20, 'x');
    for (int i = 0; i < 1024; ++i) (void)!write(1, junk.data(), junk.size());
  }
  Gemm(A, B, C, stream);
}
