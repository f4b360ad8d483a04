// sandbox_probe: what a hostile submission would try, one action per run,
// for the sandbox tests (sandbox_test.cc). Prints one line saying what
// happened; exits 0 when the action succeeded, 1 when it was refused.
//   sandbox_probe connect PORT          TCP connect to 127.0.0.1:PORT
//   sandbox_probe read PATH             print the file's first line
//   sandbox_probe bytes PATH...         print "PATH: N" (its size read) for each
//   sandbox_probe write PATH            create PATH
//   sandbox_probe environ NEEDLE        scan /proc/*/environ for NEEDLE
//   sandbox_probe processes             count the entries of /proc
//   sandbox_probe linger MARKER         fork, setsid, fork: a grandchild
//                                       that sleeps with MARKER in its argv
//   sandbox_probe detach MARKER         as linger, and then sleeps itself
//                                       (with MARKER in its argv)
//   sandbox_probe host                  what the sandbox shows of its
//                                       caller: PID 1's cmdline (C-escaped)
//                                       and environ (its size, or why not),
//                                       and /proc/self/cgroup
//   sandbox_probe fill pipes|sockets N  make N pipes (socket pairs), fill each
//                                       until it takes no more, then print
//                                       "filled P of N: B bytes" and sleep 5 s
//                                       (kernel memory outside its resident
//                                       set)
//   sandbox_probe sleep SECONDS [MARKER]
//   sandbox_probe alloc MIB             allocate and touch MIB MiB, 8 at a time
//   sandbox_probe forkbomb              fork until refused, then sleep
//   sandbox_probe ptrace PID            PTRACE_ATTACH
//   sandbox_probe status                CapEff, NoNewPrivs, Seccomp, uid
//   sandbox_probe ids                   its uids and the init's
//   sandbox_probe unshare               unshare a user namespace
//   sandbox_probe killall               SIGKILL its parent, PID 1 and kill(-1)
//   sandbox_probe copy-exec SRC DST     copy SRC to DST (mode 0755) and exec it
//                                       (as "DST sleep 0")
//   sandbox_probe mmap-exec PATH        map PATH's first page read-execute
//   sandbox_probe exec-memory WHAT      make executable memory of its own:
//       anon-exec           mmap(PROT_READ|PROT_EXEC, MAP_ANONYMOUS)
//       write-exec          mmap of PATH (argument 3) PROT_WRITE|PROT_EXEC
//       mprotect-exec       mprotect an anonymous page to PROT_READ|PROT_EXEC
//       pkey-mprotect-exec  the same with pkey_mprotect (pkey -1)
//       shmat-exec          shmat(SHM_EXEC) of a new System V segment
//       memfd-create        memfd_create
//       memfd-secret        memfd_secret
//   sandbox_probe dlopen LIBRARY        dlopen(RTLD_NOW)
//   sandbox_probe ioctl PATH REQUEST    ioctl(REQUEST, a zeroed buffer) on PATH
//   sandbox_probe spin SECONDS [ignore-xcpu]
//                                       busy for SECONDS of wall time, then
//                                       print the CPU time it used
//   sandbox_probe raise SIGNAL          raise(SIGNAL)
//   sandbox_probe files DIR             create empty files in DIR until
//                                       refused (at most 100,000), then
//                                       print how many and why
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

int Refused(const std::string& what) {
  std::printf("refused: %s: %s\n", what.c_str(), strerror(errno));
  return 1;
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Refused("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return Refused("connect");
  std::printf("connected\n");
  return 0;
}

// The network interfaces the process sees, one line.
int Links() {
  struct if_nameindex* names = if_nameindex();
  if (names == nullptr) return Refused("if_nameindex");
  std::string line = "links:";
  for (struct if_nameindex* n = names; n->if_index != 0; ++n) line += std::string(" ") + n->if_name;
  if_freenameindex(names);
  std::printf("%s\n", line.c_str());
  return 0;
}

// A listener on 127.0.0.1 and a connection to it: the loopback works.
int Loopback() {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) return Refused("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Refused("listen");
  }
  return Connect(ntohs(addr.sin_port));
}

int Environ(const std::string& needle) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return Refused("/proc");
  int found = 0;
  while (dirent* e = readdir(proc)) {
    std::ifstream in(std::string("/proc/") + e->d_name + "/environ");
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(needle) != std::string::npos) ++found;
  }
  closedir(proc);
  std::printf("found %d\n", found);
  return found > 0 ? 0 : 1;
}

int Processes() {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return Refused("/proc");
  int n = 0;
  while (dirent* e = readdir(proc)) n += atoi(e->d_name) > 0;
  closedir(proc);
  std::printf("processes %d\n", n);
  return 0;
}

