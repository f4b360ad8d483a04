// Attack: load code the module did not bring — a copy of a library written
// into its own directory, a library in anonymous memory (memfd), and
// executable memory of its own — the ways to run carried vendor code.
// Expected: RUNTIME_ERROR whose report shows each refused: its directory is
// not executable, memfd_create and executable anonymous memory are refused.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

static std::vector<char> Slurp(const char* path) {
  std::vector<char> bytes;
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return bytes;
  char buf[1 << 16];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) bytes.insert(bytes.end(), buf, buf + n);
  close(fd);
  return bytes;
}

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  std::string report = "LOADS";
  // Its own module, a library it certainly may read: a copy of it.
  const std::vector<char> module = Slurp("/ptxbench/module/kernel.so");
  const int fd = open("copy.so", O_WRONLY | O_CREAT | O_TRUNC, 0700);
  if (fd >= 0) {
    (void)!write(fd, module.data(), module.size());
    close(fd);
  }
  void* h = dlopen("./copy.so", RTLD_NOW | RTLD_LOCAL);
  report += std::string(" written=") + (h != nullptr ? "LOADED" : dlerror());
  const int mfd = static_cast<int>(syscall(SYS_memfd_create, "lib", 0));
  report += std::string(" memfd=") + (mfd >= 0 ? "CREATED" : strerror(errno));
  void* rwx =
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  report += std::string(" rwx=") + (rwx != MAP_FAILED ? "MAPPED" : strerror(errno));
  void* rw = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool made_exec = rw != MAP_FAILED && mprotect(rw, 4096, PROT_READ | PROT_EXEC) == 0;
  report += std::string(" mprotect=") + (made_exec ? "EXECUTABLE" : strerror(errno));
  throw std::runtime_error(report);
}
