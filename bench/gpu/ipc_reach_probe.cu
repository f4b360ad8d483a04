// ipc_reach_probe: which GPU allocations of one process can another process
// open with a forged legacy CUDA IPC handle (docs/SECURITY.md, "The memory
// model"). Not a test: a measurement, run on a GPU machine by
// bench/gpu/ipc_reach.sh, whose table docs/SECURITY.md records.
//
//   ipc_reach_probe exporter --sock PATH
//     Makes allocations of every kind the worker's processes use, each filled
//     with a tag naming its kind, prints "READY <seed handle hex>" (the legacy
//     handle of its first cudaMalloc allocation: the most an attacker was ever
//     given) and serves PATH: a connection gets a POSIX-fd VMM allocation
//     (SCM_RIGHTS) and then plays the harness of a stream-memory-operation
//     bracket with it. Ends at EOF on stdin.
//   ipc_reach_probe forger --seed HEX [--uid U] [--newpid] [--deny-ioctl N,..]
//                          [--deny-exec] [--sock PATH] [--span N] [--dlopen LIB]
//     Forges legacy handles (stepping each 32-bit word of the seed and of its
//     own handles, joint steps, random handles), opens what it can, reads the
//     tag, and prints what it reached by kind. With --sock it imports the
//     exporter's VMM allocation through the fd and plays the host side of the
//     bracket. --deny-ioctl installs a seccomp filter refusing those NVIDIA RM
//     escape codes on every fd; --deny-exec refuses anonymous executable
//     memory, mprotect(PROT_EXEC) and memfd_create, as the candidate host's
//     sandbox would.
#include "ipc_reach_shared.cuh"

namespace {

int Exporter(int argc, char** argv) {
  std::string sock_path;
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--sock") == 0) sock_path = argv[i + 1];
  }
  CHECK_DRV(cuInit(0));
  CHECK_RT(cudaSetDevice(0));
  CHECK_RT(cudaFree(nullptr));
  std::vector<std::pair<int, size_t>> made;
  void* seed = nullptr;
  CHECK_RT(cudaMalloc(&seed, 1 << 20));
  Tag(seed, 1 << 20, 0, 0);
  cudaIpcMemHandle_t seed_handle;
  CHECK_RT(cudaIpcGetMemHandle(&seed_handle, seed));
  int index = 1;
  for (size_t bytes :
       {size_t{4096}, size_t{1} << 20, size_t{64} << 20, size_t{4096}, size_t{1} << 20}) {
    void* p = nullptr;
    CHECK_RT(cudaMalloc(&p, bytes));
    Tag(p, bytes, 1, index++);
  }
  cudaStream_t s;
  CHECK_RT(cudaStreamCreate(&s));
  for (size_t bytes : {size_t{1} << 20, size_t{64} << 20}) {
    void* p = nullptr;
    CHECK_RT(cudaMallocAsync(&p, bytes, s));
    CHECK_RT(cudaStreamSynchronize(s));
    Tag(p, bytes, 2, index++);
  }
  cudaMemPoolProps pool_props{};
  pool_props.allocType = cudaMemAllocationTypePinned;
  pool_props.handleTypes = cudaMemHandleTypeNone;
  pool_props.location.type = cudaMemLocationTypeDevice;
  pool_props.location.id = 0;
  cudaMemPool_t pool;
  CHECK_RT(cudaMemPoolCreate(&pool, &pool_props));
  for (size_t bytes : {size_t{1} << 20, size_t{64} << 20}) {
    void* p = nullptr;
    CHECK_RT(cudaMallocFromPoolAsync(&p, bytes, pool, s));
    CHECK_RT(cudaStreamSynchronize(s));
    Tag(p, bytes, 3, index++);
  }
  for (bool fd : {false, true}) {
    for (size_t bytes : {size_t{2} << 20, size_t{64} << 20}) {
      Vmm v = MakeVmm(bytes, fd);
      Tag(reinterpret_cast<void*>(v.ptr), v.size, fd ? 5 : 4, index++);
    }
  }
  void* global = nullptr;
  CHECK_RT(cudaGetSymbolAddress(&global, g_global));
  Tag(global, sizeof(uint64_t) << 16, 6, index++);
  // cuBLAS with a workspace of ours, and whatever it allocates itself.
  cublasHandle_t blas;
  if (cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS) {
    void* ws = nullptr;
    CHECK_RT(cudaMalloc(&ws, 32 << 20));
    Tag(ws, 32 << 20, 7, index++);
    cublasSetWorkspace(blas, ws, 32 << 20);
    cublasSetStream(blas, s);
    const int n = 2048;
    void *a, *b, *c;
    CHECK_RT(cudaMalloc(&a, n * n * 2));
    CHECK_RT(cudaMalloc(&b, n * n * 2));
    CHECK_RT(cudaMalloc(&c, n * n * 2));
    const float one = 1, zero = 0;
    cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b, CUDA_R_16BF,
                 n, &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    CHECK_RT(cudaStreamSynchronize(s));
    std::printf(
        "note: cuBLAS created, one GEMM run (its internal allocations are 'unknown' if reached)\n");
  }
  // The VMM allocation handed over by fd, and the bracket's sync words.
  Vmm given = MakeVmm(2 << 20, true);
  Tag(reinterpret_cast<void*>(given.ptr), given.size, 5, 99);
  Vmm sync = MakeVmm(2 << 20, true);
  CHECK_RT(cudaMemset(reinterpret_cast<void*>(sync.ptr), 0, sync.size));
  CHECK_RT(cudaDeviceSynchronize());