// The uids of this process and of the sandbox's init (PID 1 here).
int Ids() {
  for (const char* pid : {"self", "1"}) {
    std::ifstream in(std::string("/proc/") + pid + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Uid:", 0) == 0) std::printf("%s %s\n", pid, line.c_str());
    }
  }
  return 0;
}

// A file's bytes, NULs and all, or "unreadable: <why>".
std::string Bytes(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("unreadable: ") + strerror(errno);
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  const int error = errno;
  close(fd);
  if (n < 0) return std::string("unreadable: ") + strerror(error);
  return text;
}

int Host() {
  std::string cmdline;
  for (char c : Bytes("/proc/1/cmdline")) {
    if (c == '\0') {
      cmdline += "\\0";
    } else {
      cmdline += c;
    }
  }
  const std::string environ = Bytes("/proc/1/environ");
  std::printf("cmdline: %s\n", cmdline.c_str());
  std::printf("environ: %s\n",
              environ.rfind("unreadable", 0) == 0
                  ? environ.c_str()
                  : (std::to_string(environ.size()) + " bytes: " + environ).c_str());
  std::printf("cgroup:\n%s", Bytes("/proc/self/cgroup").c_str());
  return 0;
}

int Status() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff", 0) == 0 || line.rfind("CapPrm", 0) == 0 ||
        line.rfind("NoNewPrivs", 0) == 0 || line.rfind("Seccomp:", 0) == 0 ||
        line.rfind("Uid", 0) == 0) {
      std::printf("%s\n", line.c_str());
    }
  }
  return 0;
}

int CopyExec(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
  out.close();
  if (!in || !out || chmod(to.c_str(), 0755) != 0) return Refused("copy " + from);
  execl(to.c_str(), to.c_str(), "sleep", "0", nullptr);
  return Refused("exec");
}

int MapExecutable(const std::string& path, int prot) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return Refused("open " + path);
  if (mmap(nullptr, 4096, prot, MAP_PRIVATE, fd, 0) == MAP_FAILED) return Refused("mmap");
  std::printf("mapped\n");
  return 0;
}

// One way for a process to make executable memory of its own; prints
// "allowed: WHAT" or "refused: WHAT: <error>".
int ExecMemory(const std::string& what, const std::string& path) {
  bool ok = false;
  if (what == "anon-exec") {
    ok = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
         MAP_FAILED;
  } else if (what == "write-exec") {
    const int fd = open(path.c_str(), O_RDONLY);
    ok = fd >= 0 &&
         mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE, fd, 0) != MAP_FAILED;
  } else if (what == "mprotect-exec" || what == "pkey-mprotect-exec") {
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return Refused("mmap");
    ok = what == "mprotect-exec"
             ? mprotect(page, 4096, PROT_READ | PROT_EXEC) == 0
             : syscall(SYS_pkey_mprotect, page, 4096, PROT_READ | PROT_EXEC, -1) == 0;
  } else if (what == "shmat-exec") {
    const int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0700);
    if (id < 0) return Refused("shmget");
    ok = shmat(id, nullptr, SHM_EXEC) != reinterpret_cast<void*>(-1);
    const int error = errno;
    shmctl(id, IPC_RMID, nullptr);
    errno = error;
  } else if (what == "memfd-create") {
    ok = syscall(SYS_memfd_create, "probe", 0) >= 0;
  } else if (what == "memfd-secret") {
    ok = syscall(SYS_memfd_secret, 0) >= 0;
  } else {
    return 2;
  }
  if (!ok) return Refused(what);
  std::printf("allowed: %s\n", what.c_str());
  return 0;
}

int Ioctl(const std::string& path, const std::string& request) {
  const int fd = open(path.c_str(), O_RDWR);
  if (fd < 0) return Refused("open " + path);
  char buffer[4096] = {};
  if (ioctl(fd, std::strtoul(request.c_str(), nullptr, 0), buffer) != 0) return Refused("ioctl");
  std::printf("ioctl done\n");
  return 0;
}

