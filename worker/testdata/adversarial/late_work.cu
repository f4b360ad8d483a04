// Attack: return at once and do the work afterwards, from a thread, outside
// the measured span. Expected: INCORRECT_NUMERICAL (the outputs are checked
// as soon as the call's own work ended).
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <unistd.h>

#include <thread>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  static cudaStream_t own = [] {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  ptxb::Tensor a = A, b = B, c = C;
  std::thread([a, b, c]() mutable {
    usleep(2000);
    Gemm(a, b, c, own);
  }).detach();
}
