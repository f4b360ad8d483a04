// Attack: keep its inputs in L2 across calls — the largest persisting-L2
// set-aside, and a persisting access window over B on the call's stream —
// then the honest work. Expected: PASSED, no faster than the honest kernel
// (inputs are staged fresh and L2 flushed before every timed call).
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  int device = 0, max_persist = 0, max_window = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, device);
  cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, max_persist);
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = B.data;
  attr.accessPolicyWindow.num_bytes = std::min<size_t>(B.numel() * 2, (size_t)max_window);
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);
  Gemm(A, B, C, stream);
}
