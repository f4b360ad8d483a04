#include "worker/runner/hosts/isolation.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "sandbox/view.h"
#include "worker/runner/hosts/jit_images.h"
#include "worker/runner/hosts/python_view.h"
#include "worker/runner/hosts/sanitize_driver.h"

namespace ptxbench::runner {
namespace {

namespace fs = std::filesystem;
using sandbox::Mount;

constexpr char kHostBinary[] = "/ptxbench/bin/ptxbench-candidate-host";
constexpr char kModuleDir[] = "/ptxbench/module";
constexpr char kWorkDir[] = "/ptxbench/work";
constexpr char kProfileDir[] = "/ptxbench/profile";
// A Triton candidate's host: ptxbench's script and host loop, and the JIT's
// cache (TRITON_CACHE_DIR; its other files, TRITON_HOME, beside it).
constexpr char kTritonScript[] = "/ptxbench/bin/triton_host.py";
constexpr char kTorchScript[] = "/ptxbench/bin/torch_host.py";
constexpr char kHostLibrary[] = "/ptxbench/bin/libptxbench-host.so";
constexpr char kJitDir[] = "/ptxbench/jit";
// The census's tracer (kernel_census.h), the one vendor library the
// candidate host's view shows: it traces, it computes nothing.
constexpr char kCupti[] = "/ptxbench/bin/libcupti.so.13";

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

absl::Status WriteProcSelf(const char* name, const std::string& text) {
  return WriteFile(absl::StrCat("/proc/self/", name), text);
}

// Directories of the shared libraries this process has mapped.
std::set<std::string> LoadedLibraryDirs() {
  std::set<std::string> dirs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (!absl::StrContains(fs::path(path).filename().string(), ".so")) continue;
    dirs.insert(fs::path(path).parent_path().string());
  }
  return dirs;
}

// The directory of the CUDA driver library the loader would pick.
// Where the library this process gets by `soname` is (left loaded); "" if
// it has none.
std::string LoadedLibrary(const char* soname) {
  void* handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return "";
  link_map* map = nullptr;
  std::string path;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
    std::error_code ec;
    path = fs::canonical(map->l_name, ec).string();
  }
  return path;
}

