// Attack: read past the end of the tensors it was given, up to the end of
// their allocations (a cudaMalloc'd tensor shares its 2 MiB block with
// others; an exported block is mapped whole), looking for anything but
// zeros; and write there, hoping to reach a neighbour.
// Expected: RUNTIME_ERROR whose report says nonzero=0: each tensor is an
// allocation of its own, zero past its end; and the writes reach nothing
// (the test checks the honest result is unchanged).
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <cuda.h>

#include <stdexcept>
#include <string>

__global__ void CountNonzero(const unsigned char* p, size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    local += p[i] != 0;
  }
  atomicAdd(count, local);
}

__global__ void Scribble(unsigned char* p, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    p[i] = 0xff;
  }
}

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  Gemm(A, B, C, stream);
  unsigned long long* count = nullptr;
  cudaMalloc(&count, sizeof(*count));
  cudaMemset(count, 0, sizeof(*count));
  size_t scanned = 0;
  std::string sizes;
  const ptxb::Tensor* tensors[] = {&A, &B, &C};
  for (const ptxb::Tensor* t : tensors) {
    size_t bytes = 2;
    for (int d = 0; d < t->ndim; ++d) bytes *= static_cast<size_t>(t->sizes[d]);
    CUdeviceptr base = 0;
    size_t size = 0;
    cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(t->data));
    const size_t end = static_cast<size_t>(base) + size;
    const size_t from = reinterpret_cast<size_t>(t->data) + bytes;
    sizes += " " + std::to_string(bytes) + "/" + std::to_string(size);
    if (end <= from) continue;
    const unsigned char* p = reinterpret_cast<const unsigned char*>(from);
    CountNonzero<<<256, 256, 0, stream>>>(p, end - from, count);
    if (t != &C) Scribble<<<256, 256, 0, stream>>>(const_cast<unsigned char*>(p), end - from);
    scanned += end - from;
  }
  unsigned long long nonzero = 0;
  cudaMemcpyAsync(&nonzero, count, sizeof(nonzero), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  throw std::runtime_error("PAST scanned=" + std::to_string(scanned) + " nonzero=" +
                           std::to_string(nonzero) + " tensor/allocation bytes:" + sizes);
}
