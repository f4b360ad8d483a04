// Attack: keep a kernel of its own spinning on the GPU across calls (to
// change how the GPU is shared between the harness and the host while the
// harness measures), and do the honest work. Expected: PASSED, and no
// faster than the honest kernel.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

__global__ void spin_forever(volatile int* stop) {
  while (*stop == 0) {
  }
}

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  static bool started = false;
  if (!started) {
    started = true;
    cudaStream_t own;
    cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    int* stop = nullptr;
    cudaMalloc(&stop, sizeof(int));
    cudaMemsetAsync(stop, 0, sizeof(int), own);
    spin_forever<<<1, 32, 0, own>>>(stop);
  }
  Gemm(A, B, C, stream);
}