  int listener = -1;
  if (!sock_path.empty()) {
    listener = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock_path.c_str());
    unlink(sock_path.c_str());
    if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(listener, 4) != 0) {
      std::perror("bind");
      return 3;
    }
    chmod(sock_path.c_str(), 0777);
  }
  std::printf("READY %s\n", Hex(&seed_handle, sizeof(seed_handle)).c_str());
  std::fflush(stdout);
  if (listener >= 0) {
    fcntl(0, F_SETFL, O_NONBLOCK);
    while (true) {
      char c;
      if (read(0, &c, 1) == 0) break;
      const int conn = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK);
      if (conn < 0) {
        usleep(20000);
        continue;
      }
      fcntl(conn, F_SETFL, 0);
      int fd_given = -1, fd_sync = -1;
      CHECK_DRV(cuMemExportToShareableHandle(&fd_given, given.handle,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      CHECK_DRV(cuMemExportToShareableHandle(&fd_sync, sync.handle,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
      SendFd(conn, fd_given, given.size);
      SendFd(conn, fd_sync, sync.size);
      close(fd_given);
      close(fd_sync);
      CHECK_RT(cudaMemset(reinterpret_cast<void*>(sync.ptr), 0, 8));
      CHECK_RT(cudaDeviceSynchronize());
      HarnessBracket(sync.ptr, conn);
      close(conn);
    }
  } else {
    char c;
    while (read(0, &c, 1) > 0) {
    }
  }
  return 0;
}

// seccomp: refuse the listed NVIDIA RM escapes ('F' ioctls) and, with
// `exec`, anonymous executable memory, mprotect(PROT_EXEC), memfd_create.
void InstallFilter(const std::vector<unsigned>& escapes, bool exec) {
  std::vector<sock_filter> f;
  const sock_filter ld_nr = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
  const sock_filter deny = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  const sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  for (unsigned e : escapes) {
    f.push_back(ld_nr);
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 4));
    f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])));
    f.push_back(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffff));
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x4600u | e, 0, 1));
    f.push_back(deny);
  }
  if (exec) {
    f.push_back(ld_nr);
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_memfd_create, 0, 1));
    f.push_back(deny);
    for (int nr : {__NR_mprotect, __NR_pkey_mprotect}) {
      f.push_back(ld_nr);
      f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, 3));
      f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])));
      f.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1));
      f.push_back(deny);
    }
    f.push_back(ld_nr);
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 0, 5));
    f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])));
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 3));
    f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[3])));
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 0, 1));
    f.push_back(deny);
  }
  f.push_back(allow);
  sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    std::perror("seccomp");
    std::exit(3);
  }
}