std::string DriverLibraryDir() {
  const std::string driver = LoadedLibrary("libcuda.so.1");  // CUDA loads it anyway
  return driver.empty() ? "" : fs::path(driver).parent_path().string();
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

absl::Status CopyFile(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return absl::InternalError(absl::StrCat("copying ", from, ": ", ec.message()));
  chmod(to.c_str(), 0644);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<sandbox::Policy> CandidateHostPolicy(const RunnerJob& job,
                                                    const CandidateDirs& dirs, bool jit) {
  const bool triton = job.language == "triton";
  sandbox::ViewBuilder view;
  // The JIT's C compiler and its headers and libraries (Triton's launcher
  // is C built against Python's headers and cuda.h). Not /usr whole: a bind
  // shows none of the mounts below it, and a container's driver libraries
  // often are one (/usr/local/nvidia), with an older libcuda left in /lib.
  if (triton && jit) {
    // (/lib's entries too: glibc's libc.so names /lib/x86_64-linux-gnu/libc.so.6.)
    for (const char* dir : {"/usr/bin", "/usr/lib/gcc", "/usr/libexec/gcc", "/usr/include",
                            "/usr/lib/x86_64-linux-gnu", "/usr/lib/bfd-plugins",
                            "/lib/x86_64-linux-gnu", "/lib64"}) {
      view.AddHostPath(dir, Mount::Kind::kReadOnly);
    }
  }
  for (const std::string& root : dirs.python_roots) view.AddHostPath(root, Mount::Kind::kReadOnly);
  for (const std::string& dir : LoadedLibraryDirs()) view.AddHostPath(dir, Mount::Kind::kReadOnly);
  if (const std::string driver = DriverLibraryDir(); !driver.empty()) {
    view.AddHostPath(driver, Mount::Kind::kReadOnly);
  } else {
    return absl::FailedPreconditionError("the CUDA driver library (libcuda.so.1) was not found");
  }
  // The loader's search path as the host will have it.
  for (absl::string_view dir : absl::StrSplit(Env("LD_LIBRARY_PATH"), ':', absl::SkipEmpty())) {
    view.AddHostPath(std::string(dir), Mount::Kind::kReadOnly);
  }
  view.AddHostPath("/lib64/ld-linux-x86-64.so.2", Mount::Kind::kReadOnly);
  for (const char* path : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/sys"}) {
    view.AddHostPath(path, Mount::Kind::kReadOnly);
  }
  // Loaded libraries' directories may hold cuBLAS, cuDNN, NVRTC...: the
  // candidate host never sees them. But a Triton candidate's Python imports
  // torch, which links them (docs/SECURITY.md says what holds there).
  if (!triton) view.MaskVendorLibraries();
  if (triton) {
    const std::string bin = fs::path(job.torch.script).parent_path().string();
    view.Add({Mount::Kind::kReadOnly, job.torch.script, kTorchScript});
    view.Add({Mount::Kind::kReadOnly, bin + "/triton_host.py", kTritonScript});
    view.Add({Mount::Kind::kReadOnly, job.torch.library, kHostLibrary});
    view.Add({jit ? Mount::Kind::kReadWriteExec : Mount::Kind::kReadOnly, dirs.jit, kJitDir});
  } else {
    view.Add({Mount::Kind::kReadOnly, job.isolation.candidate_host, kHostBinary});
  }
  // The census traces the timed calls only: not the JIT's, not a tool
  // run's (the profiler and the sanitizer inject tracers of their own).
  const bool census =
      job.census && !jit && job.profile.ncu.empty() && job.sanitize.sanitizer.empty();
  const std::string cupti = census ? LoadedLibrary("libcupti.so.13") : "";
  if (!cupti.empty()) view.Add({Mount::Kind::kReadOnly, cupti, kCupti});
  view.Add({Mount::Kind::kReadOnly, dirs.module, kModuleDir});
  view.Add({Mount::Kind::kReadWrite, dirs.work, kWorkDir});
  view.Add({Mount::Kind::kTmpfs, "", "/dev"});
  for (const char* dev : {"/dev/null", "/dev/zero", "/dev/urandom", "/dev/nvidiactl",
                          "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}) {
    if (fs::exists(dev)) view.Add({Mount::Kind::kDevice, dev, dev});
  }
  // Only this evaluation's GPU, where its device node is known.
  bool gpu_node = false;
  for (const auto& entry : fs::directory_iterator("/dev")) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, "nvidia") || name.size() <= 6) continue;
    if (!std::all_of(name.begin() + 6, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    if (job.isolation.device_minor >= 0 && name != absl::StrCat("nvidia", job.isolation.device_minor)) {
      continue;
    }
    view.Add({Mount::Kind::kDevice, entry.path().string(), entry.path().string()});
    gpu_node = true;
  }
  if (!gpu_node) return absl::FailedPreconditionError("no /dev/nvidia<N> device node for the GPU");
  view.Add({Mount::Kind::kReadWrite, dirs.shm, "/dev/shm"});
  view.Add({Mount::Kind::kSymlink, "/proc/self/fd", "/dev/fd"});
  // A profile run: Nsight Compute's own installation, after the masks, so
  // its profiling libraries load (they compute nothing; the run is advice
  // and never timed).
  if (!job.profile.ncu.empty()) {
    if (!view.AddHostPath(job.profile.ncu_root, Mount::Kind::kReadOnly)) {
      return absl::FailedPreconditionError(
          absl::StrCat("Nsight Compute's directory ", job.profile.ncu_root, " is not there"));
    }
    view.Add({Mount::Kind::kReadWrite, dirs.profile, kProfileDir});
    // Nsight Compute keeps a lock file and its inter-process files in /tmp.
    view.Add({Mount::Kind::kTmpfs, "", "/tmp"});
  }
  // A sanitize run: compute-sanitizer's installation the same way (its
  // injection libraries check the kernel, compute nothing; never timed),
  // its log written into the same directory.
  if (!job.sanitize.sanitizer.empty()) {
    if (!view.AddHostPath(job.sanitize.sanitizer_root, Mount::Kind::kReadOnly)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "compute-sanitizer's directory ", job.sanitize.sanitizer_root, " is not there"));
    }
    view.Add({Mount::Kind::kReadWrite, dirs.profile, kProfileDir});
    view.Add({Mount::Kind::kTmpfs, "", "/tmp"});
  }

  sandbox::Policy policy;
  policy.mounts = view.mounts();
  policy.cwd = kWorkDir;
  policy.env = {"PATH=/usr/bin:/bin", absl::StrCat("HOME=", kWorkDir),
                absl::StrCat("TMPDIR=", kWorkDir),
                // torch's thousands of kernels load only when used.
                triton ? "CUDA_MODULE_LOADING=LAZY" : "CUDA_MODULE_LOADING=EAGER"};
  if (triton) {
    policy.env.push_back(absl::StrCat("TRITON_CACHE_DIR=", kJitDir, "/cache"));
    policy.env.push_back(absl::StrCat("TRITON_HOME=", kJitDir));
    // Else Triton asks /sbin/ldconfig, which the view does not have.
    policy.env.push_back(absl::StrCat("TRITON_LIBCUDA_PATH=", DriverLibraryDir()));
    policy.env.push_back("PYTHONDONTWRITEBYTECODE=1");
    // The candidate's uid has no passwd entry: getpass.getuser() (torch's
    // compile caches ask it) reads these first.
    policy.env.push_back("USER=ptxbench-candidate");
    policy.env.push_back("LOGNAME=ptxbench-candidate");
    if (jit) policy.env.push_back("CC=/usr/bin/gcc");
  }
  if (!cupti.empty()) policy.env.push_back(absl::StrCat("PTXB_CUPTI=", kCupti));
  for (const char* name : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    std::string value = Env(name);
    // The driver library the harness itself uses, before any other that the
    // view may show (a JIT host's /usr can hold an older one, which the
    // kernel's driver refuses): torch's CUDA runtime loads it by name.
    if (triton && std::string(name) == "LD_LIBRARY_PATH") {
      value = value.empty() ? DriverLibraryDir() : absl::StrCat(DriverLibraryDir(), ":", value);
    }
    if (!value.empty()) policy.env.push_back(absl::StrCat(name, "=", value));
  }
  policy.uid = job.isolation.candidate_uid;
  policy.gid = job.isolation.candidate_gid;
  // The harness, once it dropped to its own uid, must still be able to end
  // the candidate host (its deadline, its limits).
  policy.keeper_uid = job.isolation.uid;
  policy.memory_bytes = job.isolation.memory_bytes;
  policy.max_processes = job.isolation.max_processes;
  policy.cgroup_parent = job.isolation.cgroup_parent;
  policy.cpus = job.isolation.cpus;
  policy.guard_gpu_object_sharing = true;
  policy.deny_exec_memory = true;
  policy.rlimits = {
      {RLIMIT_CORE, 0}, {RLIMIT_FSIZE, job.isolation.disk_bytes}, {RLIMIT_NOFILE, 4096}};
  if (job.isolation.cpu_seconds > 0)
    policy.rlimits.push_back({RLIMIT_CPU, job.isolation.cpu_seconds});
  return policy;
}

