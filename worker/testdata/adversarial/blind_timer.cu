// Attack: blind the timers, then do the real work. Tries to load CUPTI and
// turn its kernel records off, and to reset the device's event state.
// Expected: LIBRARY_FALLBACK (the census, silenced, leaves the call's GPU
// time unaccounted), with a latency no smaller than the honest kernel's
// (the harness times in its own process).
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <dlfcn.h>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  for (const char* lib : {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"}) {
    if (void* h = dlopen(lib, RTLD_NOW)) {
      using Disable = int (*)(int);
      if (auto off = (Disable)dlsym(h, "cuptiActivityDisable")) {
        off(10);  // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
        off(3);   // KERNEL
      }
    }
  }
  Gemm(A, B, C, stream);
}