struct Reach {
  int tried = 0, opened = 0;
  std::map<int, int> errors;         // CUresult of failed opens -> count
  std::vector<std::string> handles;  // opened ones (hex), read later by a fresh process
  std::set<uint64_t> objects;        // (client, memory object) of the opened ones
};

// Opens `h` and closes it again; what it holds is read by another process
// (ReadOne): a forged offset or size can map a range whose read faults,
// which would end this process's context and every scan after it.
void TryOpen(const CUipcMemHandle& h, Reach& r) {
  ++r.tried;
  CUdeviceptr p = 0;
  const CUresult e = cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (e != CUDA_SUCCESS) {
    ++r.errors[static_cast<int>(e)];
    return;
  }
  ++r.opened;
  // One of each memory object (words 12 and 13) is read back: a fresh
  // process each takes a second.
  uint32_t w[16];
  std::memcpy(w, &h, sizeof(w));
  if (r.objects.insert((uint64_t{w[12]} << 32) | w[13]).second && r.handles.size() < 12) {
    r.handles.push_back(Hex(&h, sizeof(h)));
  }
  cuIpcCloseMemHandle(p);
}

// The kind of each opened handle, each read by a fresh process.
std::string Kinds(const Reach& r) {
  static const std::string self = [] {
    char path[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
  }();
  std::map<std::string, int> kinds;
  for (const std::string& h : r.handles) {
    const std::string command = self + " read " + h + " 2>&1";
    std::string line = "no answer";
    if (FILE* f = popen(command.c_str(), "r")) {
      char buf[256] = {};
      if (std::fgets(buf, sizeof(buf), f) != nullptr) line = buf;
      pclose(f);
    }
    while (!line.empty() && line.back() == '\n') line.pop_back();
    kinds[line]++;
  }
  std::string out;
  for (const auto& [k, n] : kinds) out += " | " + k + ": " + std::to_string(n);
  return out;
}

void Print(const char* what, const Reach& r) {
  std::printf("scan %-40s tried %6d opened %4d (%zu objects)", what, r.tried, r.opened,
              r.objects.size());
  std::printf("%s |", Kinds(r).c_str());
  for (const auto& [code, n] : r.errors) std::printf(" err %d x%d", code, n);
  std::printf("\n");
  std::fflush(stdout);
}

// `read HEX`: opens one handle, prints the kind of what it holds.
int ReadOne(const char* hex) {
  CUipcMemHandle h;
  if (!Unhex(hex, &h, sizeof(h))) return 2;
  CUcontext ctx;
  CUdevice dev;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
    std::printf("no context\n");
    _exit(0);
  }
  CUdeviceptr p = 0;
  if (cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != CUDA_SUCCESS) {
    std::printf("did not open again\n");
    _exit(0);
  }
  CUdeviceptr base = 0;
  size_t size = 0;
  cuMemGetAddressRange(&base, &size, p);
  uint64_t word = 0;
  const CUresult e = cuMemcpyDtoH(&word, p, 8);
  if (e != CUDA_SUCCESS) {
    std::printf("read faulted (%zu B mapped)\n", size);
  } else if ((word >> 32) == (kTagBase >> 32)) {
    std::printf("%s\n", KindName(static_cast<int>((word >> 16) & 0xffff)));
  } else {
    std::printf("untagged memory (%zu B mapped)\n", size);
  }
  std::fflush(stdout);
  _exit(0);
}

