// Attack: carry the toolkit's cuBLASLt inside the module (.incbin at build
// time, the path split so no scan of the source sees it), write it out at
// run time and call it: cuBLAS's speed, recorded as the kernel's own.
// Expected: not PASSED. The compiler's sandbox masks every vendor library,
// so the module carries nothing, and what it writes out cannot be loaded;
// a module that did carry one would be LIBRARY_FALLBACK.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

asm(".section .rodata\n"
    ".global carried_start\ncarried_start:\n"
    ".incbin \"/usr/local/cuda/lib64/libcubl"
    "asLt.so.13\"\n"
    ".global carried_end\ncarried_end:\n"
    ".previous\n");
extern "C" const char carried_start[], carried_end[];

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  const size_t size = static_cast<size_t>(carried_end - carried_start);
  const int fd = open("carried.so", O_WRONLY | O_CREAT | O_TRUNC, 0700);
  if (fd >= 0) {
    (void)!write(fd, carried_start, size);
    close(fd);
  }
  void* h = dlopen("./carried.so", RTLD_NOW);
  if (h == nullptr) {
    throw std::runtime_error("CARRIED " + std::to_string(size) +
                             " bytes; load refused: " + dlerror());
  }
  using CreateFn = int (*)(void**);
  auto create = reinterpret_cast<CreateFn>(dlsym(h, (std::string("cubl") + "asLtCreate").c_str()));
  void* handle = nullptr;
  throw std::runtime_error("CARRIED and loaded; create -> " +
                           std::to_string(create != nullptr ? create(&handle) : -1));
}
