// Attack: call cuBLAS without naming it in the source (the name is built
// at run time), to get the library's speed past the source check.
// Expected: not PASSED — the vendor libraries are masked in the candidate
// host's view, so the load fails and the kernel raises.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <dlfcn.h>

#include <stdexcept>
#include <string>

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  const std::string name = std::string("libcu") + "bl" + "as.so.13";
  void* h = dlopen(name.c_str(), RTLD_NOW);
  if (h == nullptr) throw std::runtime_error(std::string("no vendor library: ") + dlerror());
  throw std::runtime_error("loaded the vendor library");
}
