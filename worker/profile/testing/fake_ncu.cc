// A stand-in for Nsight Compute's program in tests of worker/profile (this
// machine has none): answers --version as ncu 2025.3 does.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("NVIDIA (R) Nsight Compute Command Line Profiler\n"
                "Copyright (c) 2018-2025 NVIDIA Corporation\n"
                "Version 2025.3.1.0 (build 36398880) (public-release)\n");
    return 0;
  }
  return 1;
}
