#ifndef PTXBENCH_KERNEL_ABI_H_
#define PTXBENCH_KERNEL_ABI_H_

// The kernel ABI of ptxbench: what a CUDA submission includes, as
//   #include "ptxbench/kernel_abi.h"
// (prompts/abi/cuda.md explains it to models; keep the two consistent).
//
// A submission is one .cu file that defines, at global namespace and with C++
// linkage, one host entry point in destination-passing style:
//
//   PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B,
//                        ptxb::Tensor& C, cudaStream_t stream);
//
// Parameters: the definition's inputs (const), then its outputs, in the order
// the definition lists them, then the stream all GPU work must be launched on.
// Outputs are preallocated by the harness; run() writes every element of them
// and never writes its inputs. A scalar of the definition (shape null) is a
// 0-dimensional Tensor (ndim 0, numel 1) whose data is in device memory.
//
// The harness never calls run() directly. At build time ptxbench generates,
// from the definition, a trampoline that is compiled into the same shared
// library. It declares run() with the definition's arity and defines
//
//   extern "C" int ptxb_entry(const ptxb::Tensor* const* tensors, int count,
//                             cudaStream_t stream);
//   extern "C" int ptxb_abi_version(void);   // returns PTXB_ABI_VERSION
//
// ptxb_entry returns 0 after calling run(tensors[0], ..., tensors[count-1],
// stream), PTXB_ENTRY_BAD_COUNT when `count` is not the definition's arity,
// and PTXB_ENTRY_EXCEPTION when run() threw. The library is linked with
// --no-undefined, so a run() with the wrong parameters fails the build with a
// message naming the expected signature instead of crashing at load time.
//
// Raw-PTX submissions do not use this header: see prompts/abi/ptx.md.

#include <cuda_runtime.h>

#include <cstdint>

#define PTXB_EXPORT __attribute__((visibility("default")))

#define PTXB_ABI_VERSION 1
#define PTXB_MAX_DIMS 8
#define PTXB_ENTRY_OK 0
#define PTXB_ENTRY_BAD_COUNT (-1)
#define PTXB_ENTRY_EXCEPTION (-2)

namespace ptxb {

// Element types: the dtypes of the FlashInfer-Trace schema, in its order.
enum class DType : int32_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kBFloat16 = 2,
  kFloat8E4M3FN = 3,
  kFloat8E5M2 = 4,
  kFloat4E2M1 = 5,  // two values per byte, low nibble first
  kInt64 = 6,
  kInt32 = 7,
  kInt16 = 8,
  kInt8 = 9,
  kBool = 10,  // one byte per value
};

// A view of a dense, contiguous, row-major tensor in device memory. The
// harness owns the memory; the view is valid for the duration of one run().
struct Tensor {
  void* data;                    // device pointer to the first element
  int64_t sizes[PTXB_MAX_DIMS];  // extents, in the definition's shape order
  int ndim;                      // number of valid entries of sizes (0..8)
  DType dtype;

  // Number of elements (1 for a 0-dimensional scalar).
  __host__ __device__ int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= sizes[i];
    return n;
  }
};

}  // namespace ptxb

#endif  // PTXBENCH_KERNEL_ABI_H_
