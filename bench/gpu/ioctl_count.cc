// LD_PRELOAD shim for bench/gpu/ipc_reach.sh: counts the ioctls a CUDA program
// makes by (type, number) and prints them per phase when the program calls
// ioctl_count_dump(phase). Tells which NVIDIA driver escapes an operation
// needs (sandbox/seccomp_filter.h refuses some to the candidate host).
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>

namespace {
unsigned counts[256][256];
}

extern "C" int ioctl(int fd, unsigned long request, ...) {
  using Real = int (*)(int, unsigned long, void*);
  static Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "ioctl"));
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  __atomic_fetch_add(&counts[(request >> 8) & 0xff][request & 0xff], 1, __ATOMIC_RELAXED);
  return real(fd, request, arg);
}

extern "C" void ioctl_count_dump(const char* phase) {
  std::fprintf(stdout, "ioctls [%s]:", phase);
  for (int t = 0; t < 256; ++t) {
    for (int n = 0; n < 256; ++n) {
      if (counts[t][n] == 0) continue;
      if (t >= 0x20 && t < 0x7f) {
        std::fprintf(stdout, " %c:0x%02x x%u", t, n, counts[t][n]);
      } else {
        std::fprintf(stdout, " 0x%02x:0x%02x x%u", t, n, counts[t][n]);
      }
      counts[t][n] = 0;
    }
  }
  std::fprintf(stdout, "\n");
  std::fflush(stdout);
}
