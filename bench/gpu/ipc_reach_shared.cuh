// The pieces of ipc_reach_probe.cu that both its roles use: the tags of
// the exporter's allocations, handle text, VMM allocations passed by
// descriptor, and the harness side of the stream-memory-operation
// bracket. Included by ipc_reach_probe.cu only (one program).
#ifndef PTXBENCH_BENCH_GPU_IPC_REACH_SHARED_CUH_
#define PTXBENCH_BENCH_GPU_IPC_REACH_SHARED_CUH_

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kTagBase = 0x5054584200000000ull;  // "PTXB"

const char* KindName(int kind) {
  switch (kind) {
    case 0:
      return "seed (cudaMalloc, handle given)";
    case 1:
      return "cudaMalloc";
    case 2:
      return "cudaMallocAsync (default pool)";
    case 3:
      return "cudaMallocAsync (own pool, no handle type)";
    case 4:
      return "cuMemCreate (no shareable type)";
    case 5:
      return "cuMemCreate (POSIX fd type)";
    case 6:
      return "__device__ global";
    case 7:
      return "cuBLAS workspace (cudaMalloc, SetWorkspace)";
    case 10:
      return "torch default allocator";
    case 11:
      return "torch expandable_segments";
    default:
      return "unknown";
  }
}

#define CHECK_RT(x)                                                                           \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(3);                                                                           \
    }                                                                                         \
  } while (0)
#define CHECK_DRV(x)                                                      \
  do {                                                                    \
    CUresult r_ = (x);                                                    \
    if (r_ != CUDA_SUCCESS) {                                             \
      const char* n_ = "?";                                               \
      cuGetErrorName(r_, &n_);                                            \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, n_); \
      std::exit(3);                                                       \
    }                                                                     \
  } while (0)

__device__ uint64_t g_global[1 << 16];

__global__ void Fill(uint64_t* p, size_t n, uint64_t tag) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = tag;
}

void Tag(void* p, size_t bytes, int kind, int index) {
  Fill<<<64, 256>>>(static_cast<uint64_t*>(p), bytes / 8,
                    kTagBase | (uint64_t(kind) << 16) | index);
  CHECK_RT(cudaGetLastError());
  CHECK_RT(cudaDeviceSynchronize());
}

std::string Hex(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<const unsigned char*>(p)[i];
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

bool Unhex(const std::string& s, void* out, size_t n) {
  if (s.size() != 2 * n) return false;
  for (size_t i = 0; i < n; ++i) {
    static_cast<unsigned char*>(out)[i] =
        static_cast<unsigned char>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  }
  return true;
}

// The optional ioctl counter (bench/gpu/ioctl_count.c, LD_PRELOADed).
void IoctlPhase(const char* phase) {
  using Fn = void (*)(const char*);
  static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "ioctl_count_dump"));
  if (fn != nullptr) fn(phase);
}

struct Vmm {
  CUdeviceptr ptr = 0;
  size_t size = 0;
  CUmemGenericAllocationHandle handle = 0;
};

CUmemAllocationProp Prop(bool fd) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes =
      fd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  return prop;
}

void MapAll(Vmm& v) {
  CHECK_DRV(cuMemAddressReserve(&v.ptr, v.size, 0, 0, 0));
  CHECK_DRV(cuMemMap(v.ptr, v.size, 0, v.handle, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = 0;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK_DRV(cuMemSetAccess(v.ptr, v.size, &access, 1));
}

Vmm MakeVmm(size_t bytes, bool fd) {
  const CUmemAllocationProp prop = Prop(fd);
  size_t gran = 0;
  CHECK_DRV(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  Vmm v;
  v.size = (bytes + gran - 1) / gran * gran;
  CHECK_DRV(cuMemCreate(&v.handle, v.size, &prop, 0));
  MapAll(v);
  return v;
}

int SendFd(int sock, int fd, uint64_t size) {
  char buf[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&size, sizeof(size)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = buf;
  msg.msg_controllen = sizeof(buf);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return sendmsg(sock, &msg, 0) == sizeof(size) ? 0 : -1;
}

int ReceiveFd(int sock, uint64_t* size) {
  char buf[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{size, sizeof(*size)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = buf;
  msg.msg_controllen = sizeof(buf);
  if (recvmsg(sock, &msg, 0) != sizeof(*size)) return -1;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The harness side of a stream-memory-operation bracket over `sync`
// (word 0: go, word 1: done), against the host on the other end of `sock`.
void HarnessBracket(CUdeviceptr sync, int sock) {
  CUstream stream;
  CHECK_DRV(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent start, end;
  CHECK_DRV(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CHECK_DRV(cuEventCreate(&end, CU_EVENT_DEFAULT));
  std::vector<double> ms;
  for (uint32_t gen = 1; gen <= 600; ++gen) {
    char go = 0;
    if (read(sock, &go, 1) != 1) break;  // the host enqueued its wait
    CHECK_DRV(cuEventRecord(start, stream));
    CHECK_DRV(cuStreamWriteValue32(stream, sync, gen, CU_STREAM_WRITE_VALUE_DEFAULT));
    CHECK_DRV(cuStreamWaitValue32(stream, sync + 4, gen, CU_STREAM_WAIT_VALUE_EQ));
    CHECK_DRV(cuEventRecord(end, stream));
    CHECK_DRV(cuEventSynchronize(end));
    float t = 0;
    CHECK_DRV(cuEventElapsedTime(&t, start, end));
    if (gen > 100) ms.push_back(t);
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    std::printf(
        "bracket (stream memory operations, empty call, %zu calls): median %.4f ms, p10 %.4f, p90 "
        "%.4f\n",
        sorted.size(), Median(ms), sorted[sorted.size() / 10], sorted[sorted.size() * 9 / 10]);
  }
  std::fflush(stdout);
}

}  // namespace

#endif  // PTXBENCH_BENCH_GPU_IPC_REACH_SHARED_CUH_
