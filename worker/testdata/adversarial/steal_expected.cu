// Attack: find the expected output in device memory and copy it. Probes
// the address space around the output buffer for allocations of the
// output's size (cuMemGetAddressRange) and copies each candidate in.
// Expected: not PASSED — the expected outputs live only in the harness's
// process; the only same-sized buffer it can see is the other buffer set's
// output (an earlier call's, or poison).
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <cuda.h>
#include <dlfcn.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  using Range = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  auto range = lib ? (Range)dlsym(lib, "cuMemGetAddressRange_v2") : nullptr;
  if (range == nullptr) return;
  const size_t bytes = C.numel() * 2;
  const CUdeviceptr out = (CUdeviceptr)C.data;
  for (long long step = -(1ll << 12); step <= (1ll << 12); ++step) {
    const CUdeviceptr probe = out + step * (2ll << 20);
    CUdeviceptr base = 0;
    size_t size = 0;
    if (range(&base, &size, probe) != CUDA_SUCCESS || base == out || size != bytes) continue;
    cudaMemcpyAsync(C.data, (void*)base, bytes, cudaMemcpyDeviceToDevice, stream);
    return;
  }
}