absl::StatusOr<std::unique_ptr<Isolation>> Isolation::Prepare(const RunnerJob& job,
                                                              const std::string& private_dir) {
  auto iso = std::unique_ptr<Isolation>(new Isolation);
  iso->job_ = job;
  iso->root_ = geteuid() == 0;
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  // A mount namespace of our own, for the candidate's disk and a private
  // /dev/shm. Without root, a user namespace of our own (same uid) gives the
  // right to mount them.
  if (iso->root_) {
    if (unshare(CLONE_NEWNS) != 0) return Errno("unshare(mount namespace)");
  } else {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return Errno("unshare(user, mount namespaces)");
    PTXB_RETURN_IF_ERROR(WriteProcSelf("setgroups", "deny"));
    PTXB_RETURN_IF_ERROR(WriteProcSelf("uid_map", absl::StrCat(uid, " ", uid, " 1\n")));
    PTXB_RETURN_IF_ERROR(WriteProcSelf("gid_map", absl::StrCat(gid, " ", gid, " 1\n")));
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return Errno("make / private");
  if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
            sandbox::TmpfsOptions(64 << 20, "mode=1777").c_str()) != 0) {
    return Errno("a private /dev/shm");
  }
  // The candidate's disk: everything it may write, noexec, its own.
  const uid_t owner = iso->root_ ? job.isolation.candidate_uid : uid;
  const gid_t group = iso->root_ ? job.isolation.candidate_gid : gid;
  const std::string disk = private_dir + "/disk";
  if (mkdir(disk.c_str(), 0700) != 0 && errno != EEXIST)
    return Errno("creating the candidate's disk");
  // A profile run's harness opens the profiler's files by name (0711:
  // through the disk, never listing it).
  const bool profile = !job.profile.ncu.empty() || !job.sanitize.sanitizer.empty();
  const std::string options = sandbox::TmpfsOptions(
      job.isolation.disk_bytes,
      absl::StrCat("mode=", profile ? "0711" : "0700", ",uid=", owner, ",gid=", group));
  if (mount("tmpfs", disk.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options.c_str()) !=
      0) {
    return Errno("mounting the candidate's disk");
  }
  CandidateDirs dirs;
  dirs.module = private_dir + "/module";
  dirs.work = disk + "/work";
  dirs.shm = disk + "/shm";
  if (profile) dirs.profile = disk + "/profile";
  for (const std::string& dir : {dirs.work, dirs.shm, dirs.profile}) {
    if (dir.empty()) continue;
    if (mkdir(dir.c_str(), 0700) != 0 || chown(dir.c_str(), owner, group) != 0 ||
        chmod(dir.c_str(), dir == dirs.profile ? 0711 : 0700) != 0) {
      return Errno("preparing the candidate's disk");
    }
  }
  // Held from here: the candidate owns its disk and could put a link to
  // any directory the harness can read where this one was.
  if (profile) {
    iso->profile_dir_fd_ =
        open(dirs.profile.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (iso->profile_dir_fd_ < 0) return Errno("opening the profile's directory");
  }
  iso->disk_fd_ = open(disk.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (iso->disk_fd_ < 0) return Errno("opening the candidate's disk");
  // The module: the candidate's to read and run, not to change.
  if (mkdir(dirs.module.c_str(), 0755) != 0 && errno != EEXIST) {
    return Errno("creating the candidate's module directory");
  }
  chmod(dirs.module.c_str(), 0755);
  const bool triton = job.language == "triton";
  const std::string name =
      job.language == "ptx" ? "kernel.cubin" : (triton ? "kernel.py" : "kernel.so");
  if (job.reference_only || triton) {
    // No candidate, or one whose module is its source.
    PTXB_RETURN_IF_ERROR(WriteFile(dirs.module + "/" + name, triton ? job.source : ""));
    chmod((dirs.module + "/" + name).c_str(), 0644);
  } else {
    PTXB_RETURN_IF_ERROR(CopyFile(job.artifact, dirs.module + "/" + name));
  }
  iso->candidate_artifact_ = absl::StrCat(kModuleDir, "/", name);
  if (triton && !job.reference_only) {
    // The JIT's cache: a disk of its own (a full one fails nobody else) that
    // may hold code, unlike the candidate's.
    dirs.jit = private_dir + "/jit";
    if (mkdir(dirs.jit.c_str(), 0700) != 0 && errno != EEXIST) return Errno("creating the JIT's cache");
    // Readable by the harness, which hashes what the JIT built (JitImages).
    const std::string jit_options = sandbox::TmpfsOptions(
        job.isolation.disk_bytes, absl::StrCat("mode=0755,uid=", owner, ",gid=", group));
    if (mount("tmpfs", dirs.jit.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, jit_options.c_str()) != 0) {
      return Errno("mounting the JIT's cache");
    }
    // Held: the harness reads the cache after it dropped to its own uid,
    // which cannot search the private directory above it.
    iso->jit_dir_fd_ = open(dirs.jit.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (iso->jit_dir_fd_ < 0) return Errno("opening the JIT's cache");
    PTXB_ASSIGN_OR_RETURN(dirs.python_roots, PythonRoots(job.torch.python));
    PTXB_ASSIGN_OR_RETURN(iso->jit_policy_, CandidateHostPolicy(job, dirs, /*jit=*/true));
  }
  PTXB_ASSIGN_OR_RETURN(iso->policy_, CandidateHostPolicy(job, dirs));
  return iso;
}

JitCache Isolation::JitImages() const {
  return jit_dir_fd_ < 0 ? JitCache{} : ScanJitCache(jit_dir_fd_, "cache");
}

absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> Isolation::SpawnJitHost(int channel,
                                                                                    int output) {
  if (job_.language != "triton") {
    return absl::FailedPreconditionError("only a Triton candidate has a JIT host");
  }
  return Spawn(jit_policy_, {job_.torch.python, "-I", kTritonScript, "--channel", "3", "--library",
                             kHostLibrary, "--kernel", candidate_artifact_, "--jit"},
               channel, output);
}

absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> Isolation::Spawn(
    const sandbox::Policy& policy, std::vector<std::string> argv, int channel, int output) {
  sandbox::SandboxedProcess::Spec spec;
  spec.policy = policy;
  spec.argv = std::move(argv);
  spec.fds = {{1, output}, {2, output}, {3, channel}};
  spec.suspended = true;
  return sandbox::SandboxedProcess::Start(spec);
}

absl::StatusOr<std::unique_ptr<sandbox::SandboxedProcess>> Isolation::SpawnCandidateHost(
    int channel, int output) {
  if (job_.language == "triton") {
    std::vector<std::string> host = {job_.torch.python, "-I",          kTritonScript,
                                     "--channel",       "3",           "--library",
                                     kHostLibrary,      "--kernel",    candidate_artifact_};
    if (job_.sanitize.sanitizer.empty()) return Spawn(policy_, std::move(host), channel, output);
    // A sanitize run: the sanitizer itself is the sandbox's payload, the
    // Python host its target (a C++ host drives it instead: below).
    return Spawn(policy_,
                 SanitizerArgv({job_.sanitize.sanitizer, job_.sanitize.print_limit,
                                absl::StrCat(kProfileDir, "/", kSanitizerLog), std::move(host)}),
                 channel, output);
  }
  std::vector<std::string> argv = {kHostBinary, "--channel", "3"};
  if (!job_.profile.ncu.empty()) {
    // The host drives the profiler, which runs it again as its target
    // (candidate_host_main.cc): everything of the profile stays in here.
    argv = {kHostBinary,
            "--channel",
            "3",
            "--profile-with",
            job_.profile.ncu,
            "--profile-launches",
            absl::StrCat(job_.profile.launch_count),
            "--profile-metrics",
            job_.profile.metrics,
            "--profile-out",
            absl::StrCat(kProfileDir, "/profile")};
  }
  if (!job_.sanitize.sanitizer.empty()) {
    // The same for compute-sanitizer: its log never on the host's output.
    argv = {kHostBinary,
            "--channel",
            "3",
            "--sanitize-with",
            job_.sanitize.sanitizer,
            "--sanitize-print-limit",
            absl::StrCat(job_.sanitize.print_limit),
            "--sanitize-log",
            absl::StrCat(kProfileDir, "/", kSanitizerLog)};
  }
  return Spawn(policy_, std::move(argv), channel, output);
}

absl::Status Isolation::DropTo(uid_t uid, gid_t gid) const {
  if (!root_) return absl::OkStatus();
  if (setgroups(0, nullptr) != 0) return Errno("setgroups");
  if (setresgid(gid, gid, gid) != 0) return Errno("setresgid");
  if (setresuid(uid, uid, uid) != 0) return Errno("setresuid");
  return absl::OkStatus();
}

absl::StatusOr<pid_t> Isolation::ForkReferenceHost(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid < 0) return Errno("fork (reference host)");
  if (pid > 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (!DropTo(job_.isolation.uid, job_.isolation.gid).ok()) _exit(126);
  prctl(PR_SET_DUMPABLE, 0);
  _exit(body());
}

absl::Status Isolation::DropPrivileges() {
  PTXB_RETURN_IF_ERROR(DropTo(job_.isolation.uid, job_.isolation.gid));
  // No process of the same uid (a host) may read this one's memory or trace it.
  if (prctl(PR_SET_DUMPABLE, 0) != 0) return Errno("PR_SET_DUMPABLE");
  return absl::OkStatus();
}

std::vector<std::string> Isolation::Protections() const {
  std::vector<std::string> p = {
      "candidate host: own PID, network, mount, IPC and UTS namespaces",
      "candidate host: filesystem view of its libraries (vendor libraries masked), the GPU's "
      "device nodes and its own directory",
      "candidate host: no capabilities, no_new_privs, seccomp filter (no foreign GPU objects"
      " opened or shared, no executable memory of its own)",
      policy_.cgroup_parent.empty() ? "candidate host: memory and process limits (watchdog)"
                                    : "candidate host: memory, process and CPU limits (cgroup v2)",
      absl::StrCat("candidate host: its own disk of ", job_.isolation.disk_bytes >> 20,
                   " MiB (tmpfs, noexec); the module read-only"),
      "harness: non-dumpable, private /dev/shm, results over its own descriptor, device memory "
      "shared by descriptor only"};
  p.push_back(root_ ? absl::StrCat("harness runs as uid ", job_.isolation.uid,
                                   ", the candidate host as uid ", job_.isolation.candidate_uid)
                    : "WARNING: not root: the hosts run as the worker's own uid (user namespace)");
  return p;
}

int Isolation::OpenProfileFile(const char* name) const {
  if (profile_dir_fd_ < 0) return -1;
  return openat(profile_dir_fd_, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

std::string Isolation::DiskFullNote() const {
  struct statvfs s;
  if (disk_fd_ < 0 || fstatvfs(disk_fd_, &s) != 0) return "";
  // Full, or too full to hold another page of anything.
  if (static_cast<uint64_t>(s.f_bavail) * s.f_frsize >= (uint64_t{64} << 10)) return "";
  return absl::StrCat("the kernel's disk is full: it may write at most ",
                      job_.isolation.disk_bytes >> 20,
                      " MiB (its own quota; nothing else on the node was affected)");
}

}  // namespace ptxbench::runner