int Forger(int argc, char** argv) {
  std::string seed_hex, sock_path, lib;
  int uid = -1, span = 256;
  bool newpid = false, deny_exec = false;
  std::vector<unsigned> escapes;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--seed")
      seed_hex = v, ++i;
    else if (a == "--uid")
      uid = std::atoi(v), ++i;
    else if (a == "--span")
      span = std::atoi(v), ++i;
    else if (a == "--sock")
      sock_path = v, ++i;
    else if (a == "--dlopen")
      lib = v, ++i;
    else if (a == "--newpid")
      newpid = true;
    else if (a == "--deny-exec")
      deny_exec = true;
    else if (a == "--deny-ioctl") {
      for (char* t = std::strtok(argv[++i], ","); t != nullptr; t = std::strtok(nullptr, ","))
        escapes.push_back(static_cast<unsigned>(std::strtoul(t, nullptr, 0)));
    }
  }
  if (newpid) {
    if (unshare(CLONE_NEWPID) != 0) std::perror("unshare(CLONE_NEWPID)");
    const pid_t child = fork();
    if (child > 0) {
      int status = 0;
      waitpid(child, &status, 0);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  }
  if (uid >= 0 && (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)) {
    std::perror("setresuid");
    return 3;
  }
  if (!escapes.empty() || deny_exec) InstallFilter(escapes, deny_exec);
  std::printf("forger: uid %d, pid %d (own PID namespace: %s), filter: %zu escapes denied%s\n",
              getuid(), getpid(), newpid ? "yes" : "no", escapes.size(),
              deny_exec ? ", exec denied" : "");
  IoctlPhase("start");
  CHECK_DRV(cuInit(0));
  CUdevice dev;
  CHECK_DRV(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK_DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_DRV(cuCtxSetCurrent(ctx));
  IoctlPhase("init");
  CUdeviceptr own[3];
  CUipcMemHandle own_h[3];
  for (int i = 0; i < 3; ++i) CHECK_DRV(cuMemAlloc(&own[i], 1 << 20));
  IoctlPhase("cuMemAlloc x3");
  for (int i = 0; i < 3; ++i) {
    const CUresult r = cuIpcGetMemHandle(&own_h[i], own[i]);
    if (r != CUDA_SUCCESS) std::printf("cuIpcGetMemHandle: %d\n", r);
  }
  IoctlPhase("cuIpcGetMemHandle x3");
  {
    CUmodule m;
    // A trivial kernel through the PTX JIT.
    const char* ptx =
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p){\n"
        ".reg .b64 %rd<2>;\nld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], 7;\nret;\n}\n";
    CUresult r = cuModuleLoadData(&m, ptx);
    CUfunction f;
    if (r == CUDA_SUCCESS) r = cuModuleGetFunction(&f, m, "k");
    void* args[] = {&own[0]};
    if (r == CUDA_SUCCESS) r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr);
    if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
    uint32_t v = 0;
    if (r == CUDA_SUCCESS) r = cuMemcpyDtoH(&v, own[0], 4);
    std::printf("PTX JIT + launch + copy: %s (value %u)\n", r == CUDA_SUCCESS ? "ok" : "FAILED", v);
    IoctlPhase("module load + launch");
    // What else a kernel's host code does: stream-ordered allocation,
    // pinned and registered host memory, events.
    CUstream s = nullptr;
    CUdeviceptr a = 0;
    void* pinned = nullptr;
    CUevent ev = nullptr;
    static char registered[1 << 16];
    const CUresult async = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
                                   cuMemAllocAsync(&a, 1 << 20, s) == CUDA_SUCCESS &&
                                   cuMemFreeAsync(a, s) == CUDA_SUCCESS
                               ? cuStreamSynchronize(s)
                               : CUDA_ERROR_UNKNOWN;
    const CUresult host = cuMemAllocHost(&pinned, 1 << 20);
    const CUresult reg = cuMemHostRegister(registered, sizeof(registered), 0);
    const CUresult event = cuEventCreate(&ev, CU_EVENT_DEFAULT);
    std::printf("stream-ordered alloc %d, pinned host %d, host register %d, event %d (0 = ok)\n",
                async, host, reg, event);
    IoctlPhase("async alloc, pinned, registered, event");
  }
  if (!lib.empty()) {
    void* h = dlopen(lib.c_str(), RTLD_NOW);
    std::printf("dlopen(%s): %s\n", lib.c_str(), h != nullptr ? "ok" : dlerror());
    void* anon =
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    std::printf("anonymous RWX mmap: %s\n", anon == MAP_FAILED ? strerror(errno) : "ok");
    const int mfd = static_cast<int>(syscall(__NR_memfd_create, "x", 0));
    std::printf("memfd_create: %s\n", mfd < 0 ? strerror(errno) : "ok");
  }
  std::printf("own handles:\n");
  for (int i = 0; i < 3; ++i) std::printf("  %s\n", Hex(&own_h[i], sizeof(CUipcMemHandle)).c_str());

  CUipcMemHandle seed{};
  const bool have_seed = Unhex(seed_hex, &seed, sizeof(seed));
  if (have_seed) std::printf("seed:\n  %s\n", seed_hex.c_str());
  uint32_t w0[16], w1[16], w2[16];
  std::memcpy(w0, &own_h[0], 64);
  std::memcpy(w1, &own_h[1], 64);
  std::memcpy(w2, &own_h[2], 64);
  std::vector<int> varying;
  for (int w = 0; w < 16; ++w) {
    if (w0[w] != w1[w] || w1[w] != w2[w]) varying.push_back(w);
  }
  std::printf("words varying between own allocations:");
  for (int w : varying) std::printf(" %d", w);
  std::printf("\n");
  IoctlPhase("(before scans)");
  auto step_scan = [&](const CUipcMemHandle& base, bool all_words, Reach& r) {
    uint32_t b[16];
    std::memcpy(b, &base, 64);
    for (int w = 0; w < 16; ++w) {
      if (!all_words && std::find(varying.begin(), varying.end(), w) == varying.end()) continue;
      for (int d = -span; d <= span; ++d) {
        if (d == 0) continue;
        uint32_t x[16];
        std::memcpy(x, b, 64);
        x[w] += static_cast<uint32_t>(d);
        CUipcMemHandle h;
        std::memcpy(&h, x, 64);
        TryOpen(h, r);
      }
    }
    // Joint steps of every varying word together.
    for (int d = -span; d <= span; ++d) {
      if (d == 0 || varying.size() < 2) continue;
      uint32_t x[16];
      std::memcpy(x, b, 64);
      for (int w : varying) x[w] += static_cast<uint32_t>(d);
      CUipcMemHandle h;
      std::memcpy(&h, x, 64);
      TryOpen(h, r);
    }
  };
  // Allocation after allocation: the own handles' per-allocation change
  // (block number, memory object, offset) applied k times, at the sizes and
  // offsets an attacker who knows the shapes would try.
  auto pattern_scan = [&](const CUipcMemHandle& base, Reach& r) {
    uint32_t b[16];
    std::memcpy(b, &base, 64);
    int64_t delta[16];
    for (int w = 0; w < 16; ++w)
      delta[w] = static_cast<int64_t>(w2[w]) - static_cast<int64_t>(w1[w]);
    delta[7] = 0;  // offsets are tried explicitly
    delta[4] = 0;  // sizes too
    for (uint32_t size : {b[4], 2u << 20, 64u << 20, 4096u, 32u << 20}) {
      for (uint32_t offset : {0u, 1u << 20}) {
        for (int k = -span; k <= span; ++k) {
          if (k == 0 && size == b[4] && offset == b[7]) continue;
          uint32_t x[16];
          for (int w = 0; w < 16; ++w) x[w] = static_cast<uint32_t>(b[w] + k * delta[w]);
          x[4] = size;
          x[7] = offset;
          CUipcMemHandle h;
          std::memcpy(&h, x, 64);
          TryOpen(h, r);
        }
      }
    }
  };
  const auto start = std::chrono::steady_clock::now();
  if (have_seed) {
    Reach p;
    pattern_scan(seed, p);
    Print("seed, allocation pattern stepped", p);
    Reach r;
    TryOpen(seed, r);
    Print("the seed itself (exported)", r);
    Reach s;
    step_scan(seed, false, s);
    Print("seed, varying words stepped", s);
    Reach a;
    step_scan(seed, true, a);
    Print("seed, every word stepped", a);
    IoctlPhase("seed scans");
  }
  {
    // The other processes' handles from this process's own: its words that
    // differ from the seed (or all) stepped.
    Reach r;
    step_scan(own_h[2], true, r);
    Print("own handle, every word stepped", r);
    std::mt19937_64 rng(42);
    Reach rnd;
    for (int i = 0; i < 4000; ++i) {
      uint32_t x[16];
      for (uint32_t& v : x) v = static_cast<uint32_t>(rng());
      CUipcMemHandle h;
      std::memcpy(&h, x, 64);
      TryOpen(h, rnd);
    }
    Print("random handles", rnd);
    Reach rnd2;
    if (have_seed) {
      // Seed with the varying words random.
      for (int i = 0; i < 4000; ++i) {
        uint32_t x[16];
        std::memcpy(x, &seed, 64);
        for (int w : varying) x[w] = static_cast<uint32_t>(rng());
        CUipcMemHandle h;
        std::memcpy(&h, x, 64);
        TryOpen(h, rnd2);
      }
      Print("seed, varying words random", rnd2);
    }
  }
  std::printf("scans took %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  IoctlPhase("other scans");

  if (!sock_path.empty()) {
    const int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock_path.c_str());
    if (connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      std::perror("connect");
      return 3;
    }
    uint64_t size_given = 0, size_sync = 0;
    const int fd_given = ReceiveFd(sock, &size_given);
    const int fd_sync = ReceiveFd(sock, &size_sync);
    std::printf("received fds %d (%llu B), %d (%llu B)\n", fd_given, (unsigned long long)size_given,
                fd_sync, (unsigned long long)size_sync);
    Vmm given, sync;
    given.size = size_given;
    sync.size = size_sync;
    CUresult r = cuMemImportFromShareableHandle(
        &given.handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd_given)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (r != CUDA_SUCCESS) {
      std::printf("cuMemImportFromShareableHandle: FAILED %d\n", r);
      return 4;
    }
    CHECK_DRV(cuMemImportFromShareableHandle(
        &sync.handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd_sync)),
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd_given);
    close(fd_sync);
    MapAll(given);
    MapAll(sync);
    IoctlPhase("VMM import x2 + map");
    uint64_t word = 0;
    CHECK_DRV(cuMemcpyDtoH(&word, given.ptr, 8));
    std::printf("imported VMM allocation: first word %s\n",
                word == (kTagBase | (5ull << 16) | 99) ? "the exporter's tag (ok)" : "WRONG");
    // Reading right past the end of the mapping must fault, not reach more.
    CUipcMemHandle vh;
    std::printf("cuIpcGetMemHandle on the imported mapping: %s\n",
                cuIpcGetMemHandle(&vh, given.ptr) == CUDA_SUCCESS ? "ALLOWED" : "refused");
    CUstream stream;
    CHECK_DRV(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    for (uint32_t gen = 1; gen <= 600; ++gen) {
      CHECK_DRV(cuStreamWaitValue32(stream, sync.ptr, gen, CU_STREAM_WAIT_VALUE_EQ));
      CHECK_DRV(cuStreamWriteValue32(stream, sync.ptr + 4, gen, CU_STREAM_WRITE_VALUE_DEFAULT));
      const char go = 1;
      if (write(sock, &go, 1) != 1) break;
      CHECK_DRV(cuStreamSynchronize(stream));
    }
    IoctlPhase("600 memop calls");
    std::printf("host side of the bracket: 600 calls done\n");
    close(sock);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // _exit: no CUDA teardown, which can wait for good after a neighbour's
  // fault on memory it imported.
  if (argc >= 2 && std::strcmp(argv[1], "exporter") == 0) _exit(Exporter(argc, argv));
  if (argc >= 2 && std::strcmp(argv[1], "forger") == 0) _exit(Forger(argc, argv));
  if (argc >= 3 && std::strcmp(argv[1], "read") == 0) return ReadOne(argv[2]);
  std::fprintf(stderr, "usage: ipc_reach_probe exporter|forger ...\n");
  return 2;
}