int Spin(int seconds) {
  const time_t end = time(nullptr) + seconds;
  while (time(nullptr) < end) {
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const long cpu_ms = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 +
                      (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000;
  std::printf("spun cpu_ms %ld\n", cpu_ms);
  return 0;
}

// Kernel memory a process holds outside its resident set: N pipes or
// socket pairs, each filled until it takes no more.
int Fill(const std::string& what, int n) {
  static char chunk[65536];
  long filled = 0, bytes = 0;
  for (; filled < n; ++filled) {
    int fds[2];
    const int made = what == "pipes" ? pipe2(fds, O_NONBLOCK)
                                     : socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds);
    if (made != 0) break;
    for (ssize_t w; (w = write(fds[1], chunk, sizeof(chunk))) > 0;) bytes += w;
  }
  std::printf("filled %ld of %d: %ld bytes (%s)\n", filled, n, bytes, strerror(errno));
  sleep(5);
  return 0;
}

// A grandchild in a session of its own (fork, setsid, fork) that sleeps with
// `marker` in its argv.
void LeaveBehind(const char* self, const std::string& marker) {
  const pid_t middle = fork();
  if (middle == 0) {
    setsid();
    if (fork() == 0) {
      execl(self, self, "sleep", "300", marker.c_str(), nullptr);
      _exit(1);
    }
    _exit(0);
  }
  // Reaped, so that what is left is the grandchild alone (under PID 1).
  if (middle > 0) waitpid(middle, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) return 2;
  const std::string action = argv[1];
  const std::string arg = argc > 2 ? argv[2] : "";
  const std::string arg2 = argc > 3 ? argv[3] : "";
  if (action == "connect") return Connect(atoi(arg.c_str()));
  if (action == "links") return Links();
  if (action == "loopback") return Loopback();
  if (action == "read") {
    std::ifstream in(arg);
    std::string line;
    if (!in || !std::getline(in, line)) return Refused("read " + arg);
    std::printf("read: %s\n", line.c_str());
    return 0;
  }
  if (action == "bytes") {
    for (int i = 2; i < argc; ++i) {
      std::ifstream in(argv[i], std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      if (in.fail() && !in.eof()) return Refused(std::string("read ") + argv[i]);
      std::printf("%s: %zu\n", argv[i], text.str().size());
    }
    return 0;
  }
  if (action == "write") {
    FILE* f = std::fopen(arg.c_str(), "w");
    if (f == nullptr) return Refused("write " + arg);
    std::fclose(f);
    std::printf("wrote %s\n", arg.c_str());
    return 0;
  }
  if (action == "files") {
    long made = 0;
    for (; made < 100000; ++made) {
      const int fd = open((arg + "/f" + std::to_string(made)).c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) break;
      close(fd);
    }
    std::printf("made %ld files: %s\n", made, strerror(errno));
    return 0;
  }
  if (action == "environ") return Environ(arg);
  if (action == "processes") return Processes();
  if (action == "status") return Status();
  if (action == "ids") return Ids();
  if (action == "linger") {
    LeaveBehind(argv[0], arg);
    sleep(1);
    std::printf("left a process behind\n");
    return 0;
  }
  if (action == "detach") {
    LeaveBehind(argv[0], arg);
    std::printf("detached\n");
    sleep(300);
    return 0;
  }
  if (action == "host") return Host();
  if (action == "fill") return Fill(arg, atoi(arg2.c_str()));
  if (action == "sleep") {
    sleep(static_cast<unsigned>(atoi(arg.c_str())));
    return 0;
  }
  if (action == "alloc") {
    std::vector<char*> blocks;
    for (int i = 0; i < atoi(arg.c_str()) / 8; ++i) {
      char* p = static_cast<char*>(malloc(8 << 20));
      if (p == nullptr) return Refused("malloc");
      memset(p, 1, 8 << 20);
      blocks.push_back(p);
    }
    std::printf("allocated\n");
    return 0;
  }
  if (action == "forkbomb") {
    int n = 0;
    while (n < 100000) {
      const pid_t pid = fork();
      if (pid < 0) break;
      if (pid == 0) {
        pause();
        _exit(0);
      }
      ++n;
    }
    std::printf("forked %d\n", n);
    sleep(30);
    return 0;
  }
  if (action == "ptrace") {
    if (ptrace(PTRACE_ATTACH, atoi(arg.c_str()), nullptr, nullptr) != 0) return Refused("ptrace");
    std::printf("attached\n");
    return 0;
  }
  if (action == "killall") {
    kill(getppid(), SIGKILL);
    kill(1, SIGKILL);
    kill(-1, SIGKILL);
    std::printf("survived (parent %d)\n", getppid());
    return 0;
  }
  if (action == "copy-exec") return CopyExec(arg, arg2);
  if (action == "mmap-exec") return MapExecutable(arg, PROT_READ | PROT_EXEC);
  if (action == "exec-memory") return ExecMemory(arg, arg2);
  if (action == "dlopen") {
    if (dlopen(arg.c_str(), RTLD_NOW) == nullptr) {
      std::printf("refused: dlopen: %s\n", dlerror());
      return 1;
    }
    std::printf("loaded %s\n", arg.c_str());
    return 0;
  }
  if (action == "ioctl") return Ioctl(arg, arg2);
  if (action == "spin") {
    if (arg2 == "ignore-xcpu") signal(SIGXCPU, SIG_IGN);
    return Spin(atoi(arg.c_str()));
  }
  if (action == "raise") return raise(atoi(arg.c_str()));
  if (action == "unshare") {
    if (unshare(CLONE_NEWUSER) != 0) return Refused("unshare");
    std::printf("unshared\n");
    return 0;
  }
  return 2;
}
